package charts

import (
	"bytes"
	"image/color"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"fabriclab/metrics"
	"fabriclab/report"
)

func ser(o report.Output, nic float64) []series {
	var ss []series
	for _, v := range report.Sorted(o).Variants {
		ss = append(ss, series{name: v.Name, v: v, nicGBps: nic})
	}
	return ss
}

// The colour bar (and a rasterized heatmap) is a raster image: it must
// fill its box (preserveAspectRatio="none"; else a 1 × 255 image shrinks
// to a sliver) and say it is a PNG.
func TestSVGImagesFillTheirBox(t *testing.T) {
	cs := heatmaps(ser(synthetic(), 0))
	svg, err := renderSVG(cs[0])
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`<image [^>]*>`).FindAllString(svg, -1)
	if len(images) == 0 {
		t.Fatal("no <image> in the heatmap's SVG (the colour bar)")
	}
	for _, im := range images {
		if !strings.Contains(im, `preserveAspectRatio="none"`) || !strings.Contains(im, `xlink:href="data:image/png;base64,`) {
			t.Errorf("image %.160s… lacks preserveAspectRatio=\"none\" or the PNG MIME type", im)
		}
	}
	if strings.Contains(svg, "image/jpg") {
		t.Error("an image is still labelled image/jpg")
	}
}

// Every colour of the heatmap palette stays a colour on a white page (the
// old black-body palette ended in white), and the palette runs from dark to
// light in order.
func TestHeatPaletteVisibleOnWhite(t *testing.T) {
	cs := newHeatMap(0, 1).Palette(255).Colors()
	prev := -1.0
	for i, c := range cs {
		l := luminance(c)
		if l > 0.7 {
			t.Errorf("colour %d %v has luminance %.2f: too close to white", i, c, l)
		}
		if l < prev-0.01 {
			t.Errorf("colour %d is darker than the one before (%.3f < %.3f)", i, l, prev)
		}
		prev = l
	}
	if l := luminance(color.White); l < 0.99 {
		t.Errorf("white's luminance %.2f", l)
	}
}

// Heatmaps of the same rank count share one scale (the largest cell of
// all); another rank count keeps its own; the notes say which.
func TestHeatmapsShareScale(t *testing.T) {
	o := synthetic() // two 4-rank variants
	o.Variants[1].Results[2].RankBWGBps = [][]float64{{0, 80, 1, 1}, {1, 0, 1, 1}, {1, 1, 0, 1}, {1, 1, 1, 0}}
	o.Variants = append(o.Variants, report.VariantResult{Name: "two", Collective: "alltoall", Results: []metrics.SizeResult{o.Variants[0].Results[0]}})
	o.Variants[2].Results[0].RankBWGBps = [][]float64{{0, 3}, {2, 0}}
	cs := heatmaps(ser(o, 0))
	if len(cs) != 3 {
		t.Fatalf("%d heatmaps", len(cs))
	}
	if cs[0].hi != 80 || cs[1].hi != 80 || cs[0].lo != 0 {
		t.Errorf("4-rank scales %g–%g and %g–%g, want 0–80 both", cs[0].lo, cs[0].hi, cs[1].lo, cs[1].hi)
	}
	if cs[2].hi != 3 {
		t.Errorf("2-rank scale up to %g, want 3 (its own)", cs[2].hi)
	}
	if !strings.Contains(cs[0].Note, "0–80 GB/s, shared by the 2 heatmaps of 4 ranks") || !strings.Contains(cs[2].Note, "own") {
		t.Errorf("notes %q / %q", cs[0].Note, cs[2].Note)
	}
}

// PFC pause frames and ECN marks are two charts, each on its own axis.
func TestPFCAndECNSeparate(t *testing.T) {
	o := synthetic()
	o.Variants[0].Results[2].PFCPauses, o.Variants[0].Results[2].ECNMarks = 3, 40000
	cs := counterBars(ser(o, 0))
	if len(cs) != 2 || cs[0].Name != "pfc" || cs[1].Name != "ecn" {
		t.Fatalf("charts %v", cs)
	}
	if max := cs[0].plot.Y.Max; max > 100 {
		t.Errorf("PFC axis up to %g: it follows the ECN marks", max)
	}
	if max := cs[1].plot.Y.Max; max < 40000 {
		t.Errorf("ECN axis up to %g", max)
	}
	if cs[0].Table.Rows[0][1] != "3" || cs[1].Table.Rows[0][1] != "40000" {
		t.Errorf("tables %v %v", cs[0].Table.Rows, cs[1].Table.Rows)
	}
}

func isLog(s plot.Normalizer) bool { _, ok := s.(plot.LogScale); return ok }

// drawn is what a chart draws for its series: the legend's thumbnails are
// the plotters themselves.
func drawn(c Chart) []plot.Thumbnailer {
	var out []plot.Thumbnailer
	for _, e := range c.legend {
		out = append(out, e.thumbs...)
	}
	return out
}

// CCT against size has a log y axis; the FCT curve a log y, the CDF a log
// x and steps.
func TestLogAxesAndSteps(t *testing.T) {
	ss := ser(synthetic(), 0)
	cs, err := build(ss)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Chart{}
	for _, c := range cs {
		byName[c.Name] = c
	}
	if c := byName["cct"]; !isLog(c.plot.Y.Scale) || !isLog(c.plot.X.Scale) {
		t.Error("CCT vs size is not log-log")
	}
	if c := byName["busbw"]; isLog(c.plot.Y.Scale) {
		t.Error("busbw has a log y axis")
	}
	if c := byName["fct-curve"]; !isLog(c.plot.Y.Scale) {
		t.Error("the FCT curve's y axis is linear")
	}
	cdf := byName["fct-cdf"]
	if !isLog(cdf.plot.X.Scale) {
		t.Error("the CDF's x axis is linear")
	}
	steps := 0
	for _, pl := range drawn(cdf) {
		if l, ok := pl.(*plotter.Line); ok && l.StepStyle == plotter.PostStep {
			steps++
		}
	}
	if steps != 2 {
		t.Errorf("%d step lines in the CDF, want 2", steps)
	}
}

// An incast's senders receive nothing: the per-rank chart draws the
// target only, as a point, no line joining ranks.
func TestRankDoneSkipsIdleRanks(t *testing.T) {
	o := synthetic()
	for i := range o.Variants {
		o.Variants[i].Collective = "incast"
		o.Variants[i].Results[2].RankDoneS = []float64{2e-3, 0, 0, 0}
	}
	c := rankDone(ser(o, 0))
	points := 0
	for _, pl := range drawn(c) {
		switch x := pl.(type) {
		case *plotter.Line:
			t.Error("a line joins the ranks")
		case *plotter.Scatter:
			points += len(x.XYs)
		}
	}
	if points != 2 {
		t.Errorf("%d points, want 2 (the target of each variant)", points)
	}
	if !strings.Contains(c.Note, "6 of 8 rank entries") {
		t.Errorf("note %q", c.Note)
	}
	if c.Table.Rows[1][1] != "-" || c.Table.Rows[0][1] != "2" {
		t.Errorf("table %v", c.Table.Rows)
	}
}

// Legends go in a strip below the plot (never inside it, over the data),
// and no chart draws its own title: the report's heading names it.
func TestLegendBelowAndNoRepeatedTitle(t *testing.T) {
	cs, err := build(ser(synthetic(), 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Skip != "" || c.plot == nil {
			continue
		}
		if c.plot.Title.Text != "" {
			t.Errorf("%s: the plot has the title %q", c.Name, c.plot.Title.Text)
		}
		if strings.Contains(c.SVG, ">"+c.Title+"<") {
			t.Errorf("%s: the SVG repeats the heading", c.Name)
		}
		if c.draw == nil && len(c.legend) == 0 && c.Name != "pfc" && c.Name != "ecn" {
			t.Errorf("%s: no legend entries", c.Name)
		}
		if c.draw == nil && c.h != chartH+legendHeight(len(c.legend)) {
			t.Errorf("%s: height %v, want the plot and a legend strip of %v", c.Name, c.h, legendHeight(len(c.legend)))
		}
	}
	if legendHeight(0) != 0 || legendHeight(3) != 3*legendRow+8 || legendColumns(12) != 2 {
		t.Error("legend strip sizes")
	}
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: synthetic()}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<h2 id="busbw">Bus bandwidth vs data size</h2>`) {
		t.Error("the heading lacks the title")
	}
}

// No two of the first 40 series share a colour, and all are dark enough
// for a white page.
func TestSeriesColorsDistinct(t *testing.T) {
	seen := map[color.RGBA]int{}
	for i := range 40 {
		c := seriesColor(i)
		if j, dup := seen[c]; dup {
			t.Errorf("series %d and %d share %v", j, i, c)
		}
		seen[c] = i
		if l := luminance(c); l > 0.6 {
			t.Errorf("series %d's colour %v is too light (%.2f)", i, c, l)
		}
	}
}

// The busbw chart has a dashed line at the NIC rate, in the legend and the
// table; kinds without a bus bandwidth are left out of it.
func TestBusBWNICRateLine(t *testing.T) {
	o := synthetic()
	o.Variants[1].Collective = "incast"
	c := busbwChart(ser(o, 50))
	lines := 0
	for _, pl := range drawn(c) {
		if l, ok := pl.(*plotter.Line); ok && len(l.XYs) == 2 && l.XYs[0].Y == 50 && l.XYs[1].Y == 50 {
			lines++
			if len(l.Dashes) == 0 {
				t.Error("the NIC rate line is not dashed")
			}
		}
	}
	if lines != 1 || c.legend[len(c.legend)-1].name != "NIC rate 50 GB/s" {
		t.Errorf("%d NIC lines, legend %v", lines, c.legend)
	}
	if c.plot.Y.Max < 50 {
		t.Errorf("y axis ends at %g below the NIC rate", c.plot.Y.Max)
	}
	if strings.Join(c.Table.Head, "|") != "size|ecmp|NIC rate (GB/s)" || c.Table.Rows[0][2] != "50" {
		t.Errorf("table %v %v", c.Table.Head, c.Table.Rows)
	}
	if !strings.Contains(c.Note, "1 variant(s) without a bus bandwidth") {
		t.Errorf("note %q", c.Note)
	}
	if c := busbwChart(ser(report.Output{Variants: o.Variants[1:]}, 50)); c.Skip == "" {
		t.Error("an incast alone draws a busbw chart")
	}
}

// Every chart is followed by the numbers it draws; the top of the report
// has the overrides and the fabric.
func TestReportTablesOverridesFabric(t *testing.T) {
	o := synthetic()
	o.Sets = []string{"nic.burst=16", "seed=7"}
	o.Sweeps = []string{"workload.qps=1,2"}
	text := "name: s\ntopology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 1}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nvariants:\n  - name: ecmp\n  - name: spray\n    switch: {forwarding: spray-rr}\n"
	o.Sweeps = nil
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: o, ScenarioText: text}}, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	figures := strings.Count(h, "<figure>")
	if n := strings.Count(h, `<table class="num">`); n != figures || figures != 14 {
		t.Errorf("%d numbers tables for %d charts", n, figures)
	}
	for _, s := range []string{
		"<td><code>--set nic.burst=16 --set seed=7</code></td>",
		`<h2 id="fabric">Fabric</h2>`,
		"<tr><th>topology</th><td>leaf-spine, 8 hosts, 2 leaves of 4, 1 spine (4:1 oversubscribed)</td></tr>",
		"<tr><th>forwarding of spray</th><td>spray-rr</td></tr>",
		"<tr><td>1KiB</td><td>30.00</td><td>35.00</td><td>50</td></tr>", // busbw table with the NIC rate
	} {
		if !strings.Contains(h, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if i, j := strings.Index(h, `id="fabric"`), strings.Index(h, `id="busbw"`); i < 0 || i > j {
		t.Error("the fabric is not above the charts")
	}
}
