// Command fabriclab is the CLI of the fabriclab network test lab: it runs
// scenario files and prints, writes and validates their results.
//
// The CLI is thin: scenario loads and expands files, lab runs one job,
// report formats results; runner.go runs jobs in parallel with progress,
// signals.go stops them on SIGINT, SIGTERM and SIGHUP.
package main

import (
	"context"
	"os"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	processStop = newSignalStop(cancel, os.Exit)
	processStop.listen()
	os.Exit(newApp(os.Stdout, os.Stderr).execute(ctx, os.Args[1:]))
}
