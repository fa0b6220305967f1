package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/internal/safetext"
	"fabriclab/report"
	"fabriclab/units"
)

func init() { moreCommands = append(moreCommands, (*app).ncclCmd) }

// ncclFlags are nccl-tests' flags that the quick mode takes, and fabriclab's.
type ncclFlags struct {
	minBytes, maxBytes, stepBytes string // -b, -e, -i (nccl-tests' sizes)
	factor                        int    // -f
	iters, warmup                 int    // -n, -w
	dtype, op                     string // -d, -o
	root                          int    // -r
	check                         int    // -c

	ranks         int
	fabric        string
	printScenario bool
	format        string
	run           runFlags
}

// ncclSizeRe is a size as nccl-tests reads it (sscanf "%lf %1s"): a
// number, optional spaces, an optional K, M or G in either case.
var ncclSizeRe = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)\s*(.*?)\s*$`)

// parseNCCLSize reads a size as nccl-tests does: a number of bytes, or
// with K, M or G (either case) 2^10, 2^20, 2^30 bytes (8M is 8388608, 1G
// 1073741824, 1.5K 1536; a fraction of a byte is dropped). fabriclab's
// own binary units (8MiB) mean the same and are accepted too. 8MB is
// refused: nccl-tests would read it as 8M (2^20) and fabriclab's units as
// 8×10^6, so it says which to write.
func parseNCCLSize(s string) (int64, error) {
	m := ncclSizeRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with K, M or G as nccl-tests takes them: 8M, 1G)", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %v", s, err)
	}
	unit := m[2]
	mult := 1.0
	if unit != "" {
		switch strings.ToUpper(unit[:1]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		default:
			return 0, fmt.Errorf("%q: unknown size unit %q (nccl-tests takes K, M and G, powers of two: 8M, 1G)", s, unit)
		}
		switch rest := unit[1:]; rest {
		case "", "iB":
		case "B", "b":
			return 0, fmt.Errorf("%q is ambiguous: nccl-tests reads it as %s%s (2^%d), fabriclab's units as %s%sB (10^%d); write %s%s or %s%siB for the first",
				s, m[1], unit[:1], map[float64]int{1 << 10: 10, 1 << 20: 20, 1 << 30: 30}[mult], m[1], strings.ToUpper(unit[:1]),
				map[float64]int{1 << 10: 3, 1 << 20: 6, 1 << 30: 9}[mult], m[1], unit[:1], m[1], strings.ToUpper(unit[:1]))
		default:
			return 0, fmt.Errorf("%q: unknown size unit %q (nccl-tests takes K, M and G, powers of two: 8M, 1G)", s, unit)
		}
	}
	b := math.Floor(v * mult)
	if b < 1 || b > 1<<50 {
		return 0, fmt.Errorf("%q: a size must be from 1 byte to 1048576G (2^50 bytes)", s)
	}
	return int64(b), nil
}

// ncclSizes is nccl-tests' size sequence: from min, times factor (when it
// is above 1) or plus step, while at most max.
func ncclSizes(minB, maxB, step int64, factor int) ([]int64, error) {
	switch {
	case maxB < minB:
		return nil, fmt.Errorf("-e %d is below -b %d", maxB, minB)
	case factor < 1 && factor != 0:
		return nil, fmt.Errorf("-f %d: the factor must be at least 1", factor)
	case factor <= 1 && step < 1 && maxB > minB:
		return nil, errors.New("-i must be at least 1 byte")
	}
	var out []int64
	for s := minB; s <= maxB; {
		out = append(out, s)
		if len(out) > 4096 {
			return nil, fmt.Errorf("more than 4096 sizes from %d to %d (raise -i or use -f)", minB, maxB)
		}
		if factor > 1 {
			if s > maxB/int64(factor) {
				break
			}
			s *= int64(factor)
		} else {
			if maxB == minB {
				break
			}
			s += step
		}
	}
	return out, nil
}

// fabricSpec is a parsed --fabric: KIND[:RATE[:RATIO]].
type fabricSpec struct {
	kind    string
	rate    units.Rate
	oversub float64
	ratio   string // as written, e.g. 2to1
}

var ratioRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)to([0-9]+(?:\.[0-9]+)?)$`)

// parseFabric reads --fabric KIND[:RATE[:RATIO]]: KIND leaf-spine,
// fat-tree or rail; RATE the host and fabric link rate (400G, 100Gbps;
// default 400G); RATIO a leaf's down:up capacity as NtoM (2to1; default
// 1to1, non-blocking).
func parseFabric(s string) (fabricSpec, error) {
	const syntax = "--fabric KIND[:RATE[:RATIO]], e.g. leaf-spine:400G:2to1 (KIND leaf-spine, fat-tree or rail; RATE a link rate such as 400G or 100Gbps; RATIO down:up capacity per leaf as NtoM, 1to1 = non-blocking)"
	parts := strings.Split(s, ":")
	f := fabricSpec{kind: parts[0], rate: 400 * units.Gbps, oversub: 1, ratio: "1to1"}
	if len(parts) > 3 {
		return f, fmt.Errorf("--fabric %q: too many parts; %s", s, syntax)
	}
	switch f.kind {
	case "leaf-spine", "fat-tree", "rail":
	default:
		return f, fmt.Errorf("--fabric %q: unknown topology %q; %s", s, f.kind, syntax)
	}
	if len(parts) > 1 {
		r, err := units.ParseRate(parts[1])
		if err != nil || r <= 0 {
			if err == nil {
				err = errors.New("a rate above 0")
			}
			return f, fmt.Errorf("--fabric %q: %v; %s", s, err, syntax)
		}
		f.rate = r
	}
	if len(parts) > 2 {
		m := ratioRe.FindStringSubmatch(parts[2])
		if m == nil {
			return f, fmt.Errorf("--fabric %q: ratio %q is not NtoM; %s", s, parts[2], syntax)
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		d, _ := strconv.ParseFloat(m[2], 64)
		if n <= 0 || d <= 0 || n < d {
			return f, fmt.Errorf("--fabric %q: ratio %q must be at least 1to1 (down capacity over up capacity)", s, parts[2])
		}
		f.oversub, f.ratio = n/d, parts[2]
	}
	if f.kind == "fat-tree" && f.oversub != 1 {
		return f, fmt.Errorf("--fabric %q: a fat-tree is non-blocking (1to1); use leaf-spine or rail for %s", s, f.ratio)
	}
	return f, nil
}

// topologyYAML is the scenario's topology section for ranks on f: one
// rank per host (per GPU on rail).
func (f fabricSpec) topologyYAML(ranks int) (string, error) {
	var b strings.Builder
	rate := f.rate.String()
	over := strconv.FormatFloat(f.oversub, 'f', -1, 64)
	switch f.kind {
	case "leaf-spine":
		// The largest divisor of ranks up to 8 that leaves two leaves at
		// least (one leaf would not use its spines), and of those the
		// largest whose uplinks come out whole at the ratio, two spines
		// at least (6 hosts a leaf for 3to1 where ranks allow it); else
		// the ratio is rounded down by whole spines, and run's note says
		// so.
		per, exact := 0, 0
		for d := min(ranks/2, 8); d >= 1; d-- {
			if ranks%d != 0 {
				continue
			}
			if per == 0 {
				per = d
			}
			if up := float64(d) / f.oversub; exact == 0 && math.Abs(up-math.Round(up)) < 1e-9 && up >= 2 {
				exact = d
			}
		}
		if exact > 0 {
			per = exact
		}
		per = max(per, 1)
		fmt.Fprintf(&b, "topology:\n  kind: leaf-spine\n  hosts: %d\n  hosts_per_leaf: %d\n  oversubscription: %s\n", ranks, per, over)
	case "fat-tree":
		k := 2
		for k*k*k/4 < ranks {
			k += 2
		}
		fmt.Fprintf(&b, "topology:\n  kind: fat-tree\n  k: %d\n", k)
	case "rail":
		if ranks%8 != 0 {
			return "", fmt.Errorf("--fabric rail: --ranks %d is not a multiple of 8 GPUs per server", ranks)
		}
		fmt.Fprintf(&b, "topology:\n  kind: rail\n  servers: %d\n  gpus_per_server: 8\n  oversubscription: %s\n", ranks/8, over)
	}
	fmt.Fprintf(&b, "  host_link: {rate: %s}\n  fabric_link: {rate: %s}\n", rate, rate)
	return b.String(), nil
}

// ncclScenario is the scenario the quick mode runs, as YAML.
func ncclScenario(test, kind string, args []string, f ncclFlags) (string, error) {
	minB, err := parseNCCLSize(f.minBytes)
	if err != nil {
		return "", fmt.Errorf("-b: %v", err)
	}
	maxB, err := parseNCCLSize(f.maxBytes)
	if err != nil {
		return "", fmt.Errorf("-e: %v", err)
	}
	step, err := parseNCCLSize(f.stepBytes)
	if err != nil {
		return "", fmt.Errorf("-i: %v", err)
	}
	sizes, err := ncclSizes(minB, maxB, step, f.factor)
	if err != nil {
		return "", err
	}
	fab, err := parseFabric(f.fabric)
	if err != nil {
		return "", err
	}
	if f.ranks < 2 {
		return "", fmt.Errorf("--ranks %d: a collective needs at least 2 ranks", f.ranks)
	}
	topo, err := fab.topologyYAML(f.ranks)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	// The command as a comment: control characters escaped, so that a
	// newline in a --set value can neither end the comment nor reach
	// the terminal.
	fmt.Fprintf(&b, "# fabriclab nccl %s\n", safetext.Terminal(strings.Join(args, " ")))
	fmt.Fprintf(&b, "# nccl-tests' %s_perf with -b %d -e %d, %s on %d ranks (one per host) of a %s fabric.\n",
		test, minB, maxB, stepText(step, f.factor), f.ranks, fab.kind)
	fmt.Fprintf(&b, "name: nccl-%s\n", test)
	b.WriteString(topo)
	fmt.Fprintf(&b, "workload:\n  kind: %s\n  ranks: %d\n  iterations: %d\n", kind, f.ranks, f.iters)
	if f.warmup > 0 {
		fmt.Fprintf(&b, "  warmup: %d\n", f.warmup)
	}
	switch kind {
	case "broadcast", "reduce", "gather", "scatter":
		fmt.Fprintf(&b, "  root: %d\n", f.root)
	}
	if f.factor > 1 {
		fmt.Fprintf(&b, "  sizes: {from: %s, to: %s, factor: %d}\n", units.Size(minB), units.Size(maxB), f.factor)
	} else {
		list := make([]string, len(sizes))
		for i, s := range sizes {
			list[i] = units.Size(s).String()
		}
		fmt.Fprintf(&b, "  sizes: {list: [%s]}\n", strings.Join(list, ", "))
	}
	return b.String(), nil
}

func stepText(step int64, factor int) string {
	if factor > 1 {
		return fmt.Sprintf("factor %d", factor)
	}
	return fmt.Sprintf("step %d bytes", step)
}

func (a *app) ncclCmd() *cobra.Command {
	var f ncclFlags
	cmd := &cobra.Command{
		Use:   "nccl COLLECTIVE [flags]",
		Short: "Run an nccl-tests-style collective sweep without a scenario file",
		Long: `nccl runs one collective the way nccl-tests' COLLECTIVE_perf would, on a
simulated fabric described by --fabric, and prints nccl-tests' output format
(--format table for fabriclab's tables). COLLECTIVE is an nccl-tests name:
` + strings.Join(report.NCCLTestNames(), ", ") + ` (with or without _perf; fabriclab's
own kind names work too).

Sizes are read as nccl-tests reads them: bytes, or K, M, G for 2^10, 2^20,
2^30 (8M = 8388608; 8MiB is the same, 8MB is refused as ambiguous). The
sizes go from -b to -e, times -f when it is above 1, else plus -i. -n and -w
are the measured and warmup iterations, run back to back (CCT is the
measured iterations' time over their number, as nccl-tests reports it);
every iteration is simulated, so they multiply the run time, and a
deterministic simulator needs no repeats: the defaults are -n 1 -w 0. -d
and -o only name the type and reduction in the output (count = size /
type size); -r is the root of broadcast, reduce, gather and scatter.

--fabric KIND[:RATE[:RATIO]]: KIND leaf-spine (hosts = --ranks, 8 per leaf
or the largest divisor of --ranks below that leaves two leaves at least), fat-tree (the smallest k that
holds --ranks, non-blocking) or rail (8 GPUs per server); RATE the host and
fabric link rate (default 400G); RATIO a leaf's down:up capacity as NtoM
(default 1to1; 2to1 halves the spines). Everything else has the scenario
defaults (RoCE with DCQCN, PFC and ECN on, ECMP); --set changes any key as
in run. --print-scenario prints the scenario YAML and exits: 'fabriclab run'
of that file runs the same jobs. The run is saved like any other (--db,
--no-store, --tag, --note).`,
		Example: `  fabriclab nccl all_reduce -b 8M -e 1G -f 2 -n 20 -w 5 --ranks 32 --fabric leaf-spine:400G:2to1
  fabriclab nccl alltoall -b 1M -e 64M -f 4 --ranks 16 --set transport.dcqcn.preset=tuned-final
  fabriclab nccl all_gather -b 64M -e 64M --ranks 64 --fabric fat-tree:100G --print-scenario > ag.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr(cmd, "nccl needs exactly one collective (%s), got %d arguments", strings.Join(report.NCCLTestNames(), ", "), len(args))
			}
			if _, err := report.KindOfNCCLTest(args[0]); err != nil {
				return usageErr(cmd, "%v", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, _ := report.KindOfNCCLTest(args[0])
			test := report.NCCLTestOf(kind)
			if err := checkFormat(cmd, f.format); err != nil {
				return err
			}
			if _, _, err := report.NCCLTypeSize(f.dtype); err != nil {
				return usageErr(cmd, "-d: %v", err)
			}
			if !contains(report.NCCLOps, f.op) {
				return usageErr(cmd, "-o %q: one of %s", f.op, strings.Join(report.NCCLOps, ", "))
			}
			switch {
			case f.iters < 1:
				return usageErr(cmd, "-n %d: at least 1 iteration", f.iters)
			case f.warmup < 0:
				return usageErr(cmd, "-w %d: warmup iterations cannot be negative", f.warmup)
			case f.check != 0 && f.check != 1:
				return usageErr(cmd, "-c %d: 0 or 1", f.check)
			case f.root < 0 || f.root >= max(f.ranks, 1) && contains([]string{"broadcast", "reduce", "gather", "scatter"}, kind):
				return usageErr(cmd, "-r %d: the root must be a rank (0–%d)", f.root, max(f.ranks, 1)-1)
			}
			sets, err := seedSet(cmd, f.run.sets, f.run.seed)
			if err != nil {
				return err
			}
			f.run.sets = sets
			text, err := ncclScenario(test, kind, append([]string{args[0]}, flagArgs(cmd)...), f)
			if err != nil {
				return usageErr(cmd, "%v", err)
			}
			if f.printScenario {
				_, err := fmt.Fprint(a.stdout, text)
				return err
			}
			return a.runNCCL(cmd.Context(), cmd, test, text, f)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVarP(&f.minBytes, "minbytes", "b", "32M", "smallest size, as nccl-tests reads it (`SIZE`: 8, 64K, 8M, 1G)")
	fl.StringVarP(&f.maxBytes, "maxbytes", "e", "32M", "largest size (`SIZE`)")
	fl.IntVarP(&f.factor, "stepfactor", "f", 0, "multiply each size by `N` (above 1; else -i steps)")
	fl.StringVarP(&f.stepBytes, "stepbytes", "i", "1M", "add `SIZE` to each size when there is no -f")
	fl.IntVarP(&f.iters, "iters", "n", 1, "measured iterations `N`, back to back (nccl-tests' default is 20; each is simulated)")
	fl.IntVarP(&f.warmup, "warmup_iters", "w", 0, "warmup iterations `N`, not measured")
	fl.StringVarP(&f.dtype, "datatype", "d", "float", "data `TYPE` named in the output: "+ncclTypeNames())
	fl.StringVarP(&f.op, "op", "o", "sum", "reduction `OP` named in the output: "+strings.Join(report.NCCLOps, ", "))
	fl.IntVarP(&f.root, "root", "r", 0, "root `RANK` of broadcast, reduce, gather and scatter")
	fl.IntVarP(&f.check, "check", "c", 1, "nccl-tests' result check (0 or 1; a simulation moves no data to check: #wrong is 0, or N/A with -c 0)")
	fl.IntVar(&f.ranks, "ranks", 8, "ranks `N`, one per host (nccl-tests' MPI ranks × GPUs)")
	fl.StringVar(&f.fabric, "fabric", "leaf-spine:400G:1to1", "the fabric `KIND[:RATE[:RATIO]]`, e.g. leaf-spine:400G:2to1, fat-tree:100G, rail:400G")
	fl.BoolVar(&f.printScenario, "print-scenario", false, "print the scenario YAML and exit without running")
	fl.StringVar(&f.format, "format", formatNCCL, formatUsage)
	fl.StringArrayVar(&f.run.sets, "set", nil, "override a scenario `key=value` (repeatable), as in run")
	fl.Uint64Var(&f.run.seed, "seed", 0, "the scenario seed `N`")
	fl.IntVarP(&f.run.parallel, "parallel", "j", 0, "run `N` jobs at once (default: the number of CPUs)")
	fl.StringVar(&f.run.jsonPath, "json", "", "write results as JSON to `FILE` (- for stdout)")
	fl.StringVar(&f.run.csvPath, "csv", "", "write results as CSV to `FILE` (- for stdout)")
	fl.StringVar(&f.run.report, "report", "", "write an HTML report with charts to `FILE`")
	fl.BoolVarP(&f.run.quiet, "quiet", "q", false, "print no tables and no progress")
	fl.StringVar(&f.run.db, "db", "", dbUsage)
	fl.BoolVar(&f.run.noStore, "no-store", false, "do not save the run in the results database")
	fl.StringArrayVar(&f.run.tags, "tag", nil, "tag the saved run with `T` (repeatable)")
	fl.StringVar(&f.run.note, "note", "", "attach a note `TEXT` to the saved run")
	return cmd
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func ncclTypeNames() string {
	return "int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16"
}

// flagArgs is the flags given on the command line, in the order of the
// help, for the scenario's first comment.
func flagArgs(cmd *cobra.Command) []string {
	var out []string
	for _, name := range []string{"minbytes", "maxbytes", "stepfactor", "stepbytes", "iters", "warmup_iters", "datatype", "op",
		"root", "check", "ranks", "fabric", "set", "seed"} {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		flag := "--" + fl.Name
		if fl.Shorthand != "" {
			flag = "-" + fl.Shorthand
		}
		if name == "set" {
			sets, _ := cmd.Flags().GetStringArray("set")
			for _, v := range sets {
				out = append(out, flag, v)
			}
			continue
		}
		out = append(out, flag, fl.Value.String())
	}
	return out
}

// runNCCL runs the quick mode's scenario text as run runs a file: the
// jobs in parallel with progress on stderr, saved in the results store,
// the outputs (--json, --csv, --report) at the end; then the tables in
// the nccl-tests format (or fabriclab's).
func (a *app) runNCCL(ctx context.Context, cmd *cobra.Command, test, text string, f ncclFlags) error {
	fr := f.run
	if fr.parallel < 0 {
		return usageErr(cmd, "--parallel must be at least 1, got %d", fr.parallel)
	}
	if fr.parallel == 0 {
		fr.parallel = runtime.NumCPU()
	}
	stdoutTaken := 0
	for _, o := range []string{fr.jsonPath, fr.csvPath, fr.report} {
		if o == "-" {
			stdoutTaken++
		}
	}
	if stdoutTaken > 1 {
		return usageErr(cmd, "only one of --json, --csv and --report can write to stdout")
	}
	if (len(fr.tags) > 0 || fr.note != "") && fr.noStore {
		return usageErr(cmd, "--tag and --note need the results store (drop --no-store)")
	}
	for _, t := range fr.tags {
		if err := checkTag(t); err != nil {
			return usageErr(cmd, "--%v", err)
		}
	}
	outputs := [][2]string{{"--json", fr.jsonPath}, {"--csv", fr.csvPath}, {"--report", fr.report}}
	var guards []guarded
	if !fr.noStore {
		guards = append(guards, guardDB(fr.db)...)
	}
	if err := checkClobber(outputs, guards); err != nil {
		return err
	}
	for _, out := range []string{fr.jsonPath, fr.csvPath, fr.report} {
		if out != "" && out != "-" {
			if err := checkOutput(out); err != nil {
				return err
			}
		}
	}
	p, err := ncclPlan(test, text, fr.sets)
	if err != nil {
		return &exitErr{exitError, oneLine(err.Error())}
	}
	// The collective is the argument: a --set that changes the kind
	// (workload.kind, or workload={kind: …}) would run another under its
	// name (an all-to-all headed all_reduce_perf).
	want, _ := report.KindOfNCCLTest(test)
	for _, j := range p.Jobs {
		if k := j.Spec.Workload.Kind; k != want {
			return usageErr(cmd, "--set makes the workload %s; the collective is the argument (%s): run fabriclab nccl %s instead", k, test, report.NCCLTestOf(k))
		}
	}
	if err := checkJobsFit(p); err != nil {
		return &exitErr{exitError, oneLine(err.Error())}
	}
	a.printNotes(p, fr.quiet)
	started := a.now()
	sr, err := a.beginStoredRun(p, fr, started)
	if err != nil {
		return err
	}
	r := &Runner{Run: a.runJob, Parallel: fr.parallel, Reporter: sr.wrap(a.reporter(fr.quiet))}
	processStop.jobPhase()
	results := r.RunAll(ctx, p.Jobs)
	processStop.outputPhase()
	finished := a.now()
	tables := func(out report.Output) error {
		opt := ncclOptionsOf(p, f.dtype, f.op)
		opt.NoCheck = f.check == 0
		return writeFormatted(a.stdout, f.format, planFabrics(p), nil, opt, out)
	}
	return a.finishRun(ctx, p, fr, results, started, finished, ctx.Err() != nil, sr, tables)
}

// ncclPlan loads the quick mode's scenario text as run loads a file
// (loadPlan), named nccl:TEST (its scenario file in the store).
func ncclPlan(test, text string, sets []string) (*plan, error) {
	dir, err := os.MkdirTemp("", "fabriclab-nccl-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "nccl-"+test+".yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return nil, err
	}
	p, err := loadPlan(path, sets, nil)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), path, "nccl:"+test))
	}
	p.Path = "nccl:" + test
	for i := range p.Jobs {
		p.Jobs[i].Dir = "."
	}
	return p, nil
}
