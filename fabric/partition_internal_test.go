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
