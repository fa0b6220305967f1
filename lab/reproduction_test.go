package lab

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/scenario"
)

// Every shipped example validates and its smallest configuration runs to
// completion with bytes conserved.
func TestShippedExamplesRun(t *testing.T) {
	shrink := map[string][]string{
		"alltoall-dcqcn.yaml":           {"workload.sizes.list=[8MiB]"},
		"alltoall-dcqcn-published.yaml": {"workload.sizes.list=[8MiB]"},
		"allreduce-ring.yaml":           {"workload.sizes.list=[1MiB]"},
		"allreduce-algorithms.yaml":     {"workload.sizes.list=[1MiB]"},
		"alltoall-qps.yaml":             {"workload.sizes.list=[4MiB]"},
		"rail-alltoall.yaml":            {"workload.sizes.list=[4MiB]"},
		"sweep-qps.yaml":                {"workload.sizes.list=[4MiB]"},
		"ecmp-vs-adaptive.yaml":         nil,
		"static-routes.yaml":            nil,
		"storage-pairs.yaml":            nil,
		"incast.yaml":                   {"workload.sizes.list=[64KiB]"},
		"three-tier-websearch.yaml":     {"topology.file=../topo/testdata/three-tier-small.csv", "workload.duration=200us"},
		"fattree-permutation.yaml":      nil,
		"flows.yaml":                    nil,
		"noisy-neighbour.yaml":          {"workload.sizes.list=[4MiB]"},
		"homa-w5.yaml":                  {"topology.hosts=32", "workload.duration=5ms"},
		"homa-paper.yaml":               {"topology.hosts=32", "workload.duration=2ms"},
		"rpc-beside-alltoall.yaml":      {"workload.duration=200us"},
		"hosts-alltoall.yaml":           {"workload.sizes.list=[1MiB]"},
		"hosts-any-to-any.yaml":         {"workload.duration=1ms"},
		"pfc-storm.yaml":                nil,
		"link-flap.yaml":                {"workload.sizes.list=[4MiB]"},
		"pfc-deadlock.yaml":             nil,
		"lb-phase.yaml":                 {"workload.sizes.list=[1MiB]"},
		"transport-showdown.yaml": {"workload.sizes.list=[1MiB]",
			"jobs=[{name: w5, kind: messages, size_dist: w5, load: 0.5, duration: 1ms, host_offset: 32, ranks: 32}]"},
	}
	// What an example shows by failing: its error.
	wantErr := map[string]string{"pfc-deadlock.yaml/bounced": "PFC deadlock at "}
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) < len(shrink) {
		t.Fatalf("found %d examples", len(files))
	}
	for _, path := range files {
		sets, ok := shrink[filepath.Base(path)]
		if !ok {
			t.Errorf("%s: add it to this test", path)
			continue
		}
		f, err := scenario.LoadSets(path, sets)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range f.Jobs() {
			r, err := Run(context.Background(), j, nil)
			if want, ok := wantErr[filepath.Base(path)+"/"+j.Variant]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s %s: %v, want an error with %q", path, j.Variant, err, want)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", path, j.Variant, err)
			}
			if !r.Complete || !r.Conservation.OK {
				t.Errorf("%s %s %v: complete=%v conservation=%+v", path, j.Variant, j.Size, r.Complete, r.Conservation)
			}
		}
	}
}
