package charts

import (
	"fmt"
	"html"
	"strings"

	"fabriclab/internal/safetext"
	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/store"
	"fabriclab/units"
)

// statusWhat says what a status that is not a clean finish means for the
// results below it.
var statusWhat = map[string]string{
	store.StatusFailed:      "Some of its jobs returned an error, or never ran.",
	store.StatusInterrupted: "It was stopped before all its jobs had finished.",
	store.StatusIncomplete:  "Not all its results could be saved.",
	store.StatusRunning:     "It was still marked running (not finished, or its process was killed): its results are partial.",
	store.StatusQueued:      "Its jobs were on the job queue, not all done: its results are partial.",
}

// maxStatusItems bounds the failed rows and missing jobs the status block
// lists; the rest are counted.
const maxStatusItems = 20

// statusOf is the status the report gives s: Source.Status, or when it is
// empty what Output tells (interrupted, rows with an error, rows never
// saved). A run saved as done that lacks rows is incomplete, as runs and
// show say.
func statusOf(s Source) string {
	st := s.Status
	o := s.Output
	if st == "" {
		switch {
		case o.Interrupted:
			st = store.StatusInterrupted
		case len(failedRows(o)) > 0:
			st = store.StatusFailed
		case o.MissingRows > 0 || s.Unsaved.Missing > 0:
			st = store.StatusIncomplete
		default:
			st = store.StatusDone
		}
	}
	if st == store.StatusDone && (o.MissingRows > 0 || s.Unsaved.Missing > 0) {
		st = store.StatusIncomplete
	}
	return st
}

// rowRef is a result row of a variant.
type rowRef struct {
	variant string
	r       metrics.SizeResult
}

// failedRows are the rows of o that hold an error, in variant and size
// order.
func failedRows(o report.Output) []rowRef {
	var out []rowRef
	for _, v := range report.Sorted(o).Variants {
		for _, r := range v.Results {
			if r.Error != "" {
				out = append(out, rowRef{v.Name, r})
			}
		}
	}
	return out
}

// unfinishedRows counts the rows of o that ran without an error but did
// not finish (a time limit, or interrupted).
func unfinishedRows(o report.Output) (n, rows int) {
	for _, v := range o.Variants {
		for _, r := range v.Results {
			rows++
			if r.Error == "" && !r.Complete {
				n++
			}
		}
	}
	return n, rows
}

// htmlText is free text from a run (an error, a name) for the page: one
// line, its control characters shown as escapes, HTML-escaped.
func htmlText(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return html.EscapeString(safetext.Terminal(s))
}

// writeStatus writes, at the top of the report, what a run that did not
// finish cleanly left: its status, the rows that failed with their
// errors, the rows that did not finish and the planned jobs that have no
// result. A clean run (done, every row complete) writes nothing.
func writeStatus(b *strings.Builder, s Source, nsrcs int) {
	o := s.Output
	st := statusOf(s)
	failed := failedRows(o)
	unfinished, rows := unfinishedRows(o)
	u := s.Unsaved
	if st == store.StatusDone && len(failed) == 0 && unfinished == 0 && u.None() {
		return
	}
	who := s.Label
	if who == "" {
		who = "This run"
		if nsrcs > 1 {
			who = "A run"
		}
	}
	b.WriteString("<div class=\"status\">\n")
	what := ""
	if w, ok := statusWhat[st]; ok {
		what = " " + w
	}
	said := st
	if st == store.StatusDone {
		said = "done, not every row complete" // rows stopped at their time limit
	}
	fmt.Fprintf(b, "<p><strong>%s: %s.</strong>%s</p>\n", htmlText(who), htmlText(said), html.EscapeString(what))

	if len(failed) > 0 {
		fmt.Fprintf(b, "<p>%d of its %s failed:</p>\n<ul>\n", len(failed), plural(rows, "result row"))
		// Rows of a variant that failed alike are one item.
		items := 0
		for i := 0; i < len(failed); {
			j := i + 1
			for j < len(failed) && failed[j].variant == failed[i].variant && failed[j].r.Error == failed[i].r.Error {
				j++
			}
			if items == maxStatusItems {
				fmt.Fprintf(b, "<li>… and %s (the run's tables and JSON list them all)</li>\n", plural(len(failed)-i, "more failed row"))
				break
			}
			sizes := make([]string, 0, j-i)
			for _, f := range failed[i:j] {
				sizes = append(sizes, units.Size(f.r.SizeBytes).String())
			}
			fmt.Fprintf(b, "<li>%s %s: %s</li>\n", htmlText(failed[i].variant), strings.Join(sizes, ", "), htmlText(failed[i].r.Error))
			items++
			i = j
		}
		b.WriteString("</ul>\n")
	}
	if unfinished > 0 {
		fmt.Fprintf(b, "<p>%d of its %s did not finish (time limit reached or interrupted): their numbers describe a partial run.</p>\n", unfinished, plural(rows, "result row"))
	}
	writeUnsavedHTML(b, st, o, u)
	b.WriteString("</div>\n")
}

// writeUnsavedHTML writes the planned jobs that have no result:
// Source.Unsaved as show writes it, else the count Output.MissingRows
// keeps, else (an interrupted run) that the jobs not started have none.
func writeUnsavedHTML(b *strings.Builder, st string, o report.Output, u report.Unsaved) {
	if u.None() {
		switch {
		case o.MissingRows > 0:
			fmt.Fprintf(b, "<p>%s %s no result row.</p>\n", plural(o.MissingRows, "planned job"), has(o.MissingRows))
		case st == store.StatusInterrupted:
			b.WriteString("<p>The jobs that had not started when it stopped have no result row.</p>\n")
		}
		return
	}
	n := max(u.Missing, len(u.Jobs))
	switch {
	case n > 0 && u.Planned > 0:
		fmt.Fprintf(b, "<p>%d of %s %s no result", n, plural(u.Planned, "planned job"), has(n))
	case n > 0:
		fmt.Fprintf(b, "<p>%s %s no result", plural(n, "planned job"), has(n))
	default:
		b.WriteString("<p>Some planned jobs have no result")
	}
	if u.Why != "" {
		fmt.Fprintf(b, " (%s)", htmlText(u.Why))
	}
	if u.Jobs == nil && u.NoPlan != "" {
		fmt.Fprintf(b, "; which ones is unknown: %s", htmlText(u.NoPlan))
	}
	b.WriteString(".</p>\n")
	var items []string
	for i := 0; i < len(u.Jobs); {
		v := u.Jobs[i].Variant
		var sizes []string
		for ; i < len(u.Jobs) && u.Jobs[i].Variant == v; i++ {
			sizes = append(sizes, units.Size(u.Jobs[i].SizeBytes).String())
		}
		items = append(items, htmlText(v)+": "+strings.Join(sizes, ", "))
	}
	if u.Jobs == nil && len(u.Empty) > 0 {
		names := make([]string, len(u.Empty))
		for i, v := range u.Empty {
			names[i] = htmlText(v)
		}
		items = append(items, "no result at all: "+strings.Join(names, ", "))
	}
	if len(items) == 0 {
		return
	}
	b.WriteString("<ul>\n")
	for k, it := range items {
		if k == maxStatusItems {
			fmt.Fprintf(b, "<li>… and %d more variants</li>\n", len(items)-k)
			break
		}
		fmt.Fprintf(b, "<li>%s</li>\n", it)
	}
	b.WriteString("</ul>\n")
}

// SavedRun is the source of saved run m, whose results are out: labelled
// "run ID", with its saved status and the jobs it planned that have no
// result (the saved scenario is read again for them).
func SavedRun(m store.Meta, out report.Output) Source {
	return Source{
		Label:         fmt.Sprintf("run %d", m.ID),
		Output:        out,
		ScenarioText:  m.ScenarioText,
		ScenarioPaths: m.ScenarioPaths(),
		Status:        m.Status,
		Unsaved:       store.UnsavedOf(m, out),
	}
}

// plural is "1 row" or "N rows" (report.Plural of a regular noun).
func plural(n int, s string) string { return report.Plural(n, s, s+"s") }

// has is the verb for n things: "has" for one, else "have".
func has(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
