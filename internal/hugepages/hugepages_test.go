package hugepages

import (
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

// Jobs run side by side call Maintain from their own goroutines (run -j).
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
