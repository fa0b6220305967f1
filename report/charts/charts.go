// Package charts renders results as one self-contained HTML report: inline
// SVG charts drawn with gonum.org/v1/plot, each followed by the numbers it
// draws, no JavaScript, no network. Each chart can also be written as a PNG.
package charts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/units"
)

// Source is one run to report: its results and, when known, the scenario
// text it ran.
type Source struct {
	// Label names the run when several are compared ("run 3"); variants
	// are then shown as "run 3: variant".
	Label        string
	Output       report.Output
	ScenarioText string
	// ScenarioPaths are where the scenario file may be, to find the files
	// it names (a saved run's store.Meta.ScenarioPaths); Output.ScenarioFile
	// when empty.
	ScenarioPaths []string
	// Fabrics are the variants' fabrics, in variant order (the summary at
	// the top and the NIC rate on bus bandwidth charts). When nil they are
	// read from ScenarioText (report.SavedFabrics); FabricErr says why
	// there are none.
	Fabrics   []report.Fabric
	FabricErr string
	// Status is a saved run's status (store.Meta.Status: done, failed,
	// interrupted, incomplete, running, queued). When empty (a run just
	// made, or a caller that does not say) it is read from Output: an
	// interrupted run, rows that hold an error (failed), rows that were
	// never saved (Output.MissingRows: incomplete). A run that did not
	// finish cleanly is named so at the top of the report, with its rows'
	// errors.
	Status string
	// Unsaved is what the run planned but has no result for
	// (store.Unsaved); its zero value when unknown, and the report then
	// counts Output.MissingRows.
	Unsaved report.Unsaved
}

// Options tune the report.
type Options struct {
	// PNGDir, when set, receives every chart as NN-name.png too.
	PNGDir string
}

// Table is the numbers a chart draws, shown under it.
type Table struct {
	Head []string
	Rows [][]string
}

// Chart is one rendered chart, or the reason it is missing.
type Chart struct {
	Name  string // file name stem, e.g. "busbw"
	Title string // the section heading (and the PNG's title)
	SVG   string // inline <svg>…</svg>; empty when skipped
	Skip  string // why the chart is missing and what to enable
	Note  string // a sentence under the chart: what it leaves out, its scale
	Table *Table // the numbers drawn

	plot   *plot.Plot
	draw   func(c draw.Canvas) // custom drawing (heatmap with colour bar)
	legend []legendEntry       // drawn below the plot, never over the data
	w, h   vg.Length
	lo, hi float64 // a heatmap's colour scale
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// series is one variant's results, sizes ascending.
type series struct {
	name    string
	v       report.VariantResult
	nicGBps float64 // its NIC rate (0: unknown)
}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	chartW = 16 * vg.Centimeter
	chartH = 10 * vg.Centimeter
)

// Write renders srcs as one HTML document on w, then (Options.PNGDir)
// each chart as a PNG.
func Write(w io.Writer, srcs []Source, opt Options) error {
	if len(srcs) == 0 {
		return errors.New("charts: no runs to report")
	}
	srcs = withFabrics(srcs)
	ss := collect(srcs)
	cs, err := build(ss)
	if err != nil {
		return err
	}
	if err := writeHTML(w, srcs, cs); err != nil {
		return err
	}
	if opt.PNGDir != "" {
		if err := writePNGs(opt.PNGDir, cs); err != nil {
			return &PNGError{Dir: opt.PNGDir, Err: err}
		}
	}
	return nil
}

// PNGError is Write's error when the HTML is written but a PNG is not.
type PNGError struct {
	Dir string
	Err error
}

func (e *PNGError) Error() string {
	return fmt.Sprintf("writing the charts as PNGs into %s: %v", e.Dir, e.Err)
}
func (e *PNGError) Unwrap() error { return e.Err }

// withFabrics fills in the fabrics of the sources that have none from
// their scenario text.
func withFabrics(srcs []Source) []Source {
	out := make([]Source, len(srcs))
	for i, s := range srcs {
		if s.Fabrics == nil && s.FabricErr == "" {
			paths := s.ScenarioPaths
			if len(paths) == 0 {
				paths = []string{s.Output.ScenarioFile}
			}
			fs, err := report.SavedFabrics(paths, s.ScenarioText, s.Output.Sets, s.Output.Sweeps)
			if err != nil {
				s.FabricErr = err.Error()
			}
			s.Fabrics = fs
		}
		out[i] = s
	}
	return out
}

func collect(srcs []Source) []series {
	var ss []series
	for _, s := range srcs {
		o := report.Sorted(s.Output)
		for vi, v := range o.Variants {
			name := v.Name
			if name == "" {
				name = o.Scenario
			}
			if len(srcs) > 1 && s.Label != "" {
				name = s.Label + ": " + name
			}
			nic := 0.0
			if vi < len(s.Fabrics) && (s.Fabrics[vi].Variant == v.Name || s.Fabrics[vi].Variant == "") {
				nic = s.Fabrics[vi].NICGBps * hostsScale(v.Results)
			}
			ss = append(ss, series{name: name, v: v, nicGBps: nic})
		}
	}
	return ss
}

// hostsScale is the fraction of the scenario's rates the rows ran at: a
// namespace lab's --scale for rows measured on real hosts, else 1. The
// NIC's line on the bus bandwidth chart is drawn at that rate.
func hostsScale(rs []metrics.SizeResult) float64 {
	if h := report.HostsOf(rs); h != nil && h.Scale > 0 {
		return h.Scale
	}
	return 1
}

// ok are the results that measured something.
func ok(rs []metrics.SizeResult) []metrics.SizeResult {
	var out []metrics.SizeResult
	for _, r := range rs {
		if r.Error == "" && r.SizeBytes > 0 {
			out = append(out, r)
		}
	}
	return out
}

// largest is the variant's result at its largest size, or nil.
func largest(s series) *metrics.SizeResult {
	rs := ok(s.v.Results)
	if len(rs) == 0 {
		return nil
	}
	r := rs[len(rs)-1]
	return &r
}

// build renders every chart of the report (as SVG), skipped ones with the
// reason.
func build(ss []series) ([]Chart, error) {
	var cs []Chart
	add := func(c Chart) { cs = append(cs, c) }
	if onlyMessages(ss) {
		why := "Message workloads have no data-size sweep or bus bandwidth: see the slowdown charts."
		add(skip("busbw", "Bus bandwidth vs data size", why))
		add(skip("ideal", "Percent of ideal vs data size", why))
		add(skip("cct", "Collective completion time vs data size", why))
	} else {
		add(busbwChart(ss))
		add(sizeChart("ideal", "Percent of ideal vs data size", "% of ideal", printf("%.1f"), ss, func(r metrics.SizeResult) (float64, bool) { return r.IdealPct, r.Complete }, 1, false))
		tu, tname := timeUnit(ss, func(r metrics.SizeResult) []float64 { return []float64{r.CCTS} })
		c := sizeChart("cct", "Collective completion time vs data size", "CCT ("+tname+", log scale)", printf("%.4g"), ss,
			func(r metrics.SizeResult) (float64, bool) { return r.CCTS, r.CCTS > 0 }, tu, true)
		if c.Table != nil {
			c.Table.Head[0] += ", CCT in " + tname
		}
		add(c)
	}
	add(fctCurve(ss))
	add(fctCDF(ss))
	add(rankDone(ss))
	add(slowdownChart(ss, "slowdown-p99", "99th-percentile slowdown (FCT / FCT alone) vs message size", func(p metrics.Percentiles) float64 { return p.P99 }))
	add(slowdownChart(ss, "slowdown-p50", "Median slowdown (FCT / FCT alone) vs message size", func(p metrics.Percentiles) float64 { return p.P50 }))
	if c, ok := rttChart(ss); ok {
		add(c)
	}
	cs = append(cs, heatmaps(ss)...)
	cs = append(cs, endpointHeatmaps(ss)...)
	cs = append(cs, counterBars(ss)...)
	cs = append(cs, tierBars(ss)...)
	cs = append(cs, telemetryCharts(ss)...)
	for i := range cs {
		if cs[i].Skip != "" {
			continue
		}
		cs[i].h += legendHeight(len(cs[i].legend))
		svg, err := renderSVG(cs[i])
		if err != nil {
			return nil, fmt.Errorf("charts: %s: %v", cs[i].Name, err)
		}
		cs[i].SVG = svg
	}
	return cs, nil
}

// newPlot is a plot without a title: the report's section heading names
// the chart (the PNG gets the title when it is rendered).
func newPlot(x, y string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = x
	p.Y.Label.Text = y
	set := func(f *font.Font, size vg.Length) { *f = sans; f.Size = size }
	set(&p.Title.TextStyle.Font, 14)
	set(&p.X.Label.TextStyle.Font, 12)
	set(&p.Y.Label.TextStyle.Font, 12)
	set(&p.X.Tick.Label.Font, 10)
	set(&p.Y.Tick.Label.Font, 10)
	set(&p.Legend.TextStyle.Font, 10)
	p.Add(plotter.NewGrid())
	return p
}

func skip(name, title, why string) Chart { return Chart{Name: name, Title: title, Skip: why} }

func newChart(name, title string, p *plot.Plot) Chart {
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
}

// addLine adds series i as a line (with its glyphs when points), in the
// series' own colour, dashes and glyph, to p and to the chart's legend.
func (c *Chart) addLine(p *plot.Plot, i int, name string, xys plotter.XYs, points bool) (*plotter.Line, error) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, err
	}
	col, dashes, shape := seriesStyle(i)
	l.Color = col
	l.Width = vg.Points(1.5)
	l.Dashes = dashes
	s.Color = col
	s.Shape = shape
	s.Radius = vg.Points(2.5)
	p.Add(l)
	if points {
		p.Add(s)
		c.legend = append(c.legend, legendEntry{name, []plot.Thumbnailer{l, s}})
	} else {
		c.legend = append(c.legend, legendEntry{name, []plot.Thumbnailer{l}})
	}
	return l, nil
}

// addPoints adds series i as glyphs only (no line joins them).
func (c *Chart) addPoints(p *plot.Plot, i int, name string, xys plotter.XYs) error {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	col, _, shape := seriesStyle(i)
	s.Color = col
	s.Shape = shape
	s.Radius = vg.Points(3)
	p.Add(s)
	c.legend = append(c.legend, legendEntry{name, []plot.Thumbnailer{s}})
	return nil
}

// busbwChart is bus bandwidth against data size, with a dashed line at
// each NIC rate of the variants (the most any busbw can reach).
func busbwChart(ss []series) Chart {
	var with []series
	for _, s := range ss {
		if report.HasBusBW(s.v.Collective) {
			with = append(with, s)
		}
	}
	const name, title = "busbw", "Bus bandwidth vs data size"
	if len(with) == 0 {
		return skip(name, title, "No variant has a bus bandwidth (incast, flow lists, uniform load, messages and any-to-any have none; see the README, \"Metrics\").")
	}
	c := sizeChart(name, title, "bus bandwidth (GB/s)", report.GBps, with, func(r metrics.SizeResult) (float64, bool) { return r.BusBWGBps, r.Complete }, 1, false)
	if c.plot == nil {
		return c
	}
	var rates []float64
	for _, s := range with {
		if s.nicGBps > 0 && !containsFloat(rates, s.nicGBps) {
			rates = append(rates, s.nicGBps)
		}
	}
	sort.Float64s(rates)
	lo, hi := c.plot.X.Min, c.plot.X.Max
	for _, rate := range rates {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: rate}, {X: hi, Y: rate}})
		if err != nil {
			continue
		}
		l.Color = seriesColors[7]
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		c.plot.Add(l)
		c.legend = append(c.legend, legendEntry{fmt.Sprintf("NIC rate %s GB/s", trimG(rate)), []plot.Thumbnailer{l}})
		c.plot.Y.Max = math.Max(c.plot.Y.Max, rate*1.05)
		c.Table.Head = append(c.Table.Head, "NIC rate (GB/s)")
		for k := range c.Table.Rows {
			c.Table.Rows[k] = append(c.Table.Rows[k], trimG(rate))
		}
	}
	if len(rates) > 0 {
		c.Note = "The dashed line is the NIC rate: the bus bandwidth a perfect fabric reaches."
	}
	if len(with) < len(ss) {
		c.Note = strings.TrimSpace(c.Note + fmt.Sprintf(" %d variant(s) without a bus bandwidth (incast, flow lists, …) are left out.", len(ss)-len(with)))
	}
	return c
}

func trimG(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func containsFloat(xs []float64, v float64) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// printf is a table cell's text made by format.
func printf(format string) func(float64) string {
	return func(v float64) string { return fmt.Sprintf(format, v) }
}

// sizeChart draws f(result)/scale against data size (log2 x axis), one
// line per variant, log y when logY; the table has one row per size,
// each cell written by cell.
func sizeChart(name, title, ylabel string, cell func(float64) string, ss []series, f func(metrics.SizeResult) (float64, bool), scale float64, logY bool) Chart {
	p := newPlot("data size", ylabel)
	p.X.Scale = plot.LogScale{}
	c := newChart(name, title, p)
	n := 0
	seen := map[float64]bool{}
	var sizes []float64
	vals := map[[2]int64]string{}
	var names []string
	for i, s := range ss {
		var xys plotter.XYs
		for _, r := range ok(s.v.Results) {
			y, good := f(r)
			if !good || (logY && y <= 0) {
				continue
			}
			x := float64(r.SizeBytes)
			xys = append(xys, plotter.XY{X: x, Y: y / scale})
			vals[[2]int64{int64(i), r.SizeBytes}] = cell(y / scale)
			if !seen[x] {
				seen[x] = true
				sizes = append(sizes, x)
			}
		}
		names = append(names, s.name)
		if len(xys) == 0 {
			continue
		}
		if _, err := c.addLine(p, i, s.name, xys, true); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, orMeasured(ss, "No variant has a measured data size."))
	}
	sort.Float64s(sizes)
	p.X.Tick.Marker = Log2Ticks{Sizes: sizes}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		p.Y.Min = 0
	}
	p.X.Min, p.X.Max = sizes[0]/1.25, sizes[len(sizes)-1]*1.25
	t := &Table{Head: append([]string{"size"}, names...)}
	for _, x := range sizes {
		row := []string{SizeLabel(int64(x))}
		for i := range names {
			v, okv := vals[[2]int64{int64(i), int64(x)}]
			if !okv {
				v = "-"
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	c.Table = t
	return c
}

// timeUnit picks s, ms, µs or ns for the largest of the values.
func timeUnit(ss []series, f func(metrics.SizeResult) []float64) (float64, string) {
	m := 0.0
	for _, s := range ss {
		for _, r := range ok(s.v.Results) {
			for _, x := range f(r) {
				m = math.Max(m, x)
			}
		}
	}
	return unitFor(m)
}

func unitFor(m float64) (float64, string) {
	switch {
	case m >= 1:
		return 1, "s"
	case m >= 1e-3:
		return 1e-3, "ms"
	case m >= 1e-6:
		return 1e-6, "µs"
	}
	return 1e-9, "ns"
}

func largestOnly(ss []series, f func(metrics.SizeResult) []float64) (float64, string) {
	m := 0.0
	for _, s := range ss {
		if r := largest(s); r != nil {
			for _, x := range f(*r) {
				m = math.Max(m, x)
			}
		}
	}
	return unitFor(m)
}

// curveQuantiles are the rows of an FCT table: quantiles of a sorted curve.
var curveQuantiles = []struct {
	name string
	q    float64
}{{"min", 0}, {"p10", 0.1}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}}

// curveTable is the FCT table of the series' curves (nearest rank over the
// curve's points), in unit tu named tn.
func curveTable(names []string, curves [][]float64, tu float64, tn string) *Table {
	t := &Table{Head: append([]string{"flows (FCT in " + tn + ")"}, names...)}
	for _, q := range curveQuantiles {
		row := []string{q.name}
		for _, c := range curves {
			k := int(math.Ceil(q.q*float64(len(c)))) - 1
			k = min(max(k, 0), len(c)-1)
			row = append(row, fmt.Sprintf("%.4g", c[k]/tu))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func fctCurve(ss []series) Chart {
	const name, title = "fct-curve", "Sorted flow completion times (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.FCTCurveS })
	p := newPlot("flows, fastest to slowest (%)", "FCT ("+tn+", log scale)")
	c := newChart(name, title, p)
	var names []string
	var curves [][]float64
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.FCTCurveS) == 0 {
			continue
		}
		cv := append([]float64(nil), r.FCTCurveS...)
		sort.Float64s(cv)
		var xys plotter.XYs
		for j, v := range cv {
			if v <= 0 {
				continue
			}
			x := 100.0
			if len(cv) > 1 {
				x = 100 * float64(j) / float64(len(cv)-1)
			}
			xys = append(xys, plotter.XY{X: x, Y: v / tu})
		}
		if len(xys) == 0 {
			continue
		}
		label := fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes))
		if _, err := c.addLine(p, i, label, xys, false); err != nil {
			return skip(name, title, err.Error())
		}
		names, curves = append(names, label), append(curves, cv)
	}
	if len(names) == 0 {
		return skip(name, title, orMeasured(ss, "No per-flow completion curve (fct_curve_s) in these results: rerun with a current fabriclab."))
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.X.Min, p.X.Max = 0, 100
	c.Table = curveTable(names, curves, tu, tn)
	return c
}

func fctCDF(ss []series) Chart {
	const name, title = "fct-cdf", "FCT CDF (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.FCTCurveS })
	p := newPlot("flow completion time ("+tn+", log scale)", "fraction of flows")
	c := newChart(name, title, p)
	var names []string
	var curves [][]float64
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.FCTCurveS) == 0 {
			continue
		}
		cv := append([]float64(nil), r.FCTCurveS...)
		sort.Float64s(cv)
		// F(x) is the fraction of flows done by x: a step up at each
		// completion, flat in between (drawn post-step).
		var xys plotter.XYs
		for j, v := range cv {
			if v <= 0 {
				continue
			}
			y := 1.0
			if len(cv) > 1 {
				y = float64(j) / float64(len(cv)-1)
			}
			if len(xys) == 0 {
				xys = append(xys, plotter.XY{X: v / tu, Y: 0})
			}
			xys = append(xys, plotter.XY{X: v / tu, Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		label := fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes))
		l, err := c.addLine(p, i, label, xys, false)
		if err != nil {
			return skip(name, title, err.Error())
		}
		l.StepStyle = plotter.PostStep
		names, curves = append(names, label), append(curves, cv)
	}
	if len(names) == 0 {
		return skip(name, title, orMeasured(ss, "No per-flow completion curve (fct_curve_s) in these results: rerun with a current fabriclab."))
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	c.Table = curveTable(names, curves, tu, tn)
	return c
}

// rankDone draws each rank's completion as a point (ranks are not a
// continuum: no line joins them); ranks that received nothing (an
// incast's senders) are left out, and the note says how many.
func rankDone(ss []series) Chart {
	const name, title = "rank-done", "Per-rank completion time (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.RankDoneS })
	p := newPlot("rank", "last incoming flow done ("+tn+")")
	c := newChart(name, title, p)
	var names []string
	var cols [][]float64
	idle, ranks := 0, 0
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.RankDoneS) == 0 {
			continue
		}
		var xys plotter.XYs
		for j, v := range r.RankDoneS {
			if v <= 0 {
				idle++
				continue
			}
			xys = append(xys, plotter.XY{X: float64(j), Y: v / tu})
		}
		ranks = max(ranks, len(r.RankDoneS))
		label := fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes))
		names, cols = append(names, label), append(cols, r.RankDoneS)
		if len(xys) == 0 {
			continue
		}
		if err := c.addPoints(p, i, label, xys); err != nil {
			return skip(name, title, err.Error())
		}
	}
	if len(names) == 0 {
		return skip(name, title, orMeasured(ss, "No per-rank completion times (rank_done_s) in these results."))
	}
	p.Y.Min = 0
	if top := maxOf(cols) / tu; top > 0 {
		p.Y.Max = top * 1.08 // glyphs clear of the top edge
	}
	p.X.Min, p.X.Max = -0.5, float64(ranks)-0.5
	p.X.Tick.Marker = intTicks{}
	if idle > 0 {
		c.Note = fmt.Sprintf("Ranks that received nothing (e.g. an incast's senders) are left out: %d of %d rank entries.", idle, ranks*len(names))
	}
	t := &Table{Head: append([]string{"rank (time in " + tn + ")"}, names...)}
	for j := range ranks {
		row := []string{strconv.Itoa(j)}
		for _, col := range cols {
			v := "-"
			if j < len(col) && col[j] > 0 {
				v = fmt.Sprintf("%.4g", col[j]/tu)
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	c.Table = t
	return c
}

// grid is a matrix for plotter.HeatMap, rows × columns (rank × rank:
// column = destination, row = source).
type grid [][]float64

func (g grid) Dims() (c, r int) {
	if len(g) == 0 {
		return 0, 0
	}
	return len(g[0]), len(g)
}
func (g grid) Z(c, r int) float64 { return g[r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// labelTicks labels positions 0…n−1 with names (host numbers).
type labelTicks []string

func (l labelTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for i, name := range l {
		if v := float64(i); v >= min-0.5 && v <= max+0.5 {
			ts = append(ts, plot.Tick{Value: v, Label: name})
		}
	}
	return ts
}

// maxEndpointHeatmaps bounds the checkpoint heatmaps of one variant.
const maxEndpointHeatmaps = 12

// maxTableCells bounds a heatmap's numbers table (the JSON has them all).
const maxTableCells = 64 * 64

// endpointHeatmaps draws, for every any-to-any variant, one heatmap per
// checkpoint interval: clients × servers, each cell the pair's rate in
// that interval as a share of its full rate, so that a collision shows as
// the same dark columns at every checkpoint. Every one has the scale
// 0–100 %.
func endpointHeatmaps(ss []series) []Chart {
	var cs []Chart
	for i, s := range ss {
		r := largest(s)
		if r == nil || r.Endpoints == nil || len(r.Checkpoints) < 2 || r.Endpoints.FullRateGbps <= 0 {
			continue
		}
		var clients, servers []int
		ci, si := map[int]int{}, map[int]int{}
		for _, p := range r.Endpoints.PerPair {
			if _, ok := ci[p.Client]; !ok {
				ci[p.Client] = len(clients)
				clients = append(clients, p.Client)
			}
			if _, ok := si[p.Server]; !ok {
				si[p.Server] = len(servers)
				servers = append(servers, p.Server)
			}
		}
		names := func(hs []int) labelTicks {
			l := make(labelTicks, len(hs))
			for k, h := range hs {
				l[k] = strconv.Itoa(h)
			}
			return l
		}
		prev := 0.0
		for k, cp := range r.Checkpoints[:len(r.Checkpoints)-1] { // the last holds the drain
			dt := cp.TS - prev
			prev = cp.TS
			if k >= maxEndpointHeatmaps || dt <= 0 {
				break
			}
			g := make(grid, len(clients))
			for c := range g {
				g[c] = make([]float64, len(servers))
			}
			for _, e := range cp.Endpoints {
				c, okc := ci[e.Client]
				sv, oks := si[e.Server]
				if okc && oks {
					g[c][sv] = 100 * float64(e.Bytes) * 8 / dt / (r.Endpoints.FullRateGbps * 1e9)
				}
			}
			title := fmt.Sprintf("Endpoint rate, %% of full: %s, checkpoint %d (t = %.3g s)", s.name, k+1, cp.TS)
			ch := heatmapOf(fmt.Sprintf("endpoints-%d-%d", i+1, k+1), title, g, "server host", "client host", "% of full", 0, 100)
			ch.ticks(names(servers), names(clients))
			ch.Table = matrixTable("client \\ server", names(clients), names(servers), g, printf("%.1f"))
			cs = append(cs, ch)
		}
	}
	return cs
}

// matrixTable is a heatmap's numbers: one row per row label.
func matrixTable(corner string, rows, cols []string, g grid, cell func(float64) string) *Table {
	if len(rows)*len(cols) > maxTableCells {
		return nil
	}
	t := &Table{Head: append([]string{corner}, cols...)}
	for r, name := range rows {
		row := []string{name}
		for c := range cols {
			row = append(row, cell(g[r][c]))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// heatmaps draws each variant's rank × rank bandwidth matrix. Matrices of
// the same rank count share one colour scale (0 to their largest cell), so
// that a colour means the same GB/s in each of them; the note under each
// says its scale and what shares it.
func heatmaps(ss []series) []Chart {
	type hm struct {
		i    int
		s    series
		r    *metrics.SizeResult
		grid grid
	}
	var hs []hm
	his, los, count := map[int]float64{}, map[int]float64{}, map[int]int{}
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.RankBWGBps) == 0 {
			continue
		}
		m := r.RankBWGBps
		bad := false
		for _, row := range m {
			bad = bad || len(row) != len(m)
		}
		if bad {
			continue
		}
		n := len(m)
		g := make(grid, n)
		for k, row := range m {
			g[k] = append([]float64(nil), row...)
			for _, v := range row {
				his[n], los[n] = math.Max(his[n], v), math.Min(los[n], v)
			}
		}
		count[n]++
		hs = append(hs, hm{i, s, r, g})
	}
	if len(hs) == 0 {
		return []Chart{skip("heatmap", "Rank-to-rank bandwidth", orMeasured(ss, "No rank-to-rank bandwidth matrix (rank_bw_gbps) in these results: it is kept up to 128 ranks, or always with sim.record_flows: true."))}
	}
	var cs []Chart
	for _, h := range hs {
		n := len(h.grid)
		lo, hi := los[n], his[n]
		if hi <= lo {
			hi = lo + 1
		}
		title := fmt.Sprintf("Rank-to-rank bandwidth: %s (%s)", h.s.name, SizeLabel(h.r.SizeBytes))
		c := heatmapOf(fmt.Sprintf("heatmap-%d", h.i+1), title, h.grid, "destination rank", "source rank", "GB/s", lo, hi)
		c.ticks(intTicks{}, intTicks{})
		c.Note = fmt.Sprintf("Colour scale %s–%s GB/s", trimG(roundG(lo)), trimG(roundG(hi)))
		if count[n] > 1 {
			c.Note += fmt.Sprintf(", shared by the %d heatmaps of %d ranks: the same colour is the same bandwidth in each.", count[n], n)
		} else {
			c.Note += fmt.Sprintf(", this heatmap's own (no other has %d ranks).", n)
		}
		ranks := make([]string, n)
		for k := range ranks {
			ranks[k] = strconv.Itoa(k)
		}
		c.Table = matrixTable("source \\ destination (GB/s)", ranks, ranks, h.grid, report.GBps)
		cs = append(cs, c)
	}
	return cs
}

func maxOf(xss [][]float64) float64 {
	m := 0.0
	for _, xs := range xss {
		for _, x := range xs {
			m = math.Max(m, x)
		}
	}
	return m
}

func roundG(v float64) float64 {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return v
}

// heatmapOf is a heatmap of g with a colour bar from lo to hi (values
// beyond are drawn at the ends).
func heatmapOf(name, title string, g grid, xlabel, ylabel, unit string, lo, hi float64) Chart {
	for _, row := range g {
		for k, v := range row {
			row[k] = math.Min(math.Max(v, lo), hi)
		}
	}
	cm := newHeatMap(lo, hi)
	hm := plotter.NewHeatMap(g, cm.Palette(255))
	hm.Min, hm.Max = lo, hi
	hm.Rasterized = len(g) > 64
	return colourChart(name, title, hm, cm, xlabel, ylabel, unit, 12*vg.Centimeter)
}

// colourChart is a chart of data drawn in cm's colours, with cm's colour
// bar to the right, h high.
func colourChart(name, title string, data plot.Plotter, cm *heatMap, xlabel, ylabel, unit string, h vg.Length) Chart {
	p := newPlot(xlabel, ylabel)
	p.Add(data)

	bar := newPlot("", unit)
	bar.HideX()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.Y.Min, bar.Y.Max = cm.Min(), cm.Max()
	c := Chart{Name: name, Title: title, w: chartW, h: h, plot: p, lo: cm.Min(), hi: cm.Max()}
	c.draw = func(cv draw.Canvas) {
		barW := 2.4 * vg.Centimeter
		p.Draw(draw.Crop(cv, 0, -barW, 0, 0))
		bar.Draw(draw.Crop(cv, cv.Max.X-cv.Min.X-barW, -0.3*vg.Centimeter, 1.1*vg.Centimeter, -0.9*vg.Centimeter))
	}
	return c
}

// ticks sets a heatmap's axis tick markers.
func (c *Chart) ticks(x, y plot.Ticker) {
	c.plot.X.Tick.Marker = x
	c.plot.Y.Tick.Marker = y
}

// counterBars: PFC pause frames and ECN-marked packets per variant at the
// largest size, each on a chart (and an axis) of its own: their counts
// differ by orders of magnitude.
func counterBars(ss []series) []Chart {
	var pfc, ecn plotter.Values
	var names []string
	anyPFC, anyECN := false, false
	for _, s := range ss {
		r := largest(s)
		if r == nil || !r.FabricMeasured() {
			continue // no fabric counted (real hosts, the flow engine): not a 0
		}
		names = append(names, s.name)
		pfc = append(pfc, float64(r.PFCPauses))
		ecn = append(ecn, float64(r.ECNMarks))
		anyPFC = anyPFC || r.PFCPauses > 0
		anyECN = anyECN || r.ECNMarks > 0
	}
	mk := func(name, title, ylabel string, vals plotter.Values, any bool) Chart {
		if len(names) == 0 {
			return skip(name, title, orMeasured(ss, "No variant has a measured data size with counted fabric (real hosts and the flow engine count none)."))
		}
		p := newPlot("", ylabel)
		c := newChart(name, title, p)
		if err := c.bars(p, names, nil, []plotter.Values{vals}); err != nil {
			return skip(name, title, err.Error())
		}
		if !any {
			p.Y.Max = 1
			c.Note = "None in any variant."
		}
		t := &Table{Head: []string{"variant", ylabel}}
		for k, n := range names {
			t.Rows = append(t.Rows, []string{n, strconv.FormatFloat(vals[k], 'f', 0, 64)})
		}
		c.Table = t
		return c
	}
	return []Chart{
		mk("pfc", "PFC pause frames per variant (largest size)", "PFC pause frames", pfc, anyPFC),
		mk("ecn", "ECN-marked packets per variant (largest size)", "ECN-marked packets", ecn, anyECN),
	}
}

// bars draws grouped bars: one group per category, one bar per series
// (names, in the legend; nil for a single series coloured per category).
func (c *Chart) bars(p *plot.Plot, cats, names []string, vals []plotter.Values) error {
	bw := vg.Points(math.Max(6, math.Min(28, 300/float64(len(cats)*len(vals)))))
	for i, v := range vals {
		b, err := plotter.NewBarChart(v, bw)
		if err != nil {
			return err
		}
		b.Color = seriesColor(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(vals)-1)/2) * bw
		p.Add(b)
		if names != nil {
			c.legend = append(c.legend, legendEntry{names[i], []plot.Thumbnailer{b}})
		}
	}
	p.NominalX(cats...)
	p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5 // room for the outer groups' bars
	p.Y.Min = 0
	p.Y.Tick.Marker = countTicks{}
	top := 0.0
	for _, v := range vals {
		for _, x := range v {
			top = math.Max(top, x)
		}
	}
	if top > 0 {
		p.Y.Max = top * 1.08
	}
	if len(cats) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
	}
	return nil
}

var tierOrder = map[string]int{"host": 0, "leaf": 1, "tor": 1, "agg": 2, "spine": 3, "core": 4}

// tierBars: PFC pauses sent and ECN marks per switch tier (largest size),
// one bar per variant.
func tierBars(ss []series) []Chart {
	type acc struct{ pfc, ecn map[string]float64 }
	tiers := map[string]bool{}
	var names []string
	var accs []acc
	for _, s := range ss {
		r := largest(s)
		if r == nil || len(r.Ports) == 0 {
			continue
		}
		a := acc{map[string]float64{}, map[string]float64{}}
		for _, pc := range r.Ports {
			t := pc.Tier
			if t == "" {
				t = "other"
			}
			tiers[t] = true
			a.pfc[t] += float64(pc.PFCPausesSent)
			a.ecn[t] += float64(pc.ECNMarks)
		}
		names = append(names, s.name)
		accs = append(accs, a)
	}
	if len(names) == 0 {
		return []Chart{skip("tiers", "PFC pauses and ECN marks per switch tier", noPortCounters(ss))}
	}
	var ts []string
	for t := range tiers {
		ts = append(ts, t)
	}
	sortTiers(ts)
	mk := func(name, title, ylabel string, get func(acc) map[string]float64) Chart {
		vals := make([]plotter.Values, len(accs))
		any := false
		for i, a := range accs {
			for _, t := range ts {
				vals[i] = append(vals[i], get(a)[t])
				any = any || get(a)[t] > 0
			}
		}
		p := newPlot("tier (ports of this tier's devices)", ylabel)
		c := newChart(name, title, p)
		if err := c.bars(p, ts, names, vals); err != nil {
			return skip(name, title, err.Error())
		}
		if !any {
			p.Y.Max = 1
			c.Note = "None in any variant."
		}
		t := &Table{Head: append([]string{"tier"}, names...)}
		for k, tier := range ts {
			row := []string{tier}
			for i := range accs {
				row = append(row, strconv.FormatFloat(vals[i][k], 'f', 0, 64))
			}
			t.Rows = append(t.Rows, row)
		}
		c.Table = t
		return c
	}
	return []Chart{
		mk("tier-pfc", "PFC pauses sent per tier (largest size)", "PFC pauses sent", func(a acc) map[string]float64 { return a.pfc }),
		mk("tier-ecn", "ECN marks per tier (largest size)", "ECN marks", func(a acc) map[string]float64 { return a.ecn }),
	}
}

// noPortCounters says why no row has per-port counters, and what would
// give them: only the packet engine counts packets per switch port, and
// only with sim.port_counters; real hosts give none (their switches are
// not read: each row has the hosts' own counters over the run), nor does
// the flow engine (no packets). Advice is given only for the rows it
// helps.
func noPortCounters(ss []series) string {
	if why := noMeasured(ss); why != "" {
		return why
	}
	var hosts, flow, packet bool
	for _, s := range ss {
		r := largest(s)
		switch {
		case r == nil:
		case r.Hosts != nil:
			hosts = true
		case r.Engine != "":
			flow = true
		default:
			packet = true
		}
	}
	var parts []string
	if hosts {
		parts = append(parts, "real hosts give no per-switch-port counters (their rows have the hosts' own counters over the run)")
	}
	if flow {
		parts = append(parts, "the flow engine counts no packets (the packet engine, sim.engine: packet, does with sim.port_counters: true)")
	}
	if packet {
		what := "set sim.port_counters: true"
		if hosts || flow {
			what = "for the packet engine's rows, set sim.port_counters: true"
		}
		parts = append(parts, what)
	}
	return "No per-port counters in these results: " + strings.Join(parts, "; ") + "."
}

// noMeasured is the reason a chart drawn from the rows' data has none
// when no variant has a measured row (every job failed, or none ran),
// else "": the chart's own advice on what to enable would then be beside
// the point.
func noMeasured(ss []series) string {
	failed := false
	for _, s := range ss {
		if largest(s) != nil {
			return ""
		}
		for _, r := range s.v.Results {
			failed = failed || r.Error != ""
		}
	}
	if failed {
		return "No variant has a measured data size: every row that ran failed (see the errors at the top)."
	}
	return "No variant has a measured data size."
}

// orMeasured is why, unless no variant has a measured row (noMeasured).
func orMeasured(ss []series, why string) string {
	if w := noMeasured(ss); w != "" {
		return w
	}
	return why
}

// legendRow is the height of one legend line below a chart.
const legendRow = 13 * vg.Length(1)

// legendColumns is how many columns a legend of n entries takes.
func legendColumns(n int) int {
	switch {
	case n <= 6:
		return 1
	case n <= 16:
		return 2
	}
	return 3
}

// legendHeight is the strip below the plot that holds a legend of n
// entries.
func legendHeight(n int) vg.Length {
	if n == 0 {
		return 0
	}
	cols := legendColumns(n)
	rows := (n + cols - 1) / cols
	return vg.Length(rows)*legendRow + 8
}

// render draws the chart on cv: the plot, and its legend in a strip below
// it; with title, the chart's title above (PNGs have no heading).
func (c Chart) render(cv draw.Canvas, title bool) {
	if title && c.plot != nil {
		old := c.plot.Title.Text
		c.plot.Title.Text = c.Title
		defer func() { c.plot.Title.Text = old }()
	}
	area := cv
	if n := len(c.legend); n > 0 {
		lh := legendHeight(n)
		area = draw.Crop(cv, 0, 0, lh, 0)
		strip := draw.Crop(cv, 0, 0, 0, -(cv.Max.Y - cv.Min.Y - lh))
		cols := legendColumns(n)
		left := vg.Points(44) // about where the plot's data area starts
		colW := (strip.Max.X - strip.Min.X - left) / vg.Length(cols)
		per := (n + cols - 1) / cols
		for k := range cols {
			l := plot.NewLegend()
			l.TextStyle.Font = sans
			l.TextStyle.Font.Size = 10
			l.Top, l.Left = true, true
			l.Padding = 1
			for _, e := range c.legend[min(k*per, n):min((k+1)*per, n)] {
				l.Add(e.name, e.thumbs...)
			}
			x0 := left + vg.Length(k)*colW
			l.Draw(draw.Crop(strip, x0, -(strip.Max.X - strip.Min.X - x0 - colW), 0, -4))
		}
	}
	if c.draw != nil {
		c.draw(area)
		return
	}
	c.plot.Draw(area)
}

var fontRe = strings.NewReplacer("font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")

// imageRe finds the <image> elements vgsvg writes (a heatmap drawn as a
// raster, a colour bar): vgsvg labels their PNG data image/jpg and leaves
// the browser to keep the image's aspect ratio, which shrinks a colour
// bar of 1 × 255 pixels to an invisible sliver.
var imageRe = regexp.MustCompile(`<image ([^>]*?)xlink:href="data:image/jpg;base64,`)

// fixImages makes every raster image of an SVG fill its box exactly
// (preserveAspectRatio="none"), drawn with sharp pixels, under its real
// MIME type.
func fixImages(svg string) string {
	return imageRe.ReplaceAllString(svg, `<image ${1}preserveAspectRatio="none" style="image-rendering:pixelated;image-rendering:crisp-edges" xlink:href="data:image/png;base64,`)
}

func renderSVG(c Chart) (svg string, err error) {
	defer func() {
		if r := recover(); r != nil { // gonum/plot panics on degenerate data
			err = fmt.Errorf("%v", r)
		}
	}()
	cv := vgsvg.New(c.w, c.h)
	c.render(draw.New(cv), false)
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return fixImages(fontRe.Replace(s)), nil
}

func renderPNG(c Chart) (png []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	h := c.h + 0.8*vg.Centimeter // room for the title
	cv := vgimg.NewWith(vgimg.UseWH(c.w, h), vgimg.UseDPI(110))
	dc := draw.New(cv)
	if c.draw != nil { // a heatmap: the title above its own drawing
		t := newPlot("", "")
		t.HideAxes()
		t.Title.Text = c.Title
		t.Draw(draw.Crop(dc, 0, 0, h-0.8*vg.Centimeter, 0))
		c.render(draw.Crop(dc, 0, 0, 0, -0.8*vg.Centimeter), false)
	} else {
		c.h = h
		c.render(dc, true)
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writePNGs writes every drawn chart as DIR/NN-name.png.
func writePNGs(dir string, cs []Chart) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	for _, c := range cs {
		if c.Skip != "" {
			continue
		}
		n++
		b, err := renderPNG(c)
		if err != nil {
			return fmt.Errorf("charts: %s: %v", c.Name, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, fmt.Sprintf("%02d-%s.png", n, c.Name)), b); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes b to path (mode 0644) through a temporary file
// in the same directory and a rename: a write that fails (a full disk)
// or is cut short (a signal) leaves the previous PNG, not half a new one.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// onlyMessages reports whether every result is an open-loop message
// workload's (whose one "size" is a mean message size).
func onlyMessages(ss []series) bool {
	n := 0
	for _, s := range ss {
		for _, r := range s.v.Results {
			if r.Load == nil {
				return false
			}
			n++
		}
	}
	return n > 0
}

// slowdownChart: the slowdown percentile q (p50, p99) of each size bucket
// against the bucket's largest message size, one line per variant (the
// Homa paper's figure), log-log.
func slowdownChart(ss []series, name, title string, q func(metrics.Percentiles) float64) Chart {
	// A short y label: gonum pads the plot for a rotated label's full
	// length, so a long one squeezes the data area.
	p := newPlot("message size (largest of the bucket)", "slowdown")
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	c := newChart(name, title, p)
	n := 0
	var sizes []float64
	top := 1.0
	t := &Table{Head: []string{"series", "bucket (B)", "messages", "slowdown"}}
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.SlowdownBySize) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, b := range r.SlowdownBySize {
			raw := q(b.Slowdown)
			y := math.Max(raw, 1)
			top = math.Max(top, y)
			xys = append(xys, plotter.XY{X: float64(max(b.HiBytes, 1)), Y: y})
			sizes = append(sizes, float64(max(b.HiBytes, 1)))
			t.Rows = append(t.Rows, []string{s.name, fmt.Sprintf("%d–%d", b.LoBytes, b.HiBytes), strconv.Itoa(b.Slowdown.Count), fmt.Sprintf("%.2f", raw)})
		}
		if _, err := c.addLine(p, i, s.name, xys, true); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, orMeasured(ss, "No message-size buckets in these results (workload kinds messages, uniform and flows have them)."))
	}
	p.X.Tick.Marker = Log2Ticks{Sizes: sizes}
	p.Y.Min, p.Y.Max = 1, math.Pow(10, math.Ceil(math.Log10(top*1.05)+0.01))
	c.Table = t
	return c
}

// rttChart: the RPCs' round trip by request size (response_size), p50
// solid and p99 dashed for each variant (the latency-vs-length figure of
// the Homa paper), log-log in µs. ok is false when no result has RPCs
// (the chart is then left out rather than shown empty).
func rttChart(ss []series) (Chart, bool) {
	const name, title = "rtt-by-size", "RPC round trip (p50 solid, p99 dashed) vs request size"
	p := newPlot("request size (largest of the bucket)", "RTT (µs)")
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	c := newChart(name, title, p)
	t := &Table{Head: []string{"series", "bucket (B)", "RPCs", "p50 (µs)", "p99 (µs)"}}
	var sizes []float64
	lo, hi := math.Inf(1), 0.0
	n := 0
	for i, s := range ss {
		r := largest(s)
		if r == nil {
			continue
		}
		var p50, p99 plotter.XYs
		for _, b := range r.SlowdownBySize {
			if b.RTT == nil || b.RTT.P50 <= 0 {
				continue
			}
			x := float64(max(b.HiBytes, 1))
			p50 = append(p50, plotter.XY{X: x, Y: b.RTT.P50 * 1e6})
			p99 = append(p99, plotter.XY{X: x, Y: b.RTT.P99 * 1e6})
			sizes = append(sizes, x)
			lo, hi = math.Min(lo, b.RTT.P50*1e6), math.Max(hi, b.RTT.P99*1e6)
			t.Rows = append(t.Rows, []string{s.name, fmt.Sprintf("%d–%d", b.LoBytes, b.HiBytes), strconv.Itoa(b.RTT.Count),
				fmt.Sprintf("%.2f", b.RTT.P50*1e6), fmt.Sprintf("%.2f", b.RTT.P99*1e6)})
		}
		if len(p50) == 0 {
			continue
		}
		l, err := c.addLine(p, i, s.name+" p50", p50, true)
		if err != nil {
			return skip(name, title, err.Error()), true
		}
		l.Dashes = nil
		l, err = c.addLine(p, i, s.name+" p99", p99, true)
		if err != nil {
			return skip(name, title, err.Error()), true
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		n++
	}
	if n == 0 {
		return Chart{}, false
	}
	p.X.Tick.Marker = Log2Ticks{Sizes: sizes}
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*1.05)+0.01))
	c.Table = t
	return c, true
}

// SizeLabel is a byte size on a chart as the command line writes it
// (units.Size: 512B, 1KiB, 2MiB, 4GiB, 64KB): a label can be typed back
// into --set workload.sizes.list=[…] or nccl's -b.
func SizeLabel(n int64) string { return units.Size(n).String() }
