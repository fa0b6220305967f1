package hugepages

import (
	"slices"
	"sync"
	"testing"
)

func TestDue(t *testing.T) {
	for _, c := range []struct {
		mapped, done uint64
		want         bool
	}{
		{MinHeap - 1, 0, false}, // a small run is left alone
		{MinHeap, 0, true},
		{MinHeap + regrow - 1, MinHeap, false}, // not grown enough since
		{MinHeap + regrow, MinHeap, true},
		{1 << 30, 1<<30 - regrow, true},
		{1 << 30, 1 << 30, false},
	} {
		if got := due(c.mapped, c.done); got != c.want {
			t.Errorf("due(%d, %d) = %v, want %v", c.mapped, c.done, got, c.want)
		}
	}
}

// Jobs run side by side call Maintain from their own goroutines (run -j):
// this test is for the race detector (scripts/test runs it so).
func TestMaintainConcurrently(t *testing.T) {
	reset()
	defer reset()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				Maintain()
			}
		}()
	}
	wg.Wait()
}

func TestMadviseMode(t *testing.T) {
	for _, c := range []struct {
		enabled string
		want    bool
	}{
		{"always [madvise] never\n", true},
		{"[always] madvise never\n", false}, // the kernel does it already
		{"always madvise [never]\n", false}, // the administrator said no
		{"", false},
	} {
		if got := madviseMode(c.enabled); got != c.want {
			t.Errorf("madviseMode(%q) = %v, want %v", c.enabled, got, c.want)
		}
	}
}

func TestUncoveredAndAddSpan(t *testing.T) {
	done := []span{{10, 20}, {30, 40}}
	for _, c := range []struct {
		s    span
		want []span
	}{
		{span{0, 50}, []span{{0, 10}, {20, 30}, {40, 50}}},
		{span{10, 40}, []span{{20, 30}}},
		{span{12, 18}, nil},
		{span{15, 35}, []span{{20, 30}}},
		{span{40, 60}, []span{{40, 60}}},
		{span{0, 10}, []span{{0, 10}}},
	} {
		if got := uncovered(c.s, done); !slices.Equal(got, c.want) {
			t.Errorf("uncovered(%v) = %v, want %v", c.s, got, c.want)
		}
	}
	if got, want := uncovered(span{5, 9}, nil), []span{{5, 9}}; !slices.Equal(got, want) {
		t.Errorf("uncovered with nothing done = %v", got)
	}
	for _, c := range []struct {
		s    span
		want []span
	}{
		{span{0, 5}, []span{{0, 5}, {10, 20}, {30, 40}}},
		{span{20, 30}, []span{{10, 40}}}, // touching both: one span
		{span{22, 25}, []span{{10, 20}, {22, 25}, {30, 40}}},
		{span{15, 35}, []span{{10, 40}}},
		{span{50, 60}, []span{{10, 20}, {30, 40}, {50, 60}}},
		{span{0, 100}, []span{{0, 100}}},
	} {
		if got := addSpan(slices.Clone(done), c.s); !slices.Equal(got, c.want) {
			t.Errorf("addSpan(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}
