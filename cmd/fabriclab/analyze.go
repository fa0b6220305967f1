package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/fabric"
	"fabriclab/flow"
	jobplan "fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/units"
)

type analyzeFlags struct {
	sets     []string
	variant  string
	size     string
	top      int
	jsonPath string
}

func (a *app) analyzeCmd() *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze FILE",
		Short: "Flow-level analysis: max-min fair rates, bottlenecks, ECMP collisions",
		Long: `analyze builds one job of a scenario (the same topology, routes and queue
pairs the packet simulator would use) but, instead of simulating packets,
gives every flow its max-min fair rate on its static path (progressive
filling). It answers in milliseconds even for thousands of hosts.

Flows are the job's messages that can all run at once: those without
dependencies (a collective's first step; every message of a pattern or a
flow list, start times ignored), messages of one connection (QP) merged.
Paths are exactly the packet simulator's under ECMP and d-mod-k; dynamic
policies (spraying, flowlets, adaptive) are shown as ECMP would hash them.
Rates are payload GB/s at MTU/(MTU+overhead) of the wire rate.

It prints a per-flow table sorted by source (BW is the flow's rate, AGG-BW
the sum over all flows of the same source host, i.e. what that NIC sends),
the most loaded links (offered = what their flows would send at NIC rate,
carried = their max-min rates) and ECMP collision statistics: flows per
switch-to-switch link for each tier, against the ideal ceil(flows/links).
Paths and collisions are the fabric at time 0, as a run starts it: links
topology.failures takes down at 0 are routed around and not counted among
a tier's links; a note on stderr names failures that begin or end later.
The last line is the predicted completion time with the rates held
constant against the NIC-bound ideal.

This is the fluid, lossy-fabric view: with PFC a paused queue slows every
flow that shares it, so the packet simulator can be slower than this.`,
		Example: `  fabriclab analyze examples/fattree-permutation.yaml
  fabriclab analyze --set switch.forwarding=d-mod-k --top 5 examples/fattree-permutation.yaml
  fabriclab analyze --variant tuned-final --size 64MiB examples/alltoall-dcqcn.yaml
  fabriclab analyze --json - examples/incast.yaml | jq '.flows[] | .bottleneck'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr(cmd, "analyze needs exactly one scenario file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.analyze(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	a.maxScenarioFlag(cmd)
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario `key=value`, e.g. --set switch.forwarding=d-mod-k (repeatable)")
	fl.StringVar(&f.variant, "variant", "", "analyze variant `NAME` (default: the first)")
	fl.StringVar(&f.size, "size", "", "data size `S`, e.g. 64MiB (default: the variant's first size)")
	fl.IntVar(&f.top, "top", 10, "list the `N` most loaded links")
	fl.StringVar(&f.jsonPath, "json", "", "write the analysis as JSON to `FILE` (- for stdout, no tables)")
	return cmd
}

func (a *app) analyze(cmd *cobra.Command, path string, f analyzeFlags) error {
	if f.top < 0 {
		return usageErr(cmd, "--top must be at least 0, got %d", f.top)
	}
	var size units.Size
	if f.size != "" {
		s, err := units.ParseSize(f.size)
		if err != nil || s <= 0 {
			return usageErr(cmd, "--size %q: want a positive size such as 64MiB", f.size)
		}
		size = s
	}
	// The output never replaces the scenario or a file it reads (clobber.go).
	outputs := [][2]string{{"--json", f.jsonPath}}
	if err := checkClobber(outputs, []guarded{{path, "the scenario file"}}); err != nil {
		return err
	}
	if f.jsonPath != "" && f.jsonPath != "-" {
		if err := checkOutput(f.jsonPath); err != nil {
			return err
		}
	}
	// No engine runs the jobs: analyze reads the fabric and the traffic,
	// so what only an engine refuses (probes, sim.engine flow's limits)
	// does not stop it.
	p, err := a.load(path, f.sets, nil, scenario.EngineNone)
	if err != nil {
		return withPath(path, err)
	}
	if err := checkClobber(outputs, refGuards(p)); err != nil {
		return err
	}
	job, err := pickJob(cmd, p, f.variant, size)
	if err != nil {
		return err
	}
	// The plan's 5-tuples on the fabric as it stands at time 0: the paths
	// the packet engine's switches would route, without building it.
	if err := checkJobFits(job); err != nil {
		return withPath(path, err)
	}
	jp, tp, err := jobplan.Static(job)
	if err != nil {
		return withPath(path, err)
	}
	flows, err := flow.RootFlows(jp.DAG, flow.Routed(tp.Net, jp))
	if err != nil {
		return withPath(path, err)
	}
	if len(flows) == 0 {
		return withPath(path, fmt.Errorf("the job has no flows to analyze"))
	}
	nic := job.Spec.NIC
	eff := float64(nic.MTU) / float64(nic.MTU+nic.Overhead)
	r := flow.Analyze(tp.Net, flows, flow.Options{Efficiency: eff, Tiers: tp.Tiers, EndpointName: tp.EndpointName})
	fw := job.Spec.Switch.Forwarding
	if pol := fabric.Policies[fw]; !pol.Static() {
		fmt.Fprintf(a.stderr, "fabriclab: switch.forwarding=%s is dynamic: paths are shown as static ECMP would hash them\n", fw)
	}
	for _, note := range laterFailures(job.Spec.Topology.Failures) {
		fmt.Fprintf(a.stderr, "fabriclab: %s\n", forTerm(note))
	}
	if f.jsonPath != "-" {
		writeAnalysis(a.stdout, job, r, f.top)
	}
	return writeTo(a.stdout, f.jsonPath, func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(struct {
			Scenario   string `json:"scenario"`
			Variant    string `json:"variant"`
			SizeBytes  int64  `json:"size_bytes"`
			Forwarding string `json:"forwarding"`
			flow.Report
		}{job.Scenario, job.Variant, int64(job.Size), fw, r})
	})
}

// laterFailures notes the failures the analysis does not show. It shows
// the fabric at time 0, as the packet simulator starts it: a link down
// then is routed around and left out of the ECMP table; a link that fails
// later is up, and one that comes back later is down.
func laterFailures(fs []scenario.Failure) []string {
	var notes []string
	for i, f := range fs {
		times := ""
		if n := len(f.Outages()); n > 1 {
			times = fmt.Sprintf(" (%d outages)", n)
		}
		switch {
		case f.At > 0:
			notes = append(notes, fmt.Sprintf("topology.failures[%d]: %s–%s fails at %s%s; analyze shows the fabric at time 0, with it up", i, f.From, f.To, f.At, times))
		case f.Until > 0:
			notes = append(notes, fmt.Sprintf("topology.failures[%d]: %s–%s comes back up at %s%s; analyze shows the fabric at time 0, without it", i, f.From, f.To, f.Until, times))
		}
	}
	return notes
}

// pickJob is the job of variant name (the first without a name) at size
// (the variant's first size when 0; any size is allowed).
func pickJob(cmd *cobra.Command, p *plan, name string, size units.Size) (scenario.Job, error) {
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name)
	}
	vi := -1
	for i, v := range p.Variants {
		if name == "" || v.Name == name {
			vi = i
			break
		}
	}
	if vi < 0 {
		return scenario.Job{}, usageErr(cmd, "no variant %q in %s (have: %s)", name, p.Path, strings.Join(names, ", "))
	}
	for _, j := range p.Jobs {
		if j.VariantIndex != vi {
			continue
		}
		if size > 0 && j.Size != size {
			j.Size = size // analysis runs at any size
		}
		return j, nil
	}
	return scenario.Job{}, withPath(p.Path, fmt.Errorf("variant %q has no jobs (no data sizes)", p.Variants[vi].Name))
}

// writeAnalysis prints the three tables.
func writeAnalysis(w io.Writer, job scenario.Job, r flow.Report, top int) {
	msgs := 0
	for _, f := range r.Flows {
		msgs += f.Msgs
	}
	fmt.Fprintf(w, "# analyze: %s, variant %s, size %s: %s (%s without dependencies), forwarding %s\n",
		forTerm(job.Scenario), forTerm(job.Variant), units.Size(job.Size), plural(len(r.Flows), "flow"), plural(msgs, "message"), job.Spec.Switch.Forwarding)
	fmt.Fprintf(w, "# max-min fair rates (progressive filling), payload at %.2f%% of the wire rate\n", 100*r.Efficiency)
	fmt.Fprintf(w, "#%13s %14s %9s %13s %6s  %s\n", "SRC", "DST", "BW(GB/s)", "AGG-BW(GB/s)", "%NIC", "BOTTLENECK")
	sum, lo := 0.0, math.Inf(1)
	for _, f := range r.Flows {
		fmt.Fprintf(w, "%14s %14s %9.2f %13.2f %6.1f  %s\n", forTerm(f.SrcName), forTerm(f.DstName), f.GBps, f.AggGBps, f.NICPct, forTerm(f.Bottleneck))
		sum += f.GBps
		lo = math.Min(lo, f.GBps)
	}
	fmt.Fprintf(w, "# Avg flow bandwidth: %.2f GB/s, min %.2f GB/s; %d of %s below NIC rate\n",
		sum/float64(len(r.Flows)), lo, r.Limited, plural(len(r.Flows), "flow"))

	n := min(top, len(r.Links))
	if n > 0 {
		fmt.Fprintf(w, "\n# most loaded links (%d of %d in use)\n", n, len(r.Links))
		fmt.Fprintf(w, "#%27s %6s %14s %14s %15s %7s %11s\n", "LINK", "FLOWS", "OFFERED(Gb/s)", "CARRIED(Gb/s)", "CAPACITY(Gb/s)", "LOAD%", "BOTTLENECK")
		for _, l := range r.Links[:n] {
			fmt.Fprintf(w, "%28s %6d %14.1f %14.1f %15.1f %7.1f %11d\n", forTerm(l.Name), l.Flows, l.OfferedGbps, l.CarriedGbps,
				l.CapacityGbps, 100*l.OfferedGbps/l.CapacityGbps, l.Bottleneck)
		}
	}
	if len(r.Collisions) > 0 {
		fmt.Fprintf(w, "\n# ECMP collisions: flows per switch-to-switch link\n")
		fmt.Fprintf(w, "#%15s %6s %6s %5s %6s %6s  %s\n", "TIER", "LINKS", "FLOWS", "MAX", "MEAN", "IDEAL", "HISTOGRAM (n×k: k links carry n flows)")
		for _, c := range r.Collisions {
			fmt.Fprintf(w, "%16s %6d %6d %5d %6.2f %6d  %s\n", forTerm(c.Group), c.Links, c.Flows, c.Max, c.Mean, c.Ideal, histogramText(c.Histogram))
		}
	}
	fmt.Fprintf(w, "\n# predicted completion (rates held constant): %s vs ideal %s at NIC rate (%.2f×)\n",
		seconds(r.CompletionS), seconds(r.IdealS), r.Slowdown)
}

// A histogram line lists at most maxHistogramEntries flow counts exactly,
// else at most histogramRanges ranges of them (and the idle links).
const (
	maxHistogramEntries = 16
	histogramRanges     = 12
)

// histogramText writes h (h[n] links carry n flows) as its non-zero
// entries, "n×k" for k links with n flows: "0×2 3×12 4×2". When more than
// maxHistogramEntries flow counts occur, the counts above 0 are merged
// into at most histogramRanges ranges of equal width from the
// smallest to the largest, "lo–hi×k" ("0×2 870–875×3 876–881×5"), so that
// the line stays short however many flows the links carry.
func histogramText(h []int) string {
	var used []int // flow counts some link carries
	for n, k := range h {
		if k > 0 {
			used = append(used, n)
		}
	}
	if len(used) == 0 {
		return "-"
	}
	var parts []string
	if len(used) <= maxHistogramEntries {
		for _, n := range used {
			parts = append(parts, fmt.Sprintf("%d×%d", n, h[n]))
		}
		return strings.Join(parts, " ")
	}
	if used[0] == 0 {
		parts = append(parts, fmt.Sprintf("0×%d", h[0])) // idle links, exactly
		used = used[1:]
	}
	lo, hi := used[0], used[len(used)-1]
	width := (hi - lo + histogramRanges) / histogramRanges // ⌈(hi−lo+1)/ranges⌉
	for from := lo; from <= hi; from += width {
		to := min(from+width-1, hi)
		k := 0
		for _, x := range h[from : to+1] {
			k += x
		}
		switch {
		case k == 0:
		case from == to:
			parts = append(parts, fmt.Sprintf("%d×%d", from, k))
		default:
			parts = append(parts, fmt.Sprintf("%d–%d×%d", from, to, k))
		}
	}
	return strings.Join(parts, " ")
}

// seconds prints s in us or ms.
func seconds(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "never"
	case s < 1e-3:
		return fmt.Sprintf("%.1f us", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f s", s)
}
