package fabric

import (
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

// A frame's in-band telemetry crosses with it: the sending part releases
// its record, the receiving part holds a copy of every hop.
func TestExportCarriesTheINTRecord(t *testing.T) {
	mk := func() (*Network, *Port) {
		n := NewNetwork(sim.NewScheduler(), 1, 1)
		sw := n.AddSwitch("sw", "leaf", &SwitchConfig{Buffer: 1 << 20, MaxPacketWire: 4178}, 7)
		return n, n.ConnectHost(0, sw, 400*units.Gbps, units.Microsecond).Peer // the switch's port toward the host
	}
	a, pa := mk()
	b, pb := mk()
	a.SetRemote([]int{pa.ID}, false)
	b.SetReplicas([]int{pa.ID})
	p := a.Pool.Get()
	p.Kind, p.Wire, p.arrival = Data, 4178, 5*units.Microsecond
	p.INT = a.INT.New()
	want := INTRecord{N: 2}
	want.Hops[0] = INTHop{QueueBytes: 7, TxBytes: 11, At: 13, Rate: 17, Port: 19}
	want.Hops[1] = INTHop{QueueBytes: 23, TxBytes: 29, At: 31, Rate: 37, Port: 41}
	*a.INT.Get(p.INT) = want
	pa.export(p)
	if a.INT.Live != 0 || a.Pool.Live != 0 || len(a.OutboxINT) != 1 {
		t.Fatalf("after export: %d records and %d packets live, %d records out", a.INT.Live, a.Pool.Live, len(a.OutboxINT))
	}
	b.Import(&a.Outbox[0], a)
	got := pb.pipe.head
	if got == nil || got.INT == 0 || got.arrival != 5*units.Microsecond {
		t.Fatalf("imported %+v", got)
	}
	if r := *b.INT.Get(got.INT); r != want || b.INT.Live != 1 {
		t.Errorf("imported record %+v (%d live), want %+v", r, b.INT.Live, want)
	}
	a.ClearOutbox()
	if len(a.Outbox) != 0 || len(a.OutboxINT) != 0 {
		t.Error("the outbox kept entries")
	}
}

// A link between two parts fails with frames on its wire: the sending
// part counts them lost at its port, the receiving part discards them —
// on its copy of the wire if they came in before, as they come in if
// after — and counts nothing at its copy of the port: each loss once.
// The failure, scheduled before anything else, comes at the very
// picosecond the first frame would arrive: that one is lost too, as in
// one part.
func TestFailureBetweenPartsCountsEachLossOnce(t *testing.T) {
	mk := func() (*Network, *Port) {
		n := NewNetwork(sim.NewScheduler(), 1, 1)
		sw := n.AddSwitch("sw", "leaf", &SwitchConfig{Buffer: 1 << 20, MaxPacketWire: 4178}, 7)
		return n, n.ConnectHost(0, sw, 400*units.Gbps, units.Microsecond).Peer
	}
	const at = 5 * units.Microsecond
	for _, early := range []bool{true, false} { // imported before the failure, or after
		a, pa := mk()
		b, pb := mk()
		a.SetRemote([]int{pa.ID}, true)
		b.SetReplicas([]int{pa.ID})
		a.Sched.At(at, &linkDown{a, pa}, 0)
		b.Sched.At(at, &linkDown{b, pb}, 0)
		for i := range 2 {
			p := a.Pool.Get()
			p.Kind, p.Wire, p.arrival = Data, 4178, at+sim.Time(i)*units.Microsecond
			pa.export(p)
		}
		if early {
			for i := range a.Outbox {
				b.Import(&a.Outbox[i], a)
			}
			if pb.pipe.n != 2 {
				t.Fatalf("%d frames on the receiving part's wire, want 2", pb.pipe.n)
			}
		}
		a.Sched.Run(at)
		b.Sched.Run(at)
		if !early {
			for i := range a.Outbox {
				b.Import(&a.Outbox[i], a)
			}
		}
		if n, bytes, last := pa.Losses(); n != 2 || bytes != 2*4178 || last != at || pa.C.Drops != 2 || a.DroppedPackets != 0 {
			t.Errorf("early %v: the sending part lost %d frames (%d bytes, the last at %v, %d drops, %d in its balance), want 2 at its port at %v", early, n, bytes, last, pa.C.Drops, a.DroppedPackets, at)
		}
		if n, _, _ := b.Ports[pa.ID].Losses(); n != 0 || b.Ports[pa.ID].C.Drops != 0 || b.DroppedPackets != 2 || pb.pipe.n != 0 || b.Pool.Live != 0 {
			t.Errorf("early %v: the receiving part counted %d losses at its copy, %d dropped in its balance, %d on the wire, %d packets live; want 0, 2, 0, 0", early, n, b.DroppedPackets, pb.pipe.n, b.Pool.Live)
		}
	}
}

// linkDown fails pt's link when it runs.
type linkDown struct {
	n  *Network
	pt *Port
}

func (l *linkDown) OnEvent(sim.Time, uint64) { l.n.FailLink(l.pt) }
