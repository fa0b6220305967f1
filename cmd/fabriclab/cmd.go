package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/engines"
	"fabriclab/hosts"
	"fabriclab/hosts/inventory"
	"fabriclab/internal/inputfile"
	"fabriclab/internal/safetext"
	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/routecheck"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/units"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1   // a runtime error or a failed job
	exitUsage       = 2   // bad flags or arguments
	exitTimeLimit   = 3   // some job did not finish within sim.time_limit
	exitInterrupted = 130 // 128 + SIGINT, as shells report it
)

// exitErr carries an exit code through cobra. An empty message prints
// nothing (the details were already printed).
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func usageErr(cmd *cobra.Command, format string, a ...any) error {
	return &exitErr{exitUsage, fmt.Sprintf(format, a...) + fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())}
}

// app holds the CLI's collaborators so tests can replace them.
type app struct {
	stdout, stderr io.Writer
	// load reads a scenario file for jobs run on engine: "" for the
	// simulator its sim.engine picks, "hosts" for real hosts, "none" for
	// no engine (analyze) (scenario.Options.Engine).
	load        func(path string, sets, sweeps []string, engine string) (*plan, error)
	maxScenario scenarioSize // --max-scenario-size (0: scenario.DefaultMaxBytes)
	runJob      JobFunc
	isTerminal  func(w io.Writer) bool
	termWidth   func(w io.Writer) int // columns; 0 if unknown
	heartbeat   time.Duration         // plain-progress heartbeat interval
	now         func() time.Time
}

func newApp(stdout, stderr io.Writer) *app {
	a := &app{
		stdout:     stdout,
		stderr:     stderr,
		runJob:     engines.Run,
		isTerminal: isTerminal,
		termWidth:  termWidth,
		heartbeat:  10 * time.Second,
		now:        time.Now,
	}
	a.load = func(path string, sets, sweeps []string, engine string) (*plan, error) {
		return loadPlanOptions(path, scenario.Options{Sets: sets, Sweeps: sweeps, MaxBytes: int64(a.maxScenario), Engine: engine})
	}
	return a
}

// execute runs the CLI with args and returns the process exit code. Errors
// are printed as one line "fabriclab: ..." on stderr.
func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitError
	var ee *exitErr
	if errors.As(err, &ee) {
		code = ee.code
	} else if isCobraUsageError(err) {
		code = exitUsage
		err = fmt.Errorf("%s (see 'fabriclab --help')", err)
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(a.stderr, "fabriclab: %s\n", safetext.Terminal(oneLine(msg)))
	}
	return code
}

// isCobraUsageError recognizes cobra's own errors for unknown commands.
func isCobraUsageError(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.HasPrefix(err.Error(), "unknown shorthand flag")
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "fabriclab",
		Short: "A test lab for AI data-center networks",
		Long: `fabriclab simulates an AI data-center fabric (topology, switches, NICs,
congestion control, load balancing) running collective workloads, and reports
collective completion time, algorithm and bus bandwidth, percent of ideal,
PFC pauses and ECN marks, like nccl-tests on a real cluster.`,
		Example: `  fabriclab run examples/alltoall-dcqcn.yaml
  fabriclab validate examples/*.yaml
  fabriclab version`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(flagErrorFunc) // a bad number says what the flag takes
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// An empty --db '' (an unset shell variable) must not quietly
		// mean the default database.
		if fl := cmd.Flags().Lookup("db"); fl != nil && fl.Changed && fl.Value.String() == "" {
			return usageErr(cmd, "--db needs a path or a postgres:// URL (leave it out for the default database)")
		}
		// A --set or --sweep without key= is a bad command line (exit 2);
		// a bad value is the scenario's to refuse, at its key.
		for _, opt := range [][2]string{{"set", "key=value"}, {"sweep", "key=v1,v2,…"}} {
			values, err := cmd.Flags().GetStringArray(opt[0])
			if err != nil {
				continue // the command has no such flag
			}
			for _, v := range values {
				if _, _, ok := scenario.SplitOption(v); !ok {
					return usageErr(cmd, "--%s %s: needs %s", opt[0], inputfile.Token(v), opt[1])
				}
			}
		}
		return nil
	}
	root.AddCommand(a.runCmd(), a.validateCmd(), a.analyzeCmd(), a.versionCmd())
	root.AddCommand(a.storeCmds()...)
	root.AddCommand(a.reportCmd())
	for _, c := range moreCommands {
		root.AddCommand(c(a))
	}
	return root
}

// moreCommands are subcommands registered by the files that define them
// (agent, lab): each file's init appends its constructor.
var moreCommands []func(*app) *cobra.Command

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the fabriclab version",
		Example: `  fabriclab version`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "fabriclab %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr(cmd, "unexpected argument %q", args[0])
	}
	return nil
}

// sweepUsage is the help of --sweep, shared by run and validate.
const sweepUsage = "sweep a scenario key over values, `key=v1,v2,...` or key=[v1, v2] (repeatable, one key each; adds to or replaces the file's sweep)"

func (a *app) validateCmd() *cobra.Command {
	var sets, sweeps []string
	var engine string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Long: `validate loads each scenario file, applies the --sweep and --set options,
checks it and expands it into jobs. It prints "FILE: ok (N variants, M jobs)"
on stdout (every sweep point counts as a variant) or the error on stderr, one
line per file, and exits 1 if any file is invalid. Advice about valid but
probably unintended settings (a time limit below the ideal time, reordering
with a go-back-N NIC) follows as "fabriclab: note: …" lines on stderr
("fabriclab: note: FILE: …" when more than one file is checked).

With PFC on, the routes are checked for cyclic buffer dependencies where
they could have any (pinned paths, a routes file, failures, a topology
file): at time 0 and in every routing state topology.failures brings
about. A cycle the routes can close under PFC is a deadlock the traffic
may form; each is a "fabriclab: FILE: warning: …" line on stderr naming
its ports in order. Warnings do not change the exit status.

validate checks what run checks before simulating: the topology is built
and every reference (failed links, routing tables, flow lists, size
distributions) is resolved, so a file that validates runs. Jobs with
switch.forwarding te or a list of sim.telemetry.flows are built as run
would build them (traffic engineering's paths, the flows' ids) and
discarded.

--engine checks the files as run --engine would run them: packet, flow or
auto set sim.engine (not beside a --set sim.engine); hosts checks them for
real hosts, where neither the engine sim.engine picks nor sim.partitions
applies (what only the flow engine or a partitioned run refuses is not
refused) and what real hosts cannot run (a scale-up domain, Homa) is,
without contacting any agent.`,
		Example: `  fabriclab validate examples/*.yaml
  fabriclab validate --set workload.ranks=64 my-fabric.yaml
  fabriclab validate --sweep workload.qps=1,2,4,8 my-fabric.yaml
  fabriclab validate --engine hosts examples/hosts-alltoall.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr(cmd, "validate needs at least one scenario file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// As run: --engine packet|flow|auto is sim.engine; hosts is
			// no simulator at all.
			check := checkJobs
			simEngine := "" // --engine packet|flow|auto: the last --set (engineSet)
			switch engine {
			case "":
			case engines.Packet, engines.Flow, engines.Auto:
				s, err := engineSet(cmd, sets, engine)
				if err != nil {
					return err
				}
				sets, simEngine, engine = s, engine, ""
			case "hosts":
				check = checkHostsJobs
			default:
				return usageErr(cmd, "unknown --engine %q; use packet, flow, auto or hosts", engine)
			}
			bad := 0
			// With several files each note names its file, as the errors
			// and the warnings do; with one it is plain to which it belongs.
			noteFile := func(string) string { return "" }
			if len(args) > 1 {
				noteFile = func(path string) string { return path }
			}
			for _, path := range args {
				p, err := a.load(path, sets, sweeps, engine)
				err = engineErr(err, simEngine)
				if err == nil && len(p.Jobs) == 0 {
					err = withPath(path, errors.New("no jobs (no variants or no data sizes)"))
				}
				if err == nil {
					err = check(p)
				}
				if err != nil {
					bad++
					fmt.Fprintf(a.stderr, "fabriclab: %s\n", safetext.Terminal(oneLine(withPath(path, err).Error())))
					continue
				}
				fmt.Fprintf(a.stdout, "%s: ok (%s, %s)\n", safetext.Terminal(path), plural(len(p.Variants), "variant"), plural(len(p.Jobs), "job"))
				a.printFileNotes(noteFile(path), p, false)
				if engine == "hosts" {
					a.printHostsNotes(noteFile(path), p, runFlags{})
				}
				a.printDeadlockWarnings(path, p, engine == "hosts")
			}
			if bad > 0 {
				return &exitErr{exitError, ""} // each error is printed above

			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a scenario `key=value`, e.g. --set switch.pfc.enabled=false (repeatable)")
	cmd.Flags().StringArrayVar(&sweeps, "sweep", nil, sweepUsage)
	cmd.Flags().StringVar(&engine, "engine", "", "check for the `ENGINE` run --engine names instead of the scenario's sim.engine: packet, flow, auto or hosts (real hosts: the simulator's own refusals are not made, the hosts engine's are)")
	a.maxScenarioFlag(cmd)
	return cmd
}

// checkHostsJobs refuses, before any agent is contacted, every job that a
// run on real hosts would refuse whatever its agents (hosts.Check).
// validate --engine hosts calls it.
func checkHostsJobs(p *plan) error {
	return checkEach(p, hosts.Check)
}

// checkCovered refuses a run on real hosts with a scenario host that no
// agent of inv runs (every job would fail alike).
func checkCovered(p *plan, inv *inventory.Inventory) error {
	if inv == nil {
		return nil
	}
	checked := map[int]bool{}
	for _, j := range p.Jobs {
		if j.Spec == nil || checked[j.VariantIndex] {
			continue
		}
		checked[j.VariantIndex] = true
		if h := scenario.Hosts(j.Spec.Topology); h > 0 {
			if err := inv.Cover(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkJobsFit refuses, as run would when it builds them, a job whose
// workload cannot be compiled or whose estimated memory is above its
// sim.memory_limit (engines.Fits).
func checkJobsFit(p *plan) error {
	return checkEach(p, engines.Fits)
}

// checkJobs refuses, before any job runs, every job that run would refuse
// when it builds it (engines.Accept: checkJobsFit, then a build of the
// jobs with settings that only a build checks: traffic engineering's
// paths, sim.telemetry.flows' ids). validate and submit call it.
func checkJobs(p *plan) error {
	return checkEach(p, engines.Accept)
}

// checkEach is the first job's refusal by check, labelled with the job.
func checkEach(p *plan, check func(scenario.Job) error) error {
	for _, j := range p.Jobs {
		if err := check(j); err != nil {
			return fmt.Errorf("%s: %w", JobLabel(j), err)
		}
	}
	return nil
}

// checkJobFits refuses, as a build of the job would, a job whose estimated
// memory is above its sim.memory_limit (a job the estimate cannot count
// is left to the build, which says why in its own words).
func checkJobFits(j scenario.Job) error {
	e, _ := lab.EstimateMemory(j)
	return e.Check(int64(j.Spec.Sim.MemoryLimit))
}

// scenarioSize is the value of --max-scenario-size: a size with a unit
// (64MiB), at least 1KiB.
type scenarioSize int64

func (z *scenarioSize) String() string {
	if *z == 0 {
		return units.Size(scenario.DefaultMaxBytes).String()
	}
	return units.Size(*z).String()
}

func (z *scenarioSize) Set(v string) error {
	n, err := units.ParseSize(v)
	if err != nil {
		return err
	}
	if n < units.KiB {
		return fmt.Errorf("%s is below 1KiB", v)
	}
	*z = scenarioSize(n)
	return nil
}

func (z *scenarioSize) Type() string { return "size" }

// maxScenarioFlag adds --max-scenario-size to a command that reads a
// scenario file.
func (a *app) maxScenarioFlag(cmd *cobra.Command) {
	cmd.Flags().Var(&a.maxScenario, "max-scenario-size", "read scenario files of up to `SIZE` (e.g. 16MiB); larger ones are refused before parsing")
}

// seedSet adds --seed N to the --set options as seed=N (the last word);
// a --set seed= beside it is refused: one would silently lose.
func seedSet(cmd *cobra.Command, sets []string, seed uint64) ([]string, error) {
	if !cmd.Flags().Changed("seed") {
		return sets, nil
	}
	for _, v := range sets {
		if key, _, _ := scenario.SplitOption(v); key == "seed" {
			return nil, usageErr(cmd, "--seed %d and --set %s both set the seed; give one", seed, v)
		}
	}
	return append(sets, "seed="+strconv.FormatUint(seed, 10)), nil
}

// engineSet adds run or validate --engine ENGINE (packet, flow or auto) to
// the --set options as sim.engine=ENGINE (the last word); a --set
// sim.engine= beside it is refused, as seedSet refuses a --set seed=: one
// would silently lose. Errors the override causes name --engine
// (engineErr).
func engineSet(cmd *cobra.Command, sets []string, engine string) ([]string, error) {
	for _, v := range sets {
		if scenario.OptionSets(v, "sim.engine") { // sim.engine=, or sim={engine: …}
			return nil, usageErr(cmd, "--engine %s and --set %s both set sim.engine; give one", engine, v)
		}
	}
	return append(sets[:len(sets):len(sets)], "sim.engine="+engine), nil
}

// printNotes prints the advice about valid but probably unintended
// settings (scenario.Notes) on stderr, once per note.
func (a *app) printNotes(p *plan, quiet bool) { a.printFileNotes("", p, quiet) }

// printFileNotes is printNotes naming file in each note ("fabriclab:
// note: FILE: …", as the routes' check words its notes), unless file is "".
func (a *app) printFileNotes(file string, p *plan, quiet bool) {
	if quiet {
		return
	}
	seen := map[string]bool{}
	for _, v := range p.Variants {
		for _, n := range v.Notes {
			if !seen[n] {
				seen[n] = true
				fmt.Fprintf(a.stderr, "fabriclab: note: %s%s\n", notePlace(file), safetext.Terminal(n))
			}
		}
	}
}

// notePlace is how a note names file: "FILE: ", or "" for no file.
func notePlace(file string) string {
	if file == "" {
		return ""
	}
	return safetext.Terminal(file) + ": "
}

// printHostsNotes prints, for run --engine hosts, what the variants run
// otherwise on real hosts than on the simulator (hosts.Notes): each note
// once, naming the variants it is about unless it is about all of them,
// and naming file unless it is "" (as printFileNotes).
func (a *app) printHostsNotes(file string, p *plan, f runFlags) {
	if f.quiet {
		return
	}
	var order []string
	about := map[string][]string{}
	done := map[int]bool{}
	for _, j := range p.Jobs {
		if j.Spec == nil || done[j.VariantIndex] {
			continue
		}
		done[j.VariantIndex] = true
		for _, n := range hosts.Notes(j.Spec, f.cc) {
			if about[n] == nil {
				order = append(order, n)
			}
			about[n] = append(about[n], j.Variant)
		}
	}
	for _, n := range order {
		if vs := about[n]; len(vs) < len(done) {
			word := "variant "
			if len(vs) > 1 {
				word = "variants "
			}
			n = word + strings.Join(vs, ", ") + ": " + n
		}
		fmt.Fprintf(a.stderr, "fabriclab: note: %s%s\n", notePlace(file), safetext.Terminal(n))
	}
}

// maxCycleWarnings is how many cycles of one variant validate names; more
// are counted. (A variable for a test.)
var maxCycleWarnings = 3

// printDeadlockWarnings checks the routes of each variant (its first job:
// the data size changes no route) for cyclic buffer dependencies
// (routecheck) where PFC is on and the routes could have any, and prints
// a warning per cycle on stderr, once per line; a check that could not
// run, or stopped short, is a note. onHosts is run --engine hosts, where
// no job runs on a simulator.
func (a *app) printDeadlockWarnings(path string, p *plan, onHosts bool) {
	done := map[int]bool{}
	seen := map[string]bool{}
	say := func(format string, args ...any) {
		line := safetext.Terminal(oneLine(fmt.Sprintf(format, args...)))
		if !seen[line] {
			seen[line] = true
			fmt.Fprintf(a.stderr, "fabriclab: %s\n", line)
		}
	}
	// A variant whose jobs all run on the flow engine, which models no
	// pause frames, cannot show a deadlock its routes allow: its warning
	// says so.
	packet := map[int]bool{}
	for _, j := range p.Jobs {
		if name, _ := engines.For(j); name != engines.Flow || onHosts {
			packet[j.VariantIndex] = true
		}
	}
	for _, j := range p.Jobs {
		if j.Spec == nil || done[j.VariantIndex] {
			continue
		}
		done[j.VariantIndex] = true
		if !j.Spec.Switch.PFC.Enabled || !routecheck.MayLoop(j.Spec) {
			continue
		}
		what := ""
		if len(p.Variants) > 1 {
			what = "variant " + j.Variant + ": "
		}
		unseen := ""
		if !packet[j.VariantIndex] {
			unseen = " (the jobs run on the flow engine, which models no pause frames and cannot deadlock; sim.engine packet, or under auto a higher sim.flow_above, can show it)"
		}
		r, err := routecheck.Check(j)
		if err != nil {
			say("note: %s: %sthe routes could not be checked for PFC deadlocks: %v", path, what, err)
			continue
		}
		for i, f := range r.Findings {
			if i == maxCycleWarnings {
				more := len(r.Findings) - i
				noun := "cycle"
				if more > 1 {
					noun = "cycles"
				}
				say("%s: warning: %sand %d more %s the routes can close", path, what, more, noun)
				break
			}
			say("%s: warning: %sroutes can deadlock under PFC: %s%s", path, what, f, unseen)
		}
		if r.Skipped != "" {
			how := "was skipped"
			if r.States > 0 {
				how = "stopped short"
			}
			say("note: %s: %sthe routes' check for PFC deadlocks %s: %s", path, what, how, r.Skipped)
		}
	}
}

// plural is "1 job" or "N jobs" (report.Plural of a regular noun).
func plural(n int, s string) string { return report.Plural(n, s, s+"s") }

type runFlags struct {
	sets     []string
	sweeps   []string
	seed     uint64
	parallel int
	jsonPath string
	csvPath  string
	quiet    bool
	db       string // results database (--db); "" = the default
	noStore  bool
	report   string // --report FILE: the HTML report
	pngDir   string // --report-png DIR
	tags     []string
	note     string
	engine   string // --engine hosts ("" once --engine packet|flow|auto is in sets)
	// simEngine is --engine packet|flow|auto, added to sets as their last
	// sim.engine=ENGINE (engineSet); "" without.
	simEngine string
	agents    string // --agents FILE|lab (hosts engine)
	cc        string // --cc: the kernels' congestion control (hosts engine)
	// heartbeat is --heartbeat: how often the hosts engine checks on its
	// agents (0: its default).
	heartbeat time.Duration
	// inventory is --agents read (engineFor), for the checks before a
	// hosts run.
	inventory *inventory.Inventory
	queue     bool   // --queue: put the jobs on the database's job queue for workers (queue_cmds.go)
	wait      bool   // --wait: with --queue, wait for the workers and print as a local run does
	format    string // --format table|nccl-tests (format.go)
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a scenario and print its results",
		Long: `run loads a scenario file, expands its variants × sweep points × data sizes
into jobs, runs them in parallel and prints one nccl-tests-style table per
variant (each sweep point is a variant), then, with a sweep, a summary table
with one row per point and size.

Progress goes to stderr: a progress bar on a terminal, otherwise one line per
finished job. Ctrl-C stops the run: running jobs stop where they are and are
reported as incomplete (marked *), jobs not started are skipped, the outputs
are still written (JSON with "interrupted": true) and the exit code is 130.
A failed job is reported on stderr and the exit code is 1. A job that runs out
of simulated time (sim.time_limit) is reported on stderr, its row is marked
incomplete (*) and the exit code is 3.

Exit codes: 0 ok, 1 a job failed or bad scenario, 2 bad command line, 3 some
job did not finish within sim.time_limit, 130 interrupted.

Results do not depend on --parallel: each job is deterministic for its seed.
With more than one worker the largest data sizes start first (so the last
job to end is a short one); the N largest jobs then run at once, and an
interrupted sweep keeps its largest sizes. --parallel 1 keeps file order.

One large job can use several cores: --set sim.partitions=2 splits its
fabric into two parts, each on a core of its own (any workload, any
transport, link failures, PFC storms and deadlocks, telemetry, explain
mode). Its result is the same on any number of cores;
it differs from the one-part run only in the order of events at the same
picosecond, as another tie order would.`,
		Example: `  fabriclab run examples/alltoall-dcqcn.yaml
  fabriclab run --set workload.sizes.to=1GiB --seed 7 examples/alltoall-dcqcn.yaml
  fabriclab run --sweep workload.qps=1,2,4,8 --sweep workload.algorithm=direct,pairwise examples/alltoall-qps.yaml
  fabriclab run --json results.json --csv results.csv --parallel 4 my-fabric.yaml
  fabriclab run --set sim.partitions=2 testdata/bench/websearch-320.yaml
  fabriclab run --tag baseline --note "firmware 22.41" --db postgres://lab@db.example/fabriclab my-fabric.yaml
  fabriclab run --quiet --json - my-fabric.yaml | jq '.variants[].results[].busbw_gbps'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr(cmd, "run needs exactly one scenario file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sets, err := seedSet(cmd, f.sets, f.seed)
			if err != nil {
				return err
			}
			f.sets = sets
			return a.run(cmd.Context(), cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario `key=value`, e.g. --set switch.pfc.enabled=false (repeatable)")
	fl.StringArrayVar(&f.sweeps, "sweep", nil, sweepUsage)
	fl.Uint64Var(&f.seed, "seed", 0, "override the scenario seed with `N` (same as --set seed=N)")
	fl.IntVarP(&f.parallel, "parallel", "j", 0, "run `N` jobs at once (default: the number of CPUs, divided by sim.partitions)")
	fl.StringVar(&f.jsonPath, "json", "", "write results as JSON to `FILE` (- for stdout)")
	fl.StringVar(&f.csvPath, "csv", "", "write results as CSV to `FILE` (- for stdout)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print no tables and no progress")
	fl.StringVar(&f.db, "db", "", "save the run in the results database at `PATH` or postgres://URL (default $FABRICLAB_DB or ~/.local/share/fabriclab/runs.db)")
	fl.StringArrayVar(&f.tags, "tag", nil, "tag the saved run with `T` (one word; repeatable)")
	fl.StringVar(&f.note, "note", "", "attach a note `TEXT` to the saved run")
	fl.BoolVar(&f.noStore, "no-store", false, "do not save the run in the results database")
	fl.StringVar(&f.report, "report", "", "write an HTML report with charts to `FILE` (see 'fabriclab report --help')")
	fl.StringVar(&f.pngDir, "report-png", "", "with --report, also write each chart as a PNG into `DIR`")
	fl.StringVar(&f.engine, "engine", "", "run on the `ENGINE` instead of the scenario's sim.engine: packet (the packet simulator), flow (the flow-level engine), auto (flow for jobs of at least sim.flow_above it can express) or hosts (agents on real servers, see --agents); packet, flow or auto beside a --set of sim.engine is refused")
	fl.StringVar(&f.agents, "agents", "", "with --engine hosts: the agents `FILE` mapping hosts to agents, or lab for the namespace lab of 'fabriclab lab up'")
	fl.StringVar(&f.cc, "cc", "", "with --engine hosts: the kernels' TCP congestion control `NAME` (cubic, bbr, reno, dctcp…; default: dctcp for transport.kind dctcp, else each kernel's default)")
	fl.DurationVar(&f.heartbeat, "heartbeat", 0, "with --engine hosts: check on every agent every `D` (default 200ms, at most 1m); an agent that leaves three checks in a row unanswered, each waiting 2 D, fails the run: raise it for hosts too busy to answer in time")
	fl.BoolVar(&f.queue, "queue", false, "put the jobs on the results database's job queue for 'fabriclab worker' processes instead of running them here (see 'fabriclab worker --help')")
	fl.BoolVar(&f.wait, "wait", false, "with --queue: wait for the workers, printing progress and tables as rows land, then the outputs as a local run does")
	fl.StringVar(&f.format, "format", formatTable, formatUsage)
	a.maxScenarioFlag(cmd)
	return cmd
}

func (a *app) run(ctx context.Context, cmd *cobra.Command, path string, f runFlags) error {
	switch {
	case f.parallel < 0:
		return usageErr(cmd, "--parallel must be at least 1, got %d", f.parallel)
	}
	if f.jsonPath == "-" && f.csvPath == "-" {
		return usageErr(cmd, "--json and --csv cannot both write to stdout")
	}
	// Check the output files before any job runs rather than lose the
	// results of a long run to a typo (see output.go).
	if f.report == "-" && (f.jsonPath == "-" || f.csvPath == "-") {
		return usageErr(cmd, "--report and --json or --csv cannot both write to stdout")
	}
	if f.pngDir != "" && f.report == "" {
		return usageErr(cmd, "--report-png needs --report FILE")
	}
	// --engine packet|flow|auto is the scenario's sim.engine, set like any
	// key: it goes with --queue jobs and is saved with the run's
	// overrides. Its errors name --engine (engineErr).
	switch f.engine {
	case engines.Packet, engines.Flow, engines.Auto:
		sets, err := engineSet(cmd, f.sets, f.engine)
		if err != nil {
			return err
		}
		f.sets, f.simEngine, f.engine = sets, f.engine, ""
	}
	if err := checkQueueFlags(cmd, f); err != nil {
		return err
	}
	if err := checkFormat(cmd, f.format); err != nil {
		return err
	}
	runJob, err := a.engineFor(cmd, &f)
	if err != nil {
		return err
	}
	if (len(f.tags) > 0 || f.note != "") && f.noStore {
		return usageErr(cmd, "--tag and --note need the results store (drop --no-store)")
	}
	for _, t := range f.tags {
		if err := checkTag(t); err != nil {
			return usageErr(cmd, "--%v", err)
		}
	}
	// No output may replace the scenario, the database or another output
	// (clobber.go); the files the scenario reads are checked once it is
	// loaded, still before anything runs.
	outputs := [][2]string{{"--json", f.jsonPath}, {"--csv", f.csvPath}, {"--report", f.report}}
	guards := []guarded{{path, "the scenario file"}}
	if !f.noStore {
		db := guardDB(f.db)
		guards = append(guards, db...)
		if len(db) > 0 && sameFile(db[0].path, path) {
			return &exitErr{exitUsage, "--db " + db[0].path + " is the scenario file; the results database must be a file of its own"}
		}
	}
	if err := checkClobber(outputs, guards); err != nil {
		return err
	}
	for _, out := range []string{f.jsonPath, f.csvPath, f.report} {
		if out == "" || out == "-" {
			continue
		}
		if err := checkOutput(out); err != nil {
			return err
		}
	}
	if f.pngDir != "" {
		if err := checkOutputDir(f.pngDir); err != nil {
			return fmt.Errorf("--report-png: %w", err)
		}
	}

	p, err := a.load(path, f.sets, f.sweeps, f.engine) // "" or hosts (engineFor)
	if err != nil {
		return withPath(path, engineErr(err, f.simEngine))
	}
	if err := checkClobber(outputs, refGuards(p)); err != nil {
		return err
	}
	if len(p.Jobs) == 0 {
		return withPath(path, errors.New("no jobs to run (no variants or no data sizes)"))
	}

	a.printNotes(p, f.quiet)
	if f.engine == "hosts" {
		// What every job would fail alike on real hosts is refused before
		// any agent is dialed, as validate --engine hosts refuses it.
		if err := checkHostsJobs(p); err != nil {
			return withPath(path, err)
		}
		if err := checkCovered(p, f.inventory); err != nil {
			return fmt.Errorf("--agents: %w", err) // it names the agents file and line
		}
		a.printHostsNotes("", p, f)
	}
	// As validate does, before a long run rather than after; only for jobs
	// that fit sim.memory_limit, as the check builds the route tables (the
	// jobs that do not are refused by their own build, before it allocates).
	if !f.quiet && checkJobsFit(p) == nil {
		a.printDeadlockWarnings(path, p, f.engine == "hosts")
	}
	if f.queue {
		return a.runQueued(ctx, path, p, f) // queue_cmds.go
	}
	started := a.now()
	// Open the results store before any job runs: a store that cannot be
	// written fails the run now rather than after it (see store_cmds.go).
	sr, err := a.beginStoredRun(p, f, started)
	if err != nil {
		return err
	}
	if f.parallel == 0 {
		f.parallel = runner.DefaultParallel(p.Jobs)
	}
	r := &Runner{Run: runJob, Parallel: f.parallel, Reporter: sr.wrap(a.reporter(f.quiet))}
	r.Fatal = fatalFor(f)
	processStop.jobPhase() // the first signal stops the jobs (signals.go)
	results := r.RunAll(ctx, p.Jobs)
	processStop.outputPhase() // the outputs are written; a second signal quits
	finished := a.now()
	interrupted := ctx.Err() != nil
	return a.finishRun(ctx, p, f, results, started, finished, interrupted, sr, nil)
}

// finishRun writes a run's outputs once its jobs are done (or stopped):
// the tables (with tables, or writeRunTables on stdout), JSON, CSV and
// report, the failed jobs and those that hit the time limit on stderr,
// the stored run's final status; and returns the run's exit error.
func (a *app) finishRun(ctx context.Context, p *plan, f runFlags, results []JobResult, started, finished time.Time, interrupted bool,
	sr *storedRun, tables func(report.Output) error) error {
	if tables == nil {
		tables = func(out report.Output) error { return a.writeRunTablesOn(a.stdout, p, f.format, f.engine, out) } // format.go
	}
	out, failures := buildOutput(p, results, interrupted)
	out.Sets, out.Sweeps = f.sets, f.sweeps
	out.Version = version
	out.Started = started.UTC().Format(time.RFC3339)
	out.Finished = finished.UTC().Format(time.RFC3339)

	// A job whose error stopped the run (Runner.Fatal), if one did.
	halted := false
	if fatal := fatalFor(f); fatal != nil && !f.queue {
		for _, jr := range results {
			halted = halted || jr.Ran && jr.Err != nil && fatal(jr.Err)
		}
	}
	// The planned jobs with no row, after the tables and in the JSON
	// ("missing"); none with --queue: jobs not done when --wait stopped
	// waiting go on on the workers, and the queue's own lines say which.
	var missing report.Unsaved
	if !f.queue {
		missing = notRunJobs(p, results, interrupted)
	}
	var errs []error
	if printsTables(f) {
		if err := tables(out); err != nil {
			errs = append(errs, err)
		} else if err := writeMissing(a.stdout, f.format, missing); err != nil {
			errs = append(errs, err)
		}
	}
	if err := writeTo(a.stdout, f.jsonPath, func(w io.Writer) error { return writeRunJSON(w, out, missing) }); err != nil { // output.go
		errs = append(errs, err)
	}
	if err := writeTo(a.stdout, f.csvPath, func(w io.Writer) error { return report.WriteCSV(w, out) }); err != nil {
		errs = append(errs, err)
	}
	if f.report != "" {
		if err := runReport(a.stdout, f.report, f.pngDir, out, p.Text, missing); err != nil {
			errs = append(errs, err)
		}
	}

	for _, fr := range failures {
		fmt.Fprintf(a.stderr, "fabriclab: %s: %s\n", safetext.Terminal(JobLabel(fr.Job)), safetext.Terminal(oneLine(fr.Err.Error())))
		if fr.Stack != "" {
			fmt.Fprint(a.stderr, fr.Stack)
		}
	}
	timedOut := 0
	for _, jr := range results {
		if hitTimeLimit(jr) {
			timedOut++
			limit := "the simulated time limit (" + timeLimitSetting(jr.Job) + ")"
			if h := jr.Result.Hosts; h != nil {
				// Real hosts run the limit at the agents file's scale.
				limit = fmt.Sprintf("its time limit on real hosts (%s at scale %g)", timeLimitSetting(jr.Job), h.Scale)
			}
			fmt.Fprintf(a.stderr, "fabriclab: %s: stopped at %s; its row is incomplete (*)\n", JobLabel(jr.Job), limit)
		}
	}
	if err := sr.finish(interrupted, len(failures) > 0, finished, f.quiet); err != nil {
		errs = append(errs, err)
	}
	for _, err := range errs {
		fmt.Fprintf(a.stderr, "fabriclab: %s\n", safetext.Terminal(oneLine(err.Error())))
	}
	switch {
	case interrupted:
		return &exitErr{signalExitCode(ctx), "interrupted"}
	case len(failures) > 0:
		msg := fmt.Sprintf("%d of %s failed", len(failures), plural(len(p.Jobs), "job"))
		if halted {
			msg += fmt.Sprintf("; the run stopped there: %d did not run", countNotRun(results))
		}
		return &exitErr{exitError, msg}
	case len(errs) > 0:
		return &exitErr{exitError, ""}
	case timedOut > 0:
		return &exitErr{exitTimeLimit, ""} // each job is named above
	}
	return nil
}

// fatalFor is the error after which run starts no more jobs
// (Runner.Fatal), nil for none: on real hosts a wrong token, which every
// later job would meet too.
func fatalFor(f runFlags) func(error) bool {
	if f.engine == "hosts" {
		return hosts.IsAuthError
	}
	return nil
}

// notRunJobs is what the tables lack of the plan, as show lists it for
// the saved run: the jobs that never started (the run was interrupted, or
// stopped at a fatal error) and those Ctrl-C stopped before they measured
// anything.
func notRunJobs(p *plan, results []JobResult, interrupted bool) report.Unsaved {
	u := report.Unsaved{Planned: len(p.Jobs)}
	var missing []scenario.Job
	for _, jr := range results {
		if jr.Ran {
			if _, keep, _ := resultRow(jr, interrupted); keep {
				continue
			}
		}
		if vi := jr.Job.VariantIndex; vi >= 0 && vi < len(p.Variants) {
			missing = append(missing, jr.Job)
		}
	}
	// In the tables' order: by variant, then size.
	slices.SortStableFunc(missing, func(a, b scenario.Job) int {
		return cmp.Or(cmp.Compare(a.VariantIndex, b.VariantIndex), cmp.Compare(a.SizeIndex, b.SizeIndex))
	})
	for _, j := range missing {
		u.Jobs = append(u.Jobs, report.UnsavedJob{Variant: p.Variants[j.VariantIndex].Name, SizeBytes: int64(j.Size)})
	}
	u.Missing = len(u.Jobs)
	switch {
	case u.Missing == 0:
	case interrupted:
		u.Why = "interrupted: the run stopped before they started or measured anything"
	default:
		u.Why = "the run stopped at a failed job before they started"
	}
	return u
}

// countNotRun is how many jobs never started.
func countNotRun(results []JobResult) int {
	n := 0
	for _, jr := range results {
		if !jr.Ran {
			n++
		}
	}
	return n
}

// printsTables reports whether run prints its tables on stdout: not with
// --quiet, nor when stdout takes the JSON, CSV or report.
func printsTables(f runFlags) bool {
	return !f.quiet && f.jsonPath != "-" && f.csvPath != "-" && f.report != "-"
}

// reporter picks the progress display: none with --quiet, bars on a
// terminal that reports a usable width, plain lines otherwise (a pipe, a
// log file, or a terminal of width 0 such as one under script(1) without
// stty cols, where bars would not show at all).
func (a *app) reporter(quiet bool) Reporter {
	switch {
	case quiet:
		return nil
	case a.isTerminal(a.stderr) && a.termWidth(a.stderr) > 0:
		return newBarReporter(a.stderr)
	}
	return newLineReporter(a.stderr, a.heartbeat)
}

// hitTimeLimit reports whether a job ran to its end without an error but
// did not finish: it ran out of simulated time (sim.time_limit), as
// opposed to being stopped by Ctrl-C.
func hitTimeLimit(jr JobResult) bool {
	return jr.Ran && jr.Err == nil && !jr.Stopped && !jr.Result.Complete
}

// timeLimitSetting is "sim.time_limit=1s" for the job's scenario.
func timeLimitSetting(j scenario.Job) string {
	if j.Spec == nil {
		return "sim.time_limit"
	}
	return "sim.time_limit=" + j.Spec.Sim.TimeLimit.String()
}

// buildOutput gathers job results into the report, variants in plan order
// and each variant's results by size index, so the output does not depend on
// the order jobs finished in. It returns the jobs that failed.
func buildOutput(p *plan, results []JobResult, interrupted bool) (report.Output, []JobResult) {
	out := report.Output{
		Scenario:     p.Name,
		ScenarioFile: p.Path,
		Seed:         p.Seed,
		Interrupted:  interrupted,
		Variants:     make([]report.VariantResult, len(p.Variants)),
	}
	for i, v := range p.Variants {
		out.Variants[i] = report.VariantResult{Name: v.Name, Collective: v.Collective, Parent: v.Parent, Sweep: v.Sweep, Results: []metrics.SizeResult{}}
	}
	ordered := make([]JobResult, 0, len(results))
	for _, r := range results {
		if r.Ran {
			ordered = append(ordered, r)
		}
	}
	sort.SliceStable(ordered, func(i, j int) bool {
		a, b := ordered[i].Job, ordered[j].Job
		if a.VariantIndex != b.VariantIndex {
			return a.VariantIndex < b.VariantIndex
		}
		return a.SizeIndex < b.SizeIndex
	})
	var failures []JobResult
	for _, r := range ordered {
		res, keep, failed := resultRow(r, interrupted)
		if failed {
			failures = append(failures, r)
		}
		if !keep {
			continue
		}
		vi := r.Job.VariantIndex
		if vi < 0 || vi >= len(out.Variants) {
			continue // cannot happen with a plan from loadPlan
		}
		out.Variants[vi].Results = append(out.Variants[vi].Results, res)
	}
	return out, failures
}

// resultRow is the row a finished job gives the report (and the store):
// keep is false for a job stopped by Ctrl-C before it measured anything,
// failed is true for a job that failed (its row carries the error).
func resultRow(r JobResult, interrupted bool) (res metrics.SizeResult, keep, failed bool) {
	res = r.Result
	if r.Err != nil {
		if interrupted && errCanceled(r.Err) {
			// Stopped by Ctrl-C before it measured anything worth keeping.
			if res.SizeBytes == 0 && res.CCTS == 0 {
				return res, false, false
			}
		} else {
			failed = true
			res.Error = r.Err.Error()
		}
		res.Complete = false
	}
	if res.SizeBytes == 0 {
		res.SizeBytes = int64(r.Job.Size)
	}
	return res, true, failed
}
