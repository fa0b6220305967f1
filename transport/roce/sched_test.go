package roce

import (
	"testing"

	"fabriclab/sim"
)

func TestQPHeapOrder(t *testing.T) {
	var h qpHeap
	times := []int64{50, 10, 30, 10, 70, 20}
	for i, ti := range times {
		h.push(&sendQP{idx: int32(i), Sender: Sender{nextSend: sim.Time(ti)}})
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
		qs[i] = &sendQP{idx: int32(i), Sender: Sender{nextSend: sim.Time(100 + 10*i)}}
		h.push(qs[i])
	}
	qs[5].nextSend = 5
	h.up(qs[5].heapIdx - 1)
	if h.min() != qs[5] {
		t.Fatalf("min is QP %d", h.min().idx)
	}
}
