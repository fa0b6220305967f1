package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// nccl-tests (src/*.cc, *GetBw): all_reduce 2(n−1)/n; all_gather,
// reduce_scatter, alltoall (n−1)/n; broadcast, reduce, sendrecv 1.
func TestBusBWFactorMatchesNCCLTests(t *testing.T) {
	for _, tc := range []struct {
		c    Collective
		n    int
		want float64
	}{
		{AllReduce, 2, 1}, {AllReduce, 8, 1.75}, {AllReduce, 32, 62.0 / 32},
		{AllGather, 2, 0.5}, {AllGather, 8, 0.875}, {AllGather, 32, 31.0 / 32},
		{ReduceScatter, 2, 0.5}, {ReduceScatter, 8, 0.875}, {ReduceScatter, 32, 31.0 / 32},
		{AllToAll, 2, 0.5}, {AllToAll, 8, 0.875}, {AllToAll, 32, 31.0 / 32},
		{Gather, 2, 0.5}, {Gather, 8, 0.875}, {Gather, 32, 31.0 / 32},
		{Scatter, 2, 0.5}, {Scatter, 8, 0.875}, {Scatter, 32, 31.0 / 32},
		{Broadcast, 1, 1}, {Broadcast, 2, 1}, {Broadcast, 8, 1}, {Broadcast, 32, 1},
		{Reduce, 1, 1}, {Reduce, 2, 1}, {Reduce, 8, 1}, {Reduce, 32, 1},
		{SendRecv, 1, 1}, {SendRecv, 2, 1}, {SendRecv, 8, 1}, {SendRecv, 32, 1},
		// Traffic patterns that are not collectives report algbw as busbw.
		{Permutation, 1, 1}, {Permutation, 2, 1}, {Permutation, 8, 1}, {Permutation, 32, 1},
		{Incast, 1, 1}, {Incast, 2, 1}, {Incast, 8, 1}, {Incast, 32, 1},
		{FlowList, 1, 1}, {FlowList, 2, 1}, {FlowList, 8, 1}, {FlowList, 32, 1},
	} {
		if got := BusBWFactor(tc.c, tc.n); got != tc.want {
			t.Errorf("BusBWFactor(%s, %d) = %v, want %v", tc.c, tc.n, got, tc.want)
		}
	}
}

// With one rank nccl-tests' formulas give 0 for the collectives whose factor
// has (n−1) in it (it prints busbw 0.00 on a single GPU).
func TestBusBWFactorSingleRankMatchesNCCLTests(t *testing.T) {
	for _, c := range []Collective{AllReduce, AllGather, ReduceScatter, AllToAll, Gather, Scatter} {
		if got := BusBWFactor(c, 1); got != 0 {
			t.Errorf("BusBWFactor(%s, 1) = %v, want 0", c, got)
		}
	}
}

func TestSummarizeNearestRank(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	got := Summarize(xs)
	want := Percentiles{Count: 1000, Mean: 500.5, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000}
	if got != want {
		t.Errorf("1..1000: %+v, want %+v", got, want)
	}
	for i := 1; i < len(xs); i++ {
		if xs[i-1] > xs[i] {
			t.Fatalf("input not sorted in place")
		}
	}

	if got := Summarize(nil); got != (Percentiles{}) {
		t.Errorf("empty: %+v", got)
	}
	if got := Summarize([]float64{7}); got != (Percentiles{Count: 1, Mean: 7, P50: 7, P90: 7, P99: 7, P999: 7, Max: 7}) {
		t.Errorf("one value: %+v", got)
	}
	if got := Summarize([]float64{3, 1}); got != (Percentiles{Count: 2, Mean: 2, P50: 1, P90: 3, P99: 3, P999: 3, Max: 3}) {
		t.Errorf("two values: %+v", got)
	}

	// Nearest rank is the ⌈p·n⌉-th smallest for every n (no float slip).
	for n := 1; n <= 3000; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		r := Summarize(xs)
		rank := func(num, den int) float64 { return float64((num*n + den - 1) / den) }
		if r.P50 != rank(1, 2) || r.P90 != rank(9, 10) || r.P99 != rank(99, 100) || r.P999 != rank(999, 1000) || r.Max != float64(n) {
			t.Fatalf("n=%d: %+v", n, r)
		}
	}
}

// S = 1e9 B in 0.1 s on 8 ranks: algbw 10 GB/s, all-reduce busbw 17.5 GB/s;
// ideal 0.08 s is 80 %.
func TestSizeResultFinish(t *testing.T) {
	r := SizeResult{SizeBytes: 1e9, Ranks: 8, CCTS: 0.1, IdealS: 0.08, Complete: true}
	r.Finish(AllReduce)
	if !near(r.AlgBWGBps, 10) || !near(r.BusBWGBps, 17.5) || !near(r.IdealPct, 80) {
		t.Errorf("all-reduce: algbw %v busbw %v ideal %v%%", r.AlgBWGBps, r.BusBWGBps, r.IdealPct)
	}
	r.Finish(AllToAll)
	if !near(r.BusBWGBps, 8.75) {
		t.Errorf("all-to-all busbw %v, want 8.75", r.BusBWGBps)
	}
	r.Finish(SendRecv)
	if !near(r.BusBWGBps, 10) {
		t.Errorf("sendrecv busbw %v, want 10", r.BusBWGBps)
	}
	// No completion time: nothing is divided by zero.
	z := SizeResult{SizeBytes: 1e9, Ranks: 8, IdealS: 0.08, Complete: true}
	z.Finish(AllReduce)
	if z.AlgBWGBps != 0 || z.BusBWGBps != 0 || z.IdealPct != 0 {
		t.Errorf("CCT 0: %+v", z)
	}
	// An unfinished run reports how long it ran, but no rates: dividing S by
	// a partial time would claim more than the NIC can carry.
	u := SizeResult{SizeBytes: 1e9, Ranks: 8, CCTS: 0.001, IdealS: 0.08}
	u.Finish(AllReduce)
	if u.AlgBWGBps != 0 || u.BusBWGBps != 0 || u.IdealPct != 0 {
		t.Errorf("incomplete: %+v", u)
	}
	// A flow list has no bus bandwidth, only aggregate throughput.
	f := SizeResult{SizeBytes: 1e9, Ranks: 8, CCTS: 0.1, Complete: true}
	f.Finish(FlowList)
	if !near(f.AlgBWGBps, 10) || f.BusBWGBps != 0 {
		t.Errorf("flow list: algbw %v busbw %v", f.AlgBWGBps, f.BusBWGBps)
	}
}

// Add sums every counter, keeps the larger MaxQueueBytes and leaves
// UtilizationPct alone. Fields are set by reflection so a new counter that
// Add forgets fails here.
func TestCountersAdd(t *testing.T) {
	var a, b Counters
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := 0; i < va.NumField(); i++ {
		switch va.Field(i).Kind() {
		case reflect.Int64:
			va.Field(i).SetInt(int64(10 + i))
			vb.Field(i).SetInt(int64(1000 * (i + 1)))
		case reflect.Float64:
			va.Field(i).SetFloat(0.5 + float64(i))
			vb.Field(i).SetFloat(0.25 * float64(i+1))
		default:
			t.Fatalf("field %s has unexpected kind %v", va.Type().Field(i).Name, va.Field(i).Kind())
		}
	}
	before := a
	a.Add(b)
	vbefore := reflect.ValueOf(before)
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		got, x, y := va.Field(i), vbefore.Field(i), vb.Field(i)
		switch name {
		case "MaxQueueBytes", "ReorderMaxPackets":
			if got.Int() != max(x.Int(), y.Int()) {
				t.Errorf("%s = %d, want max(%d, %d)", name, got.Int(), x.Int(), y.Int())
			}
		case "UtilizationPct":
			if got.Float() != x.Float() {
				t.Errorf("%s = %v, want it unchanged (%v)", name, got.Float(), x.Float())
			}
		default:
			if got.Kind() == reflect.Int64 && got.Int() != x.Int()+y.Int() {
				t.Errorf("%s = %d, want %d + %d", name, got.Int(), x.Int(), y.Int())
			}
			if got.Kind() == reflect.Float64 && got.Float() != x.Float()+y.Float() {
				t.Errorf("%s = %v, want %v + %v", name, got.Float(), x.Float(), y.Float())
			}
		}
	}
	// The larger max wins whichever side holds it.
	c := Counters{MaxQueueBytes: 5}
	c.Add(Counters{MaxQueueBytes: 3})
	if c.MaxQueueBytes != 5 {
		t.Errorf("max queue %d, want 5", c.MaxQueueBytes)
	}
}

func TestCurve(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	c := Curve(xs, 4, false)
	want := []float64{1, 250, 500, 750, 1000}
	if len(c) != len(want) {
		t.Fatalf("curve %v", c)
	}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("curve %v, want %v", c, want)
		}
	}
	if full := Curve(xs, 4, true); len(full) != 1000 {
		t.Fatalf("full curve has %d points", len(full))
	}
	if short := Curve(xs[:3], 4, false); len(short) != 3 {
		t.Fatalf("short curve %v", short)
	}
}

func TestSlowdownBuckets(t *testing.T) {
	sizes := []int64{100, 100, 100, 200, 300, 400, 1000, 1000, 5000, 9000}
	slows := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	b := SlowdownBuckets(sizes, slows, EqualCount, 5)
	// Bucket b ends at the b/5 quantile, but size 100 is not split: the
	// first bucket takes all three, the second only what is left to 40%.
	want := [][3]int64{{100, 100, 3}, {200, 200, 1}, {300, 400, 2}, {1000, 1000, 2}, {5000, 9000, 2}}
	if len(b) != len(want) {
		t.Fatalf("%d buckets: %+v", len(b), b)
	}
	for i, w := range want {
		if b[i].LoBytes != w[0] || b[i].HiBytes != w[1] || int64(b[i].Slowdown.Count) != w[2] {
			t.Errorf("bucket %d = %d–%d ×%d, want %v", i, b[i].LoBytes, b[i].HiBytes, b[i].Slowdown.Count, w)
		}
	}
	if b[0].Slowdown.P50 != 2 || b[0].Slowdown.Max != 3 {
		t.Errorf("bucket 0 slowdown %+v", b[0].Slowdown)
	}
	l := SlowdownBuckets(sizes, slows, Log2, 0)
	// (64,128] (128,256] (256,512] (512,1024] (4096,8192] (8192,16384]
	if len(l) != 6 || l[0].HiBytes != 100 || l[2].LoBytes != 300 || l[2].HiBytes != 400 || l[3].Slowdown.Count != 2 {
		t.Errorf("log2 buckets %+v", l)
	}
	if SlowdownBuckets(nil, nil, EqualCount, 10) != nil {
		t.Error("buckets of nothing")
	}
}
