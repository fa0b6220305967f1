package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// testPlan is nv variants × ns sizes (8MiB, 16MiB, …), jobs in the order the
// loader would give them.
func testPlan(nv, ns int) *plan {
	p := &plan{Name: "test-scenario", Path: "test.yaml", Seed: 42}
	for v := range nv {
		name := fmt.Sprintf("v%d", v)
		p.Variants = append(p.Variants, planVariant{Name: name, Collective: "alltoall"})
		for s := range ns {
			p.Jobs = append(p.Jobs, scenario.Job{
				Scenario: p.Name, Variant: name, VariantIndex: v, SizeIndex: s,
				Size: units.Size(8<<20) << s, Seed: 42,
			})
		}
	}
	return p
}

// fakeResult is a deterministic function of the job.
func fakeResult(j scenario.Job) metrics.SizeResult {
	r := metrics.SizeResult{
		Completion: metrics.Completion{SizeBytes: int64(j.Size), Ranks: 8, Timing: metrics.Timing{
			CCTS:   float64(j.Size) / 40e9 * (1 + 0.1*float64(j.VariantIndex)),
			IdealS: float64(j.Size) / 50e9,
		}},
		FabricTotals: metrics.FabricTotals{PFCPauses: int64(j.VariantIndex*100 + j.SizeIndex)},
		Outcome:      metrics.Outcome{Complete: true},
	}
	r.Finish(metrics.AllToAll)
	return r
}

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// newTestApp returns an app that loads p and runs jobs with run, writing to
// buffers, never seeing a terminal.
func newTestApp(p *plan, run JobFunc) (*app, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.load = func(path string, sets, sweeps []string, _ string) (*plan, error) {
		if p == nil {
			return nil, fmt.Errorf("%s:3:7: unknown key \"topolgy\"", path)
		}
		return p, nil
	}
	a.runJob = run
	a.isTerminal = func(io.Writer) bool { return false }
	a.heartbeat = 0
	a.now = func() time.Time { return fixedNow }
	return a, &stdout, &stderr
}

func quickRun(_ context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
	progress(0.5)
	return fakeResult(j), nil
}

func TestVersion(t *testing.T) {
	a, out, _ := newTestApp(nil, quickRun)
	if code := a.execute(context.Background(), []string{"version"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out.String(), "fabriclab dev (go") {
		t.Errorf("version output %q", out.String())
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range [][]string{{"--help"}, {"run", "--help"}, {"validate", "--help"}, {"version", "--help"}} {
		a, out, _ := newTestApp(nil, quickRun)
		if code := a.execute(context.Background(), cmd); code != 0 {
			t.Fatalf("%v: exit %d", cmd, code)
		}
		if !strings.Contains(out.String(), "Examples:\n  fabriclab ") {
			t.Errorf("%v: no examples in\n%s", cmd, out.String())
		}
	}
}

func TestValidateBadFileOneLine(t *testing.T) {
	// The real loader on a file that does not exist.
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if code := a.execute(context.Background(), []string{"validate", missing}); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "fabriclab: ") || !strings.Contains(lines[0], "missing.yaml") {
		t.Errorf("stderr = %q, want one line naming the file", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q", stdout.String())
	}
}

func TestValidateInjected(t *testing.T) {
	a, out, errOut := newTestApp(testPlan(2, 3), quickRun)
	if code := a.execute(context.Background(), []string{"validate", "a.yaml", "b.yaml"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "a.yaml: ok (2 variants, 6 jobs)\nb.yaml: ok (2 variants, 6 jobs)\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}

	a, out, errOut = newTestApp(nil, quickRun)
	if code := a.execute(context.Background(), []string{"validate", "bad.yaml"}); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if want := "fabriclab: bad.yaml:3:7: unknown key \"topolgy\"\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"run", "a", "b"}, {"run", "--bogus", "a"}, {"validate"}, {"frob"}, {"run", "--parallel", "-1", "a"}} {
		a, out, errOut := newTestApp(testPlan(1, 1), quickRun)
		if code := a.execute(context.Background(), args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "fabriclab: ") {
			t.Errorf("%v: stderr %q, want one line", args, errOut.String())
		}
		if strings.Contains(out.String()+errOut.String(), "Usage:") {
			t.Errorf("%v: usage dumped", args)
		}
	}
}

func TestRunLoadError(t *testing.T) {
	a, out, errOut := newTestApp(nil, quickRun)
	if code := a.execute(context.Background(), []string{"run", "bad.yaml"}); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if errOut.String() != "fabriclab: bad.yaml:3:7: unknown key \"topolgy\"\n" || out.Len() != 0 {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
}

func TestRunSeedAndSets(t *testing.T) {
	a, _, _ := newTestApp(testPlan(1, 1), quickRun)
	var got []string
	a.load = func(path string, sets, sweeps []string, _ string) (*plan, error) {
		got = sets
		return testPlan(1, 1), nil
	}
	code := a.execute(context.Background(), []string{"run", "-q", "--set", "a.b=1", "--seed", "7", "--set", "c=x=y", "f.yaml"})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if want := []string{"a.b=1", "c=x=y", "seed=7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sets = %q, want %q", got, want)
	}
}

// scrambledRun finishes later jobs first, so that completion order differs
// from job order whenever more than one worker runs.
func scrambledRun(n int) JobFunc {
	return func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		i := j.VariantIndex*100 + j.SizeIndex
		time.Sleep(time.Duration((7*i)%n) * time.Millisecond)
		progress(1)
		return fakeResult(j), nil
	}
}

func TestRunDeterministicAcrossParallelism(t *testing.T) {
	var outs []string
	for _, par := range []string{"1", "3", "16"} {
		dir := t.TempDir()
		a, stdout, stderr := newTestApp(testPlan(3, 5), scrambledRun(11))
		jsonPath, csvPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
		code := a.execute(context.Background(), []string{"run", "--parallel", par, "--json", jsonPath, "--csv", csvPath, "x.yaml"})
		if code != 0 {
			t.Fatalf("parallel %s: exit %d: %s", par, code, stderr)
		}
		j, _ := os.ReadFile(jsonPath)
		c, _ := os.ReadFile(csvPath)
		outs = append(outs, stdout.String()+"\n"+string(j)+"\n"+string(c))
		if got := strings.Count(stderr.String(), " done in "); got != 15 {
			t.Errorf("parallel %s: %d progress lines, want 15:\n%s", par, got, stderr)
		}
	}
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Errorf("output with parallelism #%d differs:\n%s\n---\n%s", i, outs[i], outs[0])
		}
	}
	// Tables in variant order, rows by size.
	if a, b, c := strings.Index(outs[0], "# variant: v0"), strings.Index(outs[0], "# variant: v1"), strings.Index(outs[0], "# variant: v2"); !(a >= 0 && a < b && b < c) {
		t.Errorf("variant tables out of order:\n%s", outs[0])
	}
}

func TestRunnerOrderAndEvents(t *testing.T) {
	p := testPlan(2, 6)
	rep := &recReporter{}
	r := &Runner{Run: scrambledRun(13), Parallel: 5, Reporter: rep}
	res := r.RunAll(context.Background(), p.Jobs)
	if len(res) != len(p.Jobs) {
		t.Fatalf("%d results", len(res))
	}
	for i, jr := range res {
		if !jr.Ran || jr.Err != nil || jr.Job.VariantIndex != p.Jobs[i].VariantIndex || jr.Job.SizeIndex != p.Jobs[i].SizeIndex || jr.Result.SizeBytes != int64(p.Jobs[i].Size) {
			t.Errorf("result %d: %+v", i, jr)
		}
	}
	if rep.started != 12 || len(rep.done) != 12 || !rep.finished || rep.interrupted {
		t.Errorf("reporter: %+v", rep)
	}
	for i, d := range rep.done {
		if d != i+1 {
			t.Errorf("done counters %v not 1..12", rep.done)
			break
		}
	}
	if rep.workers != 5 {
		t.Errorf("workers = %d", rep.workers)
	}
}

type recReporter struct {
	workers, started int
	done             []int
	finished         bool
	interrupted      bool
}

func (r *recReporter) Start(total, workers int)                   { r.workers = workers }
func (r *recReporter) JobStart(int, scenario.Job, func() float64) { r.started++ }
func (r *recReporter) JobDone(ev JobEvent)                        { r.done = append(r.done, ev.Done) }
func (r *recReporter) Interrupted(int)                            {}
func (r *recReporter) Finish(interrupted bool)                    { r.finished, r.interrupted = true, interrupted }

// blockingRun completes jobs with index < quick at once; later jobs report
// on started and run until ctx is cancelled, then return a partial result.
func blockingRun(quick int, started chan<- int) JobFunc {
	return func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex < quick {
			return fakeResult(j), nil
		}
		started <- j.SizeIndex
		progress(0.25)
		<-ctx.Done()
		r := fakeResult(j)
		r.Complete = false
		return r, nil
	}
}

// On two workers the largest sizes start first (runner.StartOrder): here
// the three largest finish, the next two are running when the run is
// interrupted and the three smallest never start.
func TestRunInterrupted(t *testing.T) {
	p := testPlan(1, 8)
	started := make(chan int, 8)
	blocking := blockingRun(0, started)
	run := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex >= 5 {
			return fakeResult(j), nil
		}
		return blocking(ctx, j, progress)
	}
	a, stdout, stderr := newTestApp(p, run)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		<-started // both workers are inside a long job
		cancel()
	}()
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	code := a.execute(ctx, []string{"run", "-j", "2", "--json", jsonPath, "x.yaml"})
	if code != exitInterrupted {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr)
	}
	var out struct {
		Interrupted bool `json:"interrupted"`
		Variants    []struct {
			Results []metrics.SizeResult `json:"results"`
		} `json:"variants"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted {
		t.Error("interrupted = false")
	}
	rs := out.Variants[0].Results
	if len(rs) != 5 {
		t.Fatalf("%d results, want 2 partial + 3 complete", len(rs))
	}
	for i, r := range rs {
		if want := i >= 2; r.Complete != want || r.SizeBytes != 8<<20<<(i+3) {
			t.Errorf("result %d: %d bytes, complete = %v", i, r.SizeBytes, r.Complete)
		}
	}
	if got := strings.Count(stdout.String(), " *\n"); got != 2 {
		t.Errorf("%d rows marked incomplete, want 2:\n%s", got, stdout)
	}
	if !strings.Contains(stdout.String(), "# * incomplete") {
		t.Errorf("no footnote:\n%s", stdout)
	}
	if !strings.Contains(stderr.String(), "interrupted: stopping 2 running jobs, keeping what finished") {
		t.Errorf("no interrupt notice:\n%s", stderr)
	}
	if !strings.HasSuffix(stderr.String(), "fabriclab: interrupted\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestRunCancelledErrorDropsEmptyJob(t *testing.T) {
	// A job that returns ctx.Err() and nothing else when interrupted is
	// not a failure and leaves no row.
	p := testPlan(1, 3)
	started := make(chan int, 3)
	run := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 0 {
			return fakeResult(j), nil
		}
		started <- j.SizeIndex
		<-ctx.Done()
		return metrics.SizeResult{}, ctx.Err()
	}
	a, stdout, stderr := newTestApp(p, run)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	code := a.execute(ctx, []string{"run", "-j", "1", "--json", "-", "x.yaml"})
	if code != exitInterrupted {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	rs := out["variants"].([]any)[0].(map[string]any)["results"].([]any)
	if len(rs) != 1 {
		t.Errorf("%d results, want 1", len(rs))
	}
	if strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("cancellation reported as failure:\n%s", stderr)
	}
}

func TestRunJobError(t *testing.T) {
	p := testPlan(2, 3)
	run := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if j.VariantIndex == 1 && j.SizeIndex == 1 {
			return metrics.SizeResult{}, errors.New("no route from host 3\nto host 9")
		}
		if j.VariantIndex == 0 && j.SizeIndex == 2 {
			panic("index out of range")
		}
		return fakeResult(j), nil
	}
	a, stdout, stderr := newTestApp(p, run)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	code := a.execute(context.Background(), []string{"run", "-j", "3", "--json", jsonPath, "x.yaml"})
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, s := range []string{
		"fabriclab: v1 16MiB: no route from host 3 to host 9\n",
		"fabriclab: v0 32MiB: panic: index out of range\n",
		"fabriclab: 2 of 6 jobs failed\n",
	} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	if !strings.Contains(stdout.String(), "! no route from host 3 to host 9") {
		t.Errorf("table lacks the failed row:\n%s", stdout)
	}
	b, _ := os.ReadFile(jsonPath)
	var out struct {
		Variants []struct {
			Results []metrics.SizeResult `json:"results"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Variants) != 2 || len(out.Variants[0].Results) != 3 || len(out.Variants[1].Results) != 3 {
		t.Fatalf("results: %+v", out.Variants)
	}
	if r := out.Variants[1].Results[1]; r.Error == "" || r.Complete || r.SizeBytes != 16<<20 {
		t.Errorf("failed row: %+v", r)
	}
	if r := out.Variants[1].Results[2]; !r.Complete || r.Error != "" {
		t.Errorf("good row: %+v", r)
	}
}

func TestRunJSONAndCSV(t *testing.T) {
	dir := t.TempDir()
	a, stdout, stderr := newTestApp(testPlan(2, 2), quickRun)
	jsonPath := filepath.Join(dir, "r.json")
	code := a.execute(context.Background(), []string{"run", "--json", jsonPath, "--csv", "-", "x.yaml"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// --csv - takes stdout: no tables mixed in.
	recs, err := csv.NewReader(stdout).ReadAll()
	if err != nil {
		t.Fatalf("stdout is not CSV: %v", err)
	}
	if len(recs) != 5 || recs[0][0] != "variant" || recs[0][14] != "complete" {
		t.Errorf("csv: %q", recs)
	}
	if recs[1][0] != "v0" || recs[1][1] != "8388608" || recs[4][0] != "v1" || recs[4][1] != "16777216" {
		t.Errorf("csv order: %q", recs)
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	for _, k := range []string{"scenario", "scenario_file", "seed", "version", "started", "finished", "interrupted", "variants"} {
		if _, ok := top[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	if top["scenario"] != "test-scenario" || top["seed"].(float64) != 42 || top["interrupted"] != false ||
		top["started"] != "2025-06-01T12:00:00Z" || top["version"] != "dev" {
		t.Errorf("top = %v", top)
	}
	v := top["variants"].([]any)[0].(map[string]any)
	if v["name"] != "v0" || v["collective"] != "alltoall" {
		t.Errorf("variant = %v", v)
	}
	r := v["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"size_bytes", "cct_s", "algbw_gbps", "busbw_gbps", "ideal_s", "ideal_pct", "pfc_pauses", "ecn_marks", "drops", "retransmits", "complete"} {
		if _, ok := r[k]; !ok {
			t.Errorf("result key %q missing", k)
		}
	}
}

func TestRunQuiet(t *testing.T) {
	a, stdout, stderr := newTestApp(testPlan(1, 2), quickRun)
	if code := a.execute(context.Background(), []string{"run", "-q", "x.yaml"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if stdout.Len()+stderr.Len() != 0 {
		t.Errorf("quiet printed: %q %q", stdout, stderr)
	}
}

func TestRunOutputDirMissing(t *testing.T) {
	ran := false
	a, _, stderr := newTestApp(testPlan(1, 1), func(ctx context.Context, j scenario.Job, p lab.Progress) (metrics.SizeResult, error) {
		ran = true
		return fakeResult(j), nil
	})
	code := a.execute(context.Background(), []string{"run", "--json", filepath.Join(t.TempDir(), "no", "r.json"), "x.yaml"})
	if code != 1 || ran || !strings.Contains(stderr.String(), "does not exist") {
		t.Errorf("exit %d ran %v stderr %q", code, ran, stderr)
	}
}

// syncBuffer is a bytes.Buffer safe for the reporter's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLineReporterHeartbeat(t *testing.T) {
	var buf syncBuffer
	rep := newLineReporter(&buf, 20*time.Millisecond)
	release := make(chan struct{})
	run := func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		progress(0.4)
		<-release
		return fakeResult(j), nil
	}
	go func() {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(buf.String(), "running:") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		close(release)
	}()
	r := &Runner{Run: run, Parallel: 1, Reporter: rep}
	r.RunAll(context.Background(), testPlan(1, 1).Jobs)
	out := buf.String()
	if !strings.HasPrefix(out, "running 1 job on 1 worker\n") {
		t.Errorf("no start line:\n%s", out)
	}
	if !strings.Contains(out, "[0/1] ") || !strings.Contains(out, "running: v0 8MiB 40%") {
		t.Errorf("no heartbeat:\n%s", out)
	}
	if !strings.Contains(out, "[1/1] v0 8MiB done in ") {
		t.Errorf("no done line:\n%s", out)
	}
}

func TestBarReporter(t *testing.T) {
	// mpb without a terminal: just check it runs, logs finished jobs and
	// shuts down, both normally and when interrupted.
	for _, interrupt := range []bool{false, true} {
		var buf syncBuffer
		rep := newBarReporter(&buf, mpb.WithAutoRefresh())
		p := testPlan(1, 4)
		started := make(chan int, 4)
		ctx, cancel := context.WithCancel(context.Background())
		run := quickRun
		if interrupt {
			run = blockingRun(2, started)
			go func() { <-started; cancel() }()
		}
		r := &Runner{Run: run, Parallel: 1, Reporter: rep}
		res := r.RunAll(ctx, p.Jobs)
		cancel()
		ran := 0
		for _, jr := range res {
			if jr.Ran {
				ran++
			}
		}
		want := 4
		if interrupt {
			want = 3
		}
		if ran != want {
			t.Errorf("interrupt=%v: %d jobs ran, want %d", interrupt, ran, want)
		}
		if !strings.Contains(buf.String(), fmt.Sprintf("[%d/4] v0 ", want)) {
			t.Errorf("interrupt=%v: output:\n%s", interrupt, buf.String())
		}
	}
}

const incastYAML = `name: incast-test
topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 4
  spines: 2
  host_link: {rate: 100Gbps, delay: 1us}
  fabric_link: {rate: 100Gbps, delay: 1us}
workload:
  kind: incast
  senders: 3
  target: 0
  sizes: {list: [64KiB, 1MiB]}
variants:
  - name: pfc
    switch: {pfc: {enabled: true}}
  - name: no-pfc
    switch: {pfc: {enabled: false}}
`

func TestLoadPlanReal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "incast.yaml")
	if err := os.WriteFile(path, []byte(incastYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := loadPlan(path, []string{"seed=99"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "incast-test" || p.Seed != 99 || len(p.Jobs) != 4 {
		t.Errorf("plan: name %q seed %d jobs %d", p.Name, p.Seed, len(p.Jobs))
	}
	want := []planVariant{{Name: "pfc", Collective: "incast"}, {Name: "no-pfc", Collective: "incast"}}
	if !reflect.DeepEqual(p.Variants, want) {
		t.Errorf("variants = %+v, want %+v", p.Variants, want)
	}

	// The real loader behind the CLI, with a fake job runner.
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.runJob = quickRun
	if code := a.execute(context.Background(), []string{"validate", "--set", "seed=3", path}); code != 0 {
		t.Fatalf("validate: exit %d: %s", code, stderr.String())
	}
	if want := path + ": ok (2 variants, 4 jobs)\n"; stdout.String() != want {
		t.Errorf("validate: %q, want %q", stdout.String(), want)
	}
	stdout.Reset()
	if code := a.execute(context.Background(), []string{"run", "-q", "--seed", "5", "--json", "-", path}); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	var out struct {
		Seed     uint64   `json:"seed"`
		Sets     []string `json:"sets"`
		Variants []struct {
			Name    string               `json:"name"`
			Results []metrics.SizeResult `json:"results"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Seed != 5 || len(out.Variants) != 2 || out.Variants[1].Name != "no-pfc" || len(out.Variants[1].Results) != 2 {
		t.Errorf("output: %+v", out)
	}

	// A bad --set is one line naming the override.
	stderr.Reset()
	if code := a.execute(context.Background(), []string{"validate", "--set", "topology.kindd=x", path}); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "kindd") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestRunSweepFlags(t *testing.T) {
	var gotSets, gotSweeps []string
	a, _, _ := newTestApp(testPlan(1, 1), quickRun)
	a.load = func(path string, sets, sweeps []string, _ string) (*plan, error) {
		gotSets, gotSweeps = sets, sweeps
		return testPlan(1, 1), nil
	}
	code := a.execute(context.Background(), []string{"run", "-q", "--sweep", "workload.qps=1,2", "--set", "a=1",
		"--sweep", "workload.algorithm=[direct, pairwise]", "f.yaml"})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if want := []string{"workload.qps=1,2", "workload.algorithm=[direct, pairwise]"}; !reflect.DeepEqual(gotSweeps, want) || !reflect.DeepEqual(gotSets, []string{"a=1"}) {
		t.Errorf("sweeps %q sets %q", gotSweeps, gotSets)
	}
	gotSweeps = nil
	if code := a.execute(context.Background(), []string{"validate", "--sweep", "seed=1,2", "f.yaml"}); code != 0 {
		t.Fatalf("validate: exit %d", code)
	}
	if want := []string{"seed=1,2"}; !reflect.DeepEqual(gotSweeps, want) {
		t.Errorf("validate sweeps %q", gotSweeps)
	}
}

const sweepYAML = `name: sweep-test
topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}
workload:
  kind: alltoall
  sizes: {list: [1MiB, 4MiB]}
variants:
  - name: pfc
  - name: lossy
    switch: {pfc: {enabled: false}}
sweep:
  workload.qps: [1, 4]
`

// The real loader with a fake job runner: a sweep's points are variants
// in every output, with their values, and the tables end with the summary.
func TestRunSweepReal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(path, []byte(sweepYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.runJob = quickRun
	a.isTerminal = func(io.Writer) bool { return false }
	a.now = func() time.Time { return fixedNow }

	// validate counts the points.
	if code := a.execute(context.Background(), []string{"validate", path}); code != 0 {
		t.Fatalf("validate: exit %d: %s", code, stderr.String())
	}
	if want := path + ": ok (4 variants, 8 jobs)\n"; stdout.String() != want {
		t.Errorf("validate: %q, want %q", stdout.String(), want)
	}
	stdout.Reset()
	if code := a.execute(context.Background(), []string{"validate", "--sweep", "seed=1,2,3", path}); code != 0 {
		t.Fatalf("validate --sweep: exit %d: %s", code, stderr.String())
	}
	if want := path + ": ok (12 variants, 24 jobs)\n"; stdout.String() != want {
		t.Errorf("validate --sweep: %q, want %q", stdout.String(), want)
	}

	// A bad sweep value is one line naming the key and the point.
	stdout.Reset()
	if code := a.execute(context.Background(), []string{"validate", "--sweep", "workload.qps=2,0", path}); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if want := "fabriclab: " + path + `: --sweep workload.qps: point "pfc qps=0": needs at least 1 queue pair per rank pair, got 0` + "\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	stderr.Reset()

	jsonPath, csvPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code := a.execute(context.Background(), []string{"run", "-j", "3", "--sweep", "workload.algorithm=direct,pairwise",
		"--json", jsonPath, "--csv", csvPath, path})
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	names := []string{
		"pfc qps=1 algorithm=direct", "pfc qps=1 algorithm=pairwise", "pfc qps=4 algorithm=direct", "pfc qps=4 algorithm=pairwise",
		"lossy qps=1 algorithm=direct", "lossy qps=1 algorithm=pairwise", "lossy qps=4 algorithm=direct", "lossy qps=4 algorithm=pairwise",
	}
	// Tables: one per point, in order, then the summary.
	out := stdout.String()
	last := -1
	for _, n := range names {
		i := strings.Index(out, "# variant: "+n+"  (alltoall, 8 ranks)\n")
		if i <= last {
			t.Fatalf("table of %q missing or out of order:\n%s", n, out)
		}
		last = i
	}
	summary := out[strings.Index(out, "# sweep: "):]
	if !strings.HasPrefix(summary, "# sweep: workload.qps, workload.algorithm  (8 points; one row per point and size)\n"+
		"#  variant  qps  algorithm   size") || strings.Count(summary, "\n") != 3+16 {
		t.Errorf("summary:\n%s", summary)
	}
	if !strings.Contains(summary, "\n   lossy    4    pairwise    4MiB") {
		t.Errorf("summary rows:\n%s", summary)
	}

	var js struct {
		Sweeps   []string `json:"sweeps"`
		Variants []struct {
			Name    string            `json:"name"`
			Parent  string            `json:"parent"`
			Sweep   map[string]string `json:"sweep"`
			Results []metrics.SizeResult
		} `json:"variants"`
	}
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Variants) != 8 || !reflect.DeepEqual(js.Sweeps, []string{"workload.algorithm=direct,pairwise"}) {
		t.Fatalf("json: %d variants, sweeps %q", len(js.Variants), js.Sweeps)
	}
	for i, v := range js.Variants {
		want := map[string]string{"workload.qps": []string{"1", "4"}[i/2%2], "workload.algorithm": []string{"direct", "pairwise"}[i%2]}
		if v.Name != names[i] || v.Parent != []string{"pfc", "lossy"}[i/4] || !reflect.DeepEqual(v.Sweep, want) || len(v.Results) != 2 {
			t.Errorf("json variant %d: %+v", i, v)
		}
	}
	if !strings.Contains(string(b), "\"sweep\": {\n        \"workload.qps\": \"1\",\n        \"workload.algorithm\": \"direct\"\n      }") {
		t.Errorf("sweep keys not in sweep order:\n%s", b)
	}

	f, _ := os.Open(csvPath)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+16 || recs[0][17] != "sweep" {
		t.Fatalf("csv: %q", recs[0])
	}
	if recs[16][0] != "lossy qps=4 algorithm=pairwise" || recs[16][1] != "4194304" || recs[16][17] != "workload.qps=4;workload.algorithm=pairwise" {
		t.Errorf("csv last row: %q", recs[16])
	}

	// Without a sweep: no summary, no sweep keys, an empty sweep column.
	stdout.Reset()
	noSweep := filepath.Join(dir, "plain.yaml")
	os.WriteFile(noSweep, []byte(strings.Split(sweepYAML, "sweep:")[0]), 0o644)
	if code := a.execute(context.Background(), []string{"run", "--json", jsonPath, "--csv", csvPath, noSweep}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, _ = os.ReadFile(jsonPath)
	c, _ := os.ReadFile(csvPath)
	if strings.Contains(stdout.String(), "# sweep") || strings.Contains(string(b), `"sweep"`) || !strings.HasSuffix(strings.Split(string(c), "\n")[1], ",") {
		t.Errorf("no sweep:\n%s\n%s", stdout.String(), c)
	}
}
