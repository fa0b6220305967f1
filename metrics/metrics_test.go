package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
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
	r := SizeResult{Completion: Completion{SizeBytes: 1e9, Ranks: 8, Timing: Timing{CCTS: 0.1, IdealS: 0.08}}, Outcome: Outcome{Complete: true}}
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
	z := SizeResult{Completion: Completion{SizeBytes: 1e9, Ranks: 8, Timing: Timing{IdealS: 0.08}}, Outcome: Outcome{Complete: true}}
	z.Finish(AllReduce)
	if z.AlgBWGBps != 0 || z.BusBWGBps != 0 || z.IdealPct != 0 {
		t.Errorf("CCT 0: %+v", z)
	}
	// An unfinished run reports how long it ran, but no rates: dividing S by
	// a partial time would claim more than the NIC can carry.
	u := SizeResult{Completion: Completion{SizeBytes: 1e9, Ranks: 8, Timing: Timing{CCTS: 0.001, IdealS: 0.08}}}
	u.Finish(AllReduce)
	if u.AlgBWGBps != 0 || u.BusBWGBps != 0 || u.IdealPct != 0 {
		t.Errorf("incomplete: %+v", u)
	}
	// A flow list has no bus bandwidth, only aggregate throughput.
	f := SizeResult{Completion: Completion{SizeBytes: 1e9, Ranks: 8, Timing: Timing{CCTS: 0.1}}, Outcome: Outcome{Complete: true}}
	f.Finish(FlowList)
	if !near(f.AlgBWGBps, 10) || f.BusBWGBps != 0 {
		t.Errorf("flow list: algbw %v busbw %v", f.AlgBWGBps, f.BusBWGBps)
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

// jsonKeys is the top-level keys of v's JSON, in order.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// A row is composed of parts, but its JSON is one flat object whose key
// order is the output contract's: the parts' order and their fields' order
// must not change. A job's entry shares the row's parts without the
// per-iteration and per-rank lists.
func TestResultJSONKeyOrder(t *testing.T) {
	p := Percentiles{Count: 1}
	r := SizeResult{
		Completion: Completion{SizeBytes: 1, Ranks: 2, Algorithm: "ring",
			Timing:           Timing{CCTS: 1, AlgBWGBps: 1, BusBWGBps: 1, IdealS: 1, IdealPct: 1},
			CollectiveIdealS: 1, CollectiveIdealPct: 1},
		FabricTotals: FabricTotals{RoutedIdealS: 1, RoutedIdealPct: 1, PFCPauses: 1, ECNMarks: 1, Drops: 1, Retransmits: 1, CNPs: 1, Timeouts: 1},
		Outcome:      Outcome{Complete: true, Error: "e", Iterations: 2, IterationsS: []float64{1, 2}, IterCCT: p},
		FlowStats: FlowStats{Flows: 1, FCT: p, Slowdown: p, RankDoneS: []float64{1}, RankBWGBps: [][]float64{{1}},
			FCTCurveS: []float64{1}, SlowdownBySize: []SizeBucket{{}}, Load: &MessageLoad{}},
		Explain:        &Explanation{},
		FabricCounters: FabricCounters{Totals: Counters{TxPackets: 1}, Ports: []PortCounters{{}}},
		Records:        []FlowRecord{{}},
		Events:         1, WallS: 1, SimEndS: 1,
		Conservation: Conservation{OK: true},
	}
	r.Jobs = []JobResult{Job("main", "alltoall", 0.5, r)}
	r.Jobs[0].SetAlone(1, true)
	want := strings.Fields(`size_bytes ranks algorithm cct_s algbw_gbps busbw_gbps ideal_s ideal_pct
		collective_ideal_s collective_ideal_pct routed_ideal_s routed_ideal_pct pfc_pauses ecn_marks drops
		retransmits cnps timeouts complete error iterations iterations_s iteration_cct_s flows fct_s slowdown
		rank_done_s rank_bw_gbps fct_curve_s slowdown_by_size load explain jobs counters ports flows_records
		sim_events wall_s sim_end_s conservation`)
	if got := jsonKeys(t, r); !reflect.DeepEqual(got, want) {
		t.Errorf("row keys\n got %v\nwant %v", got, want)
	}
	want = strings.Fields(`name kind algorithm ranks size_bytes start_s cct_s algbw_gbps busbw_gbps ideal_s
		ideal_pct alone_cct_s interference complete error iterations iteration_cct_s flows fct_s slowdown
		slowdown_by_size load`)
	if got := jsonKeys(t, r.Jobs[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("job keys\n got %v\nwant %v", got, want)
	}
	// The job's entry is a copy: leaving out its lists leaves the row's.
	if len(r.RankDoneS) != 1 || len(r.IterationsS) != 2 {
		t.Error("Job changed the row")
	}
}

// Each bucket gets the round trips of the requests whose size it holds.
func TestAttachRTT(t *testing.T) {
	bs := []SizeBucket{{LoBytes: 1, HiBytes: 10}, {LoBytes: 20, HiBytes: 30}, {LoBytes: 40, HiBytes: 40}}
	AttachRTT(bs, []int64{5, 25, 10, 40, 30, 35}, []float64{1, 2, 3, 4, 6, 9})
	if bs[0].RTT == nil || bs[0].RTT.Count != 2 || bs[0].RTT.Max != 3 {
		t.Errorf("bucket 1–10: %+v", bs[0].RTT)
	}
	if bs[1].RTT == nil || bs[1].RTT.Count != 2 || bs[1].RTT.Mean != 4 {
		t.Errorf("bucket 20–30: %+v (35 falls in no bucket)", bs[1].RTT)
	}
	if bs[2].RTT == nil || bs[2].RTT.Count != 1 || bs[2].RTT.P50 != 4 {
		t.Errorf("bucket 40: %+v", bs[2].RTT)
	}
}

// An explanation's JSON always has roots, [] when there are none (scripts
// read it without testing for it), after the other keys; loss_limited
// and the flows' and queues' drops only when some flow lost packets to
// the PFC watchdog, so that other runs' JSON stays as it was.
func TestExplanationJSON(t *testing.T) {
	for _, c := range []struct {
		x    Explanation
		want string
	}{
		{Explanation{Threshold: 1.5},
			`{"threshold":1.5,"slow_flows":0,"victims":0,"culprits":0,"contending":0,"sender_limited":0,"roots":[]}`},
		{Explanation{Threshold: 1.5, Roots: []string{}},
			`{"threshold":1.5,"slow_flows":0,"victims":0,"culprits":0,"contending":0,"sender_limited":0,"roots":[]}`},
		{Explanation{Threshold: 2, SlowFlows: 1, LossLimited: 1,
			Flows: []SlowFlow{{ID: 3, Src: 0, Dst: 3, Slowdown: 40, Role: "loss-limited", Drops: 7,
				Links: []QueueStay{{Link: "leaf0→host3", Drops: 7}, {Link: "leaf0→host1", QueuedS: 1e-6}}}},
			PauseTree: []PauseEdge{{From: "host3", To: "leaf0", Pauses: 5, PausedS: 5e-5}},
			Roots:     []string{"host3"}},
			`{"threshold":2,"slow_flows":1,"victims":0,"culprits":0,"contending":0,"sender_limited":0,"loss_limited":1,` +
				`"flows":[{"id":3,"src":0,"dst":3,"slowdown":40,"role":"loss-limited","queued_s":0,"paused_s":0,` +
				`"links":[{"link":"leaf0→host3","queued_s":0,"paused_s":0,"drops":7},{"link":"leaf0→host1","queued_s":0.000001,"paused_s":0}],"drops":7}],` +
				`"pause_tree":[{"from":"host3","to":"leaf0","pauses":5,"paused_s":0.00005}],"roots":["host3"]}`},
	} {
		for _, v := range []any{c.x, &c.x, SizeResult{Explain: &c.x}} {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); !strings.Contains(got, c.want) {
				t.Errorf("%T: got %s\nwant %s", v, got, c.want)
			}
		}
		var back Explanation
		b, _ := json.Marshal(c.x)
		if err := json.Unmarshal(b, &back); err != nil || back.LossLimited != c.x.LossLimited || len(back.Roots) != len(c.x.Roots) {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
}
