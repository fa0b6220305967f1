package web

import (
	"fmt"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/store"
)

// TestRunPageListsJobsNeverSaved: the run page of an interrupted run lists,
// after its tables, the jobs it planned that have no row, as show does.
func TestRunPageListsJobsNeverSaved(t *testing.T) {
	g := newRig(t, Config{})
	vs := []report.VariantResult{{Name: "first", Collective: "alltoall"}, {Name: "second", Collective: "alltoall"}}
	id, err := g.st.BeginRun(store.Meta{Name: "stopped", ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Seed: 7,
		Version: "test", Started: "2026-11-30T10:00:00Z", Expected: 4}, vs)
	if err != nil {
		t.Fatal(err)
	}
	r := metrics.SizeResult{}
	r.SizeBytes, r.Ranks, r.Flows, r.Complete, r.CCTS = 65536, 4, 12, true, 1e-5
	if err := g.st.AddResult(id, 0, 0, r); err != nil {
		t.Fatal(err)
	}
	if err := g.st.FinishRun(id, store.StatusInterrupted, "2026-11-30T10:01:00Z"); err != nil {
		t.Fatal(err)
	}
	code, body, _ := g.get(fmt.Sprintf("/runs/%d", id))
	want := "\n\n# missing: 3 of 4 planned jobs have no result (interrupted: the run stopped before they started or measured anything)\n" +
		"#   first: 256KiB\n#   second: 64KiB, 256KiB\n</pre>"
	if code != 200 || !strings.Contains(body, want) {
		t.Errorf("run page: %d, want the tables to end with\n%s\n%s", code, want, body)
	}

	// A run with every row lists nothing.
	full := g.saveRun("full", nil, "", 10)
	if _, body, _ := g.get(fmt.Sprintf("/runs/%d", full)); strings.Contains(body, "# missing") {
		t.Errorf("run page of a complete run lists missing jobs:\n%s", body)
	}
}
