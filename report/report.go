// Package report turns measured results into what people read and what
// scripts parse: an nccl-tests-style terminal table per variant, JSON and CSV.
// Every writer is deterministic: the same Output gives the same bytes.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// Output is the whole result of one `fabriclab run`. Its JSON form is a
// documented contract (see the field tags and metrics.SizeResult).
type Output struct {
	Scenario     string   `json:"scenario"`
	ScenarioFile string   `json:"scenario_file"`
	Seed         uint64   `json:"seed"`
	Sets         []string `json:"sets,omitempty"`   // --set overrides applied to the file
	Sweeps       []string `json:"sweeps,omitempty"` // --sweep options applied to the file
	Version      string   `json:"version"`
	Started      string   `json:"started"`  // RFC 3339
	Finished     string   `json:"finished"` // RFC 3339
	// Interrupted is true when the run was cancelled (Ctrl-C): the variants
	// then hold only the jobs that had started, some of them incomplete.
	Interrupted bool `json:"interrupted"`
	// MissingRows counts the result rows a saved run should have but does
	// not (they could not be saved: a full disk, a lost server); only
	// `export` of such a run sets it.
	MissingRows int             `json:"missing_rows,omitempty"`
	Variants    []VariantResult `json:"variants"`
}

// VariantResult is one variant's results, one per data size. With a sweep
// every sweep point is a variant of its own.
type VariantResult struct {
	Name       string `json:"name"`
	Collective string `json:"collective"` // workload kind, e.g. alltoall
	// Parent is the scenario file's variant a sweep point expands; empty
	// without a sweep or for a file without variants.
	Parent string `json:"parent,omitempty"`
	// Sweep is the point: each swept key with its value as written.
	Sweep   Point                `json:"sweep,omitempty"`
	Results []metrics.SizeResult `json:"results"`
}

// SweepValue is the value a sweep point gives one dotted scenario key, as
// written in the scenario (or on the command line).
type SweepValue struct {
	Key, Value string
}

// Point is a sweep point: the swept keys in sweep order with their values.
// In JSON it is an object {"workload.qps": "4", …} whose keys keep that
// order.
type Point []SweepValue

// MarshalJSON encodes p as an object in key order.
func (p Point) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(v.Key)
		if err != nil {
			return nil, err
		}
		x, err := json.Marshal(v.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(x)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes an object of strings, keeping its key order.
func (p *Point) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	t, err := d.Token()
	if err != nil {
		return err
	}
	if t == nil {
		*p = nil
		return nil
	}
	if t != json.Delim('{') {
		return errors.New("report: a sweep point must be an object of strings")
	}
	out := Point{}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return err
		}
		var v string
		if err := d.Decode(&v); err != nil {
			return err
		}
		out = append(out, SweepValue{Key: k.(string), Value: v})
	}
	*p = out
	return nil
}

// String is the point as "key=value;key=value" (the CSV sweep column).
func (p Point) String() string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = v.Key + "=" + v.Value
	}
	return strings.Join(parts, ";")
}

// Sorted returns a copy of o whose variants' results are ordered by size
// (stable, so equal sizes keep their order). o is not modified.
func Sorted(o Output) Output {
	vs := make([]VariantResult, len(o.Variants))
	for i, v := range o.Variants {
		v.Results = sortedResults(v.Results)
		vs[i] = v
	}
	o.Variants = vs
	return o
}

func sortedResults(rs []metrics.SizeResult) []metrics.SizeResult {
	out := make([]metrics.SizeResult, len(rs))
	copy(out, rs)
	sort.SliceStable(out, func(i, j int) bool { return out[i].SizeBytes < out[j].SizeBytes })
	if out == nil {
		out = []metrics.SizeResult{} // "results": [] rather than null
	}
	return out
}

// WriteJSON writes o as indented JSON followed by a newline.
func WriteJSON(w io.Writer, o Output) error {
	return WriteJSONOf(w, o, func(o Output) any { return o })
}

// WriteJSONOf writes what wrap makes of o, o made ready as WriteJSON
// writes it (sorted, "variants": [] rather than null): a caller that adds
// keys after o's (run --json's "missing") wraps o in a struct of its own.
func WriteJSONOf(w io.Writer, o Output, wrap func(Output) any) error {
	o = Sorted(o)
	if o.Variants == nil {
		o.Variants = []VariantResult{}
	}
	b, err := json.MarshalIndent(wrap(o), "", "  ")
	if err != nil {
		return fmt.Errorf("report: encoding JSON: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteCSV writes one row per variant × size, in variant order and by size,
// with the CSV columns of ResultColumns. The sweep column is the variant's sweep
// point as key=value;key=value (empty without a sweep). Text cells that a
// spreadsheet would take for a formula are neutralized (safetext.CSVCell).
// A result with several jobs is followed by a row per other job.
func WriteCSV(w io.Writer, o Output) error {
	o = Sorted(o)
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	row := make([]string, 0, len(CSVHeader))
	for vi := range o.Variants {
		v := &o.Variants[vi]
		for ri := range v.Results {
			r := &v.Results[ri]
			row = row[:0]
			for _, c := range ResultColumns {
				row = append(row, csvCell(c.CSVValue(v, r)))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
			for ji := 1; ji < len(r.Jobs); ji++ {
				j := &r.Jobs[ji]
				row = row[:0]
				for _, c := range ResultColumns {
					if c.Job == nil {
						row = append(row, "")
					} else {
						row = append(row, csvCell(c.Job(v, r, j)))
					}
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// Table columns: header text on two lines, like nccl-tests (name, unit).
var tableCols = []struct {
	top, unit string
	min       int // minimum width, so tables of different variants line up
}{
	{"size", "(B)", 11},
	{"", "", 5}, // human-readable size
	{"time", "(us)", 8},
	{"algbw", "(GB/s)", 6},
	{"busbw", "(GB/s)", 6},
	{"%ideal", "", 6},
	{"ideal", "(us)", 8},
	{"%route", "", 6},
	{"pfc", "", 7},
	{"ecn", "", 7},
	{"drops", "", 6},
	{"retx", "", 6},
}

// WriteTable writes one variant as an nccl-tests-style table:
//
//	# variant: tuned-final  (alltoall, 32 ranks; RoCE/DCQCN tuned-final)
//	#        size             time   algbw   busbw  %ideal     ideal  %route      pfc      ecn   drops    retx
//	#         (B)             (us)  (GB/s)  (GB/s)              (us)
//	      8388608  8MiB      233.0   36.00   34.87    97.0     226.0    97.0       12      345       0       0
//	# Avg bus bandwidth    : 34.87 GB/s
//
// Rows are ordered by size; times are in microseconds with nccl-tests'
// precision, bandwidths in GB/s (1e9 B/s). A row whose run did not finish
// (time limit or interrupted) ends with "*", a failed job shows "!" and its
// error; footnotes explain both. The average bus bandwidth is over complete
// rows only.
func WriteTable(w io.Writer, v VariantResult) error {
	rs := sortedResults(v.Results)
	var b strings.Builder

	ranks := 0
	for _, r := range rs {
		if r.Ranks > ranks {
			ranks = r.Ranks
		}
	}
	coll := v.Collective
	if coll == "" {
		coll = "?"
	}
	if len(rs) == 0 {
		fmt.Fprintf(&b, "# variant: %s  (%s)\n# (no results)\n", v.Name, coll)
		_, err := io.WriteString(w, b.String())
		return err
	}
	// The algorithm that ran (it names a fallback when the requested one
	// cannot run as such on this rank count).
	for _, r := range rs {
		if r.Algorithm != "" {
			coll += " " + r.Algorithm
			break
		}
	}
	tr := ""
	if t := rs[0].Transport; t != "" {
		tr = "; " + t
	}
	if ranks > 0 { // rows that failed before the job was built have none
		coll += fmt.Sprintf(", %d ranks", ranks)
	}
	fmt.Fprintf(&b, "# variant: %s  (%s%s)\n", v.Name, coll, tr)

	rows := make([][]string, 0, len(rs))
	marks := make([]string, 0, len(rs))
	var incomplete, failed, flowRows int
	var sumBus, sumTarget float64
	var nBus int
	for _, r := range rs {
		human := units.Size(r.SizeBytes).String()
		if human == strconv.FormatInt(r.SizeBytes, 10)+"B" {
			human = "" // no shorter form
		}
		if r.Error != "" {
			failed++
			rows = append(rows, []string{strconv.FormatInt(r.SizeBytes, 10), human})
			marks = append(marks, "! "+oneLine(r.Error))
			continue
		}
		rows = append(rows, []string{
			strconv.FormatInt(r.SizeBytes, 10),
			human,
			usec(r.CCTS),
			GBps(r.AlgBWGBps),
			busCell(v.Collective, r.BusBWGBps),
			fmt.Sprintf("%.1f", r.IdealPct),
			usec(r.IdealS),
			routedCell(&r),
			fabricCell(&r, r.PFCPauses),
			fabricCell(&r, r.ECNMarks),
			fabricCell(&r, r.Drops),
			retxCell(&r),
		})
		flowMark := ""
		if r.Engine == "flow" {
			flowMark, flowRows = "~", flowRows+1
		}
		if r.Complete {
			marks = append(marks, flowMark)
			sumBus += r.BusBWGBps
			if r.Ranks > 1 {
				sumTarget += r.AlgBWGBps * float64(r.Ranks-1)
			}
			nBus++
		} else {
			incomplete++
			marks = append(marks, "*"+flowMark)
		}
	}

	// Column widths: the widest of header and cells, at least the minimum.
	width := make([]int, len(tableCols))
	for c, col := range tableCols {
		width[c] = max(len(col.top), len(col.unit), col.min)
	}
	for _, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], len(cell))
		}
	}
	line := func(cells []string, comment bool) string {
		var l strings.Builder
		for c := range tableCols {
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			if c > 0 {
				l.WriteString("  ")
			}
			if c == 0 {
				if comment {
					l.WriteString("#")
					fmt.Fprintf(&l, "%*s", width[c]+1, cell)
				} else {
					fmt.Fprintf(&l, "%*s", width[c]+2, cell)
				}
				continue
			}
			if c == 1 { // human size reads better left-aligned next to bytes
				fmt.Fprintf(&l, "%-*s", width[c], cell)
				continue
			}
			fmt.Fprintf(&l, "%*s", width[c], cell)
		}
		return l.String()
	}
	tops := make([]string, len(tableCols))
	unitsRow := make([]string, len(tableCols))
	for c, col := range tableCols {
		tops[c], unitsRow[c] = col.top, col.unit
	}
	b.WriteString(strings.TrimRight(line(tops, true), " "))
	b.WriteByte('\n')
	b.WriteString(strings.TrimRight(line(unitsRow, true), " "))
	b.WriteByte('\n')
	for i, row := range rows {
		l := line(row, false)
		if marks[i] != "" {
			if strings.HasPrefix(marks[i], "!") {
				l = line(row[:2], false)
				l = strings.TrimRight(l, " ") + "  " + marks[i]
			} else {
				l += " " + marks[i]
			}
		}
		b.WriteString(strings.TrimRight(l, " "))
		b.WriteByte('\n')
	}
	if incomplete > 0 {
		fmt.Fprintf(&b, "# * incomplete: time limit reached or interrupted; numbers describe a partial run\n")
	}
	if failed > 0 {
		fmt.Fprintf(&b, "# ! failed: the job returned an error\n")
	}
	if flowRows > 0 {
		fmt.Fprintf(&b, "# ~ flow-level engine (sim.engine): fluid rates, no packets, so no fabric counters (n/a)\n")
	}
	over := ""
	if nBus > 0 && nBus < len(rs) {
		over = fmt.Sprintf(" (over %d of %d sizes)", nBus, len(rs))
	}
	switch {
	case !HasBusBW(v.Collective):
		b.WriteString(noBusBWNote(v.Collective, sumTarget, nBus, over))
	case nBus > 0:
		fmt.Fprintf(&b, "# Avg bus bandwidth    : %s GB/s%s\n", GBps(sumBus/float64(nBus)), over)
	default:
		b.WriteString("# Avg bus bandwidth    : n/a (no complete size)\n")
	}
	for _, r := range rs {
		if te := r.TE; te != nil {
			proof := ""
			if te.Method == "optimal" {
				proof = "; the least possible (search finished)"
				if !te.Optimal {
					proof = "; the best found (the search ran out of budget)"
				}
			}
			fmt.Fprintf(&b, "# te (%s row): %s over %d connections; the busiest link carries %s ms of traffic%s\n",
				units.Size(r.SizeBytes), te.Method, te.Connections, ms(te.MaxLinkLoadS), proof)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTables writes every variant's table, in order, separated by a blank
// line, then, when there is a sweep, the sweep summary (WriteSweepSummary).
func WriteTables(w io.Writer, o Output) error {
	o = outputForTerminal(o)
	for i, v := range o.Variants {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := WriteTable(w, v); err != nil {
			return err
		}
		if err := WriteJobsTable(w, v); err != nil {
			return err
		}
		if err := WriteSlowdownTable(w, v); err != nil {
			return err
		}
		if err := WriteEndpointsTable(w, v); err != nil {
			return err
		}
		if err := WriteProbesTable(w, v); err != nil {
			return err
		}
		if err := WriteExplain(w, v); err != nil {
			return err
		}
	}
	if !hasSweep(o) {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return WriteSweepSummary(w, o)
}

// WriteJobsTable writes, for a variant whose rows ran several jobs, one
// line per row and job: the row's size, the job, its own size, its time
// together and alone (us), the interference factor (together / alone) and
// its bus bandwidth. Without jobs it writes nothing.
//
//	# jobs: interference = time together / time alone
//	#   row  job   kind      size   time  alone  interf   busbw
//	#                               (us)   (us)          (GB/s)
//	   1MiB  main  alltoall  1MiB  91.37  47.89   1.908   10.04
func WriteJobsTable(w io.Writer, v VariantResult) error {
	var rows [][]string
	for _, r := range sortedResults(v.Results) {
		for _, j := range r.Jobs {
			interf, busbw := "-", "-"
			if j.Interference > 0 {
				interf = fmt.Sprintf("%.3f", j.Interference)
			}
			if j.Complete {
				busbw = busCell(j.Kind, j.BusBWGBps)
			}
			time := usec(j.CCTS)
			if !j.Complete {
				time += "*"
			}
			alone := "-"
			if j.AloneCCTS > 0 {
				alone = usec(j.AloneCCTS)
			}
			rows = append(rows, []string{units.Size(r.SizeBytes).String(), j.Name, j.Kind, units.Size(j.SizeBytes).String(),
				time, alone, interf, busbw})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("# jobs: interference = time together / time alone\n")
	head := [][]string{
		{"row", "job", "kind", "size", "time", "alone", "interf", "busbw"},
		{"", "", "", "", "(us)", "(us)", "", "(GB/s)"},
	}
	alignRows(&b, append(head, rows...), len(head), []bool{false, true, true})
	_, err := io.WriteString(w, b.String())
	return err
}

func hasSweep(o Output) bool {
	for _, v := range o.Variants {
		if len(v.Sweep) > 0 {
			return true
		}
	}
	return false
}

// sweepCols are the measured columns of the sweep summary, after the
// point's values and the size.
type sweepCol struct {
	top, unit string
	min       int
}

var sweepCols = []sweepCol{
	{"size", "", 5},
	{"time", "(us)", 8},
	{"busbw", "(GB/s)", 6},
	{"%ideal", "", 6},
	{"pfc", "", 7},
	{"ecn", "", 7},
	{"drops", "", 6},
}

// messageSweepCols replace sweepCols when every point ran a message
// workload: what it offered and carried, and the p99 slowdown of its
// shortest and largest size buckets.
var messageSweepCols = []sweepCol{
	{"size", "", 5},
	{"msgs", "", 6},
	{"offered", "", 7},
	{"carried", "", 7},
	{"p99 short", "", 9},
	{"p99 long", "", 8},
	{"drops", "", 6},
}

// measured is a row's measured cells for cols.
func measured(r metrics.SizeResult, kind string, messages bool) []string {
	if !messages {
		return []string{usec(r.CCTS), busCell(kind, r.BusBWGBps), fmt.Sprintf("%.1f", r.IdealPct),
			fabricCell(&r, r.PFCPauses), fabricCell(&r, r.ECNMarks), fabricCell(&r, r.Drops)}
	}
	carried := "no"
	if r.Load.Carried {
		carried = "yes"
	}
	short, long := "-", "-"
	if b := r.SlowdownBySize; len(b) > 0 {
		short, long = fmt.Sprintf("%.2f", b[0].Slowdown.P99), fmt.Sprintf("%.2f", b[len(b)-1].Slowdown.P99)
	}
	return []string{strconv.Itoa(r.Load.Messages), fmt.Sprintf("%.2f", r.Load.OfferedLoad), carried, short, long,
		strconv.FormatInt(r.Drops, 10)}
}

// WriteSweepSummary writes the sweep's results as one compact table, one
// row per sweep point and data size (points in order, sizes ascending):
//
//	# sweep: workload.qps  (4 points; one row per point and size)
//	#  qps   size      time   busbw  %ideal      pfc      ecn   drops
//	#                  (us)  (GB/s)
//	   1    16MiB     396.4   42.30    84.7        0        0       0
//
// The leading columns are the point's values, headed by the key's last
// segment (the whole key when two keys end the same way), after the
// variant of the file when it has variants; then the human size, time,
// bus bandwidth, % of ideal, PFC pauses, ECN marks and drops. Marks and
// footnotes are those of WriteTable. Variants that are not sweep points
// are left out; without any it writes nothing.
func WriteSweepSummary(w io.Writer, o Output) error {
	var vs []VariantResult
	var keys []string
	seen := map[string]bool{}
	parents := false
	for _, v := range o.Variants {
		if len(v.Sweep) == 0 {
			continue
		}
		vs = append(vs, v)
		parents = parents || v.Parent != ""
		for _, sv := range v.Sweep {
			if !seen[sv.Key] {
				seen[sv.Key] = true
				keys = append(keys, sv.Key)
			}
		}
	}
	if len(vs) == 0 {
		return nil
	}
	var lead []string
	if parents {
		lead = append(lead, "variant")
	}
	lead = append(lead, scenario.SweepLabels(keys)...)
	nl := len(lead)
	cols, messages := sweepCols, true
	for _, v := range vs {
		for _, r := range v.Results {
			messages = messages && r.Load != nil
		}
	}
	if messages {
		cols = messageSweepCols
	}

	tops := append([]string(nil), lead...)
	unitsRow := make([]string, nl)
	width := make([]int, nl+len(cols))
	for c, l := range lead {
		width[c] = len(l)
	}
	for c, col := range cols {
		tops = append(tops, col.top)
		unitsRow = append(unitsRow, col.unit)
		width[nl+c] = max(len(col.top), len(col.unit), col.min)
	}

	var rows [][]string
	var marks []string
	var incomplete, failed int
	for _, v := range vs {
		pre := make([]string, 0, nl)
		if parents {
			pre = append(pre, v.Parent)
		}
		for _, k := range keys {
			val := ""
			for _, sv := range v.Sweep {
				if sv.Key == k {
					val = sv.Value
				}
			}
			pre = append(pre, val)
		}
		for _, r := range sortedResults(v.Results) {
			row := append(append([]string(nil), pre...), units.Size(r.SizeBytes).String())
			switch {
			case r.Error != "":
				failed++
				marks = append(marks, "! "+oneLine(r.Error))
			default:
				row = append(row, measured(r, v.Collective, messages)...)
				if r.Complete {
					marks = append(marks, "")
				} else {
					incomplete++
					marks = append(marks, "*")
				}
			}
			rows = append(rows, row)
		}
	}
	for _, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], len(cell))
		}
	}
	line := func(prefix string, cells []string) string {
		var l strings.Builder
		l.WriteString(prefix)
		for c, cell := range cells {
			l.WriteString("  ")
			if c < nl {
				fmt.Fprintf(&l, "%-*s", width[c], cell)
			} else {
				fmt.Fprintf(&l, "%*s", width[c], cell)
			}
		}
		return l.String()
	}

	var b strings.Builder
	points := fmt.Sprintf("%d points", len(vs))
	if len(vs) == 1 {
		points = "1 point"
	}
	fmt.Fprintf(&b, "# sweep: %s  (%s; one row per point and size)\n", strings.Join(keys, ", "), points)
	b.WriteString(strings.TrimRight(line("#", tops), " "))
	b.WriteByte('\n')
	b.WriteString(strings.TrimRight(line("#", unitsRow), " "))
	b.WriteByte('\n')
	for i, row := range rows {
		l := line(" ", row)
		switch {
		case strings.HasPrefix(marks[i], "!"):
			l = strings.TrimRight(l, " ") + "  " + marks[i]
		case marks[i] != "":
			l += " " + marks[i]
		}
		b.WriteString(strings.TrimRight(l, " "))
		b.WriteByte('\n')
	}
	if incomplete > 0 {
		b.WriteString("# * incomplete: time limit reached or interrupted; numbers describe a partial run\n")
	}
	if failed > 0 {
		b.WriteString("# ! failed: the job returned an error\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// usec formats seconds as microseconds the way nccl-tests does: two decimals
// below 100 us, one below 10 ms, none above.
func usec(s float64) string {
	us := s * 1e6
	switch {
	case us >= 10000:
		return fmt.Sprintf("%.0f", us)
	case us >= 100:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.2f", us)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// WriteExplain writes, for every row that ran in explain mode, why its slow
// flows were slow: how many were victims of PFC, culprits of the
// congestion, contending without PFC, held at their sender or (when any)
// held by their losses to the PFC watchdog; the five slowest with the
// queue they waited in most (or lost most in); and the pause propagation
// (who paused whom, from the roots: congestion or a storming NIC).
func WriteExplain(w io.Writer, v VariantResult) error {
	var b strings.Builder
	for _, r := range sortedResults(v.Results) {
		x := r.Explain
		if x == nil {
			continue
		}
		fmt.Fprintf(&b, "# explain %s: %d flows slower than %g×: %d victims of PFC, %d culprits, %d contending, %d sender-limited",
			units.Size(r.SizeBytes), x.SlowFlows, x.Threshold, x.Victims, x.Culprits, x.Contending, x.SenderLimited)
		if x.LossLimited > 0 {
			fmt.Fprintf(&b, ", %d loss-limited", x.LossLimited)
		}
		if len(x.Roots) > 0 {
			fmt.Fprintf(&b, "; congestion roots: %s", strings.Join(x.Roots, ", "))
		}
		b.WriteString("\n")
		for k, f := range x.Flows {
			if k == 5 {
				break
			}
			where := "no queue"
			if len(f.Links) > 0 {
				l := f.Links[0]
				where = fmt.Sprintf("%s queued %s us, paused %s us", l.Link, usec(l.QueuedS), usec(l.PausedS))
				if l.Drops > 0 {
					where += fmt.Sprintf(", %d dropped by the PFC watchdog", l.Drops)
				}
			}
			fmt.Fprintf(&b, "#   flow %d host%d→host%d %.2f× %s: %s\n", f.ID, f.Src, f.Dst, f.Slowdown, f.Role, where)
		}
		for k, e := range x.PauseTree {
			if k == 8 {
				fmt.Fprintf(&b, "#   … %d more pause edges in the JSON\n", len(x.PauseTree)-8)
				break
			}
			frames := "frames"
			if e.Pauses == 1 {
				frames = "frame"
			}
			fmt.Fprintf(&b, "#   %s paused %s: %d %s, %s us paused\n", e.From, e.To, e.Pauses, frames, usec(e.PausedS))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// alignRows writes rows in columns, each as wide as its widest cell:
// right-aligned, or left-aligned where left[c] is true; the first header
// rows are comment lines ("#"), the others start with a space.
func alignRows(b *strings.Builder, rows [][]string, header int, left []bool) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], len([]rune(cell)))
		}
	}
	for i, row := range rows {
		var l strings.Builder
		if i < header {
			l.WriteString("#")
		} else {
			l.WriteString(" ")
		}
		for c, cell := range row {
			pad := strings.Repeat(" ", width[c]-len([]rune(cell)))
			if c < len(left) && left[c] {
				l.WriteString("  " + cell + pad)
			} else {
				l.WriteString("  " + pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
}

// fabricCell is a fabric counter's cell: n/a on a row from real hosts,
// whose fabric nobody counted, or from the flow engine, which has no
// packets (never a 0 that was not measured).
func fabricCell(r *metrics.SizeResult, v int64) string {
	if !r.FabricMeasured() {
		return "n/a"
	}
	return strconv.FormatInt(v, 10)
}

// routedCell is the routed ideal's %: n/a on real hosts (their paths are
// the kernels').
func routedCell(r *metrics.SizeResult) string {
	if r.Hosts != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", r.RoutedIdealPct)
}

// retxCell is the retransmissions: the fabric's, or on real hosts the
// kernels' (Tcp.RetransSegs over the run, summed over the agents; n/a
// unless every agent counted them).
func retxCell(r *metrics.SizeResult) string {
	if r.Engine != "" {
		return "n/a"
	}
	if r.Hosts == nil {
		return strconv.FormatInt(r.Retransmits, 10)
	}
	var sum int64
	for _, a := range r.Hosts.HostCounters {
		v, ok := a.Counters["Tcp.RetransSegs"]
		if !ok {
			return "n/a"
		}
		sum += v
	}
	if len(r.Hosts.HostCounters) == 0 {
		return "n/a"
	}
	return strconv.FormatInt(sum, 10)
}
