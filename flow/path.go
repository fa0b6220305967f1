package flow

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/workload"
)

// Flow is one flow to analyze: a connection between two hosts (network
// ids), the bytes it has to move, and its path as the egress ports it
// crosses, from the source NIC's port to the edge switch's port into the
// destination.
type Flow struct {
	Src, Dst int
	Bytes    int64
	Path     []*fabric.Port
	// Msgs is how many DAG messages the flow carries (messages of one
	// connection released together are sent one after the other on it).
	Msgs int
}

// Pather is what RootFlows needs from a built simulation.
type Pather interface {
	// Path is the egress ports message i of the DAG crosses, exactly as
	// the packet simulator forwards it (see StaticPath).
	Path(i int) ([]*fabric.Port, error)
	// Conn identifies message i's connection (QP): messages that share a
	// connection share its bandwidth, so they form one flow.
	Conn(i int) uint64
}

// StaticPath is the path a packet with this 5-tuple takes under a static
// forwarding policy (ECMP, d-mod-k): host src's NIC port, then at every
// switch the egress port fabric.Switch.NextHop picks, the very function the
// packet simulator routes with. Dynamic policies (spraying, flowlets,
// adaptive) are followed as ECMP would hash them.
func StaticPath(net *fabric.Network, src, dst, sqp, dqp int32) ([]*fabric.Port, error) {
	if src < 0 || int(src) >= len(net.HostPorts) || dst < 0 || int(dst) >= len(net.HostPorts) || net.HostPorts[src] == nil {
		return nil, fmt.Errorf("no path from %d to %d: host not in the network", src, dst)
	}
	pt := net.HostPorts[src]
	path := []*fabric.Port{pt}
	for hops := 0; ; hops++ {
		sw, ok := pt.Peer.Owner.(*fabric.Switch)
		if !ok {
			if pt.Peer != net.HostPorts[dst] {
				return nil, fmt.Errorf("no path from %d to %d: delivered to the wrong host", src, dst)
			}
			return path, nil
		}
		if hops > len(net.Switches) {
			return nil, fmt.Errorf("no path from %d to %d: routing loop at %s", src, dst, sw.Name())
		}
		pt = sw.NextHop(src, dst, sqp, dqp)
		if pt == nil {
			return nil, fmt.Errorf("no path from %d to %d: %s has no route", src, dst, sw.Name())
		}
		path = append(path, pt)
	}
}

// RootFlows turns the messages of d that can all run at once into flows:
// the messages without dependencies (for a collective its first step, for
// a pattern or a flow list every message; earliest start times are
// ignored, so flows are taken as simultaneous), markers left out, and the
// messages of one connection merged into one flow. Flows are in the order
// of their first message.
func RootFlows(d *workload.DAG, p Pather) ([]Flow, error) {
	idx := map[uint64]int{}
	var flows []Flow
	for i, m := range d.Msgs {
		if d.DepCount[i] != 0 || m.Marker {
			continue
		}
		c := p.Conn(i)
		if k, ok := idx[c]; ok {
			flows[k].Bytes += m.Bytes
			flows[k].Msgs++
			continue
		}
		path, err := p.Path(i)
		if err != nil {
			return nil, err
		}
		idx[c] = len(flows)
		flows = append(flows, Flow{Src: int(m.Src), Dst: int(m.Dst), Bytes: m.Bytes, Path: path, Msgs: 1})
	}
	return flows, nil
}

// Tupler gives each message's 5-tuple (plan.Plan's Tuple does).
type Tupler interface {
	Tuple(i int) (src, dst, sqp, dqp int32)
}

// ConnID identifies a connection by its 5-tuple: (source endpoint, source
// QP) is unique per connection.
func ConnID(src, _, sqp, _ int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(sqp)) }

// Routed is the Pather of messages whose 5-tuples t gives, on net's static
// routes (StaticPath): what RootFlows needs of a compiled plan without a
// simulation.
func Routed(net *fabric.Network, t Tupler) Pather { return routed{net, t} }

type routed struct {
	net *fabric.Network
	t   Tupler
}

func (r routed) Path(i int) ([]*fabric.Port, error) {
	src, dst, sqp, dqp := r.t.Tuple(i)
	return StaticPath(r.net, src, dst, sqp, dqp)
}

func (r routed) Conn(i int) uint64 { return ConnID(r.t.Tuple(i)) }
