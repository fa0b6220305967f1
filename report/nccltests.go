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
	"fabriclab/workload"
)

// nccl-tests' test names (all_reduce_perf without _perf) and the fabriclab
// workload kinds they run, in nccl-tests' order.
var ncclTests = []struct{ test, kind string }{
	{"all_reduce", "allreduce"},
	{"all_gather", "allgather"},
	{"alltoall", "alltoall"},
	{"broadcast", "broadcast"},
	{"gather", "gather"},
	{"reduce", "reduce"},
	{"reduce_scatter", "reducescatter"},
	{"scatter", "scatter"},
	{"sendrecv", "sendrecv"},
}

// NCCLTestNames lists nccl-tests' collective names fabriclab runs.
func NCCLTestNames() []string {
	out := make([]string, len(ncclTests))
	for i, t := range ncclTests {
		out[i] = t.test
	}
	return out
}

// KindOfNCCLTest is the workload kind of an nccl-tests collective name:
// all_reduce, all_reduce_perf and allreduce all give allreduce. An
// unknown name (hypercube, which fabriclab does not model, or a typo) is
// an error listing the names it knows.
func KindOfNCCLTest(name string) (string, error) {
	n := strings.TrimSuffix(strings.ToLower(name), "_perf")
	for _, t := range ncclTests {
		if n == t.test || n == t.kind || strings.ReplaceAll(n, "-", "_") == t.test {
			return t.kind, nil
		}
	}
	if n == "hypercube" {
		return "", fmt.Errorf("nccl-tests' hypercube is not a collective fabriclab models (it runs %s)", strings.Join(NCCLTestNames(), ", "))
	}
	return "", fmt.Errorf("unknown nccl-tests collective %q (one of %s)", name, strings.Join(NCCLTestNames(), ", "))
}

// NCCLTestOf is the nccl-tests name of a workload kind ("" for a traffic
// pattern).
func NCCLTestOf(kind string) string {
	for _, t := range ncclTests {
		if t.kind == kind {
			return t.test
		}
	}
	return ""
}

// NCCL data types as nccl-tests names them (-d), with their sizes.
var ncclTypes = []struct {
	name  string
	bytes int64
}{
	{"int8", 1}, {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8}, {"uint64", 8},
	{"half", 2}, {"float", 4}, {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1},
}

// NCCLTypeSize is the size in bytes of an nccl-tests data type name
// (float, half, bfloat16, int8, …; nccl-tests also takes the aliases
// char, int, fp16, fp32, fp64), or an error naming the known ones.
func NCCLTypeSize(name string) (int64, string, error) {
	alias := map[string]string{"char": "int8", "int": "int32", "fp16": "half", "fp32": "float", "fp64": "double", "bf16": "bfloat16"}
	n := name
	if a, ok := alias[n]; ok {
		n = a
	}
	var names []string
	for _, t := range ncclTypes {
		if t.name == n {
			return t.bytes, t.name, nil
		}
		names = append(names, t.name)
	}
	return 0, "", fmt.Errorf("unknown nccl-tests data type %q (one of %s)", name, strings.Join(names, ", "))
}

// NCCLOps are nccl-tests' reduction operations (-o).
var NCCLOps = []string{"sum", "prod", "max", "min", "avg"}

// NCCLVariant is what the nccl-tests header says about a variant that its
// results do not: the warmup iterations and the root rank.
type NCCLVariant struct {
	Warmup int
	Root   int
}

// NCCLOptions tune WriteNCCLTests.
type NCCLOptions struct {
	DataType string // nccl-tests' -d (default float)
	Op       string // -o (default sum)
	// Variants by name; a variant not listed has warmup 0 and root 0.
	Variants map[string]NCCLVariant
	// NoCheck is nccl-tests' -c 0: "validation: 0" and #wrong N/A.
	NoCheck bool
	// OnHosts is a run on real hosts (run --engine hosts; a saved run's
	// engine): its blocks say "on real hosts" and [host] even when no row
	// does (every row failed before an agent measured it, as when an
	// agent refused the token). Without it a row's hosts object decides.
	OnHosts bool
}

// WriteNCCLTests writes each collective variant as nccl-tests prints a test
// (all_reduce_perf and its siblings), so that scripts which parse
// nccl-tests output read it unchanged: the "# nThread …" parameter line,
// the ranks under "# Using devices", the three header lines, one line per
// size with nccl-tests' columns and widths
//
//	size count type redop root | time algbw busbw #wrong (out-of-place) | time algbw busbw #wrong (in-place)
//
// and the footer "# Out of bounds values : 0 OK" and "# Avg bus bandwidth
// : X" (%g, the mean busbw of the lines printed). fabriclab runs each
// collective once, so the in-place columns repeat the out-of-place ones;
// #wrong is 0 (the collective's data movement is checked by construction,
// workload.Verify), N/A with NoCheck. A size that did not complete or failed becomes a
// comment line (# …), outside the average ("n/a" when none is left, not
// 0). A variant without results gets one "…: no results" line. Every block is introduced by a
// "# fabriclab …" comment line naming the variant and where it ran
// ("simulated", or "on real hosts" with opt.OnHosts or a row measured
// there); a variant whose kind is not an NCCL collective (incast, flows,
// …) gets that comment line only.
func WriteNCCLTests(w io.Writer, o Output, opt NCCLOptions) error {
	typeName := opt.DataType
	if typeName == "" {
		typeName = "float"
	}
	tsize, typeName, err := NCCLTypeSize(typeName)
	if err != nil {
		return err
	}
	op := opt.Op
	if op == "" {
		op = "sum"
	}
	var b strings.Builder
	for vi, v := range o.Variants {
		if vi > 0 {
			b.WriteString("\n")
		}
		name := safetext.Terminal(v.Name)
		test := NCCLTestOf(v.Collective)
		if test == "" {
			fmt.Fprintf(&b, "# fabriclab: variant %s runs %s, a traffic pattern and not an NCCL collective: no nccl-tests table (use --format table)\n",
				name, safetext.Terminal(v.Collective))
			continue
		}
		rs := sortedResults(v.Results)
		ranks, iters := 0, 1
		for _, r := range rs {
			ranks = max(ranks, r.Ranks)
			iters = max(iters, r.Iterations)
		}
		pv := opt.Variants[v.Name]
		scen := ""
		if o.Scenario != "" {
			scen = " " + safetext.Terminal(o.Scenario) + ","
		}
		if len(rs) == 0 {
			// Never ran (interrupted, or stopped before it): no table, so
			// that no average of 0 reads as a measurement.
			fmt.Fprintf(&b, "# fabriclab %s_perf:%s variant %s (%s): no results\n", test, scen, name, safetext.Terminal(v.Collective))
			continue
		}
		where, device := "simulated", "sim"
		if opt.OnHosts || HostsOf(rs) != nil {
			where, device = "on real hosts", "host"
		}
		rankCount := ""
		if ranks > 0 { // rows that failed before the job was built have none
			rankCount = fmt.Sprintf(", %d ranks", ranks)
		}
		fmt.Fprintf(&b, "# fabriclab %s_perf:%s variant %s (%s%s, %s)\n", test, scen, name,
			safetext.Terminal(v.Collective), rankCount, where)
		minB, maxB, step, stepKind := sizeSteps(rs)
		validation, wrong := 1, "0"
		if opt.NoCheck {
			validation, wrong = 0, "N/A"
		}
		fmt.Fprintf(&b, "# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n",
			minB, maxB, step, stepKind, pv.Warmup, iters, validation)
		b.WriteString("#\n# Using devices\n")
		for r := range ranks {
			fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] fabriclab rank\n", r, 0, "fabriclab", r, device)
		}
		b.WriteString("#\n")
		writeNCCLHeader(&b)
		redop, root := "none", -1
		switch v.Collective {
		case "allreduce", "reduce", "reducescatter":
			redop = op
		}
		switch v.Collective {
		case "broadcast", "reduce", "gather", "scatter":
			root = pv.Root
		}
		var sum float64
		var n int
		for _, r := range rs {
			if r.Error != "" || !r.Complete {
				why := "incomplete: time limit reached or interrupted"
				if r.Error != "" {
					why = "failed: " + oneLine(r.Error)
				}
				fmt.Fprintf(&b, "# %10d  %s\n", r.SizeBytes, safetext.Terminal(why))
				continue
			}
			fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d", r.SizeBytes, ncclCount(v.Collective, r.SizeBytes, tsize, r.Ranks), typeName, redop, root)
			for range 2 { // out-of-place, then in-place: the same run
				fmt.Fprintf(&b, "  %7s  %6.2f  %6.2f  %5s", ncclTime(r.CCTS), r.AlgBWGBps, r.BusBWGBps, wrong)
			}
			b.WriteString("\n")
			sum += r.BusBWGBps
			n++
		}
		avg := 0.0
		if n > 0 {
			avg = sum / float64(n)
		}
		b.WriteString("# Out of bounds values : 0 OK\n")
		avgText := strconv.FormatFloat(avg, 'g', 6, 64)
		if n == 0 {
			avgText = "n/a (no complete size)" // not a measured 0
		}
		fmt.Fprintf(&b, "# Avg bus bandwidth    : %s \n", avgText)
		b.WriteString("#\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// ncclCount is nccl-tests' count column: the elements each rank passes
// the collective (its paramcount), the size over the type's size, and
// over the ranks too where each rank's buffer is one block of the size
// (all-gather, reduce-scatter, all-to-all, gather, scatter).
func ncclCount(collective string, size, tsize int64, ranks int) int64 {
	count := size / tsize
	if workload.BlockCollective(collective) {
		count /= int64(max(ranks, 1))
	}
	return count
}

// writeNCCLHeader writes nccl-tests' three column header lines.
func writeNCCLHeader(b *strings.Builder) {
	fmt.Fprintf(b, "# %10s  %12s  %8s  %6s  %6s%s\n", "", "", "", "", "",
		"           out-of-place                       in-place          ")
	fmt.Fprintf(b, "# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root")
	for range 2 {
		fmt.Fprintf(b, "  %7s  %6s  %6s %6s", "time", "algbw", "busbw", "#wrong")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "# %10s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "")
	for range 2 {
		fmt.Fprintf(b, "  %7s  %6s  %6s %6s", "(us)", "(GB/s)", "(GB/s)", "")
	}
	b.WriteString("\n")
}

// ncclTime is a time in microseconds as nccl-tests prints it: %7.0f from
// 10 ms, %7.1f from 100 us, %7.2f below.
func ncclTime(s float64) string {
	us := s * 1e6
	switch {
	case us >= 10000:
		return fmt.Sprintf("%7.0f", us)
	case us >= 100:
		return fmt.Sprintf("%7.1f", us)
	}
	return fmt.Sprintf("%7.2f", us)
}

// sizeSteps describes the sizes as nccl-tests' parameter line does: the
// smallest, the largest and the factor between consecutive sizes (or the
// step in bytes when they grow by a constant; 0(bytes) otherwise).
func sizeSteps(rs []metrics.SizeResult) (minB, maxB, step int64, kind string) {
	var sizes []int64
	for _, r := range rs {
		if len(sizes) == 0 || sizes[len(sizes)-1] != r.SizeBytes {
			sizes = append(sizes, r.SizeBytes)
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	if len(sizes) == 0 {
		return 0, 0, 0, "bytes"
	}
	minB, maxB = sizes[0], sizes[len(sizes)-1]
	if len(sizes) == 1 {
		return minB, maxB, 1, "factor"
	}
	if f := float64(sizes[1]) / float64(sizes[0]); f == math.Trunc(f) && f > 1 {
		ok := true
		for i := 1; i < len(sizes); i++ {
			ok = ok && sizes[i] == sizes[i-1]*int64(f)
		}
		if ok {
			return minB, maxB, int64(f), "factor"
		}
	}
	d := sizes[1] - sizes[0]
	for i := 1; i < len(sizes); i++ {
		if sizes[i]-sizes[i-1] != d {
			return minB, maxB, 0, "bytes"
		}
	}
	return minB, maxB, d, "bytes"
}
