package dataplane

import (
	"math"
	"math/bits"
	"time"
)

// pacer spaces a UDP flow's datagrams: datagram k (from 0) leaves at
// k × bits / rate seconds after the start. Both directions of that formula
// are exact integer arithmetic in 128 bits, so no drift builds up however
// long the flow runs and no rate is too high or too low to express.
type pacer struct {
	rate uint64 // bits/s, > 0
	bits uint64 // bits per datagram, > 0
}

const nsPerSec = uint64(time.Second)

// due is how many datagrams should have left by elapsed: those with
// k × bits × 1e9 ≤ elapsed × rate.
func (p pacer) due(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(elapsed), p.rate)
	d := p.bits * nsPerSec // ≤ 65535 × 8 × 1e9, no overflow
	if hi >= d {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, d)
	if q == math.MaxUint64 {
		return q
	}
	return q + 1
}

// at is when datagram k leaves, rounded up to the nanosecond.
func (p pacer) at(k uint64) time.Duration {
	hi, lo := bits.Mul64(k, p.bits*nsPerSec)
	if hi >= p.rate {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, p.rate)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(q)
}
