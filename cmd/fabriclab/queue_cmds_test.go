package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fabriclab/store"
	"fabriclab/store/pgtest"
)

// A 20-job sweep (5 sweep points × 4 sizes) on a fabric whose routing table
// is a file one directory up from the scenario, so that the job must carry
// it: workers lay it out from the job, not from the disk.
const queueScenario = `name: qsweep
topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 4
  spines: 2
  host_link: {rate: 100Gbps, delay: 1us}
  fabric_link: {rate: 100Gbps, delay: 1us}
switch:
  forwarding: d-mod-k
  routes_file: ../data/routes.txt
workload:
  kind: alltoall
  ranks: 8
  sizes: {list: [64KiB, 1MiB, 16MiB, 128MiB]}
sweep:
  workload.qps: [1, 2, 3, 4, 5]
`

// writeQueueScenario writes the sweep and its routing table under dir and
// returns the scenario's path.
func writeQueueScenario(t *testing.T, dir string) string {
	t.Helper()
	for name, text := range map[string]string{"lab/s.yaml": queueScenario, "data/routes.txt": "leaf0 5 spine1\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "lab", "s.yaml")
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// fabriclabBinary builds the binary once per test process.
func fabriclabBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binPath = filepath.Join(filepath.Dir(os.Getenv("FABRICLAB_DB")), "fabriclab-queue-test")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "HOME="+realHome)
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// normalJSON reads a run's JSON without its wall-clock fields.
func normalJSON(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, v := range m["variants"].([]any) {
		for _, r := range v.(map[string]any)["results"].([]any) {
			delete(r.(map[string]any), "wall_s")
		}
	}
	delete(m, "started")
	delete(m, "finished")
	out, _ := json.Marshal(m)
	return out
}

// workerProc is a `fabriclab worker` process and its stderr lines.
type workerProc struct {
	cmd   *exec.Cmd
	id    chan string // the River client id, once
	start chan string // "started" lines
	mu    sync.Mutex
	log   bytes.Buffer
	done  chan struct{}
}

func startWorker(t *testing.T, bin, db string, args ...string) *workerProc {
	t.Helper()
	w := &workerProc{id: make(chan string, 1), start: make(chan string, 64), done: make(chan struct{})}
	w.cmd = exec.Command(bin, append([]string{"worker", "--db", db, "--job-timeout", "10s", "--poll", "100ms"}, args...)...)
	// Its own TMPDIR: a worker killed mid-job leaves its job directory
	// behind, and the test's clean-up then removes it.
	w.cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	pipe, err := w.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		<-w.done
		w.cmd.Wait()
		if t.Failed() {
			t.Logf("worker %d:\n%s", w.cmd.Process.Pid, w.text())
		}
	})
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			w.mu.Lock()
			w.log.WriteString(line + "\n")
			w.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "fabriclab: worker "); ok && strings.Contains(rest, " up to ") {
				w.id <- strings.Fields(rest)[0]
			}
			if strings.Contains(line, ": started (job ") {
				select {
				case w.start <- line:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	return w
}

func (w *workerProc) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

func (w *workerProc) waitID(t *testing.T) string {
	t.Helper()
	select {
	case id := <-w.id:
		return id
	case <-time.After(30 * time.Second):
		t.Fatalf("worker did not start:\n%s", w.text())
	}
	return ""
}

// rawDB opens the results database without the store, for River's tables.
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver, name := "sqlite", dsn
	if store.IsPostgres(dsn) {
		driver = "pgx"
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestQueueSweep: a 20-job sweep on two `fabriclab worker` processes, the
// one that leads River SIGKILLed mid-job; the other takes over the lead,
// River's rescuer hands it the killed job, and the run completes with every
// row once and the JSON (and tables) of a local run. On SQLite (two workers
// on one machine) and PostgreSQL.
func TestQueueSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := fabriclabBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		queueSweep(t, bin, filepath.Join(t.TempDir(), "q.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		queueSweep(t, bin, pgtest.Database(t))
	})
}

func queueSweep(t *testing.T, bin, db string) {
	dir := t.TempDir()
	scen := writeQueueScenario(t, dir)
	localJSON, queuedJSON := filepath.Join(dir, "local.json"), filepath.Join(dir, "queued.json")
	// The local run is the binary's too (not slowed by -race).
	var localOut bytes.Buffer
	local := exec.Command(bin, "run", scen, "--no-store", "-j", "2", "--json", localJSON)
	var localErr bytes.Buffer
	local.Stdout, local.Stderr = &localOut, &localErr
	if err := local.Run(); err != nil {
		t.Fatalf("local run: %v\n%s", err, localErr.String())
	}

	// The database must exist before the workers open it; the first
	// worker creates River's tables and leads.
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	a := startWorker(t, bin, db, "-c", "1")
	aID := a.waitID(t)
	raw := rawDB(t, db)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var leader string
		if err := raw.QueryRow(`SELECT leader_id FROM river_leader`).Scan(&leader); err == nil && leader == aID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %s did not become the leader", aID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b := startWorker(t, bin, db, "-c", "2")
	b.waitID(t)

	// Submit and wait, as a user on one machine would.
	var qOut, qErr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- newApp(&qOut, &qErr).execute(context.Background(), []string{"run", "--queue", "--wait", scen, "--db", db, "--json", queuedJSON})
	}()
	// Kill the leader in the middle of a slow job (or its first job if it
	// gets no slow one).
	var killed string
	timeout := time.After(30 * time.Second)
	for killed == "" {
		select {
		case line := <-a.start:
			if strings.Contains(line, "128MiB") {
				killed = line
			}
		case <-timeout:
			t.Fatalf("worker A started no 128MiB job:\n%s", a.text())
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var c int
	select {
	case c = <-code:
	case <-time.After(90 * time.Second):
		t.Fatalf("the queued run did not finish within 90 s (killed A at %q); run:\n%s\nworker B:\n%s", killed, qErr.String(), b.text())
	}
	if c != 0 {
		t.Fatalf("run --queue --wait: exit %d\n%s", c, qErr.String())
	}
	if got, want := normalJSON(t, queuedJSON), normalJSON(t, localJSON); !bytes.Equal(got, want) {
		t.Errorf("the queued run's JSON differs from the local run's:\n%s\n%s", got, want)
	}
	if qOut.String() != localOut.String() {
		t.Errorf("the queued run's tables differ from the local run's:\n%s\nlocal:\n%s", qOut.String(), localOut.String())
	}

	// Every row once, the run done, the killed job rescued and run again.
	st, err = store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Meta(1)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.ResultKeys(1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[store.ResultKey]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("row %v twice", k)
		}
		seen[k] = true
	}
	if m.Status != store.StatusDone || m.Rows != 20 || m.Expected != 20 || len(keys) != 20 || m.Queue == "" {
		t.Errorf("run: %+v, %d keys", m, len(keys))
	}
	label := strings.TrimPrefix(killed[:strings.Index(killed, ": started")], "run 1: ")
	var rescued, notDone int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM river_job WHERE attempt >= 2`).Scan(&rescued); err != nil {
		t.Fatal(err)
	}
	// River records a job done a moment after its worker returns.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := raw.QueryRow(`SELECT COUNT(*) FROM river_job WHERE state <> 'completed'`).Scan(&notDone); err != nil {
			t.Fatal(err)
		}
		if notDone == 0 || time.Now().After(end) {
			break
		}
	}
	if rescued == 0 || notDone != 0 || !strings.Contains(b.text(), label+": started") {
		t.Errorf("killed %q: %d jobs with a second attempt, %d not completed; worker B:\n%s", label, rescued, notDone, b.text())
	}
	var runs bytes.Buffer
	if code := newApp(&runs, io.Discard).execute(context.Background(), []string{"runs", "--db", db}); code != 0 || !strings.Contains(runs.String(), "done") {
		t.Errorf("runs: exit %d\n%s", code, runs.String())
	}
}

// Without --wait, run --queue returns at once; runs shows the run queued
// with its rows so far, and cancel stops it and its jobs.
func TestQueueSubmitAndCancel(t *testing.T) {
	dir := t.TempDir()
	scen := writeQueueScenario(t, dir)
	db := filepath.Join(dir, "q.db")
	run := cli
	if code, _, stderr := run("submit", scen, "--db", db); code != 0 || !strings.Contains(stderr, "queued as run 1: 20 jobs") {
		t.Fatalf("submit: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run("runs", "--db", db); code != 0 || !strings.Contains(stdout, "queued (0/20 done)") {
		t.Errorf("runs: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run("cancel", "1", "--db", db); code != 0 || !strings.Contains(stderr, "run 1 cancelled: 20 jobs stopped") {
		t.Errorf("cancel: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run("runs", "--db", db); code != 0 || !strings.Contains(stdout, "interrupted") {
		t.Errorf("runs after cancel: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run("cancel", "1", "--db", db); code != 1 || !strings.Contains(stderr, "not queued") {
		t.Errorf("cancel again: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{{"run", scen, "--wait"}, {"run", scen, "--queue", "--no-store"}, {"run", scen, "--queue", "--json", "x.json"},
		{"run", scen, "--queue", "-j", "2"}, {"run", scen, "--queue", "--engine", "hosts"}} {
		if code, _, _ := run(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// submit refuses, as validate does, a scenario with a job that a build
// would refuse, before anything is saved or queued: here a telemetry flow
// id the workload does not have, and a job above sim.memory_limit.
func TestSubmitRefusesWhatABuildWould(t *testing.T) {
	dir := t.TempDir()
	scen := writeQueueScenario(t, dir)
	db := filepath.Join(dir, "q.db")
	run := cli
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"sim.telemetry={interval: 10us, flows: [9999]}"}, "sim.telemetry.flows[0]: there is no flow 9999"},
		// 128 MiB in 4 KiB messages: 1.8 M messages per job at 5 QPs.
		{[]string{"sim.memory_limit=1MiB", "workload.message_size=4KiB"}, "more than sim.memory_limit=1MiB"},
	} {
		args := []string{"submit", scen, "--db", db}
		for _, set := range c.sets {
			args = append(args, "--set", set)
		}
		code, _, stderr := run(args...)
		if code != exitError || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "queued as run") {
			t.Errorf("--set %v: exit %d, stderr %q; want %d and %q", c.sets, code, stderr, exitError, c.want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused submissions opened the database: %v", err)
	}
	// The same scenario without the bad setting is queued.
	if code, _, stderr := run("submit", scen, "--db", db); code != 0 || !strings.Contains(stderr, "queued as run 1:") {
		t.Errorf("submit: exit %d\n%s", code, stderr)
	}
}

// cli runs the CLI on args and returns its exit code, stdout and stderr.
func cli(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := newApp(&out, &errOut).execute(context.Background(), args)
	return code, out.String(), errOut.String()
}

// A worker runs a job only once it has a core for each of the job's
// parts (sim.partitions): with every job taking all the machine's CPUs,
// its three jobs run one at a time though --concurrency allows three.
func TestWorkerGivesEachPartACore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := fabriclabBinary(t)
	dir := t.TempDir()
	parts := min(runtime.NumCPU(), 8)
	scen := filepath.Join(dir, "parts.yaml")
	if err := os.WriteFile(scen, []byte(fmt.Sprintf(`name: parts
topology: {kind: leaf-spine, hosts: 16, hosts_per_leaf: 2, spines: 2}
workload: {kind: permutation, sizes: {list: [256KiB, 512KiB, 1MiB]}}
sim: {partitions: %d}
`, parts)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "q.db")
	if out, err := exec.Command(bin, "submit", scen, "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	w := startWorker(t, bin, db, "-c", "3")
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.Meta(1)
		st.Close()
		if err == nil && m.Status == store.StatusDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish:\n%s", w.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	running, started := 0, 0
	for _, line := range strings.Split(w.text(), "\n") {
		switch {
		case strings.Contains(line, ": started (job "):
			running++
			started++
			if running > 1 {
				t.Fatalf("two jobs of %d parts ran at once on %d CPUs:\n%s", parts, runtime.NumCPU(), w.text())
			}
		case strings.Contains(line, ", saved"):
			running--
		}
	}
	if started != 3 {
		t.Errorf("%d jobs started, want 3:\n%s", started, w.text())
	}
}
