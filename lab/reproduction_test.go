package lab

import (
	"context"
	"path/filepath"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// DESIGN.md reproduction 2 on the shipped example, at 256 MiB per rank (a
// quarter of the demo's 1 GB, to keep the suite short; the README has the
// full sweep): PFC alone gets close to what the fabric's routing allows, with
// pause frames; DCQCN with the vendor defaults is markedly slower (senders
// are cut and climb back at 5 Mb/s per 300 µs); tuned-final is back at the
// PFC-only time with fewer pauses and ECN marks.
func TestReproduction2AllToAllDCQCNTuning(t *testing.T) {
	f, err := scenario.LoadSets("../examples/alltoall-dcqcn.yaml", []string{"workload.sizes.list=[256MiB]"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		cct, pct, routed float64
		pauses, marks    int64
	}
	got := map[string]row{}
	for _, j := range f.Jobs() {
		if j.Variant != "pfc-only" && j.Variant != "dcqcn-default" && j.Variant != "tuned-final" {
			continue
		}
		r, err := Run(context.Background(), j, nil)
		if err != nil || !r.Complete || r.Drops != 0 {
			t.Fatalf("%s: err=%v complete=%v drops=%d", j.Variant, err, r.Complete, r.Drops)
		}
		got[j.Variant] = row{r.CCTS, r.IdealPct, r.RoutedIdealPct, r.PFCPauses, r.ECNMarks}
		t.Logf("%-14s cct %6.3f ms  %5.1f%% ideal  %5.1f%% routed ideal  busbw %5.2f GB/s  pauses %5d  ecn %6d  cnps %6d",
			j.Variant, r.CCTS*1e3, r.IdealPct, r.RoutedIdealPct, r.BusBWGBps, r.PFCPauses, r.ECNMarks, r.CNPs)
	}
	pfc, def, fin := got["pfc-only"], got["dcqcn-default"], got["tuned-final"]
	// Static ECMP caps this fabric below the NIC bound (the routed ideal is
	// the busiest link's bytes); PFC alone must come close to that cap.
	if pfc.pauses == 0 || pfc.routed < 85 {
		t.Errorf("PFC only: %.1f%% of the routed ideal with %d pauses; want ≥ 85%% with pauses", pfc.routed, pfc.pauses)
	}
	if def.cct < 1.4*pfc.cct {
		t.Errorf("DCQCN default (%.3f ms) is not markedly slower than PFC only (%.3f ms)", def.cct*1e3, pfc.cct*1e3)
	}
	if fin.cct > 1.05*pfc.cct {
		t.Errorf("tuned-final (%.3f ms) is not within 5%% of PFC only (%.3f ms)", fin.cct*1e3, pfc.cct*1e3)
	}
	if fin.pauses >= pfc.pauses || fin.marks >= pfc.marks {
		t.Errorf("tuned-final pauses/marks %d/%d not below PFC only's %d/%d", fin.pauses, fin.marks, pfc.pauses, pfc.marks)
	}
}

// The same effect on a 31-to-1 incast, where each sender has one QP and the
// rate limiter always binds: defaults cut far below the fair share and climb
// back in 300 µs timer steps, so the transfer takes markedly longer than
// with PFC alone; tuned-final recovers within microseconds.
func TestReproduction2IncastDCQCNDefaultIsSlower(t *testing.T) {
	res := map[string]float64{}
	for _, preset := range []string{"off", "default", "tuned-final"} {
		s := leafSpine(32, 8, 4)
		s.Transport.DCQCN.Preset = preset
		s.Workload = scenario.Workload{Kind: "incast", Senders: 31, Target: 0}
		r := run(t, s, units.MiB)
		if !r.Complete || r.Drops != 0 {
			t.Fatalf("%s: complete=%v drops=%d", preset, r.Complete, r.Drops)
		}
		res[preset] = r.CCTS
		t.Logf("%-12s cct %8.3f ms  %5.1f%% ideal  pauses %4d  ecn %5d  cnps %5d", preset, r.CCTS*1e3, r.IdealPct, r.PFCPauses, r.ECNMarks, r.CNPs)
		if preset == "off" && (r.IdealPct < 90 || r.PFCPauses == 0) {
			t.Errorf("PFC only: %.1f%% of ideal with %d pauses; want ≥ 90%% with pauses", r.IdealPct, r.PFCPauses)
		}
	}
	if res["default"] < 1.25*res["off"] {
		t.Errorf("DCQCN default CCT %.3f ms is not markedly above PFC-only's %.3f ms", res["default"]*1e3, res["off"]*1e3)
	}
	if res["tuned-final"] > 1.1*res["off"] {
		t.Errorf("tuned-final CCT %.3f ms not within 10%% of PFC-only %.3f ms", res["tuned-final"]*1e3, res["off"]*1e3)
	}
}

// Every shipped example validates and its smallest configuration runs to
// completion with bytes conserved.
func TestShippedExamplesRun(t *testing.T) {
	shrink := map[string][]string{
		"alltoall-dcqcn.yaml":       {"workload.sizes.list=[8MiB]"},
		"allreduce-ring.yaml":       {"workload.sizes.list=[1MiB]"},
		"allreduce-algorithms.yaml": {"workload.sizes.list=[1MiB]"},
		"alltoall-qps.yaml":         {"workload.sizes.list=[4MiB]"},
		"rail-alltoall.yaml":        {"workload.sizes.list=[4MiB]"},
		"sweep-qps.yaml":            {"workload.sizes.list=[4MiB]"},
		"ecmp-vs-adaptive.yaml":     nil,
		"static-routes.yaml":        nil,
		"storage-pairs.yaml":        nil,
		"incast.yaml":               {"workload.sizes.list=[64KiB]"},
		"fattree-permutation.yaml":  nil,
		"flows.yaml":                nil,
		"noisy-neighbour.yaml":      {"workload.sizes.list=[4MiB]"},
		"homa-w5.yaml":              {"topology.hosts=32", "workload.duration=5ms"},
		"homa-paper.yaml":           {"topology.hosts=32", "workload.duration=2ms"},
		"rpc-beside-alltoall.yaml":  {"workload.duration=200us"},
	}
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
			if err != nil {
				t.Fatalf("%s %s: %v", path, j.Variant, err)
			}
			if !r.Complete || !r.Conservation.OK {
				t.Errorf("%s %s %v: complete=%v conservation=%+v", path, j.Variant, j.Size, r.Complete, r.Conservation)
			}
		}
	}
}
