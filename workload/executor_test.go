package workload

import (
	"reflect"
	"testing"

	"fabriclab/sim"
)

// dagOf builds a DAG from messages and their dependencies.
func dagOf(msgs []Message, deps [][]int32) *DAG {
	d := &DAG{}
	for i, m := range msgs {
		d.Add(m, deps[i]...)
	}
	d.Finish()
	return d
}

func ids(xs ...int32) []int32 { return xs }

func same(t *testing.T, what string, got, want []int32) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// A chain with a marker joining two pieces: roots in index order, a
// delivery releases its successors, a marker completes at once and what it
// releases follows it, Done after the last delivery.
func TestExecutorReleasesInDependencyOrder(t *testing.T) {
	mk := Message{Marker: true}
	//   0 ─┐
	//      ├─ 2 (marker) ─┬─ 3
	//   1 ─┘              └─ 4 ─ 5
	d := dagOf([]Message{{Bytes: 1}, {Bytes: 1}, mk, {Bytes: 1}, {Bytes: 1}, {Bytes: 1}},
		[][]int32{nil, nil, {0, 1}, {2}, {2}, {4}})
	e := NewExecutor(d)
	same(t, "Ready(0)", e.Ready(0), ids(0, 1))
	same(t, "Ready again", e.Ready(0), nil)
	same(t, "Delivered(1)", e.Delivered(1, 10), nil)
	same(t, "Delivered(0)", e.Delivered(0, 20), ids(2, 3, 4))
	if e.Completed() != 3 || e.Done() {
		t.Errorf("completed %d, done %v after 0, 1 and the marker", e.Completed(), e.Done())
	}
	same(t, "Delivered(0) twice", e.Delivered(0, 21), nil)
	same(t, "Delivered(3)", e.Delivered(3, 30), nil)
	same(t, "Delivered(4)", e.Delivered(4, 30), ids(5))
	same(t, "Delivered(5)", e.Delivered(5, 40), nil)
	if !e.Done() || e.Completed() != 6 {
		t.Errorf("completed %d, done %v at the end", e.Completed(), e.Done())
	}
}

// Markers nest depth first: a marker's own successors come before its
// next sibling's.
func TestExecutorMarkersDepthFirst(t *testing.T) {
	mk := Message{Marker: true}
	// 0 → {1 (marker) → {2, 3 (marker) → 4}, 5}
	d := dagOf([]Message{{Bytes: 1}, mk, {Bytes: 1}, mk, {Bytes: 1}, {Bytes: 1}},
		[][]int32{nil, {0}, {1}, {1}, {3}, {0}})
	e := NewExecutor(d)
	same(t, "Ready", e.Ready(0), ids(0))
	same(t, "Delivered(0)", e.Delivered(0, 5), ids(1, 2, 3, 4, 5))
	if e.Completed() != 3 {
		t.Errorf("completed %d, want 0 and both markers", e.Completed())
	}
}

// Messages with a later earliest start wait: NextRelease says until when,
// Ready returns them once their time has come, earliest first, ties in
// release order; a waiting marker completes when it starts.
func TestExecutorWaitsForEarliestStart(t *testing.T) {
	d := dagOf([]Message{
		{Bytes: 1, At: 30}, // 0
		{Bytes: 1},         // 1
		{Bytes: 1, At: 10}, // 2
		{Bytes: 1, At: 30}, // 3
		{Marker: true, At: 20},
		{Bytes: 1}, // 5, after the marker
		{Bytes: 1, At: 5},
	}, [][]int32{nil, nil, nil, nil, nil, {4}, {1}})
	e := NewExecutor(d)
	same(t, "Ready(0)", e.Ready(0), ids(1))
	if at, ok := e.NextRelease(); !ok || at != 10 {
		t.Errorf("NextRelease = %v %v, want 10", at, ok)
	}
	same(t, "Delivered(1) at 2", e.Delivered(1, 2), nil) // 6 waits for 5
	if at, _ := e.NextRelease(); at != 5 {
		t.Errorf("NextRelease = %v, want 5", at)
	}
	same(t, "Ready(7)", e.Ready(7), ids(6))
	same(t, "Ready(25)", e.Ready(25), ids(2, 4, 5))
	same(t, "Ready(30)", e.Ready(30), ids(0, 3))
	if _, ok := e.NextRelease(); ok {
		t.Error("something still waits")
	}
	// A delivery late for its successor's earliest start starts it at once.
	d2 := dagOf([]Message{{Bytes: 1}, {Bytes: 1, At: 4}}, [][]int32{nil, {0}})
	e2 := NewExecutor(d2)
	e2.Ready(0)
	same(t, "late delivery", e2.Delivered(0, 9), ids(1))
}

// With OwnTimers the waiting messages are listed in release order with
// the others, and Start starts each (a marker's successors with it).
func TestExecutorOwnTimers(t *testing.T) {
	d := dagOf([]Message{
		{Bytes: 1},         // 0
		{Bytes: 1, At: 50}, // 1
		{Bytes: 1},         // 2
		{Marker: true, At: 20},
		{Bytes: 1},         // 4, after the marker
		{Bytes: 1, At: 10}, // 5, after 0
		{Bytes: 1},         // 6, after 0
	}, [][]int32{nil, nil, nil, nil, {3}, {0}, {0}})
	e := NewExecutor(d)
	e.OwnTimers = true
	same(t, "Ready(0)", e.Ready(0), ids(0, 1, 2, 3))
	if _, ok := e.NextRelease(); ok {
		t.Error("NextRelease with OwnTimers")
	}
	same(t, "Delivered(0)", e.Delivered(0, 1), ids(5, 6))
	same(t, "Start(5)", e.Start(5, 10), ids(5))
	same(t, "Start(3)", e.Start(3, 20), ids(3, 4))
	same(t, "Start(1)", e.Start(1, 50), ids(1))
	if e.Completed() != 2 {
		t.Errorf("completed %d, want 0 and the marker", e.Completed())
	}
}

// Combined jobs: the executor runs the joint DAG exactly as each job's own
// would, the later job's roots waiting for its start.
func TestExecutorCombinedJobs(t *testing.T) {
	a, err := RingAllReduce(3, 300)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Incast(4, 2, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	d, offs := Combine([]*DAG{a, b}, []sim.Time{0, 100})
	e := NewExecutor(d)
	ready := e.Ready(0)
	same(t, "Ready(0)", ready, ids(0, 1, 2))
	if at, _ := e.NextRelease(); at != 100 {
		t.Errorf("the incast waits until %v, want 100", at)
	}
	// Deliver the ring step by step: each delivery releases the next rank's
	// send of the next step.
	var order []int32
	queue := append([]int32(nil), ready...)
	for now := sim.Time(1); len(queue) > 0; now++ {
		m := queue[0]
		queue = queue[1:]
		order = append(order, m)
		queue = append(queue, e.Delivered(m, now)...)
	}
	if len(order) != len(a.Msgs) || e.Done() {
		t.Fatalf("delivered %d of the ring's %d messages, done %v", len(order), len(a.Msgs), e.Done())
	}
	same(t, "Ready(100)", e.Ready(100), ids(offs[1], offs[1]+1))
	e.Delivered(offs[1], 101)
	e.Delivered(offs[1]+1, 102)
	if !e.Done() {
		t.Error("not done after every message")
	}
}

// Driving a real collective (chunks over two QPs, warmup and iterations:
// markers everywhere) to the end: every message is released exactly once,
// only after everything it waits for, and the executor is done when the
// last one is delivered.
func TestExecutorRunsACollective(t *testing.T) {
	d, err := Build(Spec{Collective: "allreduce", Algorithm: "ring", Ranks: 4, Size: 1 << 20,
		ChunkSize: 64 << 10, QPs: 2, Iterations: 2, Warmup: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	preds := make([][]int32, len(d.Msgs))
	for i := range d.Msgs {
		for _, j := range d.Successors(int32(i)) {
			preds[j] = append(preds[j], int32(i))
		}
	}
	e := NewExecutor(d)
	released := make([]int, len(d.Msgs))
	delivered := make([]bool, len(d.Msgs))
	var queue []int32
	take := func(list []int32, now sim.Time) {
		for _, m := range list {
			released[m]++
			for _, p := range preds[m] {
				if !delivered[p] {
					t.Fatalf("message %d released at %v before %d was delivered", m, now, p)
				}
			}
			if d.Msgs[m].Marker {
				delivered[m] = true
				continue
			}
			queue = append(queue, m)
		}
	}
	take(e.Ready(0), 0)
	for now := sim.Time(1); len(queue) > 0; now++ {
		// Deliver the newest first: an order unlike the release order.
		m := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		delivered[m] = true
		take(e.Delivered(m, now), now)
	}
	for i, n := range released {
		if n != 1 {
			t.Fatalf("message %d released %d times", i, n)
		}
	}
	if !e.Done() || e.Completed() != len(d.Msgs) {
		t.Errorf("done %v, %d of %d delivered", e.Done(), e.Completed(), len(d.Msgs))
	}
}

// External messages are never released, even as roots: their delivery
// comes from outside, and what waits on them follows as usual.
func TestExecutorExternalMessages(t *testing.T) {
	ext := Message{Bytes: 1, External: true}
	// 0 (external) ─┐
	// 1 ────────────┴─ 2 (marker) ─ 3;  4 (external, no dependants)
	d := dagOf([]Message{ext, {Bytes: 1}, {Marker: true}, {Bytes: 1}, ext},
		[][]int32{nil, nil, {0, 1}, {2}, nil})
	e := NewExecutor(d)
	same(t, "Ready(0)", e.Ready(0), ids(1))
	same(t, "Delivered(1)", e.Delivered(1, 5), nil)
	if _, ok := e.NextRelease(); ok {
		t.Error("an external message waits for a start time")
	}
	same(t, "Delivered(0) from outside", e.Delivered(0, 7), ids(2, 3))
	same(t, "Delivered(3)", e.Delivered(3, 9), nil)
	if e.Done() {
		t.Error("done before external message 4 was delivered")
	}
	same(t, "Delivered(4)", e.Delivered(4, 9), nil)
	if !e.Done() || e.Completed() != 5 {
		t.Errorf("completed %d, done %v at the end", e.Completed(), e.Done())
	}
}
