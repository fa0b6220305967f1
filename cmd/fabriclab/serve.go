package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"fabriclab/engines"
	"fabriclab/hosts/inventory"
	"fabriclab/queue"
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
files of --examples and the shared size distributions.`,
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
			return s.Serve(cmd.Context(), ln)
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
