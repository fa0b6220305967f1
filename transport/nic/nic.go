// Package nic is the shell the transports (transport/roce, tcp, homa) share
// around their protocol state machines: the list of NICs of one simulation,
// each attached to its host's port, their names and transport counters, the
// delivery callback and the delivered-payload progress counter. It holds no
// protocol logic and nothing of it is on the per-packet path except plain
// field reads.
//
// A transport embeds Shell in its Transport and Host in its NIC:
//
//	type Transport struct {
//		nic.Shell[*NIC]
//		...
//	}
//	type NIC struct {
//		nic.Host
//		...
//	}
//	t.Attach(net, func(h int, pt *fabric.Port) *NIC { return &NIC{...} })
//
// The promoted fields and methods are then the transport's own:
// t.NICs, t.OnDelivered, t.DeliveredPayload, t.SetName, t.Counters, and a
// NIC's Net, Port, ID, C and Name.
package nic

import (
	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/sim"
)

// Host is what every transport's NIC has: the network, the host's port and
// id, its name (as ports and counters show it) and its transport counters.
type Host struct {
	Net  *fabric.Network
	Port *fabric.Port
	ID   int32
	name string
	// C holds this NIC's transport counters (a transport that keeps them
	// elsewhere overrides Counters).
	C metrics.Counters
}

// Name implements fabric.Node.
func (h *Host) Name() string { return h.name }

// Counters is this NIC's transport counters.
func (h *Host) Counters() metrics.Counters { return h.C }

func (h *Host) host() *Host { return h }

// NIC is a transport's host adapter: a fabric node and its port's feeder
// that embeds Host.
type NIC interface {
	fabric.Node
	fabric.Feeder
	Counters() metrics.Counters
	host() *Host // promoted from an embedded Host
}

// Shell is the NICs of one simulation and what they report.
type Shell[N NIC] struct {
	Net *fabric.Network
	// NICs[h] is host h's NIC (the zero N for a host without a port).
	NICs []N
	// OnDelivered, if set, hears the delivery of each message (the
	// transport documents when that is: in order, first copy…).
	OnDelivered func(msg int32, now sim.Time)
	// DeliveredPayload counts payload bytes delivered (progress; each
	// transport documents what counts).
	DeliveredPayload int64
}

// Attach makes a NIC with newNIC for every host port of net (in host
// order), fills in its Host part and installs it as the port's node and
// feeder.
func (s *Shell[N]) Attach(net *fabric.Network, newNIC func(h int, pt *fabric.Port) N) {
	s.Net = net
	s.NICs = make([]N, len(net.HostPorts))
	for h, pt := range net.HostPorts {
		if pt == nil {
			continue
		}
		n := newNIC(h, pt)
		*n.host() = Host{Net: net, Port: pt, ID: int32(h), name: fabric.HostName(h)}
		s.NICs[h] = n
		net.SetHost(h, n, n)
	}
}

// SetName renames host h's NIC (as ports and counters show it), e.g. to
// tell a GPU's scale-up endpoint from its fabric NIC.
func (s *Shell[N]) SetName(h int, name string) { s.NICs[h].host().name = name }

// Counters sums every NIC's transport counters, in host order.
func (s *Shell[N]) Counters() metrics.Counters {
	var c metrics.Counters
	for h, pt := range s.Net.HostPorts {
		if pt != nil {
			c.Add(s.NICs[h].Counters())
		}
	}
	return c
}
