package charts

import (
	"fmt"
	"html"
	"io"
	"strings"

	"fabriclab/report"
	"fabriclab/store"
)

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.skip{color:#666;font-style:italic}.note{color:#444;font-size:.9em;margin:.2em 0}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}
table.num td{text-align:right;font-variant-numeric:tabular-nums}table.num td:first-child{text-align:left}
details{margin:.4em 0 1em}summary{cursor:pointer;color:#444}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:.85em}
.status{border-left:4px solid #b32;background:#fbf0ee;padding:.3em 1em;margin:1em 0}.status ul{margin:.2em 0}`

// openRows is the size up to which a chart's numbers table is shown open;
// a longer one is folded (a click opens it, no script needed).
const openRows = 16

func writeHTML(w io.Writer, srcs []Source, cs []Chart) error {
	var b strings.Builder
	e := html.EscapeString
	title := "fabriclab report"
	if len(srcs) == 1 && srcs[0].Output.Scenario != "" {
		title += ": " + srcs[0].Output.Scenario
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<h1>%s</h1>\n", e(title), css, e(title))
	for _, s := range srcs {
		writeStatus(&b, s, len(srcs))
	}
	b.WriteString("<table id=\"runs\">\n<tr><th>run</th><th>scenario</th><th>file</th><th>seed</th><th>overrides</th><th>started</th><th>variants</th><th>version</th></tr>\n")
	for _, s := range srcs {
		o := s.Output
		label := s.Label
		if st := statusOf(s); st != store.StatusDone {
			if label == "" {
				label = "this run" // run --report
			}
			label += " (" + st + ")"
		}
		opts := report.OverrideFlags(o.Sets, o.Sweeps)
		cell := "<code>" + e(opts) + "</code>"
		if opts == "" {
			cell = "none"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
			e(label), e(o.Scenario), e(o.ScenarioFile), o.Seed, cell, e(o.Started), len(o.Variants), e(o.Version))
	}
	b.WriteString("</table>\n")
	writeFabrics(&b, srcs)
	for _, c := range cs {
		fmt.Fprintf(&b, "<h2 id=\"%s\">%s</h2>\n", e(c.Name), e(c.Title))
		if c.Skip != "" {
			fmt.Fprintf(&b, "<p class=\"skip\">%s</p>\n", e(c.Skip))
			continue
		}
		fmt.Fprintf(&b, "<figure>\n%s</figure>\n", c.SVG)
		if c.Note != "" {
			fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", e(c.Note))
		}
		writeTable(&b, c)
	}
	for _, s := range srcs {
		h := "Scenario"
		if len(srcs) > 1 {
			h += " of " + s.Label
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n", e(h))
		if s.ScenarioText == "" {
			fmt.Fprintf(&b, "<p class=\"skip\">The scenario text is not available (%s).</p>\n", e(s.Output.ScenarioFile))
		} else {
			fmt.Fprintf(&b, "<p>%s</p>\n<pre>%s</pre>\n", e(s.Output.ScenarioFile), e(s.ScenarioText))
		}
		if opts := report.OverrideFlags(s.Output.Sets, s.Output.Sweeps); opts != "" {
			fmt.Fprintf(&b, "<p>Command-line options: <code>%s</code></p>\n", e(opts))
		}
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFabrics writes the fabric summary of each source: the first
// variant's fabric, then what later variants change.
func writeFabrics(b *strings.Builder, srcs []Source) {
	e := html.EscapeString
	b.WriteString("<h2 id=\"fabric\">Fabric</h2>\n")
	for _, s := range srcs {
		if len(srcs) > 1 {
			fmt.Fprintf(b, "<h3>%s</h3>\n", e(s.Label))
		}
		if len(s.Fabrics) == 0 {
			why := s.FabricErr
			if why == "" {
				why = "no scenario text"
			}
			fmt.Fprintf(b, "<p class=\"note\">No fabric summary: %s.</p>\n", e(why))
			continue
		}
		base := s.Fabrics[0]
		b.WriteString("<table class=\"fabric\">\n")
		for _, f := range base.Fields {
			fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", e(f.Name), e(f.Value))
		}
		for _, f := range s.Fabrics[1:] {
			for _, d := range report.FabricDiff(base, f) {
				fmt.Fprintf(b, "<tr><th>%s of %s</th><td>%s</td></tr>\n", e(d.Name), e(f.Variant), e(d.Value))
			}
		}
		b.WriteString("</table>\n")
		if len(s.Fabrics) > 1 {
			fmt.Fprintf(b, "<p class=\"note\">The first variant's fabric (%s); the rows \"… of VARIANT\" are what the other variants change.</p>\n", e(base.Variant))
		}
	}
}

// writeTable writes the numbers a chart draws under it.
func writeTable(b *strings.Builder, c Chart) {
	t := c.Table
	if t == nil || len(t.Rows) == 0 {
		return
	}
	e := html.EscapeString
	open := ""
	if len(t.Rows) <= openRows {
		open = " open"
	}
	fmt.Fprintf(b, "<details%s><summary>Numbers (%d rows)</summary>\n<table class=\"num\">\n<tr>", open, len(t.Rows))
	for _, h := range t.Head {
		fmt.Fprintf(b, "<th>%s</th>", e(h))
	}
	b.WriteString("</tr>\n")
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for _, cell := range row {
			fmt.Fprintf(b, "<td>%s</td>", e(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</details>\n")
}
