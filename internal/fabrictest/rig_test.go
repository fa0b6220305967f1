package fabrictest_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/topo"
	"fabriclab/transport/roce"
	"fabriclab/units"
)

// recorder is a testing.TB that keeps the errors the rig reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func rig(t testing.TB) (*fabrictest.Rig, *roce.Transport) {
	l := topo.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	sw := &fabric.SwitchConfig{Buffer: 1 << 20, MaxPacketWire: 1100}
	r := fabrictest.New(t, 1, fabrictest.LeafSpine(4, 2, 1, l, l, sw))
	tr := roce.New(r.Net, roce.Config{MTU: 1000, Overhead: 100, AckEvery: 1, RTO: units.Millisecond, CtrlPrio: 6})
	fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
	return r, tr
}

// A clean run passes every invariant, mid-run and at the end, and records
// the deliveries; the messages of one pair share its connection.
func TestRigCleanRun(t *testing.T) {
	r, tr := rig(t)
	r.Send(0, 3, 1, 10_000)
	r.Send(0, 3, 2, 0)
	r.SendAt(5*units.Microsecond, 1, 2, 3, 5000)
	r.Run(2 * units.Microsecond)
	if err := r.Invariants(); err != nil {
		t.Fatal(err)
	}
	r.Run(-1)
	if len(r.Delivered) != 3 || len(r.Order) != 3 || r.Order[0] != 1 {
		t.Fatalf("delivered %v in order %v", r.Delivered, r.Order)
	}
	if c := tr.Counters(); c.Retransmits != 0 || c.Timeouts != 0 {
		t.Fatalf("counters %+v", c)
	}
}

// The rig catches what it exists for: a packet taken from the pool and
// never sent, a message never delivered, a message delivered twice or
// never sent.
func TestRigCatchesBrokenInvariants(t *testing.T) {
	r, _ := rig(t)
	r.Send(0, 1, 1, 3000)
	r.Sched.Run(-1)
	if err := r.Invariants(); err != nil {
		t.Fatal(err)
	}
	leak := r.Net.Pool.Get()
	if err := r.Invariants(); err == nil || !strings.Contains(err.Error(), "leaked") {
		t.Fatalf("leak: %v", err)
	}
	r.Net.Pool.Put(leak)

	r.Expect(9, 100)
	if err := r.Invariants(); err == nil || !strings.Contains(err.Error(), "missing [9]") {
		t.Fatalf("undelivered: %v", err)
	}

	rec := &recorder{TB: t}
	r2, tr2 := rig(rec)
	r2.Send(0, 1, 1, 100)
	r2.Sched.Run(-1)
	tr2.OnDelivered(1, r2.Sched.Now())
	tr2.OnDelivered(5, r2.Sched.Now())
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "delivered again") || !strings.Contains(rec.errs[1], "never sent") {
		t.Fatalf("errors %q", rec.errs)
	}
}

// fabric.Packet keeps what a switch touches (up to INT, which every
// egress reads) in its first cache line and the transport's PSN and Hdr
// in the second, 128 bytes in all: the hot path's memory traffic depends
// on it (see fabric.Packet).
func TestPacketLayout(t *testing.T) {
	var p fabric.Packet
	if s, o := unsafe.Sizeof(p), unsafe.Offsetof(p.INT); s != 128 || o+4 > 64 || unsafe.Offsetof(p.DstQP) >= 64 {
		t.Fatalf("Packet is %d bytes, INT at %d, DstQP at %d", s, o, unsafe.Offsetof(p.DstQP))
	}
}
