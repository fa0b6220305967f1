package charts

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
)

func synthetic() report.Output {
	o := report.Output{Scenario: "synthetic", ScenarioFile: "s.yaml", Seed: 1}
	for v := range 2 {
		vr := report.VariantResult{Name: []string{"ecmp", "spray"}[v], Collective: "alltoall"}
		for _, size := range []int64{1 << 10, 2 << 20, 4 << 30} {
			r := metrics.SizeResult{
				Completion: metrics.Completion{SizeBytes: size, Ranks: 4, Timing: metrics.Timing{
					CCTS: float64(size) / 40e9 * float64(1+v), BusBWGBps: 30 + float64(v*5), IdealPct: 70 + float64(v*10)}},
				FabricTotals: metrics.FabricTotals{PFCPauses: int64(10 * (v + 1)), ECNMarks: int64(100 * (v + 1))},
				Outcome:      metrics.Outcome{Complete: true},
				FlowStats: metrics.FlowStats{
					RankDoneS:  []float64{1e-3, 2e-3, 1.5e-3, 1.2e-3},
					FCTCurveS:  []float64{1e-4, 2e-4, 5e-4, 9e-4},
					RankBWGBps: [][]float64{{0, 10, 20, 30}, {5, 0, 15, 25}, {1, 2, 0, 3}, {40, 30, 20, 0}},
					SlowdownBySize: []metrics.SizeBucket{
						{LoBytes: 100, HiBytes: 1442, Slowdown: metrics.Percentiles{Count: 10, P50: 1.1, P99: 1.5 + float64(v*20)}},
						{LoBytes: 2000, HiBytes: 64000, Slowdown: metrics.Percentiles{Count: 10, P50: 1.3, P99: 3 + float64(v*10)}},
						{LoBytes: 70000, HiBytes: 3 << 20, Slowdown: metrics.Percentiles{Count: 10, P50: 2, P99: 20}},
					},
				},
				FabricCounters: metrics.FabricCounters{Ports: []metrics.PortCounters{
					{Node: "leaf0", Peer: "spine0", Tier: "leaf", Counters: metrics.Counters{PFCPausesSent: 3, ECNMarks: 40}},
					{Node: "spine0", Peer: "leaf1", Tier: "spine", Counters: metrics.Counters{PFCPausesSent: 1, ECNMarks: 9}},
				}},
			}
			vr.Results = append(vr.Results, r)
		}
		o.Variants = append(o.Variants, vr)
	}
	return o
}

var svgRe = regexp.MustCompile(`(?s)<svg.*?</svg>`)

func TestReportAllCharts(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: synthetic(), ScenarioText: "name: synthetic\n<x>"}}, Options{PNGDir: dir}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	// busbw, ideal, cct, fct-curve, fct-cdf, rank-done, slowdown p99 and
	// p50, 2 heatmaps, pfc, ecn, tier-pfc, tier-ecn.
	const want = 14
	svgs := svgRe.FindAllString(h, -1)
	if len(svgs) != want {
		t.Fatalf("%d <svg> elements, want %d", len(svgs), want)
	}
	for i, s := range svgs {
		if !strings.Contains(s, "<path") || !strings.Contains(s, "<text") {
			t.Errorf("svg %d has no path or text elements", i)
		}
	}
	for _, s := range []string{">1KiB<", ">2MiB<", ">4GiB<", "ecmp", "spray", "&lt;x&gt;", "sans-serif", "GB/s"} {
		if !strings.Contains(h, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(regexp.MustCompile(`xmlns(:xlink)?="[^"]*"`).ReplaceAllString(h, ""), "http") {
		t.Error("report refers to the network")
	}
	if strings.Contains(h, "<script") || strings.Contains(h, "class=\"skip\"") {
		t.Error("report has a script or a skipped chart")
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(pngs) != want {
		t.Fatalf("%d PNGs, want %d", len(pngs), want)
	}
	for _, p := range pngs {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 1000 {
			t.Errorf("%s: not a PNG (%d bytes, %v)", p, len(data), err)
		}
	}
}

func TestReportSkipsMissing(t *testing.T) {
	o := synthetic()
	for i := range o.Variants {
		for j := range o.Variants[i].Results {
			r := &o.Variants[i].Results[j]
			r.Ports, r.RankBWGBps, r.RankDoneS, r.FCTCurveS, r.SlowdownBySize = nil, nil, nil, nil, nil
		}
	}
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: o}, {Label: "run 2", Output: o}}, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if n := len(svgRe.FindAllString(h, -1)); n != 5 { // busbw, ideal, cct, pfc, ecn
		t.Errorf("%d charts, want 5", n)
	}
	for _, s := range []string{"set sim.port_counters: true", "sim.record_flows", "run 2: spray", "not available", "No message-size buckets"} {
		if !strings.Contains(h, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestSizeLabel(t *testing.T) {
	// The units the command line takes (units.ParseSize, nccl's -b).
	for n, want := range map[int64]string{512: "512B", 1 << 10: "1KiB", 2 << 20: "2MiB", 4 << 30: "4GiB", 1536: "1536B", 64000: "64KB"} {
		if got := SizeLabel(n); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
	ts := Log2Ticks{}.Ticks(1<<10, 4<<30)
	labels := 0
	for _, tk := range ts {
		if tk.Label != "" {
			labels++
		}
	}
	if labels < 3 || labels > 9 {
		t.Errorf("%d labelled ticks", labels)
	}
}

func TestCountTicks(t *testing.T) {
	for _, c := range []struct {
		max  float64
		want string
	}{{1, "0 1"}, {22, "0 5 10 15 20"}, {3000, "0 1K 2K 3K"}, {4350, "0 1K 2K 3K 4K"}, {1.5e6, "0 500K 1M 1.5M"}} {
		var got []string
		for _, tk := range (countTicks{}).Ticks(0, c.max) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("ticks(0, %g) = %v, want %s", c.max, got, c.want)
		}
	}
}

// A report of message workloads only draws the slowdown charts instead of
// the data-size charts, which say why they are missing.
func TestReportOfMessageWorkloads(t *testing.T) {
	o := synthetic()
	for i := range o.Variants {
		rs := o.Variants[i].Results[:1]
		rs[0].Load = &metrics.MessageLoad{Messages: 10}
		o.Variants[i].Results = rs
	}
	var b bytes.Buffer
	if err := Write(&b, []Source{{Label: "run 1", Output: o}}, Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if !strings.Contains(h, "no data-size sweep or bus bandwidth") || !strings.Contains(h, "99th-percentile slowdown") {
		t.Error("report of message workloads lacks the skip note or the slowdown chart")
	}
	if n := len(svgRe.FindAllString(h, -1)); n != 11 {
		t.Errorf("%d charts, want 11", n)
	}
}

// An any-to-any row gets one clients × servers heatmap per checkpoint
// interval (the drain left out), labelled with the hosts.
func TestEndpointHeatmaps(t *testing.T) {
	r := metrics.SizeResult{}
	r.SizeBytes = 65536
	r.Endpoints = &metrics.Endpoints{Pairs: 2, FullRateGbps: 0.02,
		PerPair: []metrics.EndpointResult{{Client: 0, Server: 6}, {Client: 0, Server: 11}}}
	for k := 1; k <= 3; k++ {
		r.Checkpoints = append(r.Checkpoints, metrics.Checkpoint{TS: 0.5 * float64(k),
			Endpoints: []metrics.EndpointCount{{Client: 0, Server: 6, Bytes: 625000}, {Client: 0, Server: 11, Bytes: 1250000}}})
	}
	cs := endpointHeatmaps([]series{{name: "collision", v: report.VariantResult{Name: "collision", Results: []metrics.SizeResult{r}}}})
	if len(cs) != 2 {
		t.Fatalf("%d heatmaps, want 2 (3 checkpoints, the last the drain)", len(cs))
	}
	if cs[0].Name != "endpoints-1-1" || !strings.Contains(cs[0].Title, "collision, checkpoint 1") {
		t.Errorf("first: %s %q", cs[0].Name, cs[0].Title)
	}
	svg, err := renderSVG(cs[1])
	if err != nil || !strings.Contains(svg, ">11<") || !strings.Contains(svg, "server host") {
		t.Errorf("the SVG does not label server 11 (err %v)", err)
	}
}

// A PNG is written whole through a temporary file and a rename: an old
// one is replaced, and a write that cannot finish (here the name is taken
// by a directory) leaves the old state and no temporary file.
func TestPNGWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "01-x.png")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file holds %q, want new", b)
	}
	blocked := filepath.Join(dir, "02-y.png")
	if err := os.MkdirAll(filepath.Join(blocked, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(blocked, []byte("png")); err == nil || !strings.Contains(err.Error(), "02-y.png") {
		t.Fatalf("writing over a directory: %v, want an error naming the file", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// The NIC's line on the bus bandwidth chart of rows measured on a
// namespace lab is at the lab's rate (it was at the scenario's, 1000×
// above points of a lab at --scale 0.001).
func TestNICLineAtTheHostsScale(t *testing.T) {
	row := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 1 << 20}, Hosts: &metrics.HostsRun{Engine: "hosts", Agents: 4, Scale: 0.001}}
	src := Source{Output: report.Output{Variants: []report.VariantResult{{Name: "a", Results: []metrics.SizeResult{row}}}},
		Fabrics: []report.Fabric{{Variant: "a", NICGBps: 12.5}}}
	if ss := collect([]Source{src}); len(ss) != 1 || ss[0].nicGBps != 0.0125 {
		t.Errorf("series %+v", ss)
	}
	src.Output.Variants[0].Results[0].Hosts = nil
	if ss := collect([]Source{src}); len(ss) != 1 || ss[0].nicGBps != 12.5 {
		t.Errorf("simulated: %+v", ss)
	}
}
