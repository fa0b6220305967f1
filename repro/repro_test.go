// Package repro checks the README's reproductions ("Results and
// reproductions") by running the fabriclab CLI as a user would, one
// testdata/*.txt file per reproduction:
//
//	# What it reproduces and the published numbers (comment lines).
//	scenario: ../../examples/alltoall-dcqcn.yaml   (relative to the file; default: the embedded scenario.yaml)
//	set: workload.sizes.list=[256MiB]             (as --set; repeatable)
//	sweep: switch.ecmp_seed=1..20                 (as --sweep, a..b counts; repeatable)
//	slow: why                                     (skipped with go test -short)
//
//	-- scenario.yaml --                           (an embedded file, written beside the scenario)
//	…
//	-- run ARGS | FILTER --                       (a command; ARGS are more CLI flags)
//	claim, one per line (# comments)
//	----
//	the expected output
//
// "run" is fabriclab run (--no-store, --json to read the results) on the
// scenario; "analyze" is fabriclab analyze (the flow-level max-min view)
// once per variant and sweep point (--variant NAME restricts it to one
// variant's points). The expected output is what the CLI prints on stdout,
// after a "$ fabriclab …" line naming the command, lines' trailing spaces
// and the output's trailing blank lines aside; "| grep RE" keeps the lines
// that match RE, "| from RE" the lines from the first match on. go test
// -run TestReproductions -update rewrites it.
//
// Claims (see claims_test.go) compare variant.metric, a path into the
// command's JSON row for that variant (run: a result row of --json;
// analyze: the --json analysis), with numbers or each other:
//
//	tuned-final.cct_s <= 1.05 * pfc-only.cct_s
//	0.09 <= shared.flows[dst%8==0].rate.min <= 0.11
//	2 <= median(ecmp.flows_records.stretch.max) <= 3
//
// A path is keys and indexes (slowdown_by_size.0.slowdown.p99), a key of
// every element of a list (flows.rate), [field op value] filters on a list
// (field%k compares field modulo k), and last .min, .max, .mean, .median,
// .sum, .count or .frac (the share its filters kept) over a list; true is 1.
// The variant * is every result; a variant with sweep points (or several
// sizes) has one value per point, and the claim must hold for each unless
// an aggregate (median, min, max, mean) combines them. Every flow of a run's flows_records (sim.record_flows) and
// of an analysis's flows also has two derived fields: rate, its payload
// rate as a fraction of its source NIC's payload line rate, and stretch, its
// time over its time at an equal share of that NIC (1 / (n × rate), n the
// flows from the same source).
package repro

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fabriclab/scenario"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/*.txt")

func TestReproductions(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.txt (%v)", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			t.Parallel()
			f, err := parseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.slow != "" && testing.Short() {
				t.Skip(f.slow)
			}
			f.check(t)
		})
	}
}

// reproFile is a parsed testdata file.
type reproFile struct {
	path         string
	lines        []string
	scenario     string // as written
	sets, sweeps []string
	slow         string
	files        [][2]string // embedded: name, text
	commands     []*command
}

type command struct {
	line   int    // of the header, 1-based
	name   string // run or analyze
	args   []string
	filter func([]string) []string
	claims []claimLine
	sep    int    // index of the "----" line; -1 without one
	out    [2]int // the expected output's lines [from, to)
	at     int    // where to insert "----" and the output without one
}

type claimLine struct {
	line int
	claim
}

func parseFile(path string) (*reproFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &reproFile{path: path, lines: strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")}
	errAt := func(i int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", path, i+1, fmt.Sprintf(format, a...))
	}
	i := 0
	for ; i < len(f.lines) && !isHeader(f.lines[i]); i++ {
		l := strings.TrimSpace(f.lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		val = strings.TrimSpace(val)
		switch {
		case !ok || val == "":
			return nil, errAt(i, "want key: value (scenario, set, sweep, slow) or a # comment, got %q", l)
		case key == "scenario" && f.scenario == "":
			f.scenario = val
		case key == "set":
			f.sets = append(f.sets, val)
		case key == "sweep":
			f.sweeps = append(f.sweeps, expandRange(val))
		case key == "slow":
			f.slow = val
		default:
			return nil, errAt(i, "unknown or repeated directive %q", key)
		}
	}
	for i < len(f.lines) {
		head := strings.TrimSpace(f.lines[i][3 : len(f.lines[i])-3])
		start := i
		for i++; i < len(f.lines) && !isHeader(f.lines[i]); i++ {
		}
		body := f.lines[start+1 : i]
		words, filter, err := parseHeader(head)
		if err != nil {
			return nil, errAt(start, "%v", err)
		}
		if words[0] != "run" && words[0] != "analyze" {
			if len(words) != 1 || filter != nil || strings.ContainsAny(head, `/\`) {
				return nil, errAt(start, "want -- run … --, -- analyze … -- or -- FILE --, got %q", head)
			}
			f.files = append(f.files, [2]string{head, strings.Join(trimBlank(body), "\n") + "\n"})
			continue
		}
		c := &command{line: start + 1, name: words[0], args: words[1:], filter: filter, sep: -1}
		for k, l := range body {
			j := start + 1 + k
			if l == "----" {
				c.sep = j
				c.out = [2]int{j + 1, j + 1 + len(trimBlank(body[k+1:]))}
				break
			}
			if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			cl, err := parseClaim(l)
			if err != nil {
				return nil, errAt(j, "claim %s: %v", l, err)
			}
			c.claims = append(c.claims, claimLine{j + 1, cl})
			c.at = j + 1
		}
		if c.at == 0 {
			c.at = start + 1
		}
		f.commands = append(f.commands, c)
	}
	if len(f.commands) == 0 {
		return nil, fmt.Errorf("%s: no -- run -- or -- analyze -- section", path)
	}
	if f.scenario == "" {
		f.scenario = "scenario.yaml"
	}
	return f, nil
}

func isHeader(l string) bool {
	return len(l) > 6 && strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --")
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// parseHeader splits "run ARGS | grep RE" into words and a line filter.
func parseHeader(head string) ([]string, func([]string) []string, error) {
	words, err := shellSplit(head)
	if err != nil || len(words) == 0 {
		return nil, nil, fmt.Errorf("section %q: %v", head, err)
	}
	k := slices.Index(words, "|")
	if k < 0 {
		return words, nil, nil
	}
	pipe := words[k+1:]
	if len(pipe) != 2 || pipe[0] != "grep" && pipe[0] != "from" {
		return nil, nil, fmt.Errorf("want | grep RE or | from RE, got | %s", strings.Join(pipe, " "))
	}
	re, err := regexp.Compile(pipe[1])
	if err != nil {
		return nil, nil, err
	}
	grep := pipe[0] == "grep"
	return words[:k], func(lines []string) []string {
		var kept []string
		for _, l := range lines {
			if re.MatchString(l) || !grep && len(kept) > 0 {
				kept = append(kept, l)
			}
		}
		return kept
	}, nil
}

// shellSplit splits s at spaces outside single or double quotes.
func shellSplit(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

var rangeRE = regexp.MustCompile(`^([^=]+=)(-?\d+)\.\.(-?\d+)$`)

// expandRange turns key=a..b into key=a,a+1,…,b.
func expandRange(sweep string) string {
	m := rangeRE.FindStringSubmatch(sweep)
	if m == nil {
		return sweep
	}
	a, _ := strconv.Atoi(m[2])
	b, _ := strconv.Atoi(m[3])
	var vs []string
	for v := a; v <= b; v++ {
		vs = append(vs, strconv.Itoa(v))
	}
	return m[1] + strings.Join(vs, ",")
}

// check runs every command of the file, compares its output and checks its
// claims; with -update it rewrites the expected outputs.
func (f *reproFile) check(t *testing.T) {
	bin := fabriclab(t)
	tmp := t.TempDir()
	name := filepath.Base(f.path)
	for _, e := range f.files {
		if err := os.WriteFile(filepath.Join(tmp, e[0]), []byte(e[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The CLI runs in the file's directory; an embedded scenario is given
	// by its absolute path.
	scen := f.scenario
	if slices.ContainsFunc(f.files, func(e [2]string) bool { return e[0] == f.scenario }) {
		scen = filepath.Join(tmp, f.scenario)
	} else if !filepath.IsAbs(scen) {
		scen = filepath.Join(filepath.Dir(f.path), scen)
	}
	scen, err := filepath.Abs(scen)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadOptions(scen, scenario.Options{Sets: f.sets, Sweeps: f.sweeps})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	x := &runner{t: t, bin: bin, dir: filepath.Dir(f.path), tmp: tmp, f: f, scen: scen, sc: sc}
	outputs := make([][]string, len(f.commands))
	ran := true
	for i, c := range f.commands {
		got, results, err := x.execute(c)
		if err != nil {
			t.Errorf("%s:%d: %s: %v", name, c.line, c.name, err)
			ran = false
			continue
		}
		outputs[i] = got
		switch want := f.lines[c.out[0]:c.out[1]]; {
		case *update:
		case c.sep < 0:
			t.Errorf("%s:%d: %s has no ---- and expected output; run go test -run TestReproductions -update", name, c.line, c.name)
		case !slices.Equal(normalize(want), got):
			t.Errorf("%s:%d: %s output differs from the file's (line %d on; -want +got; go test -run TestReproductions -update rewrites it):\n%s",
				name, c.line, c.name, c.out[0]+1, diff(normalize(want), got))
		}
		for _, cl := range c.claims {
			fails := cl.check(results)
			for _, msg := range fails {
				t.Errorf("%s:%d: claim %s: %s", name, cl.line, cl.text, msg)
			}
			if len(fails) == 0 {
				t.Logf("%s:%d: %s: %s", name, cl.line, cl.text, cl.describe(results))
			}
		}
	}
	if *update && ran {
		if err := f.rewrite(outputs); err != nil {
			t.Fatal(err)
		}
	}
}

func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t")
	}
	return trimBlank(out)
}

// rewrite puts each command's output in place of its expected output.
func (f *reproFile) rewrite(outputs [][]string) error {
	lines := slices.Clone(f.lines)
	for i := len(f.commands) - 1; i >= 0; i-- {
		c := f.commands[i]
		if c.sep >= 0 {
			lines = slices.Replace(lines, c.out[0], c.out[1], outputs[i]...)
			continue
		}
		ins := append([]string{"----"}, outputs[i]...)
		if c.at < len(lines) && strings.TrimSpace(lines[c.at]) != "" {
			ins = append(ins, "")
		}
		lines = slices.Insert(lines, c.at, ins...)
	}
	text := strings.Join(lines, "\n") + "\n"
	if text == strings.Join(f.lines, "\n")+"\n" {
		return nil
	}
	return os.WriteFile(f.path, []byte(text), 0o644)
}

// runner runs the CLI for one file.
type runner struct {
	t             *testing.T
	bin, dir, tmp string
	f             *reproFile
	scen          string // absolute
	sc            *scenario.File
	n             int // JSON files written
}

// shown is the command line a user would type (the scenario as the file
// names it), quoted for a shell.
func (x *runner) shown(args []string) string {
	q := make([]string, 0, len(args)+1)
	for _, a := range append(slices.Clone(args), x.f.scenario) {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return !strings.ContainsRune("_./=,:@%+-", r) && !isAlnum(r) }) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	return "$ fabriclab " + strings.Join(q, " ")
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// execute runs c and returns its output lines and results.
func (x *runner) execute(c *command) ([]string, []result, error) {
	var extra []string
	for _, s := range x.f.sets {
		extra = append(extra, "--set", s)
	}
	if c.name == "run" {
		for _, s := range x.f.sweeps {
			extra = append(extra, "--sweep", s)
		}
		args := append(append([]string{"run"}, c.args...), extra...)
		stdout, doc, err := x.cli(append([]string{"run", "--no-store"}, args[1:]...))
		if err != nil {
			return nil, nil, err
		}
		var out struct {
			Variants []struct {
				Name, Parent string
				Results      []map[string]any
			}
		}
		if err := json.Unmarshal(doc, &out); err != nil {
			return nil, nil, err
		}
		var results []result
		for _, v := range out.Variants {
			nic := x.nicRate(v.Name)
			for _, row := range v.Results {
				addFlowFields(row["flows_records"], func(m map[string]any) float64 {
					return num(m["bytes"]) / num(m["fct_s"]) / nic
				})
				results = append(results, result{name: v.Name, parent: v.Parent, row: row})
			}
		}
		return append([]string{x.shown(args)}, x.keep(c, stdout)...), labelSizes(results), nil
	}

	// analyze: once per variant (sweep point), the points of a sweep given
	// by the file's sweep: directives as --set.
	only, args := "", slices.Clone(c.args)
	if k := slices.Index(args, "--variant"); k >= 0 && k+1 < len(args) {
		only = args[k+1]
		args = slices.Delete(args, k, k+2)
	}
	own, err := scenario.LoadOptions(x.scen, scenario.Options{Sets: x.f.sets})
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var results []result
	for _, v := range x.sc.Variants {
		if only != "" && v.Name != only && v.Parent != only {
			continue
		}
		a := append([]string{"analyze"}, args...)
		switch {
		case slices.ContainsFunc(own.Variants, func(o scenario.Variant) bool { return o.Name == v.Name }):
			a = append(append(a, "--variant", v.Name), extra...)
		default:
			if v.Parent != "" {
				a = append(a, "--variant", v.Parent)
			}
			a = append(a, extra...)
			for _, sv := range v.Sweep {
				a = append(a, "--set", sv.Key+"="+sv.Value)
			}
		}
		stdout, doc, err := x.cli(a)
		if err != nil {
			return nil, nil, err
		}
		var row map[string]any
		if err := json.Unmarshal(doc, &row); err != nil {
			return nil, nil, err
		}
		addFlowFields(row["flows"], func(m map[string]any) float64 { return num(m["nic_pct"]) / 100 })
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(append(out, x.shown(a)), x.keep(c, stdout)...)
		results = append(results, result{name: v.Name, parent: v.Parent, row: row})
	}
	if len(results) == 0 {
		return nil, nil, fmt.Errorf("no variant %q", only)
	}
	return out, results, nil
}

// keep is stdout's lines after c's filter, normalized.
func (x *runner) keep(c *command, stdout string) []string {
	lines := strings.Split(stdout, "\n")
	if c.filter != nil {
		lines = c.filter(lines)
	}
	return normalize(lines)
}

// cli runs the binary with args (and --json FILE) in the file's directory
// and returns its stdout and the JSON it wrote.
func (x *runner) cli(args []string) (string, []byte, error) {
	x.n++
	js := filepath.Join(x.tmp, fmt.Sprintf("out%d.json", x.n))
	full := append(slices.Clone(args[:1]), "--json", js)
	full = append(append(full, args[1:]...), x.scen)
	cmd := exec.CommandContext(x.t.Context(), x.bin, full...)
	cmd.Dir = x.dir
	cmd.Env = append(os.Environ(), "FABRICLAB_DB="+filepath.Join(x.tmp, "runs.db"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("%s: %v\n%s", x.shown(args), err, lastLines(stderr.String(), 20))
	}
	doc, err := os.ReadFile(js)
	return stdout.String(), doc, err
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// nicRate is the payload line rate of a variant's NICs in bytes/s.
func (x *runner) nicRate(variant string) float64 {
	for _, v := range x.sc.Variants {
		if v.Name == variant && v.Spec != nil {
			n := v.Spec.NIC
			return float64(v.Spec.Topology.HostLink.Rate) / 8 * float64(n.MTU) / float64(n.MTU+n.Overhead)
		}
	}
	x.t.Fatalf("no variant %q in %s", variant, x.scen)
	return 0
}

// addFlowFields gives every flow of a JSON list its rate (rateOf) and
// stretch (1 / (n × rate), n the flows of the same source).
func addFlowFields(list any, rateOf func(map[string]any) float64) {
	flows, _ := list.([]any)
	perSrc := map[float64]int{}
	for _, e := range flows {
		if m, ok := e.(map[string]any); ok {
			perSrc[num(m["src"])]++
		}
	}
	for _, e := range flows {
		if m, ok := e.(map[string]any); ok {
			r := rateOf(m)
			m["rate"], m["stretch"] = r, 1/(float64(perSrc[num(m["src"])])*r)
		}
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// labelSizes names the results of a variant with several sizes after them.
func labelSizes(rs []result) []result {
	count := map[string]int{}
	for _, r := range rs {
		count[r.name]++
	}
	for i, r := range rs {
		if count[r.name] > 1 {
			rs[i].name = fmt.Sprintf("%s %.0fB", r.name, num(r.row["size_bytes"]))
			if rs[i].parent == "" {
				rs[i].parent = r.name
			}
		}
	}
	return rs
}

// diff shows where want and got differ: a line diff (longest common
// subsequence) with two lines of context, at most 60 lines.
func diff(want, got []string) string {
	n, m := len(want), len(got)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		c byte
		s string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			ops, i, j = append(ops, op{' ', want[i]}), i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops, i = append(ops, op{'-', want[i]}), i+1
		default:
			ops, j = append(ops, op{'+', got[j]}), j+1
		}
	}
	var b strings.Builder
	lines := 0
	for k, o := range ops {
		near := false
		for d := max(0, k-2); d <= min(len(ops)-1, k+2); d++ {
			near = near || ops[d].c != ' '
		}
		if !near {
			continue
		}
		if lines++; lines > 60 {
			b.WriteString("…\n")
			break
		}
		fmt.Fprintf(&b, "%c %s\n", o.c, o.s)
	}
	return b.String()
}

// fabriclab builds the CLI once for all files.
func fabriclab(t *testing.T) string {
	build.once.Do(func() {
		build.bin = filepath.Join(binDir, "fabriclab")
		out, err := exec.Command("go", "build", "-o", build.bin, "fabriclab/cmd/fabriclab").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

var (
	binDir string
	build  struct {
		once sync.Once
		bin  string
		err  error
	}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fabriclab-repro-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
