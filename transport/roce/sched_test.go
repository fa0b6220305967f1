package roce

import (
	"testing"

	"fabriclab/sim"
)

func TestRingFIFOAndFront(t *testing.T) {
	var r ring
	qs := make([]*sendQP, 20)
	for i := range qs {
		qs[i] = &sendQP{idx: int32(i)}
	}
	for i := 0; i < 10; i++ {
		r.push(qs[i])
	}
	r.pushFront(qs[10])
	for i := 11; i < 20; i++ {
		r.push(qs[i]) // forces growth with a wrapped head
	}
	want := []int32{10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, w := range want {
		if got := r.pop().idx; got != w {
			t.Fatalf("got %d want %d", got, w)
		}
	}
	if r.len() != 0 {
		t.Fatal("not empty")
	}
}

func TestQPHeapOrder(t *testing.T) {
	var h qpHeap
	times := []int64{50, 10, 30, 10, 70, 20}
	for i, ti := range times {
		h.push(&sendQP{idx: int32(i), nextSend: sim.Time(ti)})
	}
	var got []int32
	for h.len() > 0 {
		q := h.pop()
		if q.heapIdx != 0 {
			t.Fatal("heapIdx not cleared")
		}
		got = append(got, q.idx)
	}
	want := []int32{1, 3, 5, 2, 0, 4}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}

func TestQPHeapUpAfterDecrease(t *testing.T) {
	var h qpHeap
	qs := make([]*sendQP, 6)
	for i := range qs {
		qs[i] = &sendQP{idx: int32(i), nextSend: sim.Time(100 + 10*i)}
		h.push(qs[i])
	}
	qs[5].nextSend = 5
	h.up(qs[5].heapIdx - 1)
	if h.min() != qs[5] {
		t.Fatalf("min is QP %d", h.min().idx)
	}
}
