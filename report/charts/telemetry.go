package charts

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	vgdraw "gonum.org/v1/plot/vg/draw"

	"fabriclab/metrics"
)

// maxTelemetryPoints bounds the points of one telemetry line and the cells
// of one row of a strip: longer series are merged into bins of whole
// samples (the largest queue of the bin, the mean utilization and rate,
// paused when any sample was), so that a long run costs no more to draw
// than a screen shows.
const maxTelemetryPoints = 1000

// maxTelemetryRows bounds the rows whose telemetry is drawn (four charts
// each): the rest are named in a note.
const maxTelemetryRows = 24

// bins merges n samples f at a time: bin k holds samples [k·f, end(k)).
type bins struct{ n, f int }

func binsFor(n int) bins {
	return bins{n: n, f: max(1, (n+maxTelemetryPoints-1)/maxTelemetryPoints)}
}

func (b bins) count() int { return (b.n + b.f - 1) / b.f }

// end is the sample after bin k's last one.
func (b bins) end(k int) int { return min((k+1)*b.f, b.n) }

// downMax is the largest sample of each bin (queues: a peak must stay
// visible however long the run).
func downMax(xs []int64, b bins) []float64 {
	out := make([]float64, 0, b.count())
	for k := range b.count() {
		m := int64(math.MinInt64)
		for _, x := range xs[min(k*b.f, len(xs)):min(b.end(k), len(xs))] {
			m = max(m, x)
		}
		if m == math.MinInt64 {
			m = 0
		}
		out = append(out, float64(m))
	}
	return out
}

// downMean is the mean of each bin's samples.
func downMean(xs []float64, b bins) []float64 {
	out := make([]float64, 0, b.count())
	for k := range b.count() {
		part := xs[min(k*b.f, len(xs)):min(b.end(k), len(xs))]
		s := 0.0
		for _, x := range part {
			s += x
		}
		if len(part) > 0 {
			s /= float64(len(part))
		}
		out = append(out, s)
	}
	return out
}

// downAny says for each bin whether any of its samples was paused.
func downAny(xs []int8, b bins) []bool {
	out := make([]bool, 0, b.count())
	for k := range b.count() {
		p := false
		for _, x := range xs[min(k*b.f, len(xs)):min(b.end(k), len(xs))] {
			p = p || x != 0
		}
		out = append(out, p)
	}
	return out
}

// span is a stretch of time [lo, hi], in the chart's time unit.
type span struct{ lo, hi float64 }

// pauseSpans are the stretches where the port was paused: sample j covers
// the interval that ends at its time, (j, j+1]·interval, and consecutive
// paused bins make one span. Times are in seconds divided by tu.
func pauseSpans(paused []int8, b bins, interval, tu float64) []span {
	var out []span
	on := downAny(paused, b)
	for k := 0; k < len(on); k++ {
		if !on[k] {
			continue
		}
		j := k
		for j+1 < len(on) && on[j+1] {
			j++
		}
		out = append(out, span{at(k*b.f, interval, tu), at(b.end(j), interval, tu)})
		k = j
	}
	return out
}

// at is the time of sample boundary k (k·interval) in unit tu, rounded
// to 12 significant digits (10 µs, not 10.000000000000002).
// sampleAt is when sample boundary k is (k intervals in), in units tu;
// the last one is the run's end (the closing sample spans less than an
// interval), as the CSV export gives it.
func sampleAt(t *metrics.Telemetry, k int, tu float64) float64 {
	if k >= t.Samples && t.EndS > 0 {
		return at(1, t.EndS, tu)
	}
	return at(k, t.IntervalS, tu)
}

func at(k int, interval, tu float64) float64 {
	x, _ := strconv.ParseFloat(strconv.FormatFloat(float64(k)*interval/tu, 'g', 12, 64), 64)
	return x
}

// portName names a kept port as node→peer.
func portName(p metrics.PortSeries) string {
	if p.Peer == "" {
		return p.Node
	}
	return p.Node + "→" + p.Peer
}

// byteUnit is B, KiB or MiB, whichever suits a largest value of m bytes.
func byteUnit(m float64) (float64, string) {
	switch {
	case m >= 1<<20:
		return 1 << 20, "MiB"
	case m >= 1<<10:
		return 1 << 10, "KiB"
	}
	return 1, "B"
}

// wideRange reports whether values whose peaks are peaks (0 for a series
// that is all zero) need a log axis: the smallest non-zero peak is more
// than two decades below the largest, so that the quieter lines would lie
// flat on the axis of a linear scale.
func wideRange(peaks []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, p := range peaks {
		if p > 0 {
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
	}
	return hi > 0 && hi/lo > 100
}

// duration writes s seconds in its unit: 10 µs, 1.28 ms.
func duration(s float64) string {
	tu, tn := unitFor(s)
	return shortNum(s/tu) + " " + tn
}

// telemetryRow is one result row with telemetry, and what names it.
type telemetryRow struct {
	i, k  int // the series and the row's rank among its telemetry rows
	label string
	t     *metrics.Telemetry
}

func (r telemetryRow) stem(what string) string {
	return fmt.Sprintf("tel-%s-%d-%d", what, r.i+1, r.k+1)
}

// telemetryCharts draws, for every row with telemetry (sim.telemetry), the
// queues of its kept ports, the chosen flows' rate, windows or grants, the
// ports' PFC pauses and the utilization per tier, over time. Rows without
// telemetry add nothing.
func telemetryCharts(ss []series) []Chart {
	var rows []telemetryRow
	for i, s := range ss {
		k := 0
		for _, r := range s.v.Results {
			t := r.Telemetry
			if t == nil || t.Samples <= 0 || t.IntervalS <= 0 || len(t.Ports) == 0 && len(t.Flows) == 0 {
				continue
			}
			label := s.name
			if r.SizeBytes > 0 {
				label += " (" + SizeLabel(r.SizeBytes) + ")"
			}
			rows = append(rows, telemetryRow{i: i, k: k, label: label, t: t})
			k++
		}
	}
	var cs []Chart
	for n, r := range rows {
		if n == maxTelemetryRows {
			cs = append(cs, skip("tel-more", "Telemetry of further rows",
				fmt.Sprintf("%d more rows have telemetry; the report draws that of the first %d only (report fewer runs or variants, or read the rows' telemetry in the JSON).", len(rows)-n, n)))
			break
		}
		// A quantity sim.telemetry.what left out has no chart.
		has := func(f func(metrics.PortSeries) bool) bool {
			for _, ps := range r.t.Ports {
				if f(ps) {
					return true
				}
			}
			return false
		}
		if has(func(ps metrics.PortSeries) bool { return ps.QueueBytes != nil }) {
			cs = append(cs, queueChart(r))
		}
		cs = append(cs, flowCharts(r)...)
		if has(func(ps metrics.PortSeries) bool { return ps.Paused != nil }) {
			cs = append(cs, pauseChart(r))
		}
		if has(func(ps metrics.PortSeries) bool { return ps.UtilPct != nil }) {
			cs = append(cs, utilStrip(r))
		}
	}
	return cs
}

// sampling is the note's sentence on the row's sampling and binning.
func sampling(t *metrics.Telemetry, b bins, how string) string {
	s := fmt.Sprintf("Sampled every %s (%d samples", duration(t.IntervalS), t.Samples)
	if t.Decimated > 0 {
		s += fmt.Sprintf(", merged pairwise %d time(s) during the run to stay within the bound", t.Decimated)
	}
	s += ")"
	if b.f > 1 {
		s += fmt.Sprintf("; drawn in %d bins of %d samples, each %s", b.count(), b.f, how)
	}
	return s + "."
}

// timeAxis sets p's x axis to the row's sampled time and returns its unit.
func timeAxis(p *plot.Plot, t *metrics.Telemetry, b bins) (float64, string) {
	tu, tn := unitFor(float64(b.count()*b.f) * t.IntervalS)
	p.X.Label.Text = "time (" + tn + ")"
	p.X.Min, p.X.Max = 0, sampleAt(t, b.count()*b.f, tu)
	p.X.Tick.Marker = niceTicks{}
	return tu, tn
}

// queueChart: the bytes queued for each kept port over time, one line per
// port, log y when the ports' peaks span more than two decades. A log axis
// is drawn as log10 of the values on a linear scale (log10Ticks): gonum
// centres a y label on the arithmetic middle of the range, which a log
// scale puts near the top, and pads the plot for the label above it.
func queueChart(r telemetryRow) Chart {
	t := r.t
	b := binsFor(t.Samples)
	name, title := r.stem("queue"), "Queue depth of the busiest ports over time: "+r.label
	p := newPlot("", "")
	c := newChart(name, title, p)
	tu, _ := timeAxis(p, t, b)
	var peaks []float64
	var ys [][]float64
	top := 0.0
	for _, ps := range t.Ports {
		y := downMax(ps.QueueBytes, b)
		pk := 0.0
		for _, v := range y {
			pk = math.Max(pk, v)
		}
		peaks, ys, top = append(peaks, pk), append(ys, y), math.Max(top, pk)
	}
	bu, bn := byteUnit(top)
	logY := wideRange(peaks)
	floor := 0.0
	if logY {
		lo := math.Inf(1)
		for _, y := range ys {
			for _, v := range y {
				if v > 0 {
					lo = math.Min(lo, v/bu)
				}
			}
		}
		fe := math.Floor(math.Log10(lo))
		floor = math.Pow(10, fe)
		p.Y.Tick.Marker = log10Ticks{}
		p.Y.Label.Text = "queued (" + bn + ", log scale)"
		p.Y.Min, p.Y.Max = fe, math.Max(math.Log10(top/bu*1.3), fe+1)
	} else {
		p.Y.Label.Text = "queued (" + bn + ")"
		p.Y.Min, p.Y.Max = 0, math.Max(top/bu*1.05, 1)
		p.Y.Tick.Marker = niceTicks{}
	}
	// The busiest port is drawn last, over the others; the legend lists
	// the busiest first.
	for k := len(t.Ports) - 1; k >= 0; k-- {
		xys := make(plotter.XYs, len(ys[k]))
		for j, v := range ys[k] {
			y := v / bu
			if logY {
				y = p.Y.Min // an empty queue: the axis' bottom
				if v > 0 {
					y = math.Max(math.Log10(v/bu), p.Y.Min)
				}
			}
			xys[j] = plotter.XY{X: sampleAt(t, b.end(j), tu), Y: y}
		}
		if _, err := c.addLine(p, k, portName(t.Ports[k]), xys, false); err != nil {
			return skip(name, title, err.Error())
		}
	}
	slices.Reverse(c.legend)
	c.Note = sampling(t, b, "the largest queue of its samples")
	if logY {
		c.Note += fmt.Sprintf(" Log scale: the ports' peaks span more than two decades; an empty queue is drawn at the axis' bottom (%s %s).", shortNum(floor), bn)
	}
	tab := &Table{Head: []string{"port", "tier", "line rate (Gb/s)", "sent (B)", "peak queue (" + bn + ")", "mean queue (" + bn + ")", "paused (% of samples)", "pause frames", "ECN marks", "drops"}}
	for k, ps := range t.Ports {
		mean, paused := 0.0, 0
		for _, q := range ps.QueueBytes {
			mean += float64(q)
		}
		for _, x := range ps.Paused {
			if x != 0 {
				paused++
			}
		}
		mean /= float64(max(len(ps.QueueBytes), 1))
		tab.Rows = append(tab.Rows, []string{portName(ps), ps.Tier, trimG(ps.RateGbps), strconv.FormatInt(ps.TxBytes, 10),
			fmt.Sprintf("%.1f", peaks[k]/bu), fmt.Sprintf("%.1f", mean/bu), fmt.Sprintf("%.1f", 100*float64(paused)/float64(t.Samples)),
			strconv.FormatInt(sum64(ps.PauseFrames), 10), strconv.FormatInt(sum64(ps.ECNMarks), 10), strconv.FormatInt(sum64(ps.Drops), 10)})
	}
	c.Table = tab
	return c
}

func sum64(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// flowMetric is how a flow series' Metric is drawn: its title, y label and
// whether its values are bytes.
func flowMetric(m string) (what, ylabel string, bytes bool) {
	switch m {
	case "rate_gbps":
		return "DCQCN rate", "rate (Gb/s)", false
	case "cwnd_bytes":
		return "Congestion window", "congestion window", true
	case "granted_bytes":
		return "Bytes granted (Homa)", "granted", true
	}
	return m, m, false
}

// flowCharts: the chosen flows' series over time, one chart per metric
// (a row normally has one), one line per flow; none without flows.
func flowCharts(r telemetryRow) []Chart {
	t := r.t
	var order []string
	by := map[string][]metrics.FlowSeries{}
	for _, f := range t.Flows {
		if len(f.Value) == 0 || f.First < 0 {
			continue
		}
		if _, ok := by[f.Metric]; !ok {
			order = append(order, f.Metric)
		}
		by[f.Metric] = append(by[f.Metric], f)
	}
	b := binsFor(t.Samples)
	var cs []Chart
	for n, m := range order {
		fs := by[m]
		what, ylabel, isBytes := flowMetric(m)
		name := r.stem("flows")
		if n > 0 {
			name += "-" + strconv.Itoa(n+1)
		}
		title := what + " of the chosen flows over time: " + r.label
		p := newPlot("", "")
		c := newChart(name, title, p)
		tu, tn := timeAxis(p, t, b)
		top := 0.0
		for _, f := range fs {
			for _, v := range f.Value {
				top = math.Max(top, v)
			}
		}
		scale := 1.0
		if isBytes {
			var un string
			scale, un = byteUnit(top)
			ylabel += " (" + un + ")"
		}
		p.Y.Label.Text = ylabel
		p.Y.Min, p.Y.Max = 0, math.Max(top/scale*1.05, 1e-9)
		p.Y.Tick.Marker = niceTicks{}
		tab := &Table{Head: []string{"flow", "src→dst", "bytes", "FCT (" + tn + ")", "slowdown", "first sample (" + tn + ")", "min " + ylabel, "mean " + ylabel, "max " + ylabel, "delivered (B)"}}
		lines, labels := make([]plotter.XYs, len(fs)), make([]string, len(fs))
		for k, f := range fs {
			// The flow's samples are First, First+1, … on the row's clock:
			// binned on that clock, so that every line's points line up.
			var xys plotter.XYs
			lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
			for bk := f.First / b.f; bk < b.count(); bk++ {
				a, e := max(bk*b.f, f.First)-f.First, min(b.end(bk)-f.First, len(f.Value))
				if a >= e {
					break
				}
				mean := 0.0
				for _, v := range f.Value[a:e] {
					mean += v
				}
				mean /= float64(e - a)
				xys = append(xys, plotter.XY{X: sampleAt(t, b.end(bk), tu), Y: mean / scale})
			}
			for _, v := range f.Value {
				lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
			}
			label := fmt.Sprintf("flow %d %s→%s", f.ID, f.Src, f.Dst)
			if f.Slowdown > 0 {
				label += fmt.Sprintf(" (slowdown %.2f)", f.Slowdown)
			}
			lines[k], labels[k] = xys, label
			delivered := "-"
			if len(f.Delivered) > 0 {
				delivered = strconv.FormatInt(f.Delivered[len(f.Delivered)-1], 10)
			}
			tab.Rows = append(tab.Rows, []string{strconv.Itoa(f.ID), f.Src + "→" + f.Dst, strconv.FormatInt(f.Bytes, 10),
				fmt.Sprintf("%.4g", f.FCTS/tu), fmt.Sprintf("%.2f", f.Slowdown), shortNum(float64(f.First+1) * t.IntervalS / tu),
				fmt.Sprintf("%.4g", lo/scale), fmt.Sprintf("%.4g", sum/float64(len(f.Value))/scale), fmt.Sprintf("%.4g", hi/scale), delivered})
		}
		// The first (the slowest) is drawn last, over the others.
		for k := len(fs) - 1; k >= 0; k-- {
			if len(lines[k]) == 0 {
				continue
			}
			if _, err := c.addLine(p, k, labels[k], lines[k], false); err != nil {
				return []Chart{skip(name, title, err.Error())}
			}
		}
		slices.Reverse(c.legend)
		c.Note = sampling(t, b, "the mean of its samples") + " A line starts with the flow's first sample and ends with its last (the flow in progress)."
		c.Table = tab
		cs = append(cs, c)
	}
	return cs
}

// pauseStrip is a Gantt chart of PFC pauses: row r (drawn at y = r) is
// filled over each of its spans, on a light band over the sampled time.
type pauseStrip struct {
	rows  [][]span
	end   float64
	color color.Color
}

var (
	_ plot.Plotter    = (*pauseStrip)(nil)
	_ plot.DataRanger = (*pauseStrip)(nil)
)

var bandColor = color.RGBA{0xee, 0xee, 0xee, 0xff}

func (g *pauseStrip) Plot(c vgdraw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	clamp := func(x vg.Length) vg.Length { return min(max(x, c.Min.X), c.Max.X) }
	box := func(col color.Color, x0, x1, y0, y1 vg.Length) {
		x0, x1 = clamp(x0), clamp(x1)
		if x1-x0 < vg.Points(1) { // a single sample of a long run stays visible
			x1 = min(x0+vg.Points(1), c.Max.X)
			x0 = x1 - vg.Points(1)
		}
		c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
	for r, ss := range g.rows {
		y0, y1 := trY(float64(r)-0.35), trY(float64(r)+0.35)
		box(bandColor, trX(0), trX(g.end), y0, y1)
		for _, s := range ss {
			box(g.color, trX(s.lo), trX(s.hi), y0, y1)
		}
	}
}

func (g *pauseStrip) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, g.end, -0.5, float64(len(g.rows)) - 0.5
}

// Thumbnail draws the legend's filled box.
func (g *pauseStrip) Thumbnail(c *vgdraw.Canvas) {
	c.FillPolygon(g.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// stripHeight is the height of a chart of n rows of strips.
func stripHeight(n int) vg.Length {
	return min(max(3*vg.Centimeter+vg.Length(n)*0.55*vg.Centimeter, 6*vg.Centimeter), 26*vg.Centimeter)
}

// pauseChart: one row per kept port (the busiest on top), filled where the
// peer's PFC paused its data priority.
func pauseChart(r telemetryRow) Chart {
	t := r.t
	b := binsFor(t.Samples)
	name, title := r.stem("pause"), "PFC pause timeline of the busiest ports: "+r.label
	p := newPlot("", "port (node→peer)")
	c := newChart(name, title, p)
	c.h = stripHeight(len(t.Ports))
	tu, tn := timeAxis(p, t, b)
	n := len(t.Ports)
	g := &pauseStrip{rows: make([][]span, n), end: p.X.Max, color: seriesColors[3]}
	names := make(labelTicks, n)
	tab := &Table{Head: []string{"port", "paused (" + tn + ")", "paused (% of the sampled time)", "pause episodes", "pause frames received"}}
	anyPaused := false
	for k, ps := range t.Ports {
		row := n - 1 - k // the busiest on top
		g.rows[row] = pauseSpans(ps.Paused, b, t.IntervalS, tu)
		names[row] = portName(ps)
		paused := 0
		for _, x := range ps.Paused {
			if x != 0 {
				paused++
			}
		}
		anyPaused = anyPaused || paused > 0
		tab.Rows = append(tab.Rows, []string{portName(ps), shortNum(float64(paused) * t.IntervalS / tu),
			fmt.Sprintf("%.1f", 100*float64(paused)/float64(t.Samples)), strconv.Itoa(len(pauseSpans(ps.Paused, bins{n: t.Samples, f: 1}, t.IntervalS, tu))),
			strconv.FormatInt(sum64(ps.PauseFrames), 10)})
	}
	p.Add(g)
	p.Y.Tick.Marker = names
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	c.legend = append(c.legend, legendEntry{"paused by the peer's PFC (data priority)", []plot.Thumbnailer{g}})
	c.Note = sampling(t, b, "paused when any of its samples was")
	if !anyPaused {
		c.Note += " No kept port was paused."
	}
	c.Table = tab
	return c
}

// sortTiers orders switch tiers from the hosts up (host, leaf or tor,
// agg, spine, core), unknown ones last by name.
func sortTiers(ts []string) {
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
}

// tierUtil is the mean utilization (%) of each tier's kept ports, binned
// by mean: one grid row per tier (the hosts first), one column per bin.
func tierUtil(t *metrics.Telemetry, b bins) ([]string, []int, grid) {
	idx := map[string][]int{}
	var ts []string
	for k, ps := range t.Ports {
		tier := ps.Tier
		if tier == "" {
			tier = "other"
		}
		if _, ok := idx[tier]; !ok {
			ts = append(ts, tier)
		}
		idx[tier] = append(idx[tier], k)
	}
	sortTiers(ts)
	g := make(grid, len(ts))
	counts := make([]int, len(ts))
	for r, tier := range ts {
		mean := make([]float64, t.Samples)
		for _, k := range idx[tier] {
			for j, u := range t.Ports[k].UtilPct[:min(len(t.Ports[k].UtilPct), t.Samples)] {
				mean[j] += u
			}
		}
		for j := range mean {
			mean[j] /= float64(len(idx[tier]))
		}
		g[r] = downMean(mean, b)
		counts[r] = len(idx[tier])
	}
	return ts, counts, g
}

// stripImage draws g (rows bottom to top) as an image whose cells are
// blocks of pixels, so that a scaled raster blurs only their edges; cm
// colours the cells.
func stripImage(g grid, cm *heatMap) *image.RGBA {
	rows, cols := len(g), 0
	if rows > 0 {
		cols = len(g[0])
	}
	const cellH = 24
	cellW := max(1, maxTelemetryPoints/max(cols, 1))
	img := image.NewRGBA(image.Rect(0, 0, cols*cellW, rows*cellH))
	for r, row := range g {
		for k, v := range row {
			col, err := cm.At(math.Min(math.Max(v, cm.Min()), cm.Max()))
			if err != nil {
				col = color.White
			}
			y0 := (rows - 1 - r) * cellH
			draw.Draw(img, image.Rect(k*cellW, y0, (k+1)*cellW, y0+cellH), image.NewUniform(col), image.Point{}, draw.Src)
		}
	}
	return img
}

// utilStrip: one row per tier, each cell the mean utilization of the
// tier's kept ports in the bin, on a 0–100 % colour scale.
func utilStrip(r telemetryRow) Chart {
	t := r.t
	b := binsFor(t.Samples)
	name, title := r.stem("util"), "Utilization per tier over time (mean of the kept ports): "+r.label
	ts, counts, g := tierUtil(t, b)
	tu, tn := unitFor(float64(b.count()*b.f) * t.IntervalS)
	end := sampleAt(t, b.count()*b.f, tu)
	cm := newHeatMap(0, 100)
	img := plotter.NewImage(stripImage(g, cm), 0, -0.5, end, float64(len(ts))-0.5)
	c := colourChart(name, title, img, cm, "time ("+tn+")", "tier (kept ports)", "utilization (%)", stripHeight(len(ts))+vg.Centimeter)
	labels := make(labelTicks, len(ts))
	for k, tier := range ts {
		labels[k] = fmt.Sprintf("%s (%d)", tier, counts[k])
	}
	c.ticks(niceTicks{}, labels)
	c.plot.X.Min, c.plot.X.Max = 0, end
	c.plot.Y.Min, c.plot.Y.Max = -0.5, float64(len(ts))-0.5
	c.Note = sampling(t, b, "the mean of its samples") + " Each cell is the mean utilization of the tier's kept ports (their number in brackets); colour scale 0–100 %."
	tab := &Table{Head: []string{"tier", "kept ports", "mean utilization (%)", "busiest cell (%)", "at (" + tn + ")"}}
	for k, tier := range ts {
		mean, peak, peakAt := 0.0, -1.0, 0
		for j, v := range g[k] {
			mean += v * float64(b.end(j)-j*b.f)
			if v > peak {
				peak, peakAt = v, j
			}
		}
		mean /= float64(t.Samples)
		tab.Rows = append(tab.Rows, []string{tier, strconv.Itoa(counts[k]), fmt.Sprintf("%.1f", mean), fmt.Sprintf("%.1f", peak),
			shortNum(sampleAt(t, b.end(peakAt), tu))})
	}
	c.Table = tab
	return c
}
