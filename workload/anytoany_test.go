package workload

import (
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

func TestAnyToAnyShape(t *testing.T) {
	s := AnyToAnySpec{Clients: []int{0, 1}, Servers: []int{5, 6, 7}, Size: 125000, Depth: 2,
		Duration: 10 * units.Millisecond, Rate: units.Gbps}
	// 1 Gb/s × 10 ms = 1.25 MB = 10 writes of 125 kB, twice: 10 per slot, +1.
	if got := anyChain(s); got != 11 {
		t.Fatalf("chain %d, want 11", got)
	}
	d, err := AnyToAny(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs) != 2*3*2*11 || d.Until != s.Duration || d.Ranks != 5 || d.RankHost[2] != 5 {
		t.Fatalf("%d messages, until %v, ranks %d, hosts %v", len(d.Msgs), d.Until, d.Ranks, d.RankHost)
	}
	slots := 12
	for i, m := range d.Msgs {
		wantDeps := int32(1)
		if i < slots {
			wantDeps = 0
		}
		if d.DepCount[i] != wantDeps || m.Bytes != 125000 {
			t.Fatalf("message %d: deps %d bytes %d", i, d.DepCount[i], m.Bytes)
		}
		if i >= slots {
			p := d.Msgs[i-slots]
			if p.Src != m.Src || p.Dst != m.Dst || len(d.Successors(int32(i-slots))) != 1 || d.Successors(int32(i - slots))[0] != int32(i) {
				t.Fatalf("message %d does not follow %d", i, i-slots)
			}
		}
	}
	if _, err := AnyToAny(AnyToAnySpec{Clients: []int{0}, Servers: []int{0}, Size: 1, Depth: 1, Duration: 1}); err == nil {
		t.Error("a host as client and server was accepted")
	}
	s.Limit = 10
	if _, err := AnyToAny(s); err == nil {
		t.Error("the limit was not enforced")
	}
}

// The executor cuts what would start at or after Until, and everything
// waiting on it; the run is done when every message is delivered or cut.
func TestExecutorCutsAtUntil(t *testing.T) {
	s := AnyToAnySpec{Clients: []int{0}, Servers: []int{1}, Size: 1000, Depth: 1, Duration: 10, Rate: 8 * 1000 * 1e12 / 20}
	d, err := AnyToAny(s) // one chain of ceil(2 × 10 ps × rate / 8 / 1000 B)+1 = 2 writes
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs) != 2 {
		t.Fatalf("%d messages", len(d.Msgs))
	}
	x := NewExecutor(d)
	if r := x.Ready(0); len(r) != 1 || r[0] != 0 {
		t.Fatalf("Ready = %v", r)
	}
	// Delivered at 10 ps = Until: the next write is cut, the run is done.
	if r := x.Delivered(0, sim.Time(10)); len(r) != 0 || !x.Done() || x.Cut() != 1 || !x.IsCut(1) || x.IsCut(0) || x.Completed() != 1 {
		t.Fatalf("released %v done %v cut %d", r, x.Done(), x.Cut())
	}
	// Before Until the chain goes on.
	x = NewExecutor(d)
	x.Ready(0)
	if r := x.Delivered(0, sim.Time(9)); len(r) != 1 || r[0] != 1 || x.Done() || x.Cut() != 0 {
		t.Fatalf("released %v done %v cut %d", r, x.Done(), x.Cut())
	}
}

// Cutting one message cuts every message that waits on it, however far.
func TestExecutorCutCascades(t *testing.T) {
	d := &DAG{Until: 5}
	a := d.Add(Message{Bytes: 1})
	b := d.Add(Message{Bytes: 1}, a)
	c := d.Add(Message{Bytes: 1}, b)
	e := d.Add(Message{Bytes: 1})
	f := d.Add(Message{Bytes: 1}, c, e) // waits on the cut chain and on e
	d.Finish()
	x := NewExecutor(d)
	x.Ready(0)
	x.Delivered(a, 7) // b released at 7 ≥ 5: b, c and f are cut
	if x.Cut() != 3 || !x.IsCut(b) || !x.IsCut(c) || !x.IsCut(f) {
		t.Fatalf("cut %d", x.Cut())
	}
	if r := x.Delivered(e, 8); len(r) != 0 || !x.Done() {
		t.Fatalf("e released %v, done %v", r, x.Done())
	}
}
