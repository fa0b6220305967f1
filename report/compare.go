package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"fabriclab/internal/safetext"
	"fabriclab/metrics"
	"fabriclab/units"
)

// Column is one side of a comparison: a saved variant's results under a
// name such as "12:tuned-final".
type Column struct {
	Name    string
	Results []metrics.SizeResult
	// Kind is the variant's workload kind: bus bandwidth is "-" for a
	// kind without one (HasBusBW); "" keeps every figure.
	Kind string
}

// Metric is a quantity `fabriclab compare` can put side by side.
type Metric struct {
	Name  string // as given to --metric
	Title string // in the table's first line
	Unit  string
	// Relative is true for rates and times: the delta is shown absolute
	// and in % of the baseline. Counters and percentages get the absolute
	// delta only.
	Relative bool
	value    func(r metrics.SizeResult) float64
	format   func(v float64) string
	// fabric: only a simulated fabric measures it (n/a on real hosts).
	fabric bool
}

func fixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}

// Metrics are the comparable metrics, in the order of `compare --all`
// (algbw is not part of --all).
var Metrics = []Metric{
	{Name: "busbw", Title: "bus bandwidth", Unit: "GB/s", Relative: true,
		value: func(r metrics.SizeResult) float64 { return r.BusBWGBps }, format: GBps},
	{Name: "cct", Title: "completion time", Unit: "us", Relative: true,
		value: func(r metrics.SizeResult) float64 { return r.CCTS * 1e6 }, format: fixed(2)},
	{Name: "ideal_pct", Title: "% of ideal", Unit: "%", Relative: false,
		value: func(r metrics.SizeResult) float64 { return r.IdealPct }, format: fixed(1)},
	{Name: "pfc_pauses", Title: "PFC pause frames", Relative: false, fabric: true,
		value: func(r metrics.SizeResult) float64 { return float64(r.PFCPauses) }, format: fixed(0)},
	{Name: "ecn_marks", Title: "ECN-marked packets", Relative: false, fabric: true,
		value: func(r metrics.SizeResult) float64 { return float64(r.ECNMarks) }, format: fixed(0)},
	{Name: "algbw", Title: "algorithm bandwidth", Unit: "GB/s", Relative: true,
		value: func(r metrics.SizeResult) float64 { return r.AlgBWGBps }, format: GBps},
}

// AllMetrics is what `compare --all` prints.
var AllMetrics = []string{"busbw", "cct", "ideal_pct", "pfc_pauses", "ecn_marks"}

// MetricNames lists the accepted --metric names (short aliases included).
const MetricNames = "busbw, cct, algbw, ideal_pct, pfc (pfc_pauses), ecn (ecn_marks)"

// LookupMetric finds a metric by name; "pfc" and "ecn" are short for
// pfc_pauses and ecn_marks.
func LookupMetric(name string) (Metric, bool) {
	switch name {
	case "pfc":
		name = "pfc_pauses"
	case "ecn":
		name = "ecn_marks"
	}
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Delta formats other − base: "+2.00 (+5.0%)" for a relative metric
// ("+2.00" alone when the baseline is 0), "+12" for a counter.
func (m Metric) Delta(base, other float64) string {
	d := other - base
	s := m.format(d)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	if m.Relative && base != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", 100*d/math.Abs(base))
	}
	return s
}

// WriteCompare writes one metric of the columns side by side, one row per
// data size (the union of the columns' sizes, ascending); the first column
// is the baseline and every other column is followed by its delta against
// it:
//
//	# compare bus bandwidth (GB/s); baseline 1:v0
//	#   size   1:v0   1:v1  Δ 1:v1
//	    8MiB  40.00  42.00  +2.00 (+5.0%)
//
// A size a column does not have is "-" (so is the bus bandwidth of a kind
// without one, see HasBusBW), a failed job "!", an incomplete one
// (time limit, interrupted) has its value marked "*"; deltas are left out
// ("-") where either side is missing, failed or incomplete.
func WriteCompare(w io.Writer, cols []Column, metric string) error {
	m, ok := LookupMetric(metric)
	if !ok {
		return fmt.Errorf("report: unknown metric %q (one of %s)", metric, MetricNames)
	}
	safe := make([]Column, len(cols))
	for i, c := range cols {
		safe[i] = Column{Name: safetext.Terminal(c.Name), Results: c.Results, Kind: c.Kind}
	}
	cols = safe
	if len(cols) == 0 {
		return fmt.Errorf("report: nothing to compare")
	}
	bySize := make([]map[int64]metrics.SizeResult, len(cols))
	seen := map[int64]bool{}
	var sizes []int64
	for i, c := range cols {
		bySize[i] = map[int64]metrics.SizeResult{}
		for _, r := range c.Results {
			if _, dup := bySize[i][r.SizeBytes]; dup {
				continue
			}
			bySize[i][r.SizeBytes] = r
			if !seen[r.SizeBytes] {
				seen[r.SizeBytes] = true
				sizes = append(sizes, r.SizeBytes)
			}
		}
	}
	sort.Slice(sizes, func(a, b int) bool { return sizes[a] < sizes[b] })

	header := []string{"size", cols[0].Name}
	for _, c := range cols[1:] {
		header = append(header, c.Name, "Δ "+c.Name)
	}
	var rows [][]string
	var incomplete, failed bool
	for _, s := range sizes {
		cell := func(i int) (string, float64, bool) {
			r, ok := bySize[i][s]
			switch {
			case !ok:
				return "-", 0, false
			case r.Error != "":
				failed = true
				return "!", 0, false
			case m.fabric && !r.FabricMeasured():
				return "n/a", 0, false // real hosts: nobody counted the fabric's
			case m.Name == "busbw" && !HasBusBW(cols[i].Kind):
				return "-", 0, false // no bus bandwidth (an incast, a flow list, …)
			}
			v := m.value(r)
			txt := m.format(v)
			if !r.Complete {
				// Shown, but no delta: a partial time says nothing
				// about the run it was cut from.
				incomplete = true
				return txt + "*", v, false
			}
			return txt, v, true
		}
		row := []string{units.Size(s).String()}
		btxt, bv, bok := cell(0)
		row = append(row, btxt)
		for i := 1; i < len(cols); i++ {
			txt, v, ok := cell(i)
			d := "-"
			if ok && bok {
				d = m.Delta(bv, v)
			}
			row = append(row, txt, d)
		}
		rows = append(rows, row)
	}

	width := make([]int, len(header))
	for c, h := range header {
		width[c] = len([]rune(h))
	}
	for _, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], len([]rune(cell)))
		}
	}
	line := func(prefix string, cells []string) string {
		var l strings.Builder
		l.WriteString(prefix)
		for c, cell := range cells {
			l.WriteString("  ")
			pad := strings.Repeat(" ", width[c]-len([]rune(cell)))
			if c >= 3 && c%2 == 1 { // deltas left-aligned, the rest right-aligned
				l.WriteString(cell + pad)
			} else {
				l.WriteString(pad + cell)
			}
		}
		return strings.TrimRight(l.String(), " ") + "\n"
	}

	var b strings.Builder
	title := m.Title
	if m.Unit != "" {
		title += " (" + m.Unit + ")"
	}
	fmt.Fprintf(&b, "# compare %s; baseline %s\n", title, cols[0].Name)
	b.WriteString(line("#", header))
	for _, row := range rows {
		b.WriteString(line(" ", row))
	}
	if len(rows) == 0 {
		b.WriteString("# (no results)\n")
	}
	if incomplete {
		b.WriteString("# * incomplete: time limit reached or interrupted; numbers describe a partial run\n")
	}
	if failed {
		b.WriteString("# ! failed: the job returned an error\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RunLine describes a run for the headers of compare and show: "# run 12:
// alltoall-dcqcn (examples/alltoall-dcqcn.yaml); seed 1; --set nic.burst=16",
// text from the database escaped for the terminal.
func RunLine(id int64, o Output) string {
	return fmt.Sprintf("# run %d: %s (%s); %s%s\n", id, safetext.Terminal(o.Scenario), safetext.Terminal(o.ScenarioFile),
		safetext.Terminal(Overrides(o)), hostsNote(o))
}

// KindsNote is a line saying that the columns run different workloads
// ("" when they run one): a size is then bytes per rank in one and bytes
// per sender in another, and the deltas compare unlike things.
func KindsNote(cols []Column) string {
	var kinds []string
	seen := map[string]bool{}
	for _, c := range cols {
		if !seen[c.Kind] && c.Kind != "" {
			seen[c.Kind] = true
			kinds = append(kinds, safetext.Terminal(c.Name)+" is "+c.Kind)
		}
	}
	if len(kinds) < 2 {
		return ""
	}
	return "# note: the columns run different workloads (" + strings.Join(kinds, ", ") + "): a size and a bandwidth mean something else in each, so the deltas compare unlike things\n"
}

// hostsNote is "; real hosts (4 agents, scale 0.001)" for a run whose rows
// ran on agents, so that a comparison with a simulated run says what each
// measured (a lab at 1/1000 of the rates is 1000× slower, not worse).
func hostsNote(o Output) string {
	for _, v := range o.Variants {
		if h := HostsOf(v.Results); h != nil {
			return "; " + h.String()
		}
	}
	return ""
}

// HostsOf is how the first row of rs that ran on real hosts ran; nil when
// none did.
func HostsOf(rs []metrics.SizeResult) *metrics.HostsRun {
	for _, r := range rs {
		if r.Hosts != nil {
			return r.Hosts
		}
	}
	return nil
}
