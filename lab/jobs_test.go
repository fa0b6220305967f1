package lab

import (
	"context"
	"encoding/json"
	"testing"

	"fabriclab/metrics"
	"fabriclab/scenario"
)

// runJobs parses a scenario and runs its first job (variant 0, size 0).
func runJobs(t *testing.T, src string) metrics.SizeResult {
	t.Helper()
	f, err := scenario.Parse("jobs.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	j := f.Jobs()[0]
	r, err := Run(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || !r.Conservation.OK {
		t.Fatalf("complete=%v conservation=%+v", r.Complete, r.Conservation)
	}
	if len(r.Jobs) != 1+len(j.Spec.Jobs) {
		t.Fatalf("%d job results for %d jobs", len(r.Jobs), 1+len(j.Spec.Jobs))
	}
	for _, jr := range r.Jobs {
		t.Logf("%-6s %-10s %2d ranks  cct %8.2f us  alone %8.2f us  interference %.3f  busbw %.2f",
			jr.Name, jr.Kind, jr.Ranks, jr.CCTS*1e6, jr.AloneCCTS*1e6, jr.Interference, jr.BusBWGBps)
		if !jr.Complete || jr.AloneCCTS <= 0 || jr.Interference <= 0 {
			t.Errorf("job %s: %+v", jr.Name, jr)
		}
	}
	return r
}

// Two all-to-alls on disjoint leaves of a non-blocking leaf-spine: they
// share spines but no link, so neither slows the other.
const disjointJobs = `
topology: {hosts: 32, hosts_per_leaf: 8, spines: 8}
transport: {dcqcn: {preset: "off"}}
workload: {kind: alltoall, ranks: 16, sizes: {list: [2MiB]}}
jobs:
  - {name: other, kind: alltoall, ranks: 16, host_offset: 16, sizes: {list: [2MiB]}}
`

func TestJobsOnDisjointLeavesDoNotInterfere(t *testing.T) {
	r := runJobs(t, disjointJobs)
	for _, jr := range r.Jobs {
		if jr.Interference < 0.98 || jr.Interference > 1.05 {
			t.Errorf("job %s: interference %.3f, want ≈ 1", jr.Name, jr.Interference)
		}
	}
	if r.Jobs[0].CCTS != r.CCTS || r.SizeBytes != r.Jobs[0].SizeBytes {
		t.Errorf("the row is not the main job's: %v vs %v", r.CCTS, r.Jobs[0].CCTS)
	}
}

// Two all-to-alls with half their ranks on each of two leaves joined by a
// single spine (8:1 oversubscribed): their cross-leaf traffic shares the
// one uplink of each leaf, so each takes about twice as long as alone.
const sharedSpineJobs = `
topology: {hosts: 16, hosts_per_leaf: 8, spines: 1}
transport: {dcqcn: {preset: "off"}}
workload:
  kind: alltoall
  ranks: 8
  placement: list
  placement_hosts: [0, 1, 2, 3, 8, 9, 10, 11]
  sizes: {list: [1MiB]}
jobs:
  - name: other
    kind: alltoall
    ranks: 8
    placement: list
    placement_hosts: [4, 5, 6, 7, 12, 13, 14, 15]
    sizes: {list: [1MiB]}
`

func TestJobsThroughOneSpineInterfere(t *testing.T) {
	r := runJobs(t, sharedSpineJobs)
	worst := 0.0
	for _, jr := range r.Jobs {
		worst = max(worst, jr.Interference)
	}
	if worst < 1.1 {
		t.Errorf("largest interference %.3f, want > 1.1", worst)
	}
}

func TestJobsDeterministic(t *testing.T) {
	a, b := runJobs(t, sharedSpineJobs), runJobs(t, sharedSpineJobs)
	a.WallS, b.WallS = 0, 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("two runs of the same jobs differ")
	}
}

// Background uniform traffic on the other hosts of the same two leaves
// slows a ring all-reduce whose ring crosses the single spine.
func TestBackgroundUniformSlowsAllReduce(t *testing.T) {
	r := runJobs(t, `
topology: {hosts: 16, hosts_per_leaf: 8, spines: 1}
transport: {dcqcn: {preset: "off"}}
workload:
  kind: allreduce
  ranks: 8
  placement: list
  placement_hosts: [0, 1, 2, 3, 8, 9, 10, 11]
  sizes: {list: [4MiB]}
jobs:
  - name: noise
    kind: uniform
    ranks: 8
    placement: list
    placement_hosts: [4, 5, 6, 7, 12, 13, 14, 15]
    load: 0.6
    duration: 100us
    sizes: {list: [64KiB]}
`)
	if r.Jobs[0].Interference <= 1.05 {
		t.Errorf("all-reduce interference %.3f with background load, want > 1", r.Jobs[0].Interference)
	}
}
