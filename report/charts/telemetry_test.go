package charts

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"fabriclab/metrics"
	"fabriclab/report"
)

// port is a kept port of n samples: queue q, utilization u and paused p
// repeat to fill the samples.
func port(node, peer, tier string, n int, q []int64, u []float64, p []int8) metrics.PortSeries {
	ps := metrics.PortSeries{Node: node, Peer: peer, Tier: tier, RateGbps: 400, TxBytes: 1000,
		QueueBytes: make([]int64, n), UtilPct: make([]float64, n), Paused: make([]int8, n),
		PauseFrames: make([]int64, n), ECNMarks: make([]int64, n), Drops: make([]int64, n)}
	for j := range n {
		if len(q) > 0 {
			ps.QueueBytes[j] = q[j%len(q)]
		}
		if len(u) > 0 {
			ps.UtilPct[j] = u[j%len(u)]
		}
		if len(p) > 0 {
			ps.Paused[j] = p[j%len(p)]
		}
	}
	return ps
}

func telRow(t *metrics.Telemetry) telemetryRow { return telemetryRow{label: "pfc (1MiB)", t: t} }

func TestBinsAndDownsampling(t *testing.T) {
	for _, c := range []struct{ n, f, count int }{{1, 1, 1}, {1000, 1, 1000}, {1001, 2, 501}, {2500, 3, 834}, {100000, 100, 1000}} {
		b := binsFor(c.n)
		if b.f != c.f || b.count() != c.count || b.count() > maxTelemetryPoints {
			t.Errorf("binsFor(%d) = %d per bin, %d bins; want %d, %d", c.n, b.f, b.count(), c.f, c.count)
		}
	}
	b := bins{n: 7, f: 3}
	if got := downMax([]int64{1, 5, 2, 0, 0, 9, 4}, b); !slices.Equal(got, []float64{5, 9, 4}) {
		t.Errorf("downMax = %v", got)
	}
	if got := downMean([]float64{1, 2, 3, 4, 5, 6, 7}, b); !slices.Equal(got, []float64{2, 5, 7}) {
		t.Errorf("downMean = %v", got)
	}
	if got := downAny([]int8{0, 0, 1, 0, 0, 0, 0}, b); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("downAny = %v", got)
	}
	// Deterministic and bounded: a long series becomes at most
	// maxTelemetryPoints points per line.
	tel := &metrics.Telemetry{IntervalS: 1e-6, Samples: 5000, Ports: []metrics.PortSeries{
		port("leaf0", "host0", "leaf", 5000, []int64{0, 4096, 1 << 20}, []float64{50}, nil)}}
	c := queueChart(telRow(tel))
	l := drawn(c)[0].(*plotter.Line)
	if len(l.XYs) != 1000 || l.XYs[0].Y != 1 || l.XYs[999].X != 5 || l.XYs[0].X != 0.005 {
		t.Errorf("%d points, first %v, last %v; want 1000, the bin's largest queue 1 MiB, from 0.005 to 5 ms", len(l.XYs), l.XYs[0], l.XYs[999])
	}
	if !strings.Contains(c.Note, "drawn in 1000 bins of 5 samples, each the largest queue") {
		t.Errorf("note %q", c.Note)
	}
}

// The pause strip is filled exactly over the runs of paused samples, one
// rectangle per run, each sample covering the interval that ends at it.
func TestPauseStripSpans(t *testing.T) {
	tel := &metrics.Telemetry{IntervalS: 10e-6, Samples: 8, Ports: []metrics.PortSeries{
		port("leaf0", "host1", "leaf", 8, nil, nil, []int8{0, 1, 1, 0, 0, 1, 0, 1}),
		port("spine0", "leaf0", "spine", 8, nil, nil, nil),
		port("leaf0", "host0", "leaf", 8, nil, nil, []int8{1}),
	}}
	c := pauseChart(telRow(tel))
	g := drawn(c)[0].(*pauseStrip)
	want := [][]span{{{0, 80}}, nil, {{10, 30}, {50, 60}, {70, 80}}} // the busiest port on top (last row)
	if fmt.Sprint(g.rows) != fmt.Sprint(want) {
		t.Errorf("spans %v, want %v", g.rows, want)
	}
	if lt := c.plot.Y.Tick.Marker.(labelTicks); !slices.Equal(lt, labelTicks{"leaf0→host0", "spine0→leaf0", "leaf0→host1"}) {
		t.Errorf("row labels %v", lt)
	}
	if c.plot.X.Label.Text != "time (µs)" || c.plot.X.Max != 80 {
		t.Errorf("x axis %q up to %g", c.plot.X.Label.Text, c.plot.X.Max)
	}
	if got := c.Table.Rows[0]; got[0] != "leaf0→host1" || got[1] != "40" || got[2] != "50.0" || got[3] != "3" {
		t.Errorf("table row %v, want 40 µs paused, 50%%, 3 episodes", got)
	}
	svg, err := renderSVG(c)
	if err != nil {
		t.Fatal(err)
	}
	// One filled rectangle per run, and the legend's box.
	if n := strings.Count(svg, "fill:#D62728"); n != 4+1 {
		t.Errorf("%d red rectangles in the SVG, want 5", n)
	}

	// Binned (3000 samples, 3 per bin): a bin is paused when any of its
	// samples is, and the run covers whole bins.
	p := make([]int8, 3000)
	p[1501], p[2999] = 1, 1
	got := pauseSpans(p, binsFor(3000), 1e-6, 1e-6)
	if fmt.Sprint(got) != fmt.Sprint([]span{{1500, 1503}, {2997, 3000}}) {
		t.Errorf("binned spans %v", got)
	}

	none := pauseChart(telRow(&metrics.Telemetry{IntervalS: 1e-6, Samples: 4, Ports: tel.Ports[1:2]}))
	if !strings.Contains(none.Note, "No kept port was paused.") {
		t.Errorf("note %q", none.Note)
	}
}

// The heat strip has one row per tier (from the hosts up) and one cell per
// bin, each the mean utilization of the tier's kept ports, on 0–100 %.
func TestUtilStripCells(t *testing.T) {
	const n = 2500
	tel := &metrics.Telemetry{IntervalS: 1e-6, Samples: n, Ports: []metrics.PortSeries{
		port("spine0", "leaf0", "spine", n, nil, []float64{90}, nil),
		port("leaf0", "host0", "leaf", n, nil, []float64{20}, nil),
		port("leaf1", "host5", "leaf", n, nil, []float64{60}, nil),
		port("host3", "leaf0", "host", n, nil, []float64{0, 30, 60}, nil),
	}}
	b := binsFor(n)
	tiers, counts, g := tierUtil(tel, b)
	if !slices.Equal(tiers, []string{"host", "leaf", "spine"}) || !slices.Equal(counts, []int{1, 2, 1}) {
		t.Fatalf("tiers %v of %v ports", tiers, counts)
	}
	if len(g) != 3 || len(g[0]) != b.count() || b.count() != 834 {
		t.Fatalf("%d × %d cells, want 3 tiers × 834 bins", len(g), len(g[0]))
	}
	if g[0][0] != 30 || g[1][0] != 40 || g[2][833] != 90 {
		t.Errorf("cells %g %g %g, want 30 (host, mean of 0 30 60), 40 (leaf, mean of 20 and 60), 90", g[0][0], g[1][0], g[2][833])
	}
	cm := newHeatMap(0, 100)
	img := stripImage(g, cm)
	if bd := img.Bounds(); bd.Dx() != 834 || bd.Dy() != 3*24 {
		t.Errorf("image %v", bd)
	}
	want, _ := cm.At(40)
	if got := img.At(0, 24+5); got != want.(color.RGBA) { // the leaf row, second from the top
		t.Errorf("leaf cell %v, want %v", got, want)
	}
	c := utilStrip(telRow(tel))
	if c.lo != 0 || c.hi != 100 || !strings.Contains(c.Note, "colour scale 0–100 %") {
		t.Errorf("scale %g–%g, note %q", c.lo, c.hi, c.Note)
	}
	svg, err := renderSVG(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{">utilization (%)<", ">time (ms)<", ">leaf (2)<", ">spine (1)<", ">100<", `preserveAspectRatio="none"`} {
		if !strings.Contains(svg, s) {
			t.Errorf("strip lacks %q", s)
		}
	}
	if small := stripImage(grid{{1, 2}}, cm); small.Bounds().Dx() != 1000 {
		t.Errorf("a short strip's image is %d pixels wide, want its cells widened to 1000", small.Bounds().Dx())
	}
}

// The queue chart turns to a log y axis when the ports' peaks span more
// than two decades, drawing an empty queue at the axis' bottom; it stays
// linear from 0 for peaks alike, however low the queues dip.
func TestQueueLogAxis(t *testing.T) {
	if !wideRange([]float64{0, 1024, 10 << 20}) || wideRange([]float64{400e3, 500e3, 0}) || wideRange([]float64{0, 0}) {
		t.Error("wideRange")
	}
	wide := &metrics.Telemetry{IntervalS: 10e-6, Samples: 4, Ports: []metrics.PortSeries{
		port("leaf0", "host0", "leaf", 4, []int64{0, 10 << 20, 5 << 20, 0}, nil, nil),
		port("spine0", "leaf0", "spine", 4, []int64{0, 1024}, nil, nil),
	}}
	c := queueChart(telRow(wide))
	_, logY := c.plot.Y.Tick.Marker.(log10Ticks)
	if !logY || c.plot.Y.Label.Text != "queued (MiB, log scale)" {
		t.Errorf("y axis %q, log %v", c.plot.Y.Label.Text, logY)
	}
	// log10 of MiB: the floor 0.0001 MiB is -4, 10 MiB is 1.
	if l := drawn(c)[1].(*plotter.Line); c.plot.Y.Min != -4 || l.XYs[0].Y != -4 || math.Abs(drawn(c)[0].(*plotter.Line).XYs[1].Y-1) > 1e-12 {
		t.Errorf("y from %g, an empty queue drawn at %g; want both -4 (0.0001 MiB)", c.plot.Y.Min, l.XYs[0].Y)
	}
	var labels []string
	for _, tk := range c.plot.Y.Tick.Marker.Ticks(c.plot.Y.Min, c.plot.Y.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0.0001 0.001 0.01 0.1 1 10" {
		t.Errorf("log labels %v", labels)
	}
	if !strings.Contains(c.Note, "Log scale") {
		t.Errorf("note %q", c.Note)
	}
	narrow := &metrics.Telemetry{IntervalS: 10e-6, Samples: 4, Ports: []metrics.PortSeries{
		port("leaf0", "host0", "leaf", 4, []int64{4096, 500e3}, nil, nil),
		port("spine0", "leaf0", "spine", 4, []int64{0, 400e3}, nil, nil),
	}}
	c = queueChart(telRow(narrow))
	if _, logY := c.plot.Y.Tick.Marker.(log10Ticks); logY || c.plot.Y.Min != 0 || c.plot.Y.Label.Text != "queued (KiB)" {
		t.Errorf("y axis %q from %g, log %v", c.plot.Y.Label.Text, c.plot.Y.Min, isLog(c.plot.Y.Scale))
	}
	// Legend busiest first; the busiest drawn last (on top).
	if c.legend[0].name != "leaf0→host0" || c.plot.X.Label.Text != "time (µs)" {
		t.Errorf("legend %v, x %q", c.legend[0].name, c.plot.X.Label.Text)
	}
	if got := c.Table.Rows[0]; got[4] != "488.3" || got[5] != "246.1" {
		t.Errorf("table row %v, want the peak 488.3 KiB and mean 246.1 KiB", got)
	}
}

// The flows' chart: one line per flow from its first sample, binned on the
// row's clock, its y unit from the metric; none without flows.
func TestFlowCharts(t *testing.T) {
	tel := &metrics.Telemetry{IntervalS: 1e-6, Samples: 10, Ports: []metrics.PortSeries{port("leaf0", "host0", "leaf", 10, nil, nil, nil)},
		Flows: []metrics.FlowSeries{
			{ID: 7, Src: "host1", Dst: "host0", Slowdown: 3.5, First: 2, Metric: "rate_gbps", Value: []float64{10, 20, 30}, Delivered: []int64{1, 2, 3}},
			{ID: 8, Src: "host2", Dst: "host0", First: 0, Metric: "rate_gbps", Value: []float64{100}},
		}}
	cs := flowCharts(telRow(tel))
	if len(cs) != 1 || cs[0].plot.Y.Label.Text != "rate (Gb/s)" || !strings.HasPrefix(cs[0].Title, "DCQCN rate of the chosen flows over time: pfc (1MiB)") {
		t.Fatalf("charts %v", cs)
	}
	c := cs[0]
	if c.legend[0].name != "flow 7 host1→host0 (slowdown 3.50)" || len(c.legend) != 2 {
		t.Errorf("legend %v", c.legend)
	}
	l := drawn(c)[0].(*plotter.Line)
	if fmt.Sprint(l.XYs) != fmt.Sprint(plotter.XYs{{X: 3, Y: 10}, {X: 4, Y: 20}, {X: 5, Y: 30}}) {
		t.Errorf("points %v, want samples 2–4 at 3, 4, 5 µs", l.XYs)
	}
	if got := c.Table.Rows[0]; got[9] != "3" || got[7] != "20" {
		t.Errorf("table row %v", got)
	}

	// Binned: 3000 samples, 3 per bin; a flow from sample 4 to 8 has the
	// mean of its samples in bins 1 (4, 5) and 2 (6, 7, 8).
	long := &metrics.Telemetry{IntervalS: 1e-6, Samples: 3000, Ports: tel.Ports, Flows: []metrics.FlowSeries{
		{ID: 1, Src: "a", Dst: "b", First: 4, Metric: "cwnd_bytes", Value: []float64{2048, 4096, 1024, 2048, 3072}}}}
	c = flowCharts(telRow(long))[0]
	l = drawn(c)[0].(*plotter.Line)
	if fmt.Sprint(l.XYs) != fmt.Sprint(plotter.XYs{{X: 0.006, Y: 3}, {X: 0.009, Y: 2}}) {
		t.Errorf("binned points %v", l.XYs)
	}
	if c.plot.Y.Label.Text != "congestion window (KiB)" || !strings.HasPrefix(c.Title, "Congestion window") {
		t.Errorf("y %q, title %q", c.plot.Y.Label.Text, c.Title)
	}

	tel.Flows = nil
	if cs := flowCharts(telRow(tel)); len(cs) != 0 {
		t.Errorf("%d flow charts without flows", len(cs))
	}
}

func withTelemetry(o report.Output, flows bool) report.Output {
	tel := &metrics.Telemetry{IntervalS: 10e-6, Samples: 300, Decimated: 1, Ports: []metrics.PortSeries{
		port("<leaf0>", "host&0", "leaf", 300, []int64{0, 100e3, 200e3}, []float64{100, 50}, []int8{0, 0, 1}),
		port("spine0", "leaf0", "spine", 300, []int64{4096}, []float64{30}, nil),
		port("host1", "leaf0", "host", 300, nil, []float64{80}, nil),
	}}
	if flows {
		tel.Flows = []metrics.FlowSeries{{ID: 3, Src: "host1", Dst: "<h0>", First: 1, Metric: "granted_bytes", Value: []float64{1000, 2000, 3000}}}
	}
	o.Variants[0].Results[1].Telemetry = tel
	return o
}

// A row with telemetry adds its charts to the report, named by variant and
// size, with units, notes and tables; names are escaped; rows without
// telemetry are drawn as before.
func TestTelemetryInReport(t *testing.T) {
	o := withTelemetry(synthetic(), true)
	o.Variants[0].Name = "ecmp<1>"
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: o}}, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if n := len(svgRe.FindAllString(h, -1)); n != 14+4 {
		t.Errorf("%d charts, want 14 and the row's queue, flows, pause and utilization charts", n)
	}
	if figures, tables := strings.Count(h, "<figure>"), strings.Count(h, `<table class="num">`); figures != tables {
		t.Errorf("%d numbers tables for %d charts", tables, figures)
	}
	for _, s := range []string{
		`<h2 id="tel-queue-1-1">Queue depth of the busiest ports over time: ecmp&lt;1&gt; (2MiB)</h2>`,
		`<h2 id="tel-flows-1-1">Bytes granted (Homa) of the chosen flows over time: ecmp&lt;1&gt; (2MiB)</h2>`,
		`<h2 id="tel-pause-1-1">PFC pause timeline of the busiest ports: ecmp&lt;1&gt; (2MiB)</h2>`,
		`<h2 id="tel-util-1-1">Utilization per tier over time (mean of the kept ports): ecmp&lt;1&gt; (2MiB)</h2>`,
		">&lt;leaf0&gt;→host&amp;0<", // legend and row labels in the SVG
		"<td>&lt;leaf0&gt;→host&amp;0</td>",
		">host1→&lt;h0&gt;<", ">granted (KiB)<",
		">queued (KiB)<", ">time (ms)<", ">port (node→peer)<", ">utilization (%)<",
		"Sampled every 10 µs (300 samples, merged pairwise 1 time(s) during the run to stay within the bound).",
	} {
		if !strings.Contains(h, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(h, "<leaf0>") || strings.Contains(h, "<h0>") {
		t.Error("a port or flow name is not escaped")
	}

	// Without flows the flows' chart is left out (not skipped).
	b.Reset()
	if err := Write(&b, []Source{{Label: "run 1", Output: withTelemetry(synthetic(), false), ScenarioText: "name: synthetic"}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if n := len(svgRe.FindAllString(b.String(), -1)); n != 14+3 {
		t.Errorf("%d charts without flows, want 17", n)
	}
	if i := strings.Index(b.String(), `class="skip"`); i >= 0 {
		t.Errorf("a chart is skipped: %.200s", b.String()[i:])
	}
}

// Past maxTelemetryRows rows, the rest are named in one note.
func TestTelemetryRowsBounded(t *testing.T) {
	o := withTelemetry(synthetic(), false)
	tel := o.Variants[0].Results[1].Telemetry
	var rs []metrics.SizeResult
	for k := range maxTelemetryRows + 6 {
		r := metrics.SizeResult{Telemetry: tel}
		r.SizeBytes = int64(k+1) << 10
		rs = append(rs, r)
	}
	cs := telemetryCharts([]series{{name: "v", v: report.VariantResult{Name: "v", Results: rs}}})
	if len(cs) != 3*maxTelemetryRows+1 || !strings.Contains(cs[len(cs)-1].Skip, "6 more rows have telemetry") {
		t.Errorf("%d charts, last %q", len(cs), cs[len(cs)-1].Skip)
	}
	if cs[3].Name != "tel-queue-1-2" || !strings.HasSuffix(cs[3].Title, "v (2KiB)") {
		t.Errorf("second row's chart %s %q", cs[3].Name, cs[3].Title)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		max  float64
		want string
	}{{2150, "0 500 1000 1500 2000"}, {2.46, "0 0.5 1 1.5 2"}, {80, "0 20 40 60 80"}, {0.3, "0 0.1 0.2 0.3"}} {
		var got []string
		for _, tk := range (niceTicks{}).Ticks(0, c.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("ticks(0, %g) = %v, want %s", c.max, got, c.want)
		}
	}
}

// The closing sample sits at the run's end, not a whole interval on.
func TestSampleAtClosingSample(t *testing.T) {
	tel := &metrics.Telemetry{IntervalS: 10e-6, Samples: 3, EndS: 25e-6}
	if got := sampleAt(tel, 2, 1e-6); got != 20 {
		t.Errorf("sample boundary 2 at %v µs, want 20", got)
	}
	if got := sampleAt(tel, 3, 1e-6); got != 25 {
		t.Errorf("the closing sample at %v µs, want the run's end, 25", got)
	}
}
