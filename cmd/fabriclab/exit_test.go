package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// withTimeLimit gives every job of p a scenario with sim.time_limit = d.
func withTimeLimit(p *plan, d units.Duration) *plan {
	spec := &scenario.Scenario{}
	spec.Sim.TimeLimit = d
	for i := range p.Jobs {
		p.Jobs[i].Spec = spec
	}
	return p
}

// timeLimitedRun runs out of simulated time for the jobs in slow
// ("variant/sizeIndex"): a partial result and no error, as lab.Run gives.
func timeLimitedRun(slow ...string) JobFunc {
	return func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		r := fakeResult(j)
		for _, s := range slow {
			if s == j.Variant+"/"+string(rune('0'+j.SizeIndex)) {
				r.Complete = false
			}
		}
		return r, nil
	}
}

func TestRunTimeLimitExit3(t *testing.T) {
	p := withTimeLimit(testPlan(2, 3), 2*units.Millisecond)
	a, stdout, stderr := newTestApp(p, timeLimitedRun("v0/1", "v1/2"))
	dir := t.TempDir()
	jsonPath, csvPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code := a.execute(context.Background(), []string{"run", "--no-store", "-j", "3", "--json", jsonPath, "--csv", csvPath, "x.yaml"})
	if code != exitTimeLimit || exitTimeLimit != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, stderr)
	}
	var limitLines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "fabriclab: ") {
			limitLines = append(limitLines, l)
		}
	}
	want := []string{
		"fabriclab: v0 16MiB: stopped at the simulated time limit (sim.time_limit=2ms); its row is incomplete (*)",
		"fabriclab: v1 32MiB: stopped at the simulated time limit (sim.time_limit=2ms); its row is incomplete (*)",
	}
	if strings.Join(limitLines, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr lines:\n%s\nwant:\n%s", strings.Join(limitLines, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Count(stderr.String(), "hit the simulated time limit after"); got != 2 {
		t.Errorf("%d progress lines about the time limit, want 2:\n%s", got, stderr)
	}
	// All outputs are still written, the two rows marked incomplete.
	if got := strings.Count(stdout.String(), " *\n"); got != 2 {
		t.Errorf("%d rows marked incomplete, want 2:\n%s", got, stdout)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Interrupted bool `json:"interrupted"`
		Variants    []struct {
			Results []metrics.SizeResult `json:"results"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Interrupted || len(out.Variants) != 2 || len(out.Variants[0].Results) != 3 || len(out.Variants[1].Results) != 3 {
		t.Fatalf("json: %+v", out)
	}
	if out.Variants[0].Results[1].Complete || out.Variants[1].Results[2].Complete || !out.Variants[0].Results[0].Complete {
		t.Errorf("complete flags wrong: %+v", out.Variants)
	}
	if c, err := os.ReadFile(csvPath); err != nil || strings.Count(string(c), "\n") != 7 {
		t.Errorf("csv: %v\n%s", err, c)
	}

	// Quiet: the lines explain the exit code, so they stay.
	a, _, stderr = newTestApp(withTimeLimit(testPlan(1, 2), units.Second), timeLimitedRun("v0/0"))
	if code := a.execute(context.Background(), []string{"run", "-q", "x.yaml"}); code != 3 {
		t.Errorf("quiet: exit %d", code)
	}
	if want := "fabriclab: v0 8MiB: stopped at the simulated time limit (sim.time_limit=1s); its row is incomplete (*)\n"; stderr.String() != want {
		t.Errorf("quiet: stderr %q, want %q", stderr, want)
	}

	// A row from real hosts ran its limit at the agents file's scale.
	onHosts := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		r, err := timeLimitedRun("v0/0")(ctx, j, progress)
		r.Hosts = &metrics.HostsRun{Engine: "hosts", Scale: 0.001}
		return r, err
	}
	a, _, stderr = newTestApp(withTimeLimit(testPlan(1, 2), units.Second), onHosts)
	if code := a.execute(context.Background(), []string{"run", "-q", "x.yaml"}); code != 3 {
		t.Errorf("on hosts: exit %d", code)
	}
	if want := "fabriclab: v0 8MiB: stopped at its time limit on real hosts (sim.time_limit=1s at scale 0.001); its row is incomplete (*)\n"; stderr.String() != want {
		t.Errorf("on hosts: stderr %q, want %q", stderr, want)
	}
}

func TestRunTimeLimitAndFailureExit1(t *testing.T) {
	// A failed job is worse than a time limit: exit 1, both reported.
	p := withTimeLimit(testPlan(1, 3), units.Second)
	slow := timeLimitedRun("v0/0")
	run := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 2 {
			return metrics.SizeResult{}, errors.New("boom")
		}
		return slow(ctx, j, progress)
	}
	a, _, stderr := newTestApp(p, run)
	if code := a.execute(context.Background(), []string{"run", "-q", "x.yaml"}); code != exitError {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, s := range []string{"v0 8MiB: stopped at the simulated time limit", "v0 32MiB: boom", "1 of 3 jobs failed"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	if strings.Contains(stderr.String(), "v0 32MiB: stopped at the simulated") {
		t.Errorf("failed job reported as timed out:\n%s", stderr)
	}
}

func TestRunInterruptedIsNotTimeLimit(t *testing.T) {
	// Jobs stopped by Ctrl-C are incomplete too, but not for lack of
	// simulated time: no time-limit line, exit 130.
	p := withTimeLimit(testPlan(1, 4), units.Second)
	started := make(chan int, 4)
	a, _, stderr := newTestApp(p, blockingRun(1, started))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-started; cancel() }()
	if code := a.execute(ctx, []string{"run", "-j", "1", "--json", "-", "x.yaml"}); code != exitInterrupted {
		t.Fatalf("exit %d, want 130:\n%s", code, stderr)
	}
	if strings.Contains(stderr.String(), "time limit") {
		t.Errorf("interrupted job reported as timed out:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "v0 16MiB stopped after ") {
		t.Errorf("no 'stopped' progress line:\n%s", stderr)
	}
}

// The real simulator with a time limit far too short to finish.
func TestRunRealTimeLimitExit3(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	code := a.execute(context.Background(), []string{"run", "../../examples/incast.yaml", "-q", "-j", "2",
		"--set", "workload.sizes.list=[64KiB]", "--set", "sim.time_limit=1us", "--json", jsonPath})
	if code != exitTimeLimit {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "64KiB: stopped at the simulated time limit (sim.time_limit=1us); its row is incomplete (*)\n") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat(jsonPath); err != nil {
		t.Errorf("JSON not written: %v", err)
	}
}

// countingRun counts the jobs it runs.
func countingRun(n *atomic.Int32) JobFunc {
	return func(ctx context.Context, j scenario.Job, p lab.Progress) (metrics.SizeResult, error) {
		n.Add(1)
		return fakeResult(j), nil
	}
}

func TestRunBadOutputFailsBeforeAnyJob(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--json", dir}, "it is a directory"},
		{[]string{"--csv", dir + "/"}, "it is a directory"},
		{[]string{"--json", "/proc/x.json"}, "cannot write /proc/x.json: "},
		{[]string{"--json", "/proc/version"}, "cannot write /proc/version: it would be replaced by renaming a new file over it, and no file can be created in /proc"},
		{[]string{"--json", filepath.Join(dir, "no", "r.json")}, "does not exist"},
		{[]string{"--csv", filepath.Join(notDir, "r.csv")}, "does not exist"},
		{[]string{"--json", "-", "--csv", dir}, "it is a directory"},
	}
	for _, c := range cases {
		var ran atomic.Int32
		a, stdout, stderr := newTestApp(testPlan(2, 2), countingRun(&ran))
		code := a.execute(context.Background(), append([]string{"run"}, append(c.args, "x.yaml")...))
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != exitError || ran.Load() != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "fabriclab: ") ||
			!strings.Contains(lines[0], c.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, %d jobs ran, stdout %q, stderr %q (want one line with %q)",
				c.args, code, ran.Load(), stdout, stderr, c.want)
		}
	}

	// Both flags naming one file is a usage error.
	a, _, stderr := newTestApp(testPlan(1, 1), quickRun)
	p := filepath.Join(dir, "r.out")
	if code := a.execute(context.Background(), []string{"run", "--json", p, "--csv", p, "x.yaml"}); code != exitUsage {
		t.Errorf("same file: exit %d, stderr %q", code, stderr)
	}
	// So is a --set or --sweep without key= (it exited 1, as a bad value
	// does), on every command that takes them.
	for _, args := range [][]string{{"run", "--set", "=5"}, {"run", "--set", "nokey"}, {"run", "--sweep", "nic.mtu"},
		{"validate", "--set", " =1"}, {"analyze", "--set", "x"}, {"nccl", "alltoall", "--set", "x"}} {
		var ran atomic.Int32
		a, _, stderr := newTestApp(testPlan(1, 1), countingRun(&ran))
		if args[0] != "nccl" {
			args = append(args, "x.yaml")
		}
		if code := a.execute(context.Background(), args); code != exitUsage || ran.Load() != 0 || !strings.Contains(stderr.String(), ": needs key=") {
			t.Errorf("%v: exit %d, %d jobs ran, stderr %q", args, code, ran.Load(), stderr)
		}
	}
	// --seed beside --set seed= (--seed won whatever the order).
	for _, args := range [][]string{{"run", "--set", "seed=3", "--seed", "5", "x.yaml"}, {"nccl", "alltoall", "--seed", "5", "--set", " seed =3"}} {
		var ran atomic.Int32
		a, _, stderr := newTestApp(testPlan(1, 1), countingRun(&ran))
		if code := a.execute(context.Background(), args); code != exitUsage || ran.Load() != 0 || !strings.Contains(stderr.String(), "both set the seed; give one") {
			t.Errorf("%v: exit %d, %d jobs ran, stderr %q", args, code, ran.Load(), stderr)
		}
	}
}

func TestCheckOutputLeavesFilesAlone(t *testing.T) {
	dir := t.TempDir()
	// A new path is created to prove it can be, then removed.
	fresh := filepath.Join(dir, "new.json")
	if err := checkOutput(fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("check left %s behind (%v)", fresh, err)
	}
	// An existing file keeps its content.
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("previous result"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(old); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "previous result" {
		t.Errorf("check changed the file: %q", b)
	}
	if err := checkOutput(os.DevNull); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	assertOnly(t, dir, "old.json")
}

// assertOnly checks that dir holds exactly names (no temporary files).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func TestWriteToIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("previous result"), 0o640); err != nil {
		t.Fatal(err)
	}
	// A write that fails halfway leaves the previous result and no
	// temporary file.
	err := writeTo(nil, path, func(w io.Writer) error {
		io.WriteString(w, "half of a new")
		return errors.New("disk full")
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "previous result" {
		t.Errorf("failed write clobbered the file: %q", b)
	}
	assertOnly(t, dir, "r.json")

	// A good write replaces it whole and keeps its mode.
	if err := writeTo(nil, path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	assertOnly(t, dir, "r.json")

	// Through a symlink: the target is replaced, the link kept.
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("r.json", link); err != nil {
		t.Fatal(err)
	}
	if err := writeTo(nil, link, func(w io.Writer) error { _, err := io.WriteString(w, "via link"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "via link" {
		t.Errorf("target content %q", b)
	}

	// A device is written directly.
	if err := writeTo(nil, os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s replaced: %v %v", os.DevNull, st, err)
	}
}

func TestReporterChoice(t *testing.T) {
	for _, c := range []struct {
		quiet, tty bool
		width      int
		want       string
	}{
		{false, false, 0, "*main.lineReporter"},
		{false, false, 120, "*main.lineReporter"},
		{false, true, 0, "*main.lineReporter"}, // e.g. under script(1) without stty cols
		{false, true, 80, "*main.barReporter"},
		{true, true, 80, "<nil>"},
	} {
		a, _, _ := newTestApp(testPlan(1, 1), quickRun)
		a.isTerminal = func(io.Writer) bool { return c.tty }
		a.termWidth = func(io.Writer) int { return c.width }
		if got := typeName(a.reporter(c.quiet)); got != c.want {
			t.Errorf("quiet %v tty %v width %d: %s, want %s", c.quiet, c.tty, c.width, got, c.want)
		}
	}
	// A zero-width "terminal" run end to end gives plain lines.
	a, _, stderr := newTestApp(testPlan(1, 2), quickRun)
	a.isTerminal = func(io.Writer) bool { return true }
	a.termWidth = func(io.Writer) int { return 0 }
	if code := a.execute(context.Background(), []string{"run", "x.yaml"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Jobs finish in either order: look for the last line, whichever it is.
	if !strings.Contains(stderr.String(), "[2/2] v0 ") || !strings.Contains(stderr.String(), " done in ") {
		t.Errorf("no plain progress lines:\n%s", stderr)
	}
	// Not a terminal, or not a file at all: width 0.
	if w := termWidth(&bytes.Buffer{}); w != 0 {
		t.Errorf("termWidth(buffer) = %d", w)
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w := termWidth(f); w != 0 {
		t.Errorf("termWidth(file) = %d", w)
	}
}

func typeName(r Reporter) string {
	switch r.(type) {
	case nil:
		return "<nil>"
	case *lineReporter:
		return "*main.lineReporter"
	case *barReporter:
		return "*main.barReporter"
	}
	return "other"
}
