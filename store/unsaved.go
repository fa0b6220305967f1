package store

import (
	"fmt"

	"fabriclab/report"
	"fabriclab/scenario"
)

// Unsaved lists the jobs of a saved run that have no result row: the jobs
// its scenario expands into (f: the saved scenario read again with the
// run's overrides, report.SavedScenarioIn; nil, with ferr saying why, when
// it could not be), less the rows Run read (out and m as Run returned
// them; m.Saved names the rows). Why says what the run's status tells of
// them: interrupted, rows that could not be saved, a process that is gone,
// jobs not done yet.
//
// The plan is trusted only when it is the run's: the same variants, in the
// same order, and as many jobs as the run expected (Meta.Expected). Else,
// or without f, Unsaved counts what is missing from Meta.Expected and
// names the variants without any row.
func Unsaved(m Meta, out report.Output, f *scenario.File, ferr error) report.Unsaved {
	u := report.Unsaved{Planned: m.Expected, Why: unsavedWhy(m)}
	saved := map[ResultKey]bool{}
	for _, k := range m.Saved {
		saved[k] = true
	}
	rows := len(saved)
	if m.Rows > rows && len(m.Saved) == 0 {
		rows = m.Rows // m is not from Run: count what Meta counted
	}
	jobs, noPlan := plannedJobs(m, out, f, ferr)
	if jobs != nil && (len(m.Saved) > 0 || m.Rows == 0) {
		u.Planned = len(jobs)
		u.Jobs = []report.UnsavedJob{}
		for _, j := range jobs {
			if !saved[ResultKey{j.VariantIndex, j.SizeIndex}] {
				u.Jobs = append(u.Jobs, report.UnsavedJob{Variant: out.Variants[j.VariantIndex].Name, SizeBytes: int64(j.Size)})
			}
		}
		u.Missing = len(u.Jobs)
		if u.Missing == 0 {
			u.Jobs = nil
		}
		return u
	}
	if noPlan == "" {
		noPlan = "the rows read do not name their sizes"
	}
	u.NoPlan = noPlan
	if m.Expected > rows {
		u.Missing = m.Expected - rows
	}
	for _, v := range out.Variants {
		if len(v.Results) == 0 {
			u.Empty = append(u.Empty, v.Name)
		}
	}
	return u
}

// plannedJobs is the run's plan rebuilt from f, or nil and why not.
func plannedJobs(m Meta, out report.Output, f *scenario.File, ferr error) ([]scenario.Job, string) {
	switch {
	case f == nil && ferr != nil:
		return nil, "the saved scenario could not be read again: " + oneLine(ferr.Error())
	case f == nil:
		return nil, "the run has no saved scenario"
	case len(f.Variants) != len(out.Variants):
		return nil, fmt.Sprintf("the saved scenario now has %d variants, the run had %d", len(f.Variants), len(out.Variants))
	}
	for i, v := range f.Variants {
		if v.Spec == nil || v.Name != out.Variants[i].Name {
			return nil, fmt.Sprintf("the saved scenario's variant %d is no longer the run's %q", i+1, out.Variants[i].Name)
		}
	}
	jobs := f.Jobs()
	if m.Expected > 0 && len(jobs) != m.Expected {
		return nil, fmt.Sprintf("the saved scenario now expands to %d jobs, the run planned %d", len(jobs), m.Expected)
	}
	if jobs == nil {
		jobs = []scenario.Job{}
	}
	return jobs, ""
}

// unsavedWhy is what a run's status says of the jobs it has no row for.
func unsavedWhy(m Meta) string {
	switch m.Status {
	case StatusInterrupted:
		return "interrupted: the run stopped before they started or measured anything"
	case StatusIncomplete:
		return "their results could not be saved (a full disk, a lost database server); run said why when it ended"
	case StatusQueued:
		return "on the job queue: not done yet"
	case StatusRunning:
		if m.Stale() {
			return "the run's process is gone (killed?) without saving them"
		}
		return "the run is still marked running: not done yet"
	case StatusFailed:
		return "the run failed before they saved a row: it stopped at a job that every later one would fail alike, or its job queue gave up on them"
	}
	return "their results were never saved"
}

// UnsavedOf is Unsaved with the run's saved scenario (and the files it
// names) read again, as show, export and the reports list the jobs; not
// read when the run has every row it planned.
func UnsavedOf(m Meta, out report.Output) report.Unsaved {
	if m.Expected > 0 && len(m.Saved) >= m.Expected {
		return report.Unsaved{Planned: m.Expected}
	}
	f, err := report.SavedScenarioIn(m.ScenarioPaths(), m.ScenarioText, m.Sets, m.Sweeps)
	return Unsaved(m, out, f, err)
}
