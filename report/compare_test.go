package report

import (
	"bytes"
	"strings"
	"testing"

	"fabriclab/metrics"
)

func TestMetricDelta(t *testing.T) {
	busbw, _ := LookupMetric("busbw")
	cct, _ := LookupMetric("cct")
	pfc, ok := LookupMetric("pfc")
	if !ok || pfc.Name != "pfc_pauses" {
		t.Fatalf("pfc alias: %+v %v", pfc, ok)
	}
	for _, c := range []struct {
		m           Metric
		base, other float64
		want        string
	}{
		{busbw, 40, 42, "+2.00 (+5.0%)"},
		{busbw, 40, 38, "-2.00 (-5.0%)"},
		{busbw, 40, 40, "+0.00 (+0.0%)"},
		{busbw, 0, 3, "+3.00"},
		{cct, 200, 250, "+50.00 (+25.0%)"},
		{pfc, 100, 88, "-12"},
		{pfc, 0, 7, "+7"},
	} {
		if got := c.m.Delta(c.base, c.other); got != c.want {
			t.Errorf("%s Delta(%g, %g) = %q, want %q", c.m.Name, c.base, c.other, got, c.want)
		}
	}
	if _, ok := LookupMetric("nope"); ok {
		t.Error("unknown metric found")
	}
}

func TestWriteCompare(t *testing.T) {
	cols := []Column{
		{Name: "1:pfc", Results: []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 16 << 20, Timing: metrics.Timing{BusBWGBps: 40, CCTS: 200e-6}}, FabricTotals: metrics.FabricTotals{PFCPauses: 100}, Outcome: metrics.Outcome{Complete: true}},
			{Completion: metrics.Completion{SizeBytes: 8 << 20, Timing: metrics.Timing{BusBWGBps: 30, CCTS: 100e-6}}, FabricTotals: metrics.FabricTotals{PFCPauses: 10}, Outcome: metrics.Outcome{Complete: true}},
		}},
		{Name: "2:dcqcn", Results: []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 8 << 20, Timing: metrics.Timing{BusBWGBps: 33, CCTS: 90e-6}}, FabricTotals: metrics.FabricTotals{PFCPauses: 4}, Outcome: metrics.Outcome{Complete: true}},
			{Completion: metrics.Completion{SizeBytes: 16 << 20, Timing: metrics.Timing{BusBWGBps: 42, CCTS: 190e-6}}, FabricTotals: metrics.FabricTotals{PFCPauses: 88}, Outcome: metrics.Outcome{Complete: false}},
			{Completion: metrics.Completion{SizeBytes: 32 << 20}, Outcome: metrics.Outcome{Error: "boom"}},
		}},
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, cols, "busbw"); err != nil {
		t.Fatal(err)
	}
	want := `# compare bus bandwidth (GB/s); baseline 1:pfc
#   size  1:pfc  2:dcqcn  Δ 2:dcqcn
    8MiB  30.00    33.00  +3.00 (+10.0%)
   16MiB  40.00   42.00*  -
   32MiB      -        !  -
# * incomplete: time limit reached or interrupted; numbers describe a partial run
# ! failed: the job returned an error
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteCompare(&b, cols, "pfc"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "# compare PFC pause frames; baseline 1:pfc\n") ||
		!strings.Contains(b.String(), "    10        4  -6\n") || !strings.Contains(b.String(), "88*  -\n") {
		t.Errorf("pfc:\n%s", b.String())
	}
	b.Reset()
	if err := WriteCompare(&b, cols, "cct"); err != nil || !strings.Contains(b.String(), "100.00    90.00  -10.00 (-10.0%)") {
		t.Errorf("cct: %v\n%s", err, b.String())
	}
	if err := WriteCompare(&b, cols, "nope"); err == nil {
		t.Error("unknown metric: no error")
	}
}

// A run on real hosts beside a simulated one: its rates compare, its
// fabric counters are n/a (nobody counted them), not 0.
func TestCompareHostsBesideSimulated(t *testing.T) {
	sim := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 4 << 20, Timing: metrics.Timing{BusBWGBps: 0.0119, CCTS: 0.2635}},
		FabricTotals: metrics.FabricTotals{PFCPauses: 3}, Outcome: metrics.Outcome{Complete: true}}
	hosts := sim
	hosts.BusBWGBps, hosts.CCTS, hosts.PFCPauses = 0.0114, 0.2731, 0
	hosts.Hosts = &metrics.HostsRun{Engine: "hosts", Agents: 4}
	cols := []Column{{Name: "1:alltoall", Results: []metrics.SizeResult{sim}}, {Name: "2:alltoall", Results: []metrics.SizeResult{hosts}}}
	var b bytes.Buffer
	if err := WriteCompare(&b, cols, "pfc"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "   4MiB           3         n/a  -\n") {
		t.Errorf("pfc:\n%s", b.String())
	}
	b.Reset()
	if err := WriteCompare(&b, cols, "cct"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "263500.00") || !strings.Contains(b.String(), "273100.00") {
		t.Errorf("cct:\n%s", b.String())
	}
}

// Below 0.1 GB/s the tables keep three significant digits: a namespace
// lab at 1/1000 of the rates read 0.01 everywhere, and compare's delta
// +0.00 (+12.5%).
func TestGBps(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 12.5: "12.50", 0.1: "0.10", 0.24: "0.24", 0.0125: "0.0125", 0.05: "0.0500",
		0.0999: "0.0999", -0.0015: "-0.00150", 0.000012345: "0.0000123", 1e-12: "0.00000000"} {
		if got := GBps(v); got != want {
			t.Errorf("GBps(%g) = %q, want %q", v, got, want)
		}
	}
	busbw, _ := LookupMetric("busbw")
	if got := busbw.Delta(0.0100, 0.01125); got != "+0.00125 (+12.5%)" {
		t.Errorf("delta %q", got)
	}
}

// Columns of different workloads get a note (an incast's size is bytes
// per sender, an all-to-all's bytes per rank); one workload gets none.
func TestKindsNote(t *testing.T) {
	same := []Column{{Name: "1:a", Kind: "alltoall"}, {Name: "2:b", Kind: "alltoall"}}
	if got := KindsNote(same); got != "" {
		t.Errorf("one kind: %q", got)
	}
	mixed := append(same, Column{Name: "3:c", Kind: "incast"})
	if got, want := KindsNote(mixed), "# note: the columns run different workloads (1:a is alltoall, 3:c is incast): a size and a bandwidth mean something else in each, so the deltas compare unlike things\n"; got != want {
		t.Errorf("mixed: %q", got)
	}
}
