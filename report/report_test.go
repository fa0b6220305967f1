package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"fabriclab/metrics"
)

func sample() Output {
	return Output{
		Scenario:     "dcqcn-a2a",
		ScenarioFile: "examples/dcqcn.yaml",
		Seed:         7,
		Version:      "test",
		Started:      "2025-01-02T03:04:05Z",
		Finished:     "2025-01-02T03:05:05Z",
		Variants: []VariantResult{
			{Name: "pfc-only", Collective: "alltoall", Results: []metrics.SizeResult{
				// deliberately out of size order
				{Completion: metrics.Completion{SizeBytes: 16 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.000466, AlgBWGBps: 36.0, BusBWGBps: 34.87, IdealS: 0.000452, IdealPct: 97.0}}, FabricTotals: metrics.FabricTotals{PFCPauses: 12, ECNMarks: 3456}, Outcome: metrics.Outcome{Complete: true}},
				{Completion: metrics.Completion{SizeBytes: 8 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.000233, AlgBWGBps: 36.0, BusBWGBps: 34.87, IdealS: 0.000226, IdealPct: 97.0}}, FabricTotals: metrics.FabricTotals{PFCPauses: 12, ECNMarks: 345}, Outcome: metrics.Outcome{Complete: true}},
			}},
			{Name: "default", Collective: "alltoall", Results: []metrics.SizeResult{
				{Completion: metrics.Completion{SizeBytes: 64 << 30, Ranks: 32, Timing: metrics.Timing{CCTS: 1.5, AlgBWGBps: 45.81, BusBWGBps: 44.38, IdealS: 1.4, IdealPct: 93.3}}, FabricTotals: metrics.FabricTotals{PFCPauses: 1234567, ECNMarks: 3456789, Retransmits: 4}, Outcome: metrics.Outcome{Complete: false}},
				{Completion: metrics.Completion{SizeBytes: 1000, Ranks: 32}, Outcome: metrics.Outcome{Error: "build failed:\nno route"}},
				{Completion: metrics.Completion{SizeBytes: 4096, Ranks: 32, Timing: metrics.Timing{CCTS: 0.0000123, AlgBWGBps: 0.33, BusBWGBps: 0.32, IdealS: 0.00001, IdealPct: 81.3}}, FabricTotals: metrics.FabricTotals{RoutedIdealS: 0.000011, RoutedIdealPct: 89.4}, Outcome: metrics.Outcome{Complete: true}},
			}},
		},
	}
}

func TestWriteTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTables(&b, sample()); err != nil {
		t.Fatal(err)
	}
	want := `# variant: pfc-only  (alltoall, 32 ranks)
#        size             time   algbw   busbw  %ideal     ideal  %route      pfc      ecn   drops    retx
#         (B)             (us)  (GB/s)  (GB/s)              (us)
      8388608  8MiB      233.0   36.00   34.87    97.0     226.0     0.0       12      345       0       0
     16777216  16MiB     466.0   36.00   34.87    97.0     452.0     0.0       12     3456       0       0
# Avg bus bandwidth    : 34.87 GB/s

# variant: default  (alltoall, 32 ranks)
#        size             time   algbw   busbw  %ideal     ideal  %route      pfc      ecn   drops    retx
#         (B)             (us)  (GB/s)  (GB/s)              (us)
         1000  1KB  ! build failed: no route
         4096  4KiB      12.30    0.33    0.32    81.3     10.00    89.4        0        0       0       0
  68719476736  64GiB   1500000   45.81   44.38    93.3   1400000     0.0  1234567  3456789       0       4 *
# * incomplete: time limit reached or interrupted; numbers describe a partial run
# ! failed: the job returned an error
# Avg bus bandwidth    : 0.32 GB/s (over 1 of 3 sizes)
`
	if got := b.String(); got != want {
		t.Errorf("table mismatch\n--- got\n%s--- want\n%s", got, want)
	}
}

func TestWriteTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, VariantResult{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if want := "# variant: x  (?)\n# (no results)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteTable(&b, VariantResult{Name: "y", Collective: "allreduce", Results: []metrics.SizeResult{{Completion: metrics.Completion{SizeBytes: 1 << 20, Ranks: 4}}}})
	if !strings.Contains(b.String(), " *\n") || !strings.Contains(b.String(), "n/a (no complete size)") {
		t.Errorf("all-incomplete table:\n%s", b.String())
	}
}

func TestUsec(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{0.0000123, "12.30"}, {0.000233, "233.0"}, {0.012345, "12345"}, {0, "0.00"}} {
		if got := usec(c.s); got != c.want {
			t.Errorf("usec(%g) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestWriteJSONContract(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b.Bytes(), &top); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b.String())
	}
	for _, k := range []string{"scenario", "scenario_file", "seed", "version", "started", "finished", "interrupted", "variants"} {
		if _, ok := top[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	vs := top["variants"].([]any)
	if len(vs) != 2 {
		t.Fatalf("variants = %d", len(vs))
	}
	v0 := vs[0].(map[string]any)
	if v0["name"] != "pfc-only" || v0["collective"] != "alltoall" {
		t.Errorf("variant 0 = %v %v", v0["name"], v0["collective"])
	}
	rs := v0["results"].([]any)
	r0 := rs[0].(map[string]any)
	for _, k := range []string{"size_bytes", "ranks", "cct_s", "algbw_gbps", "busbw_gbps", "ideal_s", "ideal_pct",
		"pfc_pauses", "ecn_marks", "drops", "retransmits", "cnps", "timeouts", "complete"} {
		if _, ok := r0[k]; !ok {
			t.Errorf("result key %q missing", k)
		}
	}
	if r0["size_bytes"].(float64) != 8<<20 || rs[1].(map[string]any)["size_bytes"].(float64) != 16<<20 {
		t.Errorf("results not sorted by size")
	}
	// Deterministic bytes.
	var b2 bytes.Buffer
	WriteJSON(&b2, sample())
	if b.String() != b2.String() {
		t.Error("WriteJSON not deterministic")
	}
	// The input is not modified by sorting.
	if s := sample(); s.Variants[0].Results[0].SizeBytes != 16<<20 {
		t.Error("input modified")
	}
}

func TestWriteJSONEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Output{Variants: []VariantResult{{Name: "v"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"results": []`) {
		t.Errorf("empty results should encode as []: %s", b.String())
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "variant,size_bytes,ranks,cct_s,algbw_gbps,busbw_gbps,ideal_s,ideal_pct,pfc_pauses,ecn_marks,drops,retransmits,cnps,timeouts,complete,routed_ideal_s,routed_ideal_pct,sweep,job,alone_cct_s,interference,error" {
		t.Errorf("header = %s", got)
	}
	if len(recs) != 1+5 {
		t.Fatalf("rows = %d, want 5", len(recs)-1)
	}
	wantOrder := []string{"pfc-only/8388608", "pfc-only/16777216", "default/1000", "default/4096", "default/68719476736"}
	for i, w := range wantOrder {
		if got := recs[i+1][0] + "/" + recs[i+1][1]; got != w {
			t.Errorf("row %d = %s, want %s", i+1, got, w)
		}
	}
	if got := strings.Join(recs[1], ","); got != "pfc-only,8388608,32,0.000233,36,34.87,0.000226,97,12,345,0,0,0,0,true,0,0,,,,," {
		t.Errorf("row 1 = %s", got)
	}
	if recs[5][14] != "false" {
		t.Errorf("incomplete row complete = %s", recs[5][14])
	}
}

// Which cells a row leaves empty: the flow engine counts no packets but
// works out the routed ideal on the same routes (it was left empty too,
// while the table and JSON gave it); real hosts have neither.
func TestWriteCSVEmptyCells(t *testing.T) {
	row := func(engine string, hosts bool) metrics.SizeResult {
		r := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 1 << 20, Timing: metrics.Timing{CCTS: 0.002, IdealS: 0.001, IdealPct: 50}},
			FabricTotals: metrics.FabricTotals{PFCPauses: 7, RoutedIdealS: 0.0015, RoutedIdealPct: 75}, Outcome: metrics.Outcome{Complete: true}}
		r.Engine = engine
		if hosts {
			r.Hosts = &metrics.HostsRun{Engine: "hosts", Agents: 2}
		}
		return r
	}
	o := Output{Variants: []VariantResult{
		{Name: "packet", Results: []metrics.SizeResult{row("", false)}},
		{Name: "flow", Results: []metrics.SizeResult{row("flow", false)}},
		{Name: "hosts", Results: []metrics.SizeResult{row("", true)}},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, o); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{ // pfc_pauses, routed_ideal_s, routed_ideal_pct
		"packet": {"7", "0.0015", "75"},
		"flow":   {"", "0.0015", "75"},
		"hosts":  {"", "", ""},
	}
	for _, rec := range recs[1:] {
		if got := [3]string{rec[8], rec[15], rec[16]}; got != want[rec[0]] {
			t.Errorf("%s: pfc_pauses, routed_ideal_s, routed_ideal_pct = %q, want %q", rec[0], got, want[rec[0]])
		}
	}
	// A failed row says why in the last column (appended: the columns
	// before it keep their places).
	failed := row("", false)
	failed.Complete, failed.Error = false, "PFC deadlock at 141.8 us"
	b.Reset()
	if err := WriteCSV(&b, Output{Variants: []VariantResult{{Name: "failed", Results: []metrics.SizeResult{failed}}}}); err != nil {
		t.Fatal(err)
	}
	if recs, err = csv.NewReader(&b).ReadAll(); err != nil || recs[0][len(recs[0])-1] != "error" || recs[1][len(recs[1])-1] != failed.Error {
		t.Errorf("failed row: %q, %v", recs, err)
	}
}

// sweepSample is two variants of the file × two QP counts × one algorithm,
// points in the loader's order.
func sweepSample() Output {
	o := Output{Scenario: "sweep", Seed: 1}
	for _, v := range []struct {
		parent, qps string
		results     []metrics.SizeResult
	}{
		{"pfc", "1", []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 64 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.0016394, BusBWGBps: 39.67, IdealPct: 79.3}}, FabricTotals: metrics.FabricTotals{PFCPauses: 243, ECNMarks: 0}, Outcome: metrics.Outcome{Complete: true}},
			{Completion: metrics.Completion{SizeBytes: 16 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.0003962, BusBWGBps: 41.04, IdealPct: 82.1}}, Outcome: metrics.Outcome{Complete: true}},
		}},
		{"pfc", "16", []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 16 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.0003410, BusBWGBps: 47.69, IdealPct: 95.4}}, FabricTotals: metrics.FabricTotals{PFCPauses: 3}, Outcome: metrics.Outcome{Complete: true}},
			{Completion: metrics.Completion{SizeBytes: 64 << 20, Ranks: 32}, Outcome: metrics.Outcome{Error: "out of memory"}},
		}},
		{"dcqcn-default", "1", []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 16 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.00068, BusBWGBps: 23.9, IdealPct: 47.8}}, FabricTotals: metrics.FabricTotals{PFCPauses: 22, ECNMarks: 1234}, Outcome: metrics.Outcome{Complete: true}},
			{Completion: metrics.Completion{SizeBytes: 64 << 20, Ranks: 32, Timing: metrics.Timing{CCTS: 0.0025, BusBWGBps: 0, IdealPct: 0}}, FabricTotals: metrics.FabricTotals{PFCPauses: 2686, ECNMarks: 56789, Drops: 1}, Outcome: metrics.Outcome{Complete: false}},
		}},
		{"dcqcn-default", "16", nil},
	} {
		o.Variants = append(o.Variants, VariantResult{
			Name: v.parent + " qps=" + v.qps + " algorithm=direct", Collective: "alltoall", Parent: v.parent,
			Sweep:   Point{{"workload.qps", v.qps}, {"workload.algorithm", "direct"}},
			Results: v.results,
		})
	}
	return o
}

func TestSweepSummaryGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSweepSummary(&b, sweepSample()); err != nil {
		t.Fatal(err)
	}
	want := `# sweep: workload.qps, workload.algorithm  (4 points; one row per point and size)
#  variant        qps  algorithm   size      time   busbw  %ideal      pfc      ecn   drops
#                                            (us)  (GB/s)
   pfc            1    direct     16MiB     396.2   41.04    82.1        0        0       0
   pfc            1    direct     64MiB    1639.4   39.67    79.3      243        0       0
   pfc            16   direct     16MiB     341.0   47.69    95.4        3        0       0
   pfc            16   direct     64MiB  ! out of memory
   dcqcn-default  1    direct     16MiB     680.0   23.90    47.8       22     1234       0
   dcqcn-default  1    direct     64MiB    2500.0    0.00     0.0     2686    56789       1 *
# * incomplete: time limit reached or interrupted; numbers describe a partial run
# ! failed: the job returned an error
`
	if got := b.String(); got != want {
		t.Errorf("summary mismatch\n--- got\n%s--- want\n%s", got, want)
	}

	// Without variants in the file there is no variant column; keys that
	// end the same way are written in full.
	o := Output{Variants: []VariantResult{
		{Name: "a", Sweep: Point{{"topology.host_link.rate", "100Gbps"}, {"topology.fabric_link.rate", "400Gbps"}},
			Results: []metrics.SizeResult{{Completion: metrics.Completion{SizeBytes: 1000, Timing: metrics.Timing{CCTS: 0.0000123, BusBWGBps: 0.8, IdealPct: 99.5}}, Outcome: metrics.Outcome{Complete: true}}}},
	}}
	b.Reset()
	if err := WriteTables(&b, o); err != nil {
		t.Fatal(err)
	}
	want = `#  topology.host_link.rate  topology.fabric_link.rate   size      time   busbw  %ideal      pfc      ecn   drops
#                                                                 (us)  (GB/s)
   100Gbps                  400Gbps                      1KB     12.30    0.80    99.5        0        0       0
`
	if got := b.String(); !strings.HasSuffix(got, want) || !strings.Contains(got, "# Avg bus bandwidth    : 0.80 GB/s\n\n# sweep: topology.host_link.rate, topology.fabric_link.rate  (1 point;") {
		t.Errorf("tables with a sweep:\n%s--- want it to end with\n%s", got, want)
	}

	// No sweep, no summary.
	b.Reset()
	if err := WriteSweepSummary(&b, sample()); err != nil || b.Len() != 0 {
		t.Errorf("summary without a sweep: %q, %v", b.String(), err)
	}
	b.Reset()
	WriteTables(&b, sample())
	if strings.Contains(b.String(), "# sweep") {
		t.Errorf("tables without a sweep have a summary:\n%s", b.String())
	}
}

func TestSweepJSONAndCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sweepSample()); err != nil {
		t.Fatal(err)
	}
	// The point keeps the sweep's key order (not sorted).
	if !strings.Contains(b.String(), `"parent": "pfc",
      "sweep": {
        "workload.qps": "1",
        "workload.algorithm": "direct"
      },
      "results": [`) {
		t.Errorf("JSON variant:\n%s", b.String())
	}
	var back Output
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if want := sweepSample().Variants[1].Sweep; !reflect.DeepEqual(back.Variants[1].Sweep, want) {
		t.Errorf("round trip: %v, want %v", back.Variants[1].Sweep, want)
	}
	// Without a sweep the keys are left out.
	b.Reset()
	WriteJSON(&b, sample())
	if strings.Contains(b.String(), `"sweep"`) || strings.Contains(b.String(), `"parent"`) {
		t.Errorf("sweep keys without a sweep:\n%s", b.String())
	}

	b.Reset()
	if err := WriteCSV(&b, sweepSample()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+6 || recs[0][17] != "sweep" {
		t.Fatalf("csv: %q", recs)
	}
	for i, want := range []string{"workload.qps=1;workload.algorithm=direct", "workload.qps=1;workload.algorithm=direct",
		"workload.qps=16;workload.algorithm=direct", "workload.qps=16;workload.algorithm=direct",
		"workload.qps=1;workload.algorithm=direct", "workload.qps=1;workload.algorithm=direct"} {
		if got := recs[i+1][17]; got != want {
			t.Errorf("row %d sweep = %q, want %q", i+1, got, want)
		}
	}
	if recs[3][0] != "pfc qps=16 algorithm=direct" || recs[3][1] != "16777216" {
		t.Errorf("row 3 = %q", recs[3])
	}
}

func TestWriteJobsTableGolden(t *testing.T) {
	v := VariantResult{Name: "v", Collective: "alltoall", Results: []metrics.SizeResult{{
		Completion: metrics.Completion{SizeBytes: 1 << 20, Ranks: 8, Timing: metrics.Timing{CCTS: 91.37e-6}},
		Outcome:    metrics.Outcome{Complete: true},
		Jobs: []metrics.JobResult{
			{Name: "main", Kind: "alltoall", SizeBytes: 1 << 20, AloneCCTS: 47.89e-6, Interference: 1.908, Timing: metrics.Timing{CCTS: 91.37e-6, BusBWGBps: 10.04}, Outcome: metrics.Outcome{Complete: true}},
			{Name: "background", Kind: "uniform", SizeBytes: 64 << 10, AloneCCTS: 135.44e-6, Interference: 1.412, Timing: metrics.Timing{CCTS: 191.25e-6}, Outcome: metrics.Outcome{Complete: true}},
			{Name: "late", Kind: "allreduce", SizeBytes: 4 << 20, Timing: metrics.Timing{CCTS: 1e-3}, Outcome: metrics.Outcome{Complete: false}},
		},
	}}}
	var b strings.Builder
	if err := WriteJobsTable(&b, v); err != nil {
		t.Fatal(err)
	}
	want := `# jobs: interference = time together / time alone
#   row  job         kind        size     time  alone  interf   busbw
#                                         (us)   (us)          (GB/s)
   1MiB  main        alltoall    1MiB    91.37  47.89   1.908   10.04
   1MiB  background  uniform    64KiB    191.2  135.4   1.412       -
   1MiB  late        allreduce   4MiB  1000.0*      -       -       -
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	v.Results[0].Jobs = nil
	if WriteJobsTable(&b, v); b.Len() != 0 {
		t.Errorf("no jobs: wrote %q", b.String())
	}
}

// With jobs, the CSV has main's row (job columns filled) and one row per
// other job with its own figures.
func TestWriteCSVJobs(t *testing.T) {
	o := Output{Variants: []VariantResult{{Name: "v", Collective: "alltoall", Results: []metrics.SizeResult{{
		Completion:   metrics.Completion{SizeBytes: 1 << 20, Ranks: 8, Timing: metrics.Timing{CCTS: 91.37e-6}},
		FabricTotals: metrics.FabricTotals{PFCPauses: 4},
		Outcome:      metrics.Outcome{Complete: true},
		Jobs: []metrics.JobResult{
			{Name: "main", Ranks: 8, AloneCCTS: 47.89e-6, Interference: 1.908, Timing: metrics.Timing{CCTS: 91.37e-6}, Outcome: metrics.Outcome{Complete: true}},
			{Name: "background", Ranks: 4, AloneCCTS: 135.44e-6, Interference: 1.412, Timing: metrics.Timing{CCTS: 191.25e-6, AlgBWGBps: 2.5}, Outcome: metrics.Outcome{Complete: true}},
		},
	}}}}}
	var b strings.Builder
	if err := WriteCSV(&b, o); err != nil {
		t.Fatal(err)
	}
	want := `variant,size_bytes,ranks,cct_s,algbw_gbps,busbw_gbps,ideal_s,ideal_pct,pfc_pauses,ecn_marks,drops,retransmits,cnps,timeouts,complete,routed_ideal_s,routed_ideal_pct,sweep,job,alone_cct_s,interference,error
v,1048576,8,9.137e-05,0,0,0,0,4,0,0,0,0,0,true,0,0,,main,4.789e-05,1.908,
v,1048576,4,0.00019125,2.5,0,0,0,,,,,,,true,,,,background,0.00013544,1.412,
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A sweep of message workloads summarizes offered and carried load and the
// p99 slowdown of the shortest and largest buckets.
func TestMessageSweepSummary(t *testing.T) {
	res := func(load float64, carried bool, short, long float64) metrics.SizeResult {
		return metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 2515863}, Outcome: metrics.Outcome{Complete: true},
			FlowStats: metrics.FlowStats{Load: &metrics.MessageLoad{Messages: 1000, OfferedLoad: load, Carried: carried},
				SlowdownBySize: []metrics.SizeBucket{{Slowdown: metrics.Percentiles{P99: short}}, {Slowdown: metrics.Percentiles{P99: long}}}}}
	}
	o := Output{Variants: []VariantResult{
		{Name: "load=0.5", Sweep: Point{{Key: "workload.load", Value: "0.5"}}, Results: []metrics.SizeResult{res(0.49, true, 1.2, 3)}},
		{Name: "load=0.8", Sweep: Point{{Key: "workload.load", Value: "0.8"}}, Results: []metrics.SizeResult{res(0.81, false, 1.5, 10.25)}},
	}}
	var b strings.Builder
	if err := WriteSweepSummary(&b, o); err != nil {
		t.Fatal(err)
	}
	want := `# sweep: workload.load  (2 points; one row per point and size)
#  load      size    msgs  offered  carried  p99 short  p99 long   drops
#
   0.5   2515863B    1000     0.49      yes       1.20      3.00       0
   0.8   2515863B    1000     0.81       no       1.50     10.25       0
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Explain's text: a storming NIC's host among the roots, and (only when
// some flow lost packets to the PFC watchdog) the loss-limited count and
// where the flow lost them; a row without them reads as it always did.
func TestWriteExplainLossLimited(t *testing.T) {
	row := func(x *metrics.Explanation) VariantResult {
		return VariantResult{Name: "v", Results: []metrics.SizeResult{{Completion: metrics.Completion{SizeBytes: 9 << 20}, Explain: x}}}
	}
	var b strings.Builder
	if err := WriteExplain(&b, row(&metrics.Explanation{Threshold: 1.5, SlowFlows: 2, Victims: 1, LossLimited: 1,
		Flows: []metrics.SlowFlow{
			{ID: 0, Src: 0, Dst: 3, Slowdown: 28.1, Role: "loss-limited", Drops: 2000,
				Links: []metrics.QueueStay{{Link: "leaf0→host3", Drops: 2000}}},
			{ID: 1, Src: 0, Dst: 1, Slowdown: 2.88, Role: "victim",
				Links: []metrics.QueueStay{{Link: "NIC host0 (paused)", PausedS: 122.6e-6}}}},
		PauseTree: []metrics.PauseEdge{{From: "host3", To: "leaf0", Pauses: 200, PausedS: 700e-6}},
		Roots:     []string{"host3"}})); err != nil {
		t.Fatal(err)
	}
	want := "# explain 9MiB: 2 flows slower than 1.5×: 1 victims of PFC, 0 culprits, 0 contending, 0 sender-limited, 1 loss-limited; congestion roots: host3\n" +
		"#   flow 0 host0→host3 28.10× loss-limited: leaf0→host3 queued 0.00 us, paused 0.00 us, 2000 dropped by the PFC watchdog\n" +
		"#   flow 1 host0→host1 2.88× victim: NIC host0 (paused) queued 0.00 us, paused 122.6 us\n" +
		"#   host3 paused leaf0: 200 frames, 700.0 us paused\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteExplain(&b, row(&metrics.Explanation{Threshold: 1.5, SlowFlows: 1, SenderLimited: 1,
		Flows: []metrics.SlowFlow{{ID: 4, Src: 1, Dst: 2, Slowdown: 2, Role: "sender-limited"}}})); err != nil {
		t.Fatal(err)
	}
	want = "# explain 9MiB: 1 flows slower than 1.5×: 0 victims of PFC, 0 culprits, 0 contending, 1 sender-limited\n" +
		"#   flow 4 host1→host2 2.00× sender-limited: no queue\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
