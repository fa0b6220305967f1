package fluid

import (
	"context"
	"runtime"
	"testing"
	"time"

	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/units"
)

// Benchmarks of the flow engine at the scales the packet engine cannot
// reach. Each iteration builds the job (topology, routes, plan), runs it
// and measures it. Besides ns/op they report:
//
//   - build-s, run-s: wall time of Engine.Plan and of Engine.Run
//   - events: event times (coalesced batches of starts, finishes and
//     deliveries), each followed by one rate computation
//   - us/event: Run's wall time per event
//   - flows: connections (fluid flows) of the plan
//   - peak-MiB: runtime.MemStats.HeapInuse right after Run (the process's
//     max RSS is what /usr/bin/time -v on the test binary says)
//
// Run one with, e.g.:
//
//	go test -c -o /tmp/fluid.test ./fluid/ &&
//	  /usr/bin/time -v /tmp/fluid.test -test.run '^$' -test.bench AllToAll1024 -test.benchtime 1x

// BenchmarkDCQCNSweep is examples/alltoall-dcqcn.yaml (32 ranks at 400G,
// five DCQCN variants) swept from 8 MiB to 64 GiB per rank by ×2: 70
// jobs, one after the other.
func BenchmarkDCQCNSweep(b *testing.B) {
	f, err := scenario.LoadSets("../examples/alltoall-dcqcn.yaml", []string{"workload.sizes.to=64GiB", "sim.time_limit=100s"})
	if err != nil {
		b.Fatal(err)
	}
	jobs := f.Jobs()
	b.ReportMetric(float64(len(jobs)), "jobs")
	for i := 0; i < b.N; i++ {
		var events uint64
		for _, j := range jobs {
			r, err := Run(context.Background(), j, nil)
			if err != nil || !r.Complete {
				b.Fatalf("%s %v: %v (complete %v)", j.Variant, j.Size, err, r.Complete)
			}
			events += r.Events
		}
		b.ReportMetric(float64(events), "events")
	}
}

// BenchmarkAllToAll64GiB is one point of that sweep: 64 GiB per rank,
// DCQCN off (PFC only).
func BenchmarkAllToAll64GiB(b *testing.B) {
	f, err := scenario.LoadSets("../examples/alltoall-dcqcn.yaml", []string{"workload.sizes.list=[64GiB]", "sim.time_limit=100s"})
	if err != nil {
		b.Fatal(err)
	}
	benchJob(b, f.Jobs()[0])
}

// leafSpine400 is a non-blocking 400G leaf-spine of hosts/perLeaf leaves
// and perLeaf spines.
func leafSpine400(hosts, perLeaf int) *scenario.Scenario {
	s := scenario.Defaults()
	s.Name = "bench"
	s.Topology.Hosts = hosts
	s.Topology.HostsPerLeaf = perLeaf
	s.Topology.Spines = perLeaf
	s.Sim.TimeLimit = 1000 * units.Second
	s.Sim.MemoryLimit = 64 * units.GiB
	return s
}

// BenchmarkAllToAll1024 is a direct all-to-all of 1 GiB per rank on 1,024
// ranks: a 400G leaf-spine of 32 leaves × 32 hosts and 32 spines, static
// ECMP, default DCQCN; 1,047,552 flows.
func BenchmarkAllToAll1024(b *testing.B) {
	s := leafSpine400(1024, 32)
	s.Workload = scenario.Workload{Kind: "alltoall", Algorithm: "direct", Ranks: 1024, QPs: 1, Iterations: 1}
	benchJob(b, scenario.Job{Scenario: "bench", Variant: "a2a1024", Size: units.GiB, Seed: 1, Spec: s})
}

// fatTree16k is a k=40 three-tier fat-tree (16,000 hosts, 2,000 switches)
// at 400G, static ECMP, default DCQCN.
func fatTree16k() *scenario.Scenario {
	s := leafSpine400(0, 0)
	s.Topology.Kind = "fat-tree"
	s.Topology.K = 40
	return s
}

// BenchmarkFatTree16kPermutation: every host of the k=40 fat-tree sends
// 1 GiB to another (a random permutation).
func BenchmarkFatTree16kPermutation(b *testing.B) {
	s := fatTree16k()
	s.Workload = scenario.Workload{Kind: "permutation", QPs: 1, Iterations: 1}
	benchJob(b, scenario.Job{Scenario: "bench", Variant: "perm16k", Size: units.GiB, Seed: 1, Spec: s})
}

// BenchmarkFatTree16kRingAllReduce: a ring all-reduce of 1 GiB over
// 2,048 ranks placed at random on the k=40 fat-tree (2 × 2,047 dependent
// steps; a ring over all 16,000 hosts would be 5·10⁸ messages, beyond the
// workload's limit of 2²⁵).
func BenchmarkFatTree16kRingAllReduce(b *testing.B) {
	s := fatTree16k()
	s.Workload = scenario.Workload{Kind: "allreduce", Algorithm: "ring", Ranks: 2048, Placement: "random", QPs: 1, Iterations: 1}
	benchJob(b, scenario.Job{Scenario: "bench", Variant: "ring16k", Size: units.GiB, Seed: 1, Spec: s})
}

func benchJob(b *testing.B, j scenario.Job) {
	b.ReportAllocs()
	var eng Engine
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		p, err := eng.Plan(j, plan.Together)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		tr, err := eng.Run(context.Background(), p, nil)
		if err != nil || !tr.Done() {
			b.Fatalf("run: %v (done %v)", err, tr.Done())
		}
		t2 := time.Now()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(t1.Sub(t0).Seconds(), "build-s")
		b.ReportMetric(t2.Sub(t1).Seconds(), "run-s")
		b.ReportMetric(float64(tr.Events), "events")
		b.ReportMetric(float64(t2.Sub(t1).Microseconds())/float64(max(tr.Events, 1)), "us/event")
		solves := p.Layout.(*layout).s.solves
		b.ReportMetric(float64(solves), "solves")
		b.ReportMetric(float64(t2.Sub(t1).Microseconds())/float64(max(solves, 1)), "us/solve")
		b.ReportMetric(float64(len(p.Conns)), "flows")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "peak-MiB")
		b.ReportMetric(tr.Now.Seconds(), "sim-s")
	}
}

// BenchmarkAllToAll256 is BenchmarkAllToAll1024 on 256 ranks (16 leaves
// × 16 hosts, 16 spines): 65,280 flows.
func BenchmarkAllToAll256(b *testing.B) {
	s := leafSpine400(256, 16)
	s.Workload = scenario.Workload{Kind: "alltoall", Algorithm: "direct", Ranks: 256, QPs: 1, Iterations: 1}
	benchJob(b, scenario.Job{Scenario: "bench", Variant: "a2a256", Size: units.GiB, Seed: 1, Spec: s})
}

func BenchmarkAllToAll64(b *testing.B) {
	s := leafSpine400(64, 8)
	s.Workload = scenario.Workload{Kind: "alltoall", Algorithm: "direct", Ranks: 64, QPs: 1, Iterations: 1}
	benchJob(b, scenario.Job{Scenario: "bench", Variant: "a2a64", Size: units.GiB, Seed: 1, Spec: s})
}
