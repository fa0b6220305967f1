package main

import (
	"io"
	"strings"
	"time"

	"github.com/vbauerster/mpb/v8"

	"fabriclab/runner"
	"fabriclab/scenario"
)

// The job pool and its progress reporters live in package runner (a worker
// process or a web server runs jobs the same way); these are their names
// here.
type (
	// JobFunc runs one job; lab.Run in production, a fake in tests.
	JobFunc   = runner.JobFunc
	JobResult = runner.JobResult
	JobEvent  = runner.JobEvent
	Reporter  = runner.Reporter
	Runner    = runner.Runner

	lineReporter = runner.LineReporter
	barReporter  = runner.BarReporter
)

func newLineReporter(w io.Writer, heartbeat time.Duration) *lineReporter {
	return runner.NewLineReporter(w, heartbeat)
}

func newBarReporter(w io.Writer, opts ...mpb.ContainerOption) *barReporter {
	return runner.NewBarReporter(w, opts...)
}

// JobLabel names a job in progress lines: "variant size".
func JobLabel(j scenario.Job) string { return runner.JobLabel(j) }

// errCanceled reports whether err is only the cancellation of the run.
func errCanceled(err error) bool { return runner.Canceled(err) }

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
