package fluid

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/units"
	"fabriclab/workload"
)

func job(s *scenario.Scenario, size units.Size) scenario.Job {
	return scenario.Job{Scenario: s.Name, Variant: "v", Size: size, Seed: s.Seed, Spec: s}
}

func run(t *testing.T, j scenario.Job) metrics.SizeResult {
	t.Helper()
	r, err := Run(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete {
		t.Fatalf("incomplete: %+v", r)
	}
	return r
}

// flowsJob is a flow list on xfabric.
func flowsJob(s *scenario.Scenario, flows ...workload.FlowSpec) scenario.Job {
	s.Workload = scenario.Workload{Kind: "flows", File: "inline", QPs: 1, Iterations: 1}
	s.Sim.RecordFlows = true
	j := job(s, 0)
	j.FlowList = flows
	return j
}

func bounds(t *testing.T, j scenario.Job) *plan.Plan {
	t.Helper()
	p, err := Engine{}.Plan(j, plan.Together)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// One flow alone takes exactly the packet engine's alone bound
// (measure.FabricBounds.AloneFCT): every packet's wire bytes at the
// slowest link, the last packet stored and forwarded on every other hop,
// and every hop's propagation — for sizes from one byte to many packets,
// inside a leaf, across the spine and across a fat-tree's core.
func TestOneFlowAloneIsAloneFCT(t *testing.T) {
	ft := xfabric(4)
	ft.Topology.Kind, ft.Topology.K = "fat-tree", 4
	for _, tc := range []struct {
		name string
		spec func() *scenario.Scenario
		dst  int
	}{
		{"leaf", func() *scenario.Scenario { return xfabric(4) }, 1},
		{"spine", func() *scenario.Scenario { return xfabric(4) }, 9},
		{"fat-tree core", func() *scenario.Scenario { s := *ft; return &s }, 15},
	} {
		for _, b := range []int64{1, 4096, 4097, 100000, 1 << 20, 64 << 20} {
			j := flowsJob(tc.spec(), workload.FlowSpec{Src: 0, Dst: tc.dst, Bytes: b})
			r := run(t, j)
			rec := r.Records[0]
			if rec.FCTS != rec.IdealS {
				t.Errorf("%s %d B: FCT %.9g s, alone bound %.9g s", tc.name, b, rec.FCTS, rec.IdealS)
			}
		}
	}
}

// N flows into one receiver share its link equally: each drains N times
// its wire bytes at the link rate, then the alone latency.
func TestIncastSharesEqually(t *testing.T) {
	for _, n := range []int{2, 3, 7, 15} {
		var fl []workload.FlowSpec
		for i := 1; i <= n; i++ {
			fl = append(fl, workload.FlowSpec{Src: i, Dst: 0, Bytes: 1 << 20})
		}
		r := run(t, flowsJob(xfabric(4), fl...))
		w := float64(workload.WireBytes(1<<20, 4096, 82))
		ser := w * 8 / 100e9
		for _, rec := range r.Records {
			want := rec.IdealS - ser + float64(n)*ser
			if math.Abs(rec.FCTS-want) > 2e-12*float64(n) {
				t.Errorf("n=%d: flow %d→%d FCT %.9g s, want %.9g s", n, rec.Src, rec.Dst, rec.FCTS, want)
			}
		}
	}
}

// The classic max-min case: flows a, b, c into host 2 share its link (a
// third each); b's sender also sends d to host 3, which gets what b
// leaves of the NIC (two thirds). With PFC (and no congestion control)
// the congested link into host 2 pauses b's NIC, and d, a victim, drops
// to b's third; the packet engine agrees.
func TestClassicMaxMinAndPFCVictim(t *testing.T) {
	const b = 4 << 20
	flows := []workload.FlowSpec{{Src: 0, Dst: 2, Bytes: b}, {Src: 1, Dst: 2, Bytes: b}, {Src: 4, Dst: 2, Bytes: b}, {Src: 1, Dst: 3, Bytes: b}}
	w := float64(workload.WireBytes(b, 4096, 82)) * 8
	for _, pfc := range []bool{false, true} {
		s := xfabric(4)
		if !pfc {
			s = lossyWindowed(s)
		}
		j := flowsJob(s, flows...)
		r := run(t, j)
		share := []float64{3, 3, 3, 1.5} // the link time of each flow's bytes
		if pfc {
			share[3] = 3
		}
		for k, rec := range r.Records {
			want := rec.IdealS - w/100e9 + share[k]*w/100e9
			if got := rec.FCTS; math.Abs(got-want) > 1e-9*want {
				t.Errorf("pfc=%v flow %d: FCT %.6g s, want %.6g s", pfc, k, got, want)
			}
		}
		p, err := lab.Run(context.Background(), j, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range flows {
			f, pk := r.Records[k].FCTS, p.Records[k].FCTS
			if math.Abs(f-pk) > 0.05*pk {
				t.Errorf("pfc=%v flow %d: fluid %.1f us, packet %.1f us", pfc, k, f*1e6, pk*1e6)
			}
		}
	}
}

// A dependent chain (reduce, chain algorithm, one chunk) is n−1 transfers
// one after the other: n−1 alone completion times.
func TestChainIsSumOfAloneTimes(t *testing.T) {
	const n = 6
	s := xfabric(4)
	s.Workload = scenario.Workload{Kind: "reduce", Algorithm: "chain", Ranks: n, QPs: 1, Iterations: 1, MessageSize: 2 * units.MiB}
	s.Sim.RecordFlows = true
	r := run(t, job(s, 2*units.MiB))
	var sum float64
	for _, rec := range r.Records {
		sum += rec.IdealS
	}
	if len(r.Records) != n-1 || math.Abs(r.CCTS-sum) > 1e-11 {
		t.Fatalf("%d transfers, CCT %.9g s, want %d transfers and %.9g s", len(r.Records), r.CCTS, n-1, sum)
	}
}

// Every byte offered is sent and delivered, and what the flows drained is
// the messages' wire bytes.
func TestConservation(t *testing.T) {
	for _, kind := range []string{"alltoall", "allreduce", "permutation"} {
		s := xfabric(2)
		s.Switch.Forwarding = "adaptive"
		s.Workload = scenario.Workload{Kind: kind, QPs: 2, Iterations: 2}
		j := job(s, 4*units.MiB)
		p := bounds(t, j)
		tr, err := Engine{}.Run(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		fs := p.Layout.(*layout).s
		var offered, delivered, wire int64
		for i, m := range p.DAG.Msgs {
			offered += m.Bytes
			if tr.End[i] >= 0 {
				delivered += m.Bytes
			}
			if !m.Marker {
				w, _ := fs.wire(int32(i))
				wire += w
			}
		}
		if !tr.Done() || delivered != offered || fs.delivered != offered || fs.sentWire != wire {
			t.Errorf("%s: done=%v offered %d delivered %d (counted %d), wire %d sent %d", kind, tr.Done(), offered, delivered, fs.delivered, wire, fs.sentWire)
		}
		if fs.fin.len() != 0 || fs.arr.len() != 0 {
			t.Errorf("%s: %d flows and %d deliveries left", kind, fs.fin.len(), fs.arr.len())
		}
	}
}

// Same scenario and seed, identical results (wall time aside).
func TestDeterministic(t *testing.T) {
	s := xfabric(2)
	s.Workload = scenario.Workload{Kind: "alltoall", QPs: 2, Iterations: 1}
	s.Sim.RecordFlows = true
	var out [2][]byte
	for k := range out {
		r := run(t, job(s, 8*units.MiB))
		r.WallS = 0
		out[k], _ = json.Marshal(r)
	}
	if string(out[0]) != string(out[1]) {
		t.Fatal("two runs differ")
	}
}

// Recomputing only the changed component gives the rates a full
// recomputation gives.
func TestComponentSolveMatchesFullSolve(t *testing.T) {
	s := xfabric(2)
	s.Workload = scenario.Workload{Kind: "allreduce", Algorithm: "halving-doubling", QPs: 2, Iterations: 1}
	s.Sim.RecordFlows = true
	var res [2]metrics.SizeResult
	for k := range res {
		fullSolve = k == 1
		res[k] = run(t, job(s, 8*units.MiB))
	}
	fullSolve = false
	for i := range res[0].Records {
		a, b := res[0].Records[i].EndS, res[1].Records[i].EndS
		if math.Abs(a-b) > 1e-8*a {
			t.Fatalf("message %d ends at %.12g s by components, %.12g s by full solves", i, a, b)
		}
	}
}

// A link that fails mid-run stalls the flows on it until the routes
// converge around it; then every message is delivered.
func TestMidRunFailure(t *testing.T) {
	s := xfabric(4)
	s.Topology.Failures = []scenario.Failure{{From: "leaf0", To: "spine0", At: 100 * units.Microsecond}, {From: "leaf1", To: "spine2", At: 0}}
	s.Workload = scenario.Workload{Kind: "alltoall", QPs: 1, Iterations: 1}
	r := run(t, job(s, 8*units.MiB))
	s0 := *s
	s0.Topology.Failures = nil
	r0 := run(t, job(&s0, 8*units.MiB))
	// The packet engine also loses what was queued on the link and
	// recovers by go-back-N, which the fluid model does not: it is slower
	// by that recovery.
	p, err := lab.Run(context.Background(), job(s, 8*units.MiB), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fluid %.1f us without failures, %.1f us with them; packet %.1f us", r0.CCTS*1e6, r.CCTS*1e6, p.CCTS*1e6)
	if r.CCTS <= r0.CCTS || r.CCTS > p.CCTS {
		t.Errorf("failures: fluid %.1f us (%.1f us without), packet %.1f us", r.CCTS*1e6, r0.CCTS*1e6, p.CCTS*1e6)
	}
}

// The time limit cuts the run: the row is incomplete and says when.
func TestTimeLimit(t *testing.T) {
	s := xfabric(4)
	s.Workload = scenario.Workload{Kind: "alltoall", QPs: 1, Iterations: 1}
	s.Sim.TimeLimit = 100 * units.Microsecond
	r, err := Run(context.Background(), job(s, 8*units.MiB), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || r.SimEndS != 100e-6 {
		t.Fatalf("complete=%v end %v", r.Complete, r.SimEndS)
	}
}

func TestSupports(t *testing.T) {
	for _, tc := range []struct {
		edit func(s *scenario.Scenario)
		ok   bool
	}{
		{func(s *scenario.Scenario) {}, true},
		{func(s *scenario.Scenario) { s.Transport.Kind = "homa" }, false},
		{func(s *scenario.Scenario) { s.Workload.Kind = "messages" }, false},
		{func(s *scenario.Scenario) { s.Sim.Explain = true }, false},
		{func(s *scenario.Scenario) { s.Switch.Forwarding = "flowlet" }, false},
		{func(s *scenario.Scenario) { s.Switch.Forwarding = "adaptive" }, true},
		{func(s *scenario.Scenario) { s.Transport.Kind = "dctcp" }, true},
		{func(s *scenario.Scenario) {
			s.Jobs = []scenario.JobSpec{{Name: "bg", Workload: scenario.Workload{Kind: "messages"}}}
		}, false},
	} {
		s := xfabric(4)
		s.Workload = scenario.Workload{Kind: "alltoall"}
		tc.edit(s)
		if ok, why := Supports(job(s, units.MiB)); ok != tc.ok || ok != (why == "") {
			t.Errorf("%+v: Supports = %v %q, want %v", s.Transport.Kind+"/"+s.Workload.Kind+"/"+s.Switch.Forwarding, ok, why, tc.ok)
		}
	}
}

// Reproduction 3 (repro/testdata/repro3-static-routes.txt): with d-mod-k
// routes two servers share one uplink. Both engines must show what the
// lossless fabric does: in "shared" every flow slows, not only the ten
// through the shared uplink (PFC pauses the clients' NICs); in "disjoint"
// every flow runs at its NIC share. Explain mode is off (the flow engine
// cannot explain); the CCTs agree within 5%.
func TestStaticRoutesReproduction(t *testing.T) {
	data, err := os.ReadFile("../repro/testdata/repro3-static-routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, part := range strings.Split(string(data), "\n-- ")[1:] {
		head, body, _ := strings.Cut(part, "\n")
		name := strings.TrimSuffix(head, " --")
		if strings.HasPrefix(name, "run") || strings.HasPrefix(name, "analyze") {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := scenario.Load(filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	payload := 100e9 / 8 * 4096 / 4178 // a NIC's payload rate, bytes/s
	for _, j := range f.Jobs() {
		spec := *j.Spec
		spec.Sim.Explain = false
		j.Spec = &spec
		fr := run(t, j)
		pr, err := lab.Run(context.Background(), j, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, eng := range []struct {
			name string
			r    metrics.SizeResult
		}{{"fluid", fr}, {"packet", pr}} {
			lo, hi := math.Inf(1), 0.0
			for _, rec := range eng.r.Records {
				rate := float64(rec.Bytes) / rec.FCTS / payload
				lo, hi = math.Min(lo, rate), math.Max(hi, rate)
			}
			t.Logf("%s %s: CCT %.1f us, flow rates %.3f–%.3f of the NIC", j.Variant, eng.name, eng.r.CCTS*1e6, lo, hi)
			switch j.Variant {
			case "shared":
				if hi > 0.18 {
					t.Errorf("%s %s: the fastest flow runs at %.3f of its NIC; with PFC every flow slows below 0.18", j.Variant, eng.name, hi)
				}
			case "disjoint":
				if lo < 0.18 {
					t.Errorf("%s %s: the slowest flow runs at %.3f of its NIC, want ≥ 0.18", j.Variant, eng.name, lo)
				}
			}
		}
		if e := (fr.CCTS - pr.CCTS) / pr.CCTS; math.Abs(e) > 0.05 {
			t.Errorf("%s: fluid CCT %.1f us vs packet %.1f us (%+.1f%%)", j.Variant, fr.CCTS*1e6, pr.CCTS*1e6, 100*e)
		}
	}
}

// Events do not allocate in steady state: eight iterations of a ring
// all-reduce (eight times the events, every flow restarted at every
// step) allocate about what one does.
func TestRunDoesNotAllocatePerEvent(t *testing.T) {
	allocs := func(iters int) (uint64, uint64) {
		s := xfabric(4)
		s.Workload = scenario.Workload{Kind: "allreduce", Algorithm: "ring", QPs: 1, Iterations: iters}
		p := bounds(t, job(s, 4*units.MiB))
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		tr, err := Engine{}.Run(context.Background(), p, nil)
		runtime.ReadMemStats(&b)
		if err != nil || !tr.Done() {
			t.Fatalf("run: %v", err)
		}
		return b.Mallocs - a.Mallocs, tr.Events
	}
	a1, e1 := allocs(1)
	a8, e8 := allocs(8)
	t.Logf("1 iteration: %d events, %d allocations; 8: %d events, %d allocations", e1, a1, e8, a8)
	if a8 > 2*a1+100 {
		t.Errorf("allocations grow with events: %d for %d events, %d for %d", a1, e1, a8, e8)
	}
}
