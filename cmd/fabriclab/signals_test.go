package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fabriclab/store"
)

// blockingWriter blocks every Write until release is closed, telling
// entered when the first Write starts: a slow output phase.
type blockingWriter struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// withProcessStop installs a signalStop whose exit records the code, for
// one test.
func withProcessStop(t *testing.T) (context.Context, *signalStop, chan int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	s := newSignalStop(cancel, func(code int) { exited <- code })
	old := processStop
	processStop = s
	t.Cleanup(func() { processStop = old; cancel(nil) })
	return ctx, s, exited
}

// TestSignalsStopLikeCtrlC: SIGTERM and SIGHUP stop the run as SIGINT does
// and exit with 128 + the signal (issue 10, item 4).
func TestSignalsStopLikeCtrlC(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143, syscall.SIGHUP: 129} {
		ctx, stop, exited := withProcessStop(t)
		started := make(chan int, 8)
		a, _, stderr := newTestApp(testPlan(1, 4), blockingRun(1, started))
		go func() {
			<-started
			stop.handle(sig)
		}()
		jsonPath := filepath.Join(t.TempDir(), "r.json")
		code := a.execute(ctx, []string{"run", "-j", "1", "--json", jsonPath, "x.yaml"})
		if code != want {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", sig, code, want, stderr)
		}
		if b, err := os.ReadFile(jsonPath); err != nil || !strings.Contains(string(b), `"interrupted": true`) {
			t.Errorf("%v: json not written as interrupted: %v", sig, err)
		}
		select {
		case c := <-exited:
			t.Errorf("%v: one signal quit the process (exit %d)", sig, c)
		default:
		}
	}
}

// TestSignalDuringOutputQuits: a second signal while the outputs are being
// written quits at once, marking the saved run interrupted, whether the
// first one stopped the jobs or arrived after they ended (the outputs then
// go on being written).
func TestSignalDuringOutputQuits(t *testing.T) {
	for _, second := range []bool{true, false} {
		ctx, stop, exited := withProcessStop(t)
		started := make(chan int, 8)
		run := blockingRun(1, started)
		if !second {
			run = quickRun
		}
		a, _, _ := newTestApp(testPlan(1, 3), run)
		w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
		a.stdout = w
		dir := t.TempDir()
		db := filepath.Join(dir, "r.db")
		done := make(chan int, 1)
		go func() {
			done <- a.execute(ctx, []string{"run", "-j", "1", "--db", db, "--json", filepath.Join(dir, "r.json"), "x.yaml"})
		}()
		if second {
			<-started
			stop.handle(syscall.SIGINT)
		}
		select {
		case <-w.entered: // writing the tables
		case <-time.After(30 * time.Second):
			t.Fatal("the output phase never started")
		}
		if !second {
			stop.handle(syscall.SIGINT) // the jobs are done: noted, the outputs go on
			select {
			case code := <-exited:
				t.Fatalf("a first signal in the output phase quit (exit %d)", code)
			case <-time.After(50 * time.Millisecond):
			}
		}
		stop.handle(syscall.SIGTERM)
		select {
		case code := <-exited:
			if code != 143 {
				t.Errorf("second=%v: quit with %d, want 143", second, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("second=%v: a signal during the output phase was ignored", second)
		}
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.Meta(1)
		st.Close()
		if err != nil || m.Status != store.StatusInterrupted {
			t.Errorf("second=%v: saved run %+v, %v; want interrupted", second, m, err)
		}
		close(w.release)
		<-done
	}
}

// TestSignalOutsideJobsQuits: with no jobs to stop (validate, analyze,
// export, the loading before run's jobs) the first signal quits at once.
func TestSignalOutsideJobsQuits(t *testing.T) {
	_, stop, exited := withProcessStop(t)
	stop.handle(syscall.SIGTERM)
	select {
	case code := <-exited:
		if code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
	default:
		t.Error("a signal outside run's jobs did not quit")
	}
}
