package dataplane

import (
	"math"
	"testing"
	"time"
)

func TestPacerExact(t *testing.T) {
	p := pacer{rate: 8_000_000, bits: 8000} // 1000 datagrams/s: one per ms
	for _, tc := range []struct {
		el   time.Duration
		want uint64
	}{{-1, 0}, {0, 1}, {999_999, 1}, {time.Millisecond, 2}, {time.Second, 1001}} {
		if got := p.due(tc.el); got != tc.want {
			t.Errorf("due(%v) = %d, want %d", tc.el, got, tc.want)
		}
	}
	if p.at(0) != 0 || p.at(1) != time.Millisecond || p.at(1000) != time.Second {
		t.Fatalf("at: %v %v %v", p.at(0), p.at(1), p.at(1000))
	}
	q := pacer{rate: 3, bits: 8} // 8/3 s apart: rounds up
	if q.at(1) != 2666666667 || q.due(2666666666) != 1 || q.due(2666666667) != 2 {
		t.Fatalf("at(1) %d due %d %d", q.at(1), q.due(2666666666), q.due(2666666667))
	}
	huge := pacer{rate: math.MaxInt64, bits: 320}
	if huge.due(math.MaxInt64) != math.MaxUint64 {
		t.Fatal("due overflow not saturated")
	}
	slow := pacer{rate: 1, bits: MaxDatagram * 8}
	if slow.at(math.MaxUint64) != math.MaxInt64 {
		t.Fatal("at overflow not saturated")
	}
}
