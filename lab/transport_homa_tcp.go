package lab

import (
	"fmt"
	"math"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/transport/homa"
	"fabriclab/transport/tcp"
	"fabriclab/units"
	"fabriclab/workload"
)

// homaResendTimeout is the lab's default RESEND timeout: at high load a
// long message's scheduled packets, at the lowest priorities, can wait
// milliseconds in switch queues behind shorter messages, and a 1 ms timeout
// (the protocol package's default) then resends data that is only late
// (W5 at 80% load on the paper's fabric: 60k spurious retransmissions in
// 50 ms, and long messages slowed 35× instead of 4.5×).
const homaResendTimeout = 10 * units.Millisecond

// newHomaLayer runs Homa with packets of nic.mtu payload: RTTbytes from
// the fabric's farthest pair of hosts unless set, and the priority split
// and cutoffs from the messages workload's size distribution (the paper's
// rule) unless unscheduled_priorities is set.
func newHomaLayer(s *Sim, net *fabric.Network, delivered func(int32, sim.Time)) (hostTransport, error) {
	spec := s.Job.Spec
	k := spec.Transport.Homa
	p := homa.DefaultParams()
	p.MTU = units.Size(spec.NIC.MTU)
	dataWire := int32(spec.NIC.MTU + spec.NIC.Overhead)
	p.RTTBytes = k.RTTBytes
	if p.RTTBytes == 0 {
		rtt := homa.PathRTT(net, 0, s.Topo.Hosts-1, dataWire, homa.DefaultControlWire)
		p.RTTBytes = homa.RTTBytesFor(spec.Topology.HostLink.Rate, rtt)
	}
	p.ResendTimeout = homaResendTimeout
	if k.ResendTimeout > 0 {
		p.ResendTimeout = k.ResendTimeout
	}
	if k.MaxResends > 0 {
		p.MaxResends = k.MaxResends
	}
	p.FIFOGrantPermille = int(k.FIFOGrantFraction*1000 + 0.5)
	// The first messages workload (main, then jobs:) drives the priorities.
	var w scenario.Workload
	for i := 0; i < Jobs(s.Job); i++ {
		if jw := scenario.JobWorkload(spec, i); jw.Kind == "messages" {
			w = jw
			break
		}
	}
	switch {
	case k.UnscheduledPriorities > 0:
		p.UnschedPrios = k.UnscheduledPriorities
		p.Overcommit = p.Priorities - p.UnschedPrios
	case w.Kind == "messages":
		d, err := s.dists.get(w.SizeDist, s.Job.Dir)
		if err != nil {
			return nil, err
		}
		if p, err = p.WithWorkload(homaCDF(d)); err != nil {
			return nil, fmt.Errorf("transport.homa: priorities from %s: %w", w.SizeDist, err)
		}
	}
	if k.Overcommit > 0 {
		p.Overcommit = k.Overcommit
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("transport.homa: %w", err)
	}
	t := homa.New(net, homa.Config{Params: p, Overhead: int32(spec.NIC.Overhead)})
	t.OnDelivered = delivered
	t.OnAbandoned = func(msg int32, now sim.Time, _ bool) { s.abandon(msg, now) }
	return &homaLayer{t: t}, nil
}

// homaCDF is a size distribution as Homa's step CDF: whole positive sizes,
// strictly increasing, ending at probability 1 (a tail beyond the table
// ends at its largest size).
func homaCDF(d *workload.SizeDist) []homa.CDFPoint {
	var out []homa.CDFPoint
	for _, pt := range d.Points() {
		size := units.Size(math.Ceil(pt.Bytes))
		if size < 1 || pt.P <= 0 {
			continue
		}
		if n := len(out); n > 0 && size <= out[n-1].Size {
			out[n-1].P = math.Max(out[n-1].P, pt.P)
			continue
		}
		out = append(out, homa.CDFPoint{Size: size, P: math.Min(pt.P, 1)})
	}
	if n := len(out); n == 0 || out[n-1].P < 1 {
		last := units.Size(d.Max())
		if n > 0 && last <= out[n-1].Size {
			last = out[n-1].Size + 1
		}
		out = append(out, homa.CDFPoint{Size: last, P: 1})
	}
	return out
}

// homaLayer: Homa has no connections; every message is its own RPC.
type homaLayer struct {
	t       *homa.Transport
	watched map[int32][2]int // followed messages' hosts (flowprobe.go)
}

func (l *homaLayer) connect(int32, int, int) {}

func (l *homaLayer) post(_, msg int32, src, dst int, bytes int64) {
	if l.watched != nil {
		if _, ok := l.watched[msg]; ok {
			l.watched[msg] = [2]int{src, dst}
		}
	}
	l.t.Send(src, dst, msg, bytes)
}

func (l *homaLayer) tuple(_, msg int32, src, dst int) (s, d, sqp, dqp int32) {
	return l.t.Tuple(src, dst, msg)
}

func (l *homaLayer) nicCounters(h int) metrics.Counters { return l.t.NICs[h].Counters() }
func (l *homaLayer) counters() metrics.Counters         { return l.t.Counters() }
func (l *homaLayer) deliveredPayload() int64            { return l.t.DeliveredPayload }
func (l *homaLayer) setName(h int, name string)         { l.t.SetName(h, name) }

// tcpAckDelay is how long a receiver that acknowledges every n-th segment
// holds an ACK for a lone segment.
const tcpAckDelay = 10 * units.Microsecond

// newTCPLayer runs DCTCP (transport.kind dctcp) or plain loss-based TCP
// (Reno without ECN, kind tcp) with segments of nic.mtu payload.
func newTCPLayer(s *Sim, net *fabric.Network, delivered func(int32, sim.Time)) (hostTransport, error) {
	spec := s.Job.Spec
	k := spec.Transport.TCP
	p := tcp.DefaultParams()
	p.MSS = units.Size(spec.NIC.MTU)
	if spec.Transport.Kind == "tcp" {
		p.Mode, p.NoECN = tcp.Reno, true
	}
	if k.InitCwnd > 0 {
		p.InitCwnd = k.InitCwnd
	}
	if k.G > 0 {
		p.G = k.G
	}
	if k.MinRTO > 0 {
		p.MinRTO, p.InitRTO = k.MinRTO, k.MinRTO
		p.MaxRTO = max(p.MaxRTO, k.MinRTO)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := tcp.New(net, tcp.Config{
		Params:      p,
		Overhead:    int32(spec.NIC.Overhead),
		AckEvery:    max(k.AckEvery, 1),
		AckDelay:    tcpAckDelay,
		DataPrio:    uint8(spec.NIC.DataPriority),
		AckPrio:     uint8(spec.NIC.ControlPriority),
		ControlWire: int32(spec.NIC.ControlWire),
	})
	t.OnDelivered = delivered
	return &connLayer[tcp.Conn]{t: t, nic: func(h int) metrics.Counters { return t.NICs[h].C }, delivered: &t.DeliveredPayload,
		probe: tcpProbe(t), framer: t}, nil
}
