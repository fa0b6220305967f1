// Package charts renders results as one self-contained HTML report: inline
// SVG charts drawn with gonum.org/v1/plot, no JavaScript, no network. Each
// chart can also be written as a PNG.
package charts

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"fabriclab/metrics"
	"fabriclab/report"
)

// Source is one run to report: its results and, when known, the scenario
// text it ran.
type Source struct {
	// Label names the run when several are compared ("run 3"); variants
	// are then shown as "run 3: variant".
	Label        string
	Output       report.Output
	ScenarioText string
}

// Options tune the report.
type Options struct {
	// PNGDir, when set, receives every chart as NN-name.png too.
	PNGDir string
}

// Chart is one rendered chart, or the reason it is missing.
type Chart struct {
	Name  string // file name stem, e.g. "busbw"
	Title string
	SVG   string // inline <svg>…</svg>; empty when skipped
	Skip  string // why the chart is missing and what to enable
	plot  *plot.Plot
	draw  func(c draw.Canvas) // custom drawing (heatmap with colour bar)
	w, h  vg.Length
}

// series is one variant's results, sizes ascending.
type series struct {
	name string
	v    report.VariantResult
}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	chartW = 16 * vg.Centimeter
	chartH = 10 * vg.Centimeter
)

// Write renders srcs as one HTML document on w.
func Write(w io.Writer, srcs []Source, opt Options) error {
	if len(srcs) == 0 {
		return errors.New("charts: no runs to report")
	}
	ss := collect(srcs)
	cs, err := build(ss)
	if err != nil {
		return err
	}
	if opt.PNGDir != "" {
		if err := writePNGs(opt.PNGDir, cs); err != nil {
			return err
		}
	}
	return writeHTML(w, srcs, cs)
}

func collect(srcs []Source) []series {
	var ss []series
	for _, s := range srcs {
		o := report.Sorted(s.Output)
		for _, v := range o.Variants {
			name := v.Name
			if name == "" {
				name = o.Scenario
			}
			if len(srcs) > 1 && s.Label != "" {
				name = s.Label + ": " + name
			}
			ss = append(ss, series{name: name, v: v})
		}
	}
	return ss
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
		add(sizeChart("busbw", "Bus bandwidth vs data size", "bus bandwidth (GB/s)", ss, func(r metrics.SizeResult) float64 { return r.BusBWGBps }, 1))
		add(sizeChart("ideal", "Percent of ideal vs data size", "% of ideal", ss, func(r metrics.SizeResult) float64 { return r.IdealPct }, 1))
		tu, tname := timeUnit(ss, func(r metrics.SizeResult) []float64 { return []float64{r.CCTS} })
		add(sizeChart("cct", "Collective completion time vs data size", "CCT ("+tname+")", ss, func(r metrics.SizeResult) float64 { return r.CCTS }, tu))
	}
	add(fctCurve(ss))
	add(fctCDF(ss))
	add(rankDone(ss))
	add(slowdownChart(ss, "slowdown-p99", "99th-percentile slowdown (FCT / FCT alone) vs message size", func(p metrics.Percentiles) float64 { return p.P99 }))
	add(slowdownChart(ss, "slowdown-p50", "Median slowdown (FCT / FCT alone) vs message size", func(p metrics.Percentiles) float64 { return p.P50 }))
	cs = append(cs, heatmaps(ss)...)
	cs = append(cs, endpointHeatmaps(ss)...)
	add(counterBars(ss))
	cs = append(cs, tierBars(ss)...)
	for i := range cs {
		if cs[i].Skip != "" {
			continue
		}
		svg, err := renderSVG(cs[i])
		if err != nil {
			return nil, fmt.Errorf("charts: %s: %v", cs[i].Name, err)
		}
		cs[i].SVG = svg
	}
	return cs, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	set := func(f *font.Font, size vg.Length) { *f = sans; f.Size = size }
	set(&p.Title.TextStyle.Font, 14)
	set(&p.X.Label.TextStyle.Font, 12)
	set(&p.Y.Label.TextStyle.Font, 12)
	set(&p.X.Tick.Label.Font, 10)
	set(&p.Y.Tick.Label.Font, 10)
	set(&p.Legend.TextStyle.Font, 10)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func skip(name, title, why string) Chart { return Chart{Name: name, Title: title, Skip: why} }

// lineStyle gives series i a colour, dashes and glyph of its own.
func addLine(p *plot.Plot, i int, name string, xys plotter.XYs, points bool) error {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	l.Dashes = plotutil.Dashes(i / 7)
	s.Color = l.Color
	s.Shape = plotutil.Shape(i)
	s.Radius = vg.Points(2.5)
	p.Add(l)
	if points {
		p.Add(s)
		p.Legend.Add(name, l, s)
	} else {
		p.Legend.Add(name, l)
	}
	return nil
}

func sizeChart(name, title, ylabel string, ss []series, f func(metrics.SizeResult) float64, scale float64) Chart {
	p := newPlot(title, "data size (bytes)", ylabel)
	p.X.Scale = plot.LogScale{}
	n := 0
	seen := map[float64]bool{}
	var sizes []float64
	for i, s := range ss {
		var xys plotter.XYs
		for _, r := range ok(s.v.Results) {
			x := float64(r.SizeBytes)
			xys = append(xys, plotter.XY{X: x, Y: f(r) / scale})
			if !seen[x] {
				seen[x] = true
				sizes = append(sizes, x)
			}
		}
		if len(xys) == 0 {
			continue
		}
		if err := addLine(p, i, s.name, xys, true); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, "No variant has a measured data size.")
	}
	p.X.Tick.Marker = Log2Ticks{Sizes: sizes}
	p.Y.Min = 0
	// Lines tend to sit high on the right (bandwidth saturates, CCT grows):
	// the legend goes bottom right, clear of them.
	p.Legend.Top = false
	p.Legend.XOffs = -vg.Points(8)
	p.Legend.YOffs = vg.Points(8)
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
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
	return timeUnit([]series{{v: report.VariantResult{Results: []metrics.SizeResult{{Completion: metrics.Completion{SizeBytes: 1, Timing: metrics.Timing{CCTS: m}}}}}}},
		func(r metrics.SizeResult) []float64 { return []float64{r.CCTS} })
}

func fctCurve(ss []series) Chart {
	const name, title = "fct-curve", "Sorted flow completion times (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.FCTCurveS })
	p := newPlot(title, "flows, fastest to slowest (%)", "FCT ("+tn+")")
	n := 0
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.FCTCurveS) == 0 {
			continue
		}
		c := r.FCTCurveS
		xys := make(plotter.XYs, len(c))
		for j, v := range c {
			x := 100.0
			if len(c) > 1 {
				x = 100 * float64(j) / float64(len(c)-1)
			}
			xys[j] = plotter.XY{X: x, Y: v / tu}
		}
		if err := addLine(p, i, fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes)), xys, false); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, "No per-flow completion curve (fct_curve_s) in these results: rerun with a current fabriclab.")
	}
	p.Y.Min = 0
	p.Legend.Left = true
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
}

func fctCDF(ss []series) Chart {
	const name, title = "fct-cdf", "FCT CDF (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.FCTCurveS })
	p := newPlot(title, "flow completion time ("+tn+")", "fraction of flows")
	n := 0
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.FCTCurveS) == 0 {
			continue
		}
		c := append([]float64(nil), r.FCTCurveS...)
		sort.Float64s(c)
		xys := plotter.XYs{{X: c[0] / tu, Y: 0}}
		for j, v := range c {
			y := 1.0
			if len(c) > 1 {
				y = float64(j) / float64(len(c)-1)
			}
			xys = append(xys, plotter.XY{X: v / tu, Y: y})
		}
		if err := addLine(p, i, fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes)), xys, false); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, "No per-flow completion curve (fct_curve_s) in these results: rerun with a current fabriclab.")
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false
	p.Legend.YOffs = vg.Points(40)
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
}

func rankDone(ss []series) Chart {
	const name, title = "rank-done", "Per-rank completion time (largest size)"
	tu, tn := largestOnly(ss, func(r metrics.SizeResult) []float64 { return r.RankDoneS })
	p := newPlot(title, "rank", "last incoming flow done ("+tn+")")
	n := 0
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.RankDoneS) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(r.RankDoneS))
		for j, v := range r.RankDoneS {
			xys[j] = plotter.XY{X: float64(j), Y: v / tu}
		}
		if err := addLine(p, i, fmt.Sprintf("%s (%s)", s.name, SizeLabel(r.SizeBytes)), xys, len(xys) <= 64); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, "No per-rank completion times (rank_done_s) in these results.")
	}
	p.Y.Min = 0
	p.Legend.Top = false
	p.Legend.YOffs = vg.Points(40)
	p.X.Tick.Marker = intTicks{}
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
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

// endpointHeatmaps draws, for every any-to-any variant, one heatmap per
// checkpoint interval: clients × servers, each cell the pair's rate in
// that interval as a share of its full rate, so that a collision shows as
// the same dark columns at every checkpoint.
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
			cs = append(cs, ch)
		}
	}
	return cs
}

func heatmaps(ss []series) []Chart {
	var cs []Chart
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
		title := fmt.Sprintf("Rank-to-rank bandwidth: %s (%s)", s.name, SizeLabel(r.SizeBytes))
		cs = append(cs, heatmap(fmt.Sprintf("heatmap-%d", i+1), title, grid(m)))
	}
	if len(cs) == 0 {
		return []Chart{skip("heatmap", "Rank-to-rank bandwidth", "No rank-to-rank bandwidth matrix (rank_bw_gbps) in these results: it is kept up to 128 ranks, or always with sim.record_flows: true.")}
	}
	return cs
}

func heatmap(name, title string, g grid) Chart {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range g {
		for _, v := range row {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	c := heatmapOf(name, title, g, "destination rank", "source rank", "GB/s", lo, hi)
	c.ticks(intTicks{}, intTicks{})
	return c
}

// heatmapOf is a heatmap of g with a colour bar from lo to hi (values
// beyond are drawn at the ends).
func heatmapOf(name, title string, g grid, xlabel, ylabel, unit string, lo, hi float64) Chart {
	for _, row := range g {
		for k, v := range row {
			row[k] = math.Min(math.Max(v, lo), hi)
		}
	}
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(lo)
	cm.SetMax(hi)
	hm := plotter.NewHeatMap(g, cm.Palette(255))
	hm.Min, hm.Max = lo, hi
	hm.Rasterized = len(g) > 64
	p := newPlot(title, xlabel, ylabel)
	p.Add(hm)
	p.Title.Text = title

	bar := newPlot("", "", unit)
	bar.Title.Text = ""
	bar.HideX()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.Y.Min, bar.Y.Max = lo, hi
	w, h := chartW, 12*vg.Centimeter
	return Chart{Name: name, Title: title, w: w, h: h, plot: p, draw: func(c draw.Canvas) {
		barW := 2.4 * vg.Centimeter
		p.Draw(draw.Crop(c, 0, -barW, 0, 0))
		bar.Draw(draw.Crop(c, c.Max.X-c.Min.X-barW, 0, 1.1*vg.Centimeter, -0.9*vg.Centimeter))
	}}
}

// ticks sets a heatmap's axis tick markers.
func (c *Chart) ticks(x, y plot.Ticker) {
	c.plot.X.Tick.Marker = x
	c.plot.Y.Tick.Marker = y
}

// counterBars: PFC pauses and ECN marks per variant at the largest size.
func counterBars(ss []series) Chart {
	const name, title = "counters", "PFC pauses and ECN marks per variant (largest size)"
	var pfc, ecn plotter.Values
	var names []string
	any := false
	for _, s := range ss {
		r := largest(s)
		if r == nil {
			continue
		}
		names = append(names, s.name)
		pfc = append(pfc, float64(r.PFCPauses))
		ecn = append(ecn, float64(r.ECNMarks))
		any = any || r.PFCPauses > 0 || r.ECNMarks > 0
	}
	if len(names) == 0 {
		return skip(name, title, "No variant has a measured data size.")
	}
	p := newPlot(title, "", "count")
	if err := bars(p, names, []string{"PFC pauses", "ECN marks"}, []plotter.Values{pfc, ecn}); err != nil {
		return skip(name, title, err.Error())
	}
	if !any {
		p.Y.Max = 1
	}
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
}

// bars draws grouped bars: one group per category, one bar per series.
func bars(p *plot.Plot, cats, names []string, vals []plotter.Values) error {
	bw := vg.Points(math.Max(6, math.Min(28, 300/float64(len(cats)*len(vals)))))
	for i, v := range vals {
		b, err := plotter.NewBarChart(v, bw)
		if err != nil {
			return err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(vals)-1)/2) * bw
		p.Add(b)
		p.Legend.Add(names[i], b)
	}
	p.NominalX(cats...)
	p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5 // room for the outer groups' bars
	p.Y.Min = 0
	p.Y.Tick.Marker = countTicks{}
	// Headroom above the tallest bar so that the legend (top right, one
	// line per series) does not cover it.
	top := 0.0
	for _, v := range vals {
		for _, x := range v {
			top = math.Max(top, x)
		}
	}
	if top > 0 {
		p.Y.Max = top * (1.1 + 0.08*float64(len(vals)))
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
		return []Chart{skip("tiers", "PFC pauses and ECN marks per switch tier", "No per-port counters in these results: set sim.port_counters: true.")}
	}
	var ts []string
	for t := range tiers {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		oi, ok1 := tierOrder[ts[i]]
		oj, ok2 := tierOrder[ts[j]]
		if !ok1 {
			oi = 9
		}
		if !ok2 {
			oj = 9
		}
		if oi != oj {
			return oi < oj
		}
		return ts[i] < ts[j]
	})
	mk := func(name, title, ylabel string, get func(acc) map[string]float64) Chart {
		vals := make([]plotter.Values, len(accs))
		any := false
		for i, a := range accs {
			for _, t := range ts {
				vals[i] = append(vals[i], get(a)[t])
				any = any || get(a)[t] > 0
			}
		}
		p := newPlot(title, "tier (ports of this tier's devices)", ylabel)
		if err := bars(p, ts, names, vals); err != nil {
			return skip(name, title, err.Error())
		}
		if !any {
			p.Y.Max = 1
		}
		return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
	}
	return []Chart{
		mk("tier-pfc", "PFC pauses sent per tier (largest size)", "PFC pauses sent", func(a acc) map[string]float64 { return a.pfc }),
		mk("tier-ecn", "ECN marks per tier (largest size)", "ECN marks", func(a acc) map[string]float64 { return a.ecn }),
	}
}

func (c Chart) render(cv draw.Canvas) {
	if c.draw != nil {
		c.draw(cv)
		return
	}
	c.plot.Draw(cv)
}

var fontRe = strings.NewReplacer("font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")

func renderSVG(c Chart) (svg string, err error) {
	defer func() {
		if r := recover(); r != nil { // gonum/plot panics on degenerate data
			err = fmt.Errorf("%v", r)
		}
	}()
	cv := vgsvg.New(c.w, c.h)
	c.render(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return fontRe.Replace(s), nil
}

func renderPNG(c Chart) (png []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	cv := vgimg.NewWith(vgimg.UseWH(c.w, c.h), vgimg.UseDPI(110))
	c.render(draw.New(cv))
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
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.png", n, c.Name)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.skip{color:#666;font-style:italic}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:.85em}`

func writeHTML(w io.Writer, srcs []Source, cs []Chart) error {
	var b strings.Builder
	e := html.EscapeString
	title := "fabriclab report"
	if len(srcs) == 1 && srcs[0].Output.Scenario != "" {
		title += ": " + srcs[0].Output.Scenario
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<h1>%s</h1>\n", e(title), css, e(title))
	b.WriteString("<table>\n<tr><th>run</th><th>scenario</th><th>file</th><th>seed</th><th>started</th><th>variants</th><th>version</th></tr>\n")
	for _, s := range srcs {
		o := s.Output
		label := s.Label
		if o.Interrupted {
			label += " (interrupted)"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
			e(label), e(o.Scenario), e(o.ScenarioFile), o.Seed, e(o.Started), len(o.Variants), e(o.Version))
	}
	b.WriteString("</table>\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "<h2 id=\"%s\">%s</h2>\n", e(c.Name), e(c.Title))
		if c.Skip != "" {
			fmt.Fprintf(&b, "<p class=\"skip\">%s</p>\n", e(c.Skip))
			continue
		}
		fmt.Fprintf(&b, "<figure>\n%s</figure>\n", c.SVG)
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
		if len(s.Output.Sets)+len(s.Output.Sweeps) > 0 {
			var opts []string
			for _, x := range s.Output.Sets {
				opts = append(opts, "--set "+x)
			}
			for _, x := range s.Output.Sweeps {
				opts = append(opts, "--sweep "+x)
			}
			fmt.Fprintf(&b, "<p>Command-line options: <code>%s</code></p>\n", e(strings.Join(opts, " ")))
		}
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
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
	p := newPlot(title, "message size (bytes, largest of the bucket)", "slowdown")
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	n := 0
	var sizes []float64
	top := 1.0
	for i, s := range ss {
		r := largest(s)
		if r == nil || len(r.SlowdownBySize) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, b := range r.SlowdownBySize {
			y := math.Max(q(b.Slowdown), 1)
			top = math.Max(top, y)
			xys = append(xys, plotter.XY{X: float64(max(b.HiBytes, 1)), Y: y})
			sizes = append(sizes, float64(max(b.HiBytes, 1)))
		}
		if err := addLine(p, i, s.name, xys, true); err != nil {
			return skip(name, title, err.Error())
		}
		n++
	}
	if n == 0 {
		return skip(name, title, "No message-size buckets in these results (workload kinds messages, uniform and flows have them).")
	}
	p.X.Tick.Marker = Log2Ticks{Sizes: sizes}
	p.Y.Min, p.Y.Max = 1, math.Pow(10, math.Ceil(math.Log10(top*1.05)+0.01))
	return Chart{Name: name, Title: title, plot: p, w: chartW, h: chartH}
}
