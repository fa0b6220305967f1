package ring

import "testing"

func TestRingOrderAndGrowth(t *testing.T) {
	var r Ring[int]
	next := 0
	for i := 0; i < 20; i++ { // grows past 8 and 16 with the head moved
		r.Push(i)
		if i%3 == 0 { // pops 0…6 along the way
			if got := r.Pop(); got != next {
				t.Fatalf("pop %d, want %d", got, next)
			}
			next++
		}
	}
	r.PushFront(-1)
	want := []int{-1}
	for i := 7; i < 20; i++ {
		want = append(want, i)
	}
	if r.Len() != len(want) {
		t.Fatalf("len %d, want %d", r.Len(), len(want))
	}
	for _, w := range want {
		if got := r.Peek(); got != w {
			t.Fatalf("peek %d, want %d", got, w)
		}
		if got := r.Pop(); got != w {
			t.Fatalf("pop %d, want %d", got, w)
		}
	}
	if r.Len() != 0 {
		t.Fatalf("len %d after draining", r.Len())
	}
	if n := testing.AllocsPerRun(100, func() { r.Push(1); r.Pop() }); n != 0 {
		t.Errorf("%v allocations per push+pop", n)
	}
}

func TestRingFrontAndWrappedGrowth(t *testing.T) {
	var r Ring[int]
	for i := 0; i < 10; i++ {
		r.Push(i)
	}
	r.PushFront(10)
	for i := 11; i < 20; i++ {
		r.Push(i) // forces growth with a wrapped head
	}
	want := []int{10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, w := range want {
		if got := r.Pop(); got != w {
			t.Fatalf("got %d want %d", got, w)
		}
	}
	if r.Len() != 0 {
		t.Fatal("not empty")
	}
}
