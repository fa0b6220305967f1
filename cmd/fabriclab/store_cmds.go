package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/internal/safetext"
	"fabriclab/report"
	"fabriclab/scenario"
	"fabriclab/store"
)

// defaultDB is the results database used without --db: $FABRICLAB_DB, else
// $XDG_DATA_HOME/fabriclab/runs.db, else ~/.local/share/fabriclab/runs.db.
func defaultDB() (string, error) {
	if p := os.Getenv("FABRICLAB_DB"); p != "" {
		return p, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "fabriclab", "runs.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no results database: %v; set FABRICLAB_DB or pass --db (or --no-store)", err)
	}
	return filepath.Join(home, ".local", "share", "fabriclab", "runs.db"), nil
}

// openDB opens the database of --db (or the default one): for writing,
// creating and migrating it as needed, or read-only for the commands that
// only read (they never change the file, and work on a read-only one).
func openDB(flag string, readOnly bool) (*store.Store, error) {
	path := flag
	if path == "" {
		var err error
		if path, err = defaultDB(); err != nil {
			return nil, err
		}
	}
	if readOnly {
		return store.OpenReadOnly(path)
	}
	return store.Open(path)
}

// storedRun saves a run's results as its jobs finish. A nil *storedRun
// (--no-store) does nothing.
type storedRun struct {
	a  *app
	st *store.Store
	id int64

	unquit func() // unregisters the quit-time cleanup
	rows   int    // result rows the run should save (one per job)

	mu      sync.Mutex
	err     error // the first error saving a result
	unsaved int   // results that could not be saved
}

// beginStoredRun opens the database and inserts the run as running.
func (a *app) beginStoredRun(p *plan, f runFlags, started time.Time) (*storedRun, error) {
	if f.noStore {
		return nil, nil
	}
	st, err := openDB(f.db, false)
	if err != nil {
		return nil, &exitErr{exitError, err.Error() + " (or run with --no-store)"}
	}
	vs := make([]report.VariantResult, len(p.Variants))
	for i, v := range p.Variants {
		vs[i] = report.VariantResult{Name: v.Name, Collective: v.Collective, Parent: v.Parent, Sweep: v.Sweep}
	}
	id, err := st.BeginRun(store.Meta{
		Name: p.Name, ScenarioFile: p.Path, ScenarioText: string(p.Text), Seed: p.Seed,
		Sets: f.sets, Sweeps: f.sweeps, Version: version, Tags: dedupe(f.tags), Note: f.note,
		Started: started.UTC().Format(time.RFC3339), Expected: len(p.Jobs),
		Engine: f.engine, // "" (the simulator: --engine packet|flow|auto is a --set) or hosts
	}, vs)
	if err != nil {
		st.Close()
		return nil, &exitErr{exitError, err.Error()}
	}
	s := &storedRun{a: a, st: st, id: id, rows: len(p.Jobs)}
	// A signal that quits at once still marks the run interrupted.
	s.unquit = processStop.onQuit(func() {
		_ = st.FinishRun(id, store.StatusInterrupted, time.Now().UTC().Format(time.RFC3339))
	})
	return s, nil
}

// wrap returns a Reporter that saves each result as its job ends, then
// passes the event on to rep (which may be nil).
func (s *storedRun) wrap(rep Reporter) Reporter {
	if s == nil {
		return rep
	}
	return &storeReporter{inner: rep, s: s}
}

func (s *storedRun) save(jr JobResult) {
	res, keep, _ := resultRow(jr, jr.Stopped)
	if !keep {
		return
	}
	err := s.st.AddResult(s.id, jr.Job.VariantIndex, jr.Job.SizeIndex, res)
	s.mu.Lock()
	if err != nil {
		s.unsaved++
		if s.err == nil {
			s.err = err
		}
	}
	s.mu.Unlock()
}

// finish sets the final status, closes the database and says where the run
// went. A run that could not save every result (a full disk, a lost
// server) is incomplete, whatever else happened: its saved rows are not
// the run, and the error says how many are missing.
func (s *storedRun) finish(interrupted, failed bool, finished time.Time, quiet bool) error {
	if s == nil {
		return nil
	}
	s.unquit()
	defer s.st.Close()
	s.mu.Lock()
	saveErr, unsaved := s.err, s.unsaved
	s.mu.Unlock()
	status := store.StatusDone
	switch {
	case saveErr != nil:
		status = store.StatusIncomplete
	case interrupted:
		status = store.StatusInterrupted
	case failed:
		status = store.StatusFailed
	}
	err := s.st.FinishRun(s.id, status, finished.UTC().Format(time.RFC3339))
	switch {
	case saveErr != nil:
		msg := fmt.Sprintf("run %d in %s is incomplete: %d of %d result rows could not be saved (%v)",
			s.id, s.st.Name(), unsaved, s.rows, oneLine(saveErr.Error()))
		if err != nil {
			msg += "; its status could not be saved either (" + oneLine(err.Error()) + "): runs and show will count the missing rows"
		}
		return errors.New(msg)
	case err != nil:
		return fmt.Errorf("run %d in %s: its final status could not be saved: %v", s.id, s.st.Name(), oneLine(err.Error()))
	}
	if !quiet {
		fmt.Fprintf(s.a.stderr, "fabriclab: saved as run %d\n", s.id)
	}
	return nil
}

type storeReporter struct {
	inner Reporter
	s     *storedRun
}

func (r *storeReporter) Start(total, workers int) {
	if r.inner != nil {
		r.inner.Start(total, workers)
	}
}

func (r *storeReporter) JobStart(index int, job scenario.Job, frac func() float64) {
	if r.inner != nil {
		r.inner.JobStart(index, job, frac)
	}
}

func (r *storeReporter) JobDone(ev JobEvent) {
	r.s.save(ev.JobResult)
	if r.inner != nil {
		r.inner.JobDone(ev)
	}
}

func (r *storeReporter) Interrupted(running int) {
	if r.inner != nil {
		r.inner.Interrupted(running)
	}
}

func (r *storeReporter) Finish(interrupted bool) {
	if r.inner != nil {
		r.inner.Finish(interrupted)
	}
}

const dbUsage = "results database: a SQLite file `PATH` or a postgres://user:pass@host:port/db URL (default $FABRICLAB_DB, else $XDG_DATA_HOME/fabriclab/runs.db, else ~/.local/share/fabriclab/runs.db)"

// checkTag refuses a tag that is not one word of printable text: tags
// are printed by runs and show, and a control character in one could
// rewrite the terminal.
func checkTag(t string) error {
	if t == "" || strings.ContainsAny(t, " \t\n") || safetext.HasControl(t) {
		return fmt.Errorf("tag %s: a tag is one word of printable text", strconv.Quote(t))
	}
	return nil
}

// forTerm escapes control characters in text from the database for the
// terminal (safetext.Terminal).
func forTerm(s string) string { return safetext.Terminal(s) }

func dedupe(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// parseDay reads a --since/--until value: a date (YYYY-MM-DD, midnight
// UTC) or an RFC 3339 time.
func parseDay(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--%s %q: want a date like 2026-11-30 or a time like 2026-11-30T14:00:00Z", flag, v)
}

// storeCmds are the commands that read and change the results database.
func (a *app) storeCmds() []*cobra.Command {
	return []*cobra.Command{a.runsCmd(), a.showCmd(), a.exportCmd(), a.compareCmd(), a.rmCmd(), a.tagCmd(), a.noteCmd()}
}

// withStore opens the database for writing, runs fn and closes it; errors
// exit 1.
func withStore(db string, fn func(st *store.Store) error) error {
	return useStore(db, false, fn)
}

// readStore is withStore for the commands that only read: the database is
// opened read-only.
func readStore(db string, fn func(st *store.Store) error) error {
	return useStore(db, true, fn)
}

func useStore(db string, readOnly bool, fn func(st *store.Store) error) error {
	st, err := openDB(db, readOnly)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	defer st.Close()
	if err := fn(st); err != nil {
		if e, ok := errors.AsType[*exitErr](err); ok {
			return e // its own code (a refused output is a usage error)
		}
		return &exitErr{exitError, oneLine(err.Error())}
	}
	return nil
}

func runIDArg(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if n < 0 {
			if len(args) < 2 {
				return usageErr(cmd, "%s needs a run id and at least one tag", cmd.Name())
			}
		} else if len(args) != n {
			return usageErr(cmd, "%s needs exactly one run id, got %d arguments", cmd.Name(), len(args))
		}
		if _, err := store.ParseID(args[0]); err != nil {
			// The message already points to 'fabriclab runs': one hint,
			// not that and --help's too.
			return &exitErr{exitUsage, strings.TrimPrefix(err.Error(), "store: ")}
		}
		return nil
	}
}

// statusText is a run's status for listings; a run still marked running
// whose process is gone (killed) is "running (stale?)", and a run that
// lacks rows it should have saved says how many it has.
func statusText(m store.Meta) string {
	st := forTerm(m.Status)
	if m.Stale() {
		st = "running (stale?)"
	}
	if m.Status == store.StatusQueued {
		// Its workers save its rows: say how far they are.
		return fmt.Sprintf("%s (%d/%d done)", st, m.Rows, m.Expected)
	}
	if n := m.Missing(); n > 0 {
		if m.Status == store.StatusDone {
			st = store.StatusIncomplete // saved as done although rows are missing: say what it is
		}
		st += fmt.Sprintf(" (%d of %s saved)", m.Expected-n, plural(m.Expected, "row"))
	}
	return st
}

func (a *app) runsCmd() *cobra.Command {
	var db, since, until string
	var f store.Filter
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs saved in the results database",
		Long: `runs lists the saved runs, oldest first: id, scenario name, start time,
status (running, done, interrupted, failed; "running (stale?)" for a run whose
process on this machine is gone, e.g. killed; "queued (7/20 done)" for a run
whose jobs are on the job queue, with its rows saved so far of all), variants,
result rows, the command-line overrides it ran with (--set and --sweep; --seed N
is kept as --set seed=N; "-" for none) and tags.`,
		Example: `  fabriclab runs
  fabriclab runs --tag baseline --name alltoall
  fabriclab runs --since 2026-11-01 --until 2026-12-01
  fabriclab runs --db /tmp/lab.db`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.Since, err = parseDay("since", since); err != nil {
				return usageErr(cmd, "%v", err)
			}
			if f.Until, err = parseDay("until", until); err != nil {
				return usageErr(cmd, "%v", err)
			}
			return readStore(db, func(st *store.Store) error {
				ms, err := st.Runs(f)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSTARTED\tSTATUS\tVARIANTS\tROWS\tOVERRIDES\tTAGS")
				for _, m := range ms {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", m.ID, forTerm(m.Name), forTerm(m.Started), statusText(m),
						m.Variants, m.Rows, runOverrides(m), forTerm(strings.Join(m.Tags, ",")))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().StringVar(&f.Tag, "tag", "", "only runs tagged `T`")
	cmd.Flags().StringVar(&f.Name, "name", "", "only runs whose scenario name contains `S`")
	cmd.Flags().StringVar(&since, "since", "", "only runs started at or after `DATE` (YYYY-MM-DD, UTC, or RFC 3339)")
	cmd.Flags().StringVar(&until, "until", "", "only runs started before `DATE` (YYYY-MM-DD, UTC, or RFC 3339)")
	return cmd
}

func (a *app) showCmd() *cobra.Command {
	var db, format string
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Print a saved run's tables",
		Long: `show prints a saved run's tables as run printed them, after one comment
line naming the run, its scenario file, start time and status, its tags and
note, one with its seed and command-line overrides (--set, --sweep), and the
summary of its fabric (read again from the saved scenario). --format
nccl-tests prints nccl-tests' columns and footer instead of the tables.
A run that has no row for some of the jobs it planned (interrupted, rows
that could not be saved, a killed or unfinished run) ends with a
"# missing:" line saying how many and why, then the sizes of each variant
or sweep point that have none (its saved scenario expanded again).`,
		Example: `  fabriclab show 12
  fabriclab show 12 --format nccl-tests`,
		Args: runIDArg(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd, format); err != nil {
				return err
			}
			id, _ := store.ParseID(args[0])
			return readStore(db, func(st *store.Store) error {
				out, m, err := st.Run(id)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "# run %d: %s (%s), started %s, %s\n", m.ID, forTerm(m.Name), forTerm(m.ScenarioFile), forTerm(m.Started), statusText(m))
				if len(m.Tags) > 0 {
					fmt.Fprintf(a.stdout, "# tags: %s\n", forTerm(strings.Join(m.Tags, " ")))
				}
				if m.Note != "" {
					fmt.Fprintf(a.stdout, "# note: %s\n", forTerm(oneLine(m.Note)))
				}
				return a.writeSavedTables(a.stdout, out, m, format) // format.go
			})
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().StringVar(&format, "format", formatTable, formatUsage)
	return cmd
}

func (a *app) exportCmd() *cobra.Command {
	var db, jsonPath, csvPath, telPath, telFormat string
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a saved run as JSON or CSV, or its telemetry",
		Long: `export writes a saved run in the formats of run --json and run --csv
(the JSON is what run --json wrote, per-flow records included when the run
recorded them). A run that has no row for some of the jobs it planned
has a "missing" object in its JSON, as show ends with a "# missing:"
block: how many, why, and which (variant and size_bytes).

--telemetry writes what sim.telemetry sampled: as CSV (the default), one
row per sample and quantity (variant, size_bytes, series port|flow, name,
tier, sample, t_s, quantity, value), or as JSON (--telemetry-format json),
each row's series as run --json has them.`,
		Example: `  fabriclab export 12 --json run12.json
  fabriclab export 12 --csv - | column -ts,
  fabriclab export 12 --telemetry queues.csv
  fabriclab export 12 --telemetry - --telemetry-format json | jq '.[0].telemetry.ports[0].queue_bytes'`,
		Args: runIDArg(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := store.ParseID(args[0])
			stdout := 0
			for _, p := range []string{jsonPath, csvPath, telPath} {
				if p == "-" {
					stdout++
				}
			}
			switch {
			case jsonPath == "" && csvPath == "" && telPath == "":
				return usageErr(cmd, "export needs --json FILE, --csv FILE or --telemetry FILE")
			case stdout > 1:
				return usageErr(cmd, "only one of --json, --csv and --telemetry can write to stdout")
			case telFormat != "csv" && telFormat != "json":
				return usageErr(cmd, "--telemetry-format must be csv or json, got %q", telFormat)
			case telPath == "" && cmd.Flags().Changed("telemetry-format"):
				return usageErr(cmd, "--telemetry-format needs --telemetry FILE")
			}
			outputs := [][2]string{{"--json", jsonPath}, {"--csv", csvPath}, {"--telemetry", telPath}}
			if err := checkClobber(outputs, guardDB(db)); err != nil {
				return err
			}
			return readStore(db, func(st *store.Store) error {
				out, m, err := st.Run(id)
				if err != nil {
					return err
				}
				if err := checkClobber(outputs, savedRunGuards(m, outputs)); err != nil {
					return err
				}
				if telPath != "" && !report.HasTelemetry(out) {
					return fmt.Errorf("run %d: %w", id, report.ErrNoTelemetry) // before any file is written
				}
				if jsonPath != "" {
					// As run --json: "missing" lists the jobs the run
					// planned that have no row, as show's "# missing:"
					// block does (its saved scenario expanded again).
					missing := store.UnsavedOf(m, out)
					if err := writeTo(a.stdout, jsonPath, func(w io.Writer) error { return writeRunJSON(w, out, missing) }); err != nil {
						return err
					}
				}
				if err := writeTo(a.stdout, csvPath, func(w io.Writer) error { return report.WriteCSV(w, out) }); err != nil {
					return err
				}
				if telPath != "" {
					write := report.WriteTelemetryCSV
					if telFormat == "json" {
						write = report.WriteTelemetryJSON
					}
					if err := writeTo(a.stdout, telPath, func(w io.Writer) error { return write(w, out) }); err != nil {
						return err
					}
				}
				if out.MissingRows > 0 {
					// Written all the same: what was saved is worth having.
					what := "is incomplete"
					if m.Status == store.StatusFailed {
						what = "failed" // stopped at a job, or its queue gave up on some ('show' says which)
					}
					return fmt.Errorf("run %d %s: %d of its %d result rows were never saved; the export holds the %d that were (JSON: \"missing_rows\": %d)",
						id, what, out.MissingRows, m.Expected, m.Expected-out.MissingRows, out.MissingRows)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().StringVar(&jsonPath, "json", "", "write the run as JSON to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&csvPath, "csv", "", "write the run as CSV to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&telPath, "telemetry", "", "write the run's telemetry (sim.telemetry) to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&telFormat, "telemetry-format", "csv", "the format of --telemetry: csv or json")
	return cmd
}

func (a *app) rmCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:     "rm RUN",
		Short:   "Delete a saved run",
		Example: `  fabriclab rm 12`,
		Args:    runIDArg(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := store.ParseID(args[0])
			return withStore(db, func(st *store.Store) error { return st.Delete(id) })
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	return cmd
}

func (a *app) tagCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:     "tag RUN TAG...",
		Short:   "Add tags to a saved run",
		Example: `  fabriclab tag 12 baseline pfc`,
		Args:    runIDArg(-1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := store.ParseID(args[0])
			for _, t := range args[1:] {
				if err := checkTag(t); err != nil {
					return usageErr(cmd, "%v", err)
				}
			}
			return withStore(db, func(st *store.Store) error { return st.Tag(id, args[1:]...) })
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	return cmd
}

func (a *app) noteCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "note RUN TEXT",
		Short: "Set a saved run's note",
		Long:  `note replaces a saved run's note (show prints it); an empty TEXT clears it.`,
		Example: `  fabriclab note 12 "after the switch firmware update"
  fabriclab note 12 ""`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr(cmd, "note needs a run id and the note text, got %s", plural(len(args), "argument"))
			}
			return runIDArg(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := store.ParseID(args[0])
			return withStore(db, func(st *store.Store) error { return st.SetNote(id, args[1]) })
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	return cmd
}
