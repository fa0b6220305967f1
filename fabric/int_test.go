package fabric_test

import (
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
)

// A switch stamps in-band telemetry on a packet as it leaves an egress
// port: the bytes still queued there, the bytes the port sent before it,
// the time, the rate. Three packets at 400G into a 100G port: the second
// leaves with the third queued behind it. The records go back with their
// packets.
func TestSwitchStampsINTAtDequeue(t *testing.T) {
	b := newStar(lossy(), us, g400, g100)
	b.hosts[0].queue(1, 3, mtuW, 3)
	for i := range b.hosts[0].send {
		b.hosts[0].send[i].INT = 1 // ask for a record
	}
	b.start()
	b.s.Run(-1)
	got := b.hosts[1].ints
	if len(got) != 3 {
		t.Fatalf("%d packets with telemetry, want 3", len(got))
	}
	t100 := sim.Time(4 * t400)
	a0 := t400 + us                          // the first packet reaches the switch
	egress := int32(b.hosts[1].port.Peer.ID) // the switch's port toward host 1
	want := []fabric.INTHop{
		{QueueBytes: 0, TxBytes: 0, At: a0, Rate: g100, Port: egress},
		{QueueBytes: mtuW, TxBytes: mtuW, At: a0 + t100, Rate: g100, Port: egress},
		{QueueBytes: 0, TxBytes: 2 * mtuW, At: a0 + 2*t100, Rate: g100, Port: egress},
	}
	for i, r := range got {
		if r.N != 1 || r.Hops[0] != want[i] {
			t.Errorf("packet %d: %d hops, %+v; want 1, %+v", i, r.N, r.Hops[0], want[i])
		}
	}
	if b.net.INT.Live != 0 {
		t.Errorf("%d records outlived their packets", b.net.INT.Live)
	}
	b.checkEnd(t)
}

// The table recycles records: many packets, one at a time, need one.
func TestINTTableRecycles(t *testing.T) {
	var tab fabric.INTTable
	for i := 0; i < 1000; i++ {
		id := tab.New()
		if tab.Get(id).N != 0 {
			t.Fatal("a recycled record was not empty")
		}
		tab.Get(id).N = 2
		tab.Release(id)
	}
	if tab.Allocated() != 1 || tab.Live != 0 {
		t.Errorf("allocated %d, live %d; want 1, 0", tab.Allocated(), tab.Live)
	}
}
