package charts

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
)

func writeOne(t *testing.T, s Source) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, []Source{s}, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// top is the report above its fabric summary: the title, the runs and
// what the report says of their status.
func top(t *testing.T, h string) string {
	t.Helper()
	i := strings.Index(h, `<h2 id="fabric">`)
	if i < 0 {
		t.Fatal("the report has no fabric section")
	}
	return h[:i]
}

// failedOutput is a run whose 2MiB row failed with an error that holds
// markup and a line break, beside a measured 1KiB row.
func failedOutput() report.Output {
	o := synthetic()
	o.Variants = o.Variants[:1]
	o.Variants[0].Results = o.Variants[0].Results[:2]
	r := &o.Variants[0].Results[1]
	*r = metrics.SizeResult{}
	r.SizeBytes = 2 << 20
	r.Error = "agent 10.0.0.5:7470: <b>refused</b>\nsecond line & more"
	return o
}

// A failed run's report says so at the top, before any chart: its status,
// the rows that failed with their errors (escaped, on one line) and, as
// the store counts them, the planned jobs that have no result.
func TestReportShowsAFailedRun(t *testing.T) {
	o := failedOutput()
	o.MissingRows = 3
	h := writeOne(t, Source{Label: "run 7", Output: o})
	head := top(t, h)
	for _, want := range []string{
		`<div class="status">`,
		"run 7: failed.",
		"1 of its 2 result rows failed",
		"<li>ecmp 2MiB: agent 10.0.0.5:7470: &lt;b&gt;refused&lt;/b&gt; second line &amp; more</li>",
		"3 planned jobs have no result row.",
		"<td>run 7 (failed)</td>",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("the top of the report lacks %q:\n%s", want, head)
		}
	}
	if strings.Contains(h, "<b>refused") {
		t.Error("the error's markup reached the page unescaped")
	}
}

// With the saved run's status and what it planned (store.Unsaved), the
// report names the missing jobs as show does; a run saved as done that
// lacks rows is incomplete.
func TestReportShowsUnsavedJobs(t *testing.T) {
	o := synthetic()
	o.Variants = o.Variants[:1]
	o.Variants[0].Results = o.Variants[0].Results[:1]
	u := report.Unsaved{Planned: 3, Missing: 2, Why: "their results could not be saved <disk>",
		Jobs: []report.UnsavedJob{{Variant: "ecmp", SizeBytes: 2 << 20}, {Variant: "ecmp", SizeBytes: 4 << 30}}}
	head := top(t, writeOne(t, Source{Label: "run 8", Output: o, Status: "done", Unsaved: u}))
	for _, want := range []string{
		"run 8: incomplete.",
		"2 of 3 planned jobs have no result (their results could not be saved &lt;disk&gt;).",
		"<li>ecmp: 2MiB, 4GiB</li>",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("the top of the report lacks %q:\n%s", want, head)
		}
	}
	// A status the caller gives is the report's, failed rows or not.
	head = top(t, writeOne(t, Source{Label: "run 9", Output: o, Status: "failed",
		Unsaved: report.Unsaved{Planned: 3, Missing: 2, NoPlan: "the run has no saved scenario"}}))
	for _, want := range []string{"run 9: failed.", "2 of 3 planned jobs have no result; which ones is unknown: the run has no saved scenario."} {
		if !strings.Contains(head, want) {
			t.Errorf("the top of the report lacks %q:\n%s", want, head)
		}
	}
}

// An interrupted run, and one whose rows ran out of time, say so too; a
// run that finished cleanly has no status block.
func TestReportShowsAnInterruptedRun(t *testing.T) {
	o := synthetic()
	o.Interrupted = true
	o.Variants[1].Results[2].Complete = false
	head := top(t, writeOne(t, Source{Label: "run 2", Output: o}))
	for _, want := range []string{"run 2: interrupted.", "1 of its 6 result rows did not finish", "have no result row", "<td>run 2 (interrupted)</td>"} {
		if !strings.Contains(head, want) {
			t.Errorf("the top of the report lacks %q:\n%s", want, head)
		}
	}
	if h := writeOne(t, Source{Label: "run 1", Output: synthetic(), Status: "done"}); strings.Contains(h, `class="status"`) {
		t.Errorf("a clean run has a status block:\n%s", top(t, h))
	}
	// A run just made (no label, no saved status).
	o = failedOutput()
	if head := top(t, writeOne(t, Source{Output: o})); !strings.Contains(head, "This run: failed.") || !strings.Contains(head, "<td>this run (failed)</td>") {
		t.Errorf("the top of a new run's report:\n%s", head)
	}
}

// hostsOutput is synthetic() as real hosts measure it: a hosts object on
// every row, no fabric counters, no per-port counters.
func hostsOutput() report.Output {
	o := synthetic()
	for vi := range o.Variants {
		for ri := range o.Variants[vi].Results {
			r := &o.Variants[vi].Results[ri]
			r.Hosts = &metrics.HostsRun{Engine: "hosts", Agents: 2, Scale: 1}
			r.Ports = nil
			r.PFCPauses, r.ECNMarks = 0, 0
		}
	}
	return o
}

func skipOf(h, name string) string {
	i := strings.Index(h, `<h2 id="`+name+`">`)
	if i < 0 {
		return ""
	}
	rest := h[i:]
	j := strings.Index(rest, `<p class="skip">`)
	k := strings.Index(rest[1:], "<h2")
	if j < 0 || (k >= 0 && j > k+1) {
		return ""
	}
	rest = rest[j+len(`<p class="skip">`):]
	return html.UnescapeString(rest[:strings.Index(rest, "</p>")])
}

// Real hosts give no per-switch-port counters: the tier chart says so
// rather than advise sim.port_counters, which they cannot honour. With
// simulated rows beside them the advice is for those rows; the flow
// engine counts no packets either.
func TestTierSkipOnRealHosts(t *testing.T) {
	h := writeOne(t, Source{Label: "run 3", Output: hostsOutput()})
	why := skipOf(h, "tiers")
	if why == "" || strings.Contains(why, "port_counters") || !strings.Contains(why, "real hosts give no per-switch-port counters") {
		t.Errorf("the tier chart of a hosts run: %q", why)
	}

	sim := synthetic()
	for vi := range sim.Variants {
		for ri := range sim.Variants[vi].Results {
			sim.Variants[vi].Results[ri].Ports = nil
		}
	}
	h = writeOneOf(t, []Source{{Label: "run 3", Output: hostsOutput()}, {Label: "run 4", Output: sim}})
	if why := skipOf(h, "tiers"); !strings.Contains(why, "real hosts give no per-switch-port counters") ||
		!strings.Contains(why, "for the packet engine's rows, set sim.port_counters: true") {
		t.Errorf("the tier chart of hosts and simulated runs: %q", why)
	}
	if why := skipOf(writeOne(t, Source{Label: "run 4", Output: sim}), "tiers"); why != "No per-port counters in these results: set sim.port_counters: true." {
		t.Errorf("the tier chart of a simulated run: %q", why)
	}

	flow := synthetic()
	for vi := range flow.Variants {
		for ri := range flow.Variants[vi].Results {
			flow.Variants[vi].Results[ri].Ports = nil
			flow.Variants[vi].Results[ri].Engine = "flow"
		}
	}
	if why := skipOf(writeOne(t, Source{Label: "run 5", Output: flow}), "tiers"); strings.HasSuffix(why, ": set sim.port_counters: true.") || !strings.Contains(why, "the flow engine counts no packets") {
		t.Errorf("the tier chart of a flow-engine run: %q", why)
	}
}

func writeOneOf(t *testing.T, srcs []Source) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, srcs, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// When every row failed (a hosts run whose agents could not be reached
// has no row that even says it ran on hosts), the charts say that nothing
// was measured, not what to enable or to rerun with a current fabriclab.
func TestSkipsWhenEveryRowFailed(t *testing.T) {
	o := failedOutput()
	o.Variants[0].Results = o.Variants[0].Results[1:]
	h := writeOne(t, Source{Label: "run 6", Output: o})
	for _, name := range []string{"busbw", "fct-curve", "fct-cdf", "rank-done", "heatmap", "pfc", "tiers"} {
		why := skipOf(h, name)
		if !strings.HasPrefix(why, "No variant has a measured data size: every row that ran failed") {
			t.Errorf("%s: %q", name, why)
		}
	}
}

// A run with many failed rows lists the first ones and counts the rest.
func TestReportCapsFailedRows(t *testing.T) {
	o := report.Output{Scenario: "many"}
	for i := range 25 {
		r := metrics.SizeResult{}
		r.SizeBytes = 1 << 20
		r.Error = fmt.Sprintf("error %d", i)
		o.Variants = append(o.Variants, report.VariantResult{Name: fmt.Sprintf("v%d", i), Collective: "alltoall", Results: []metrics.SizeResult{r}})
	}
	head := top(t, writeOne(t, Source{Label: "run 1", Output: o}))
	if !strings.Contains(head, "25 of its 25 result rows failed") || !strings.Contains(head, "<li>v19 1MiB: error 19</li>") ||
		strings.Contains(head, "v20 1MiB") || !strings.Contains(head, "… and 5 more failed rows") {
		t.Errorf("the top of the report:\n%s", head)
	}
}

// A run saved done whose rows stopped at their time limit is not called
// plainly "done" in the block that warns of it.
func TestReportDoneWithUnfinishedRows(t *testing.T) {
	o := synthetic()
	o.Variants[0].Results[0].Complete = false
	head := top(t, writeOne(t, Source{Label: "run 3", Output: o, Status: "done"}))
	if !strings.Contains(head, "<strong>run 3: done, not every row complete.</strong>") || !strings.Contains(head, "did not finish") {
		t.Errorf("the top of the report:\n%s", head)
	}
}
