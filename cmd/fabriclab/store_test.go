package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/store"
	"fabriclab/store/pgtest"
)

// storeApp runs args on a test app with plan p and the fake job runner.
func storeApp(t *testing.T, p *plan, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	a, out, errb := newTestApp(p, quickRun)
	code = a.execute(context.Background(), args)
	return code, out.String(), errb.String()
}

var savedRe = regexp.MustCompile(`fabriclab: saved as run (\d+)\n`)

func TestStoreRunShowExport(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testStoreRunShowExport(t, filepath.Join(t.TempDir(), "lab.db")) })
	t.Run("postgres", func(t *testing.T) { testStoreRunShowExport(t, pgtest.Database(t)) })
}

func testStoreRunShowExport(t *testing.T, db string) {
	dir := t.TempDir()
	p := testPlan(2, 3)
	runJSON := filepath.Join(dir, "run.json")
	code, runOut, stderr := storeApp(t, p, "run", "--db", db, "--json", runJSON, "x.yaml")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	m := savedRe.FindStringSubmatch(stderr)
	if m == nil || m[1] != "1" {
		t.Fatalf("stderr %q does not say saved as run 1", stderr)
	}
	// -q says nothing; --no-store saves nothing.
	if code, _, stderr := storeApp(t, p, "run", "-q", "--db", db, "x.yaml"); code != 0 || stderr != "" {
		t.Fatalf("run -q: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := storeApp(t, p, "run", "--no-store", "--db", db, "x.yaml"); code != 0 || strings.Contains(stderr, "saved") {
		t.Fatalf("run --no-store: exit %d, stderr %q", code, stderr)
	}

	code, out, _ := storeApp(t, nil, "runs", "--db", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("runs: exit %d\n%s", code, out)
	}
	if f := strings.Fields(lines[1]); f[0] != "1" || f[1] != "test-scenario" || f[3] != "done" || f[4] != "2" || f[5] != "6" {
		t.Errorf("runs line %q", lines[1])
	}

	code, out, _ = storeApp(t, nil, "show", "1", "--db", db)
	if code != 0 || !strings.HasPrefix(out, "# run 1: test-scenario") || !strings.Contains(out, runOut) {
		t.Errorf("show: exit %d\n%s\nwant the tables\n%s", code, out, runOut)
	}

	code, out, _ = storeApp(t, nil, "export", "1", "--db", db, "--json", "-")
	want, _ := os.ReadFile(runJSON)
	if code != 0 || out != string(want) {
		t.Errorf("export --json differs from run --json:\n%s\nwant\n%s", out, want)
	}
	csvPath := filepath.Join(dir, "x.csv")
	if code, _, stderr := storeApp(t, nil, "export", "1", "--db", db, "--csv", csvPath); code != 0 {
		t.Fatalf("export --csv: %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(csvPath); !bytes.HasPrefix(b, []byte("variant,size_bytes")) || bytes.Count(b, []byte("\n")) != 7 {
		t.Errorf("csv:\n%s", b)
	}

	if code, _, stderr := storeApp(t, nil, "tag", "1", "baseline", "pfc", "--db", db); code != 0 {
		t.Fatalf("tag: %d %s", code, stderr)
	}
	if code, _, stderr := storeApp(t, nil, "note", "1", "after the\nfirmware update", "--db", db); code != 0 {
		t.Fatalf("note: %d %s", code, stderr)
	}
	if _, out, _ := storeApp(t, nil, "show", "1", "--db", db); !strings.Contains(out, "\n# tags: baseline pfc\n# note: after the firmware update\n") {
		t.Errorf("show after tag and note:\n%s", out)
	}
	// Tags and a note given at run time; date filters.
	if code, _, stderr := storeApp(t, p, "run", "-q", "--tag", "today", "--tag", "x", "--tag", "today", "--note", "n1", "--db", db, "x.yaml"); code != 0 {
		t.Fatalf("run --tag: %d %s", code, stderr)
	}
	if _, out, _ := storeApp(t, nil, "show", "3", "--db", db); !strings.Contains(out, "\n# tags: today x\n# note: n1\n") {
		t.Errorf("show run 3:\n%s", out)
	}
	today, tomorrow := "2025-06-01", "2025-06-02" // the test app's clock
	for _, c := range []struct {
		args []string
		rows int
	}{{[]string{"--since", today}, 3}, {[]string{"--since", tomorrow}, 0}, {[]string{"--until", today}, 0},
		{[]string{"--until", tomorrow, "--tag", "today"}, 1}} {
		code, out, stderr := storeApp(t, nil, append([]string{"runs", "--db", db}, c.args...)...)
		if n := strings.Count(out, "\n") - 1; code != 0 || n != c.rows {
			t.Errorf("runs %v: exit %d, %d rows, want %d\n%s%s", c.args, code, n, c.rows, out, stderr)
		}
	}
	if code, _, stderr := storeApp(t, nil, "runs", "--db", db, "--since", "yesterday"); code != exitUsage || !strings.Contains(stderr, "--since") {
		t.Errorf("runs --since yesterday: exit %d %s", code, stderr)
	}
	if code, _, stderr := storeApp(t, p, "run", "--tag", "two words", "--db", db, "x.yaml"); code != exitUsage || !strings.Contains(stderr, "one word") {
		t.Errorf("run --tag 'two words': exit %d %s", code, stderr)
	}
	code, out, _ = storeApp(t, nil, "runs", "--db", db, "--tag", "pfc")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || !strings.HasSuffix(lines[1], "baseline,pfc") {
		t.Errorf("runs --tag:\n%s", out)
	}
	if code, _, stderr := storeApp(t, nil, "rm", "1", "--db", db); code != 0 {
		t.Fatalf("rm: %d %s", code, stderr)
	}
	for _, args := range [][]string{{"show", "1"}, {"rm", "1"}, {"tag", "1", "x"}, {"export", "1", "--json", "-"}} {
		code, out, stderr := storeApp(t, nil, append(args, "--db", db)...)
		if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "run 1: no such run") {
			t.Errorf("%v after rm: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if code, _, _ := storeApp(t, nil, "show", "abc", "--db", db); code != exitUsage {
		t.Errorf("show abc: exit %d, want %d", code, exitUsage)
	}
}

func TestStoreDefaultLocation(t *testing.T) {
	// TestMain sets FABRICLAB_DB; run saves there without --db.
	code, _, stderr := storeApp(t, testPlan(1, 1), "run", "x.yaml")
	if code != 0 || !savedRe.MatchString(stderr) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(os.Getenv("FABRICLAB_DB")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FABRICLAB_DB", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	if got, _ := defaultDB(); got != filepath.Join(os.Getenv("XDG_DATA_HOME"), "fabriclab", "runs.db") {
		t.Errorf("defaultDB with XDG_DATA_HOME = %s", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	if got, _ := defaultDB(); got != filepath.Join(os.Getenv("HOME"), ".local", "share", "fabriclab", "runs.db") {
		t.Errorf("defaultDB = %s", got)
	}
}

func TestStoreStatuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	// A failed job: status failed.
	a, _, _ := newTestApp(testPlan(1, 2), func(ctx context.Context, j scenario.Job, pr lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 1 {
			return metrics.SizeResult{}, errors.New("boom")
		}
		return quickRun(ctx, j, pr)
	})
	if code := a.execute(context.Background(), []string{"run", "--db", db, "x.yaml"}); code != 1 {
		t.Fatalf("exit %d", code)
	}
	// An interrupted run: status interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, _, _ = newTestApp(testPlan(1, 2), quickRun)
	if code := a.execute(ctx, []string{"run", "--db", db, "x.yaml"}); code != exitInterrupted {
		t.Fatalf("exit %d", code)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, _ := st.Runs(store.Filter{})
	if len(rs) != 2 || rs[0].Status != store.StatusFailed || rs[1].Status != store.StatusInterrupted || rs[0].Rows != 2 {
		t.Fatalf("runs %+v", rs)
	}
	out, _, _ := st.Run(rs[0].ID)
	if r := out.Variants[0].Results[1]; r.Error != "boom" || r.Complete {
		t.Errorf("failed row %+v", r)
	}
}

func TestStoreUnusableFailsBeforeAnyJob(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	newer := filepath.Join(dir, "newer.db")
	st, err := store.Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	bumpSchema(t, newer)
	unreachable := "postgres://lab:secret@127.0.0.1:1/fabriclab?sslmode=disable" // nothing listens on port 1
	for _, db := range []string{filepath.Join(file, "runs.db"), newer, unreachable} {
		var n atomic.Int32
		a, stdout, stderr := newTestApp(testPlan(1, 2), countingRun(&n))
		keep := filepath.Join(dir, "keep.json")
		os.WriteFile(keep, []byte("earlier results"), 0o644)
		code := a.execute(context.Background(), []string{"run", "--db", db, "--json", keep, "x.yaml"})
		if b, _ := os.ReadFile(keep); string(b) != "earlier results" {
			t.Errorf("%s: --json file overwritten: %q", db, b)
		}
		if code != 1 || n.Load() != 0 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: exit %d, %d jobs ran, stdout %q, stderr %q", db, code, n.Load(), stdout, stderr)
		}
		if strings.Contains(stderr.String(), "secret") {
			t.Errorf("the password is printed: %s", stderr)
		}
	}
	for _, args := range [][]string{{"runs"}, {"show", "1"}, {"rm", "1"}} {
		code, out, stderr := storeApp(t, nil, append(args, "--db", unreachable)...)
		if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "127.0.0.1:1") {
			t.Errorf("%v on an unreachable server: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}

// TestStoreKilledRunKeepsRows runs the real binary mid-sweep, kills it
// with SIGINT, SIGTERM or SIGHUP (a clean stop: status interrupted, the
// outputs written, exit 128 + the signal) or SIGKILL (no
// chance to clean up: status stays running, shown as stale) once the first
// results are saved, and reads the finished rows back.
func TestStoreKilledRunKeepsRows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fabriclab")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "HOME="+realHome) // the real build cache
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { killMidSweep(t, bin, sig) })
	}
}

func killMidSweep(t *testing.T, bin string, sig syscall.Signal) {
	dir := t.TempDir()
	db, jsonPath := filepath.Join(dir, "kill.db"), filepath.Join(dir, "kill.json")
	cmd := exec.Command(bin, "run", "../../examples/incast.yaml", "-q", "-j", "1", "--db", db, "--json", jsonPath,
		"--set", "workload.sizes.list=[64KiB,128KiB,64MiB,256MiB]")
	clean := sig != syscall.SIGKILL // SIGINT, SIGTERM and SIGHUP stop cleanly
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Poll read-only: a writer opening the database would migrate it, and
	// take the write lock the run needs, every time it looked.
	var rows int
	deadline := time.After(60 * time.Second)
	for rows == 0 {
		select {
		case err := <-exited: // stopped before saving anything: say why
			t.Fatalf("the run ended (%v) before it saved a result; stderr:\n%s", err, stderr.String())
		case <-deadline:
			cmd.Process.Kill()
			<-exited // stderr is complete
			t.Fatalf("no result saved within 60s; stderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		st, err := store.OpenReadOnly(db)
		if err != nil {
			continue // not there yet, or no tables yet
		}
		if m, err := st.Meta(1); err == nil {
			rows = m.Rows
		}
		st.Close()
	}
	if err := cmd.Process.Signal(sig); err != nil {
		werr := <-exited // it ended before the signal: say how
		t.Fatalf("signal %v: %v; the run ended (%v); stderr:\n%s", sig, err, werr, stderr.String())
	}
	err := <-exited
	var ee *exec.ExitError
	if clean && (!errors.As(err, &ee) || ee.ExitCode() != 128+int(sig)) {
		t.Errorf("after %v: %v, want exit %d", sig, err, 128+int(sig))
	}
	if b, err := os.ReadFile(jsonPath); clean && (err != nil || !strings.Contains(string(b), `"interrupted": true`)) {
		t.Errorf("after %v: --json not written as interrupted (%v)", sig, err)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, m, err := st.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	complete := 0
	for _, v := range out.Variants {
		for _, r := range v.Results {
			if r.Complete && r.CCTS > 0 {
				complete++
			} else if !clean || r.Complete {
				t.Errorf("saved row %+v", r) // only a clean stop saves the stopped job's partial row
			}
		}
	}
	if complete == 0 || complete >= 8 {
		t.Fatalf("after %v: %d finished rows", sig, complete)
	}
	if clean {
		if m.Status != store.StatusInterrupted || m.Finished == "" || !out.Interrupted {
			t.Errorf("after %v: meta %+v", sig, m)
		}
		return
	}
	if m.Status != store.StatusRunning || !m.Stale() || m.Finished != "" {
		t.Fatalf("after SIGKILL: meta %+v", m)
	}
	a, stdout, _ := newTestApp(nil, quickRun)
	if code := a.execute(context.Background(), []string{"runs", "--db", db}); code != 0 || !strings.Contains(stdout.String(), "running (stale?)") {
		t.Errorf("runs after SIGKILL: exit %d\n%s", code, stdout)
	}
}

// bumpSchema makes the database at path look like one from a newer fabriclab.
func bumpSchema(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE schema_version SET version = ?`, store.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
}
