package report

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"fabriclab/metrics"
)

// ncclLine is a data line of nccl-tests output as the usual scripts read
// it: the whitespace-separated fields, with where each ends (the columns
// are right-aligned).
type ncclLine struct {
	fields []string
	ends   []int
}

var fieldRe = regexp.MustCompile(`\S+`)

// parseNCCL reads nccl-tests output the way scripts that parse it do:
// lines starting with # are comments, the others are data lines of 13
// fields (size count type redop root, then time algbw busbw #wrong twice);
// the footer gives the out-of-bounds count and the average bus bandwidth.
func parseNCCL(t *testing.T, text string) (header []string, lines []ncclLine, oob string, avg float64) {
	t.Helper()
	avg = -1
	oobRe := regexp.MustCompile(`^# Out of bounds values : (\d+) (OK|FAILED)$`)
	avgRe := regexp.MustCompile(`^# Avg bus bandwidth    : ([0-9.eE+-]+) $`)
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.Contains(l, "out-of-place") || strings.Contains(l, "#wrong") || strings.Contains(l, "(elements)"):
			header = append(header, l)
		case oobRe.MatchString(l):
			oob = oobRe.FindStringSubmatch(l)[1] + " " + oobRe.FindStringSubmatch(l)[2]
		case avgRe.MatchString(l):
			v, err := strconv.ParseFloat(avgRe.FindStringSubmatch(l)[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			avg = v
		case l == "" || strings.HasPrefix(l, "#"):
		default:
			var nl ncclLine
			for _, m := range fieldRe.FindAllStringIndex(l, -1) {
				nl.fields = append(nl.fields, l[m[0]:m[1]])
				nl.ends = append(nl.ends, m[1])
			}
			lines = append(lines, nl)
		}
	}
	return header, lines, oob, avg
}

// ncclSample is the captured all_reduce_perf run in testdata (16 ranks,
// -b 8M -e 1G -f 2 -n 20 -w 5) turned into results: its out-of-place
// times.
func ncclSample(t *testing.T) (string, Output) {
	t.Helper()
	b, err := os.ReadFile("testdata/nccl-tests-all_reduce_perf.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, lines, _, _ := parseNCCL(t, string(b))
	v := VariantResult{Name: "base", Collective: "allreduce"}
	for _, l := range lines {
		size, _ := strconv.ParseInt(l.fields[0], 10, 64)
		us, _ := strconv.ParseFloat(l.fields[5], 64)
		r := metrics.SizeResult{}
		r.SizeBytes, r.Ranks, r.CCTS, r.Complete, r.Iterations = size, 16, us*1e-6, true, 20
		r.Finish(metrics.AllReduce)
		v.Results = append(v.Results, r)
	}
	return string(b), Output{Scenario: "nccl-all_reduce", Variants: []VariantResult{v}}
}

// The nccl-tests format puts every field where nccl-tests does: the three
// header lines are nccl-tests' own, byte for byte, every data line has its
// 13 fields ending in the same columns as in a captured nccl-tests run,
// and the footer lines match the patterns scripts look for.
func TestNCCLTestsFormatMatchesCapturedOutput(t *testing.T) {
	sample, o := ncclSample(t)
	var b bytes.Buffer
	if err := WriteNCCLTests(&b, o, NCCLOptions{Variants: map[string]NCCLVariant{"base": {Warmup: 5}}}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	wantHead, wantLines, _, _ := parseNCCL(t, sample)
	head, lines, oob, avg := parseNCCL(t, got)
	if strings.Join(head, "\n") != strings.Join(wantHead, "\n") || len(head) != 3 {
		t.Errorf("header lines differ from nccl-tests':\n%s\nwant\n%s", strings.Join(head, "\n"), strings.Join(wantHead, "\n"))
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("%d data lines, want %d:\n%s", len(lines), len(wantLines), got)
	}
	for i, l := range lines {
		w := wantLines[i]
		if len(l.fields) != 13 {
			t.Fatalf("line %d has %d fields, want 13: %v", i, len(l.fields), l.fields)
		}
		for k := range l.ends {
			if l.ends[k] != w.ends[k] {
				t.Errorf("line %d field %d (%s) ends at column %d, nccl-tests' at %d", i, k, l.fields[k], l.ends[k], w.ends[k])
			}
		}
		// size, count, type, redop, root, time are the sample's; the
		// bandwidths follow from them (the sample rounds the time).
		for _, k := range []int{0, 1, 2, 3, 4, 5, 8} {
			if l.fields[k] != w.fields[k] {
				t.Errorf("line %d field %d = %q, want %q", i, k, l.fields[k], w.fields[k])
			}
		}
		if strings.Join(l.fields[5:9], " ") != strings.Join(l.fields[9:13], " ") {
			t.Errorf("line %d: in-place %v differs from out-of-place %v", i, l.fields[9:13], l.fields[5:9])
		}
	}
	if oob != "0 OK" {
		t.Errorf("out of bounds %q, want 0 OK", oob)
	}
	var sum float64
	for _, r := range o.Variants[0].Results {
		sum += r.BusBWGBps
	}
	if want, _ := strconv.ParseFloat(strconv.FormatFloat(sum/float64(len(lines)), 'g', 6, 64), 64); avg != want {
		t.Errorf("avg bus bandwidth %v, want %v", avg, want)
	}
	for _, s := range []string{
		"# nThread 1 nGpus 1 minBytes 8388608 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n",
		"#  Rank 15 Group  0 Pid      0 on  fabriclab device 15 [sim] fabriclab rank\n",
		"     8388608       2097152     float     sum      -1    609.7   13.76   25.80      0    609.7   13.76   25.80      0\n",
		"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : ",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
}

// The count column is what nccl-tests prints, each rank's count: the
// size over the type, and over the ranks for the collectives whose ranks
// each pass one block (1 MiB of floats on 8 ranks: 262144 for all-reduce,
// 32768 for all-gather; it was 262144 for both).
func TestNCCLTestsCount(t *testing.T) {
	for coll, want := range map[string]int64{"allreduce": 262144, "broadcast": 262144, "reduce": 262144,
		"allgather": 32768, "reducescatter": 32768, "alltoall": 32768, "gather": 32768, "scatter": 32768} {
		if got := ncclCount(coll, 1<<20, 4, 8); got != want {
			t.Errorf("%s: count %d, want %d", coll, got, want)
		}
	}
	r := metrics.SizeResult{}
	r.SizeBytes, r.Ranks, r.CCTS, r.Complete = 1<<20, 8, 1e-3, true
	r.Finish(metrics.AllGather)
	var b bytes.Buffer
	if err := WriteNCCLTests(&b, Output{Variants: []VariantResult{{Name: "ag", Collective: "allgather", Results: []metrics.SizeResult{r}}}}, NCCLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "     1048576         32768     float    none      -1") {
		t.Errorf("all-gather line:\n%s", b.String())
	}
}

// Rows that did not complete are comments (outside the average), a kind
// that is not a collective says so, the root and redop columns follow the
// collective, and the data type sets the count.
func TestNCCLTestsFormatEdges(t *testing.T) {
	mk := func(size int64, complete bool, errText string) metrics.SizeResult {
		r := metrics.SizeResult{}
		r.SizeBytes, r.Ranks, r.CCTS, r.Complete, r.Error = size, 8, 1e-3, complete, errText
		r.Finish(metrics.Broadcast)
		return r
	}
	onHosts := mk(1<<20, true, "")
	onHosts.Hosts = &metrics.HostsRun{Engine: "hosts"}
	o := Output{Variants: []VariantResult{
		{Name: "bc", Collective: "broadcast", Results: []metrics.SizeResult{mk(1<<20, true, ""), mk(2<<20, false, ""), mk(4<<20, false, "boom")}},
		{Name: "in", Collective: "incast", Results: []metrics.SizeResult{mk(1<<20, true, "")}},
		{Name: "never", Collective: "alltoall", Results: []metrics.SizeResult{}},
		{Name: "failed", Collective: "alltoall", Results: []metrics.SizeResult{mk(1<<20, false, "wrong token")}},
		{Name: "real", Collective: "alltoall", Results: []metrics.SizeResult{onHosts}},
	}}
	var b bytes.Buffer
	if err := WriteNCCLTests(&b, o, NCCLOptions{DataType: "half", Variants: map[string]NCCLVariant{"bc": {Root: 3}}}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, s := range []string{
		"     1048576        524288      half    none       3   1000.0    1.05    1.05      0   1000.0    1.05    1.05      0\n",
		"#    2097152  incomplete: time limit reached or interrupted\n",
		"#    4194304  failed: boom\n",
		"# Avg bus bandwidth    : 1.04858 \n",
		"# fabriclab: variant in runs incast, a traffic pattern and not an NCCL collective",
		"step: 2(factor)",
		"(broadcast, 8 ranks, simulated)\n",
		"# fabriclab alltoall_perf: variant never (alltoall): no results\n\n# fabriclab alltoall_perf: variant failed (alltoall, 8 ranks, simulated)\n",
		"#    1048576  failed: wrong token\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : n/a (no complete size) \n",
		"# fabriclab alltoall_perf: variant real (alltoall, 8 ranks, on real hosts)\n",
		"#  Rank  7 Group  0 Pid      0 on  fabriclab device  7 [host] fabriclab rank\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
	if n := strings.Count(got, "# Avg bus bandwidth"); n != 3 {
		t.Errorf("%d averages, want 3 (none for a variant without results):\n%s", n, got)
	}
	if err := WriteNCCLTests(&b, o, NCCLOptions{DataType: "float128"}); err == nil || !strings.Contains(err.Error(), "bfloat16") {
		t.Errorf("unknown type: %v", err)
	}
}

func TestKindOfNCCLTest(t *testing.T) {
	for name, want := range map[string]string{"all_reduce": "allreduce", "all_reduce_perf": "allreduce", "allreduce": "allreduce",
		"all_gather": "allgather", "alltoall": "alltoall", "broadcast": "broadcast", "reduce": "reduce",
		"reduce_scatter": "reducescatter", "sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter", "reduce-scatter": "reducescatter"} {
		if got, err := KindOfNCCLTest(name); got != want || err != nil {
			t.Errorf("KindOfNCCLTest(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"hypercube", "all_to_all", "allreduce2", ""} {
		if _, err := KindOfNCCLTest(name); err == nil || !strings.Contains(err.Error(), "all_reduce, all_gather, alltoall") {
			t.Errorf("KindOfNCCLTest(%q) = %v, want an error listing the names", name, err)
		}
	}
}
