package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Stopping on a signal. SIGINT (Ctrl-C), SIGTERM (kill, a scheduler) and
// SIGHUP (the terminal closed) all mean "stop, keep what finished". While
// `run` runs its jobs, the first one cancels the run's context: running
// jobs stop where they are, the outputs are written and the saved run is
// marked interrupted; the exit code is 128 + the signal's number, as shells
// report it (130, 143, 129). A signal that arrives once the jobs are done
// changes nothing: the outputs are being written. A second signal quits at
// once after the registered cleanups: temporary output files are removed
// (the previous outputs stay as they were) and a saved run is marked
// interrupted. `serve` and `worker` are in the jobs phase while they serve:
// the first signal stops serve's launches (saved as interrupted) or the
// worker's jobs (back to the queue), then they exit 128 + the signal.
// Outside jobs (validate, analyze, export, report, …) there is nothing to
// stop cleanly, and the first signal quits.

// stopSignals are the signals that stop a run.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalCause is the cause of a context cancelled by a signal.
type signalCause struct{ sig os.Signal }

func (c *signalCause) Error() string { return "stopped by " + signalName(c.sig) }

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// signalExitCode is 128 + the number of the signal that cancelled ctx, or
// exitInterrupted (130) when ctx was cancelled otherwise.
func signalExitCode(ctx context.Context) int {
	var c *signalCause
	if errors.As(context.Cause(ctx), &c) {
		if n, ok := c.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return exitInterrupted
}

// processStop handles the process's stop signals; main sets it, tests may
// too. Signals are the process's, so this is the one process-wide value of
// the CLI.
var processStop *signalStop

// signalStop turns stop signals into a cancelled context (the first) or an
// immediate exit (see above). A nil *signalStop (tests, library use) does
// nothing.
type signalStop struct {
	cancel context.CancelCauseFunc
	exit   func(code int) // os.Exit; tests record the code

	mu       sync.Mutex
	got      bool // a stop signal arrived
	phase    int  // idle, jobs or output (see jobPhase)
	next     int
	cleanups map[int]func()
}

func newSignalStop(cancel context.CancelCauseFunc, exit func(int)) *signalStop {
	return &signalStop{cancel: cancel, exit: exit, cleanups: map[int]func(){}}
}

// listen handles the process's stop signals until the process ends.
func (s *signalStop) listen() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, stopSignals...)
	go func() {
		for sig := range ch {
			s.handle(sig)
		}
	}()
}

func (s *signalStop) handle(sig os.Signal) {
	s.mu.Lock()
	quit := s.got || s.phase == phaseIdle
	s.got = true
	var fns []func()
	if quit {
		for _, fn := range s.cleanups {
			fns = append(fns, fn)
		}
		s.cleanups = map[int]func(){}
	}
	s.mu.Unlock()
	if sig == syscall.SIGHUP {
		// The terminal is gone: a write to a pipe whose reader died with
		// it must fail with an error, not kill the process before the
		// outputs and the database are written.
		signal.Ignore(syscall.SIGPIPE)
	}
	if !quit {
		s.cancel(&signalCause{sig})
		return
	}
	for _, fn := range fns {
		fn()
	}
	code := exitInterrupted
	if n, ok := sig.(syscall.Signal); ok {
		code = 128 + int(n)
	}
	s.exit(code)
}

// The phases of a command, for what a first signal does.
const (
	phaseIdle   = iota // no jobs to stop: a signal quits at once
	phaseJobs          // run's jobs: the first signal stops them
	phaseOutput        // the jobs are done: the first signal is noted, the outputs are still written
)

// jobPhase says run's jobs are starting: the first signal stops them.
func (s *signalStop) jobPhase() { s.setPhase(phaseJobs) }

// outputPhase says the jobs are done and the outputs are being written: a
// first signal lets them finish, a second quits.
func (s *signalStop) outputPhase() { s.setPhase(phaseOutput) }

func (s *signalStop) setPhase(p int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
}

// onQuit registers fn to run if a signal quits the process at once, and
// returns the function that unregisters it.
func (s *signalStop) onQuit(fn func()) (cancel func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.cleanups[id] = fn
	return func() {
		s.mu.Lock()
		delete(s.cleanups, id)
		s.mu.Unlock()
	}
}
