package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/scenario"
)

const unsavedYAML = `name: u
topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: alltoall, sizes: {list: [1MiB, 4MiB, 16MiB]}}
variants:
  - name: a
  - name: b
`

// TestUnsaved: the jobs a saved run planned and has no row for are its
// scenario's jobs less the rows Run read, with what its status says of
// them; without the plan, how many and the variants without any row.
func TestUnsaved(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "u.db"))
	vs := []report.VariantResult{{Name: "a", Collective: "alltoall"}, {Name: "b", Collective: "alltoall"}}
	id, err := s.BeginRun(Meta{Name: "u", ScenarioFile: "u.yaml", ScenarioText: unsavedYAML, Expected: 6}, vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []ResultKey{{0, 0}, {0, 2}} {
		r := metrics.SizeResult{}
		r.SizeBytes, r.Complete = 1<<20<<(2*k.Size), true
		if err := s.AddResult(id, k.Variant, k.Size, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishRun(id, StatusInterrupted, "2025-06-01T12:00:00Z"); err != nil {
		t.Fatal(err)
	}
	out, m, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if want := []ResultKey{{0, 0}, {0, 2}}; !reflect.DeepEqual(m.Saved, want) {
		t.Fatalf("Run: Saved %v, want %v", m.Saved, want)
	}
	f, ferr := report.SavedScenarioIn(m.ScenarioPaths(), m.ScenarioText, m.Sets, m.Sweeps)
	if ferr != nil {
		t.Fatal(ferr)
	}
	u := Unsaved(m, out, f, nil)
	want := report.Unsaved{Planned: 6, Missing: 4, Why: unsavedWhy(Meta{Status: StatusInterrupted}),
		Jobs: []report.UnsavedJob{{Variant: "a", SizeBytes: 4 << 20}, {Variant: "b", SizeBytes: 1 << 20},
			{Variant: "b", SizeBytes: 4 << 20}, {Variant: "b", SizeBytes: 16 << 20}}}
	if !reflect.DeepEqual(u, want) || !strings.HasPrefix(u.Why, "interrupted") {
		t.Errorf("Unsaved = %+v\nwant %+v", u, want)
	}

	// The plan is not trusted when it is not the run's.
	other, err := scenario.Parse("o.yaml", []byte(strings.Replace(unsavedYAML, "16MiB", "16MiB, 64MiB", 1)))
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := scenario.Parse("o.yaml", []byte(strings.Replace(unsavedYAML, "name: b", "name: c", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f      *scenario.File
		ferr   error
		noPlan string
	}{
		{nil, errors.New("flows.csv: no such file"), "the saved scenario could not be read again: flows.csv: no such file"},
		{nil, nil, "the run has no saved scenario"},
		{other, nil, "the saved scenario now expands to 8 jobs, the run planned 6"},
		{renamed, nil, `the saved scenario's variant 2 is no longer the run's "b"`},
	} {
		u := Unsaved(m, out, c.f, c.ferr)
		want := report.Unsaved{Planned: 6, Missing: 4, Why: want.Why, NoPlan: c.noPlan, Empty: []string{"b"}}
		if !reflect.DeepEqual(u, want) {
			t.Errorf("Unsaved = %+v\nwant %+v", u, want)
		}
	}

	// Nothing is missing from a run with every row, whatever its status.
	m.Saved = []ResultKey{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}
	m.Status = StatusDone
	if u := Unsaved(m, out, f, nil); !u.None() || u.Planned != 6 {
		t.Errorf("Unsaved of a complete run = %+v", u)
	}
	for status, why := range map[string]string{StatusIncomplete: "could not be saved", StatusQueued: "not done yet",
		StatusFailed: "failed before they saved a row", StatusDone: "never saved"} {
		if got := unsavedWhy(Meta{Status: status}); !strings.Contains(got, why) {
			t.Errorf("%s: why %q, want it to say %q", status, got, why)
		}
	}
}
