package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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
				{SizeBytes: 16 << 20, Ranks: 32, CCTS: 0.000466, AlgBWGBps: 36.0, BusBWGBps: 34.87, IdealS: 0.000452, IdealPct: 97.0, PFCPauses: 12, ECNMarks: 3456, Complete: true},
				{SizeBytes: 8 << 20, Ranks: 32, CCTS: 0.000233, AlgBWGBps: 36.0, BusBWGBps: 34.87, IdealS: 0.000226, IdealPct: 97.0, PFCPauses: 12, ECNMarks: 345, Complete: true},
			}},
			{Name: "default", Collective: "alltoall", Results: []metrics.SizeResult{
				{SizeBytes: 64 << 30, Ranks: 32, CCTS: 1.5, AlgBWGBps: 45.81, BusBWGBps: 44.38, IdealS: 1.4, IdealPct: 93.3, PFCPauses: 1234567, ECNMarks: 3456789, Retransmits: 4, Complete: false},
				{SizeBytes: 1000, Ranks: 32, Error: "build failed:\nno route"},
				{SizeBytes: 4096, Ranks: 32, CCTS: 0.0000123, AlgBWGBps: 0.33, BusBWGBps: 0.32, IdealS: 0.00001, IdealPct: 81.3, RoutedIdealS: 0.000011, RoutedIdealPct: 89.4, Complete: true},
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
	WriteTable(&b, VariantResult{Name: "y", Collective: "allreduce", Results: []metrics.SizeResult{{SizeBytes: 1 << 20, Ranks: 4}}})
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
	if got := strings.Join(recs[0], ","); got != "variant,size_bytes,ranks,cct_s,algbw_gbps,busbw_gbps,ideal_s,ideal_pct,pfc_pauses,ecn_marks,drops,retransmits,cnps,timeouts,complete,routed_ideal_s,routed_ideal_pct" {
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
	if got := strings.Join(recs[1], ","); got != "pfc-only,8388608,32,0.000233,36,34.87,0.000226,97,12,345,0,0,0,0,true,0,0" {
		t.Errorf("row 1 = %s", got)
	}
	if recs[5][14] != "false" {
		t.Errorf("incomplete row complete = %s", recs[5][14])
	}
}
