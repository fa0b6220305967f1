// Command fabriclab is the CLI of the fabriclab network test lab: it runs
// scenario files and prints, writes and validates their results.
//
// The CLI is thin: scenario loads and expands files, lab runs one job,
// report formats results; runner.go runs jobs in parallel with progress.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// Restore the default handling so that a second Ctrl-C kills
			// the process at once. The progress reporter says so.
			stop()
		case <-exited:
		}
	}()
	code := newApp(os.Stdout, os.Stderr).execute(ctx, os.Args[1:])
	close(exited)
	os.Exit(code)
}
