package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/engines"
	"fabriclab/hosts/inventory"
	"fabriclab/queue"
	"fabriclab/store"
	"fabriclab/web"
)

func init() { moreCommands = append(moreCommands, (*app).serveCmd) }

func (a *app) serveCmd() *cobra.Command {
	var addr, db, tokenFile, examples string
	var t web.TLS
	var workers, parallel int
	var useQueue bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse, compare and launch runs in a web browser",
		Long: `serve is a web front end to the results database: the runs (filter by
name, tag, status and date), a run (its fabric, tables, every report chart,
overrides, scenario; JSON, CSV and HTML downloads), a comparison of runs
(their curves overlaid, metrics side by side with deltas), and a launch page
that validates a pasted scenario or an example inline (line:column errors)
and runs it on the server's worker pool (or, with --queue, on the job queue
that fabriclab worker processes take jobs from), with live progress and
cancel.

It binds 127.0.0.1:7480. Beyond loopback it needs TLS (--cert-file,
--key-file) and --token-file (a file only its owner can read, at least 16
bytes; the browser logs in with it once) or client certificates
(--client-ca). Launches run with the server's permissions and read only
files of --examples and the shared size distributions.

Ctrl-C or SIGTERM stops serve: it takes no more launches, stops the
running ones as their Cancel button does (their finished rows are saved,
the runs marked interrupted) and exits 130 or 143; launches on the job
queue (--queue) go on on the workers. A second signal quits at once.`,
		Example: `  fabriclab serve
  fabriclab serve --db runs.db --examples examples --workers 2
  fabriclab serve --db postgres://lab@db.example/fabriclab --queue
  fabriclab serve --addr 0.0.0.0:7480 --token-file ~/.fabriclab-token --cert-file cert.pem --key-file key.pem`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workers < 1 || workers > 64 {
				return usageErr(cmd, "--workers must be 1…64, got %d", workers)
			}
			if parallel < 0 || parallel > 1024 {
				return usageErr(cmd, "--parallel must be 1…1024 (0: the CPUs ÷ sim.partitions), got %d", parallel)
			}
			var token []byte
			if tokenFile != "" {
				var err error
				if token, err = inventory.ReadToken(tokenFile); err != nil {
					return &exitErr{exitError, "--token-file: " + err.Error()}
				}
			}
			if examples != "" {
				if st, err := os.Stat(examples); err != nil || !st.IsDir() {
					return usageErr(cmd, "--examples %s is not a directory", examples)
				}
			}
			st, err := openDB(db, false)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			defer st.Close()
			var q *queue.Queue
			if useQueue {
				dsn, err := dbDSN(db)
				if err != nil {
					return &exitErr{exitError, err.Error()}
				}
				if q, err = queue.Open(cmd.Context(), dsn, st.Name(), a.stderr); err != nil {
					return &exitErr{exitError, err.Error()}
				}
				defer q.Close()
			}
			ln, err := web.Listen(addr, t, len(token) > 0)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			s, err := web.New(web.Config{Store: st, Token: token, Run: a.runJob, Check: engines.Accept, ExamplesDir: examples,
				Workers: workers, Parallel: parallel, Version: version, Log: a.stderr, Queue: q})
			if err != nil {
				ln.Close()
				return &exitErr{exitError, err.Error()}
			}
			scheme := "http"
			if t.CertFile != "" {
				scheme = "https"
			}
			fmt.Fprintf(a.stderr, "fabriclab: serving %s on %s://%s/\n", st.Name(), scheme, ln.Addr())
			return a.serveUntilStopped(cmd.Context(), s, st, ln)
		},
	}
	defExamples := ""
	if st, err := os.Stat("examples"); err == nil && st.IsDir() {
		defExamples = "examples"
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7480", "listen on `HOST:PORT` (beyond loopback: TLS and a token or client CA)")
	f.StringVar(&db, "db", "", dbUsage)
	f.StringVar(&tokenFile, "token-file", "", "require the token in `FILE` (at least 16 bytes, readable only by its owner)")
	f.StringVar(&t.CertFile, "cert-file", "", "serve HTTPS with this certificate `PEM`")
	f.StringVar(&t.KeyFile, "key-file", "", "…and its private key `PEM`")
	f.StringVar(&t.ClientCAFile, "client-ca", "", "require client certificates signed by the CA in `PEM` (mTLS)")
	f.StringVar(&examples, "examples", defExamples, "offer the scenario files of `DIR` on the launch page")
	f.IntVar(&workers, "workers", 1, "launches that run at once")
	f.IntVar(&parallel, "parallel", 0, "`N` jobs of one launch run at once (default: the number of CPUs, divided by sim.partitions); every job takes a core per part (sim.partitions) from the machine's CPUs, shared by all launches")
	f.BoolVar(&useQueue, "queue", false, "send launches to the job queue in the results database (fabriclab worker runs them) instead of this server's pool")
	return cmd
}

// serveUntilStopped serves until the server fails or a stop signal
// arrives (signals.go). The first signal cancels ctx: the server stops
// taking launches and stops the running ones as the page's Cancel does
// (web.Server.Serve closes its pool: their finished rows are saved and the
// runs marked interrupted; queued runs go on on the workers), then serve
// exits with 128 + the signal. A second signal quits at once, marking
// interrupted the runs this process still has running.
func (a *app) serveUntilStopped(ctx context.Context, s *web.Server, st *store.Store, ln net.Listener) error {
	processStop.jobPhase()
	defer processStop.onQuit(func() { interruptOwnRuns(st) })()
	err := s.Serve(ctx, ln)
	if ctx.Err() == nil {
		return err
	}
	why := "stopped"
	var c *signalCause
	if errors.As(context.Cause(ctx), &c) {
		why = c.Error()
	}
	fmt.Fprintf(a.stderr, "fabriclab: serve %s\n", why)
	return &exitErr{signalExitCode(ctx), ""}
}

// interruptOwnRuns marks interrupted the runs that this process started
// and that are still running: a second signal quits before the launches
// are saved.
func interruptOwnRuns(st *store.Store) {
	runs, err := st.Runs(store.Filter{})
	if err != nil {
		return
	}
	host, _ := os.Hostname()
	now := time.Now().UTC().Format(time.RFC3339)
	for _, m := range runs {
		if m.Status == store.StatusRunning && m.PID == os.Getpid() && m.Host == host {
			_ = st.FinishRun(m.ID, store.StatusInterrupted, now)
		}
	}
}
