package roce

import (
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

// pair builds host 0 — leaf — host 1 at 400G with RoCE on both hosts.
func pair(t *testing.T, dq DCQCNParams) (*sim.Scheduler, *Transport) {
	t.Helper()
	sc := sim.NewScheduler()
	cfg := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: 512 << 10, XON: 504 << 10, MaxPacketWire: 4178}
	cfg.Lossless[3] = true
	tp, err := topo.Build(sc, 1, topo.Spec{Kind: "leaf-spine", Hosts: 2, HostsPerLeaf: 2, Spines: 1,
		HostLink:   topo.Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
		FabricLink: topo.Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
		Switch:     cfg})
	if err != nil {
		t.Fatal(err)
	}
	tr := New(tp.Net, Config{MTU: 4096, Overhead: 82, AckEvery: 1, RTO: units.Millisecond, DataPrio: 3, CtrlPrio: 6, DCQCN: dq})
	return sc, tr
}

// A QP cut to the minimum rate waits ~33 ms for its next 4 KB packet at
// 1 Mb/s. When DCQCN raises the rate meanwhile, the wait must shrink with
// it (a token bucket), not run out at the old rate.
func TestRateIncreaseShortensTheWaitOfAPacedQP(t *testing.T) {
	dq, _ := Preset("tuned-final")
	sc, tr := pair(t, dq)
	var doneAt sim.Time = -1
	tr.OnDelivered = func(msg int32, now sim.Time) { doneAt = now }
	qp := tr.Connect(0, 1)
	q := tr.NICs[0].send[qp.idx]
	// Drive the rate to the floor before anything is sent.
	for i := 0; i < 40; i++ {
		q.rp.OnCNP(units.Duration(i) * 4 * units.Microsecond)
	}
	if q.rp.Rate() > 2*units.Mbps {
		t.Fatalf("rate %v after 40 CNPs", q.rp.Rate())
	}
	sc.Run(160 * units.Microsecond) // let the clock catch up with the CNPs
	tr.Post(qp, 0, 64*1024)
	q.armDCQCN()
	sc.Run(-1)
	if doneAt < 0 {
		t.Fatal("message never delivered")
	}
	// At 1 Mb/s the 16 packets would take 16 × 33 ms; tuned-final is back
	// near line rate within tens of microseconds.
	if doneAt > 2*units.Millisecond {
		t.Fatalf("64 KiB delivered at %v: the rate increase did not shorten the pacing wait", doneAt)
	}
}

// Go-back-N: a NACK rewinds the sender to the receiver's expected PSN and
// the resent packets are counted as retransmissions.
func TestNackRewindsAndCountsRetransmits(t *testing.T) {
	dq, _ := Preset("off")
	sc, tr := pair(t, dq)
	delivered := 0
	tr.OnDelivered = func(msg int32, now sim.Time) { delivered++ }
	qp := tr.Connect(0, 1)
	tr.Post(qp, 0, 40*4096)
	q := tr.NICs[0].send[qp.idx]
	sc.Run(200 * units.Nanosecond) // a couple of packets are out
	sent := q.nxt
	if sent < 2 {
		t.Fatalf("only %d packets sent", sent)
	}
	q.ack(sc.Now(), 1)
	q.rewind(1) // as a NACK for PSN 1 would
	sc.Run(-1)
	if delivered != 1 {
		t.Fatalf("delivered %d messages", delivered)
	}
	if got := tr.NICs[0].C.Retransmits; got != sent-1 {
		t.Fatalf("retransmits %d, want %d", got, sent-1)
	}
	// The receiver saw the duplicates and re-acknowledged them.
	if tr.Counters().Retransmits == 0 {
		t.Fatal("counters lost the retransmits")
	}
}

// A message posted on a QP whose previous message is fully sent but not
// yet acknowledged starts with a packet of its own: a one-packet message
// then carries its own id, payload and end mark, and is delivered (it used
// to be sent as the old message's and never completed).
func TestMessagePostedBehindAnUnackedOneIsDelivered(t *testing.T) {
	sc, tr := pair(t, DCQCNParams{})
	delivered := map[int32]sim.Time{}
	tr.OnDelivered = func(msg int32, now sim.Time) { delivered[msg] = now }
	qp := tr.Connect(0, 1)
	tr.Post(qp, 1, 3*4096)
	// 3 packets take ~0.25 us to send; the first ACK needs ~4 us to return.
	sc.At(units.Microsecond, postLater{tr, qp, 2, 100}, 0)
	sc.At(2*units.Microsecond, postLater{tr, qp, 3, 5000}, 0)
	sc.Run(units.Second)
	for _, m := range []int32{1, 2, 3} {
		if _, ok := delivered[m]; !ok {
			t.Errorf("message %d not delivered", m)
		}
	}
	if c := tr.NICs[0].C; c.Retransmits != 0 {
		t.Errorf("%d retransmits", c.Retransmits)
	}
}

type postLater struct {
	tr    *Transport
	qp    QP
	msg   int32
	bytes int64
}

func (p postLater) OnEvent(sim.Time, uint64) { p.tr.Post(p.qp, p.msg, p.bytes) }
