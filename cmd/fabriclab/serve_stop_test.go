package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/store"
)

const serveStopScenario = `name: stopme
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: alltoall, ranks: 8, sizes: {list: [64KiB, 1MiB, 4MiB]}}
`

// startServe runs `serve` in-process on a free loopback port with run as
// its job function and launches the example; it returns the exit code's
// channel once the launch is saved as run 1.
func startServe(t *testing.T, ctx context.Context, run JobFunc) (db string, code chan int, stderr *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	ex := filepath.Join(dir, "ex")
	if err := os.MkdirAll(ex, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ex, "stopme.yaml"), []byte(serveStopScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "runs.db")
	stderr = &syncBuffer{}
	a := newApp(io.Discard, stderr)
	a.runJob = run
	code = make(chan int, 1)
	go func() {
		code <- a.execute(ctx, []string{"serve", "--db", db, "--examples", ex, "--addr", "127.0.0.1:0", "--parallel", "3"})
	}()
	addr := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`)
	var base string
	for end := time.Now().Add(30 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(end) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/launch")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the launch page:\n%s", page)
	}
	resp, err = client.PostForm(base+"/launch", url.Values{"csrf": {string(m[1])}, "example": {"stopme.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("launch: %s\n%s", resp.Status, stderr.String())
	}
	return db, code, stderr
}

func runMeta(t *testing.T, db string) store.Meta {
	t.Helper()
	st, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Meta(1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServeStopsLaunchesOnASignal: the first SIGINT or SIGTERM stops
// serve's running launch as its Cancel does: the rows that finished are
// saved, the run ends interrupted (not running for good) and serve exits
// with 128 + the signal, not at once.
func TestServeStopsLaunchesOnASignal(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		ctx, stop, exited := withProcessStop(t)
		started := make(chan int, 8)
		db, code, stderr := startServe(t, ctx, blockingRun(1, started))
		<-started // a job runs (the machine's cores may hold back the others)
		stop.handle(sig)
		select {
		case c := <-code:
			if c != want {
				t.Errorf("%v: exit %d, want %d\n%s", sig, c, want, stderr.String())
			}
		case c := <-exited:
			t.Fatalf("%v: the first signal quit at once (exit %d)\n%s", sig, c, stderr.String())
		case <-time.After(30 * time.Second):
			t.Fatalf("%v: serve did not stop\n%s", sig, stderr.String())
		}
		m := runMeta(t, db)
		if m.Status != store.StatusInterrupted || m.Rows < 1 || m.Finished == "" {
			t.Errorf("%v: run 1 is %s with %d rows (finished %q), want interrupted with its finished rows\n%s",
				sig, m.Status, m.Rows, m.Finished, stderr.String())
		}
		if !strings.Contains(stderr.String(), "serve stopped by "+signalName(sig)) {
			t.Errorf("%v: stderr does not say why serve stopped:\n%s", sig, stderr.String())
		}
	}
}

// TestServeSecondSignalQuits: a second signal quits at once while the
// launches are still stopping, and still marks their runs interrupted.
func TestServeSecondSignalQuits(t *testing.T) {
	ctx, stop, exited := withProcessStop(t)
	started := make(chan int, 8)
	release := make(chan struct{})
	// Jobs that do not stop when asked (until the test ends).
	stubborn := func(ctx context.Context, j scenario.Job, p lab.Progress) (metrics.SizeResult, error) {
		started <- j.SizeIndex
		<-release
		return fakeResult(j), nil
	}
	db, code, stderr := startServe(t, ctx, stubborn)
	<-started
	stop.handle(syscall.SIGINT)
	select {
	case c := <-exited:
		t.Fatalf("the first signal quit at once (exit %d)", c)
	case c := <-code:
		t.Fatalf("serve returned (%d) with its launch still running", c)
	case <-time.After(100 * time.Millisecond):
	}
	stop.handle(syscall.SIGTERM)
	select {
	case c := <-exited:
		if c != 143 {
			t.Errorf("the second signal quit with %d, want 143", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the second signal did not quit\n%s", stderr.String())
	}
	if m := runMeta(t, db); m.Status != store.StatusInterrupted {
		t.Errorf("run 1 is %s after the second signal, want interrupted", m.Status)
	}
	close(release)
	select {
	case <-code:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return once its jobs ended")
	}
}
