package main

import (
	"errors"
	"fmt"
	"strings"

	"fabriclab/report"
	"fabriclab/scenario"
)

// plan is what the CLI needs from a scenario file once loaded, overridden
// and expanded. Tests build one directly instead of parsing YAML.
type plan struct {
	Name     string
	Path     string
	Seed     uint64
	Variants []planVariant // in file order (sweep points in sweep order); Job.VariantIndex indexes this
	Jobs     []scenario.Job
	Refs     []string // the files the scenario reads besides itself (flow lists, size distributions, routes)
	Text     []byte   // the scenario as it was read (saved with the run; never read again)
}

type planVariant struct {
	Name       string
	Notes      []string     // scenario.Notes: advice, printed once before running
	Collective string       // workload kind
	Parent     string       // a sweep point's variant of the file ("" without variants)
	Sweep      report.Point // a sweep point's values (nil without a sweep)
}

// loadPlan loads path with the scenario package, applies the --sweep
// options and the --set overrides (in order, validating after the last) and
// expands variants × sweep points × sizes into jobs.
func loadPlan(path string, sets, sweeps []string) (*plan, error) {
	return loadPlanOptions(path, scenario.Options{Sets: sets, Sweeps: sweeps})
}

// loadPlanOptions is loadPlan with every option of the scenario package:
// MaxBytes (--max-scenario-size), Engine (--engine hosts).
func loadPlanOptions(path string, o scenario.Options) (*plan, error) {
	f, err := scenario.LoadOptions(path, o)
	if err != nil {
		return nil, withPath(path, err)
	}
	p := &plan{Path: path, Jobs: f.Jobs(), Refs: f.ReferencedFiles(), Text: f.Source}
	if f.Base != nil {
		p.Name, p.Seed = f.Base.Name, f.Base.Seed
	}
	for _, v := range f.Variants {
		pv := planVariant{Name: v.Name, Parent: v.Parent}
		for _, sv := range v.Sweep {
			pv.Sweep = append(pv.Sweep, report.SweepValue{Key: sv.Key, Value: sv.Value})
		}
		switch {
		case v.Spec != nil:
			pv.Collective = v.Spec.Workload.Kind
			pv.Notes = scenario.Notes(v.Spec)
		case f.Base != nil:
			pv.Collective = f.Base.Workload.Kind
		}
		p.Variants = append(p.Variants, pv)
	}
	// Settings no variant reads: said once, with the first variant's.
	if len(p.Variants) > 0 {
		p.Variants[0].Notes = append(p.Variants[0].Notes, scenario.UnreadNotes(f)...)
	}
	// Jobs are authoritative: make sure every VariantIndex they use has a
	// name and a collective (e.g. a file without variants runs as one).
	for _, j := range p.Jobs {
		for len(p.Variants) <= j.VariantIndex {
			p.Variants = append(p.Variants, planVariant{})
		}
		pv := &p.Variants[j.VariantIndex]
		if pv.Name == "" {
			pv.Name = j.Variant
		}
		if pv.Collective == "" && j.Spec != nil {
			pv.Collective = j.Spec.Workload.Kind
		}
	}
	return p, nil
}

// withPath prefixes err with path unless it already begins with it
// ("FILE:…" or "FILE …"): a message that names the file further on only
// (an override blamed for a key of the file, "… (see FILE:4:19)"), or
// names another file whose name holds it, still begins with it.
func withPath(path string, err error) error {
	if msg := err.Error(); strings.HasPrefix(msg, path) && (len(msg) == len(path) || msg[len(path)] == ':' || msg[len(path)] == ' ') {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// engineErr words err, an error of loading a scenario with run or
// validate --engine engine (engineSet: sim.engine=ENGINE, the last --set),
// as the command line was written: the scenario package names the
// override "--set sim.engine", which was not typed. The refusal of the
// engine "--set sim.engine: flow: …; use sim.engine packet or auto" is
// "--engine flow: …; use --engine packet or auto", and where the
// overrides are blamed together, "--set k, sim.engine" is
// "--set k, --engine flow"; where a --sweep point is refused for the
// engine, "sim.engine: flow: …; use sim.engine packet or auto (see --set
// sim.engine)" is "--engine flow: …; use --engine packet or auto".
// engine "" (no --engine packet|flow|auto) and errors of other options
// leave err as it is.
func engineErr(err error, engine string) error {
	var e *scenario.Error
	if err == nil || engine == "" || !errors.As(err, &e) {
		return err
	}
	c := *e
	switch {
	case e.Flag != "":
		see := " (see --set sim.engine)"
		if !strings.HasSuffix(e.Msg, see) {
			return err
		}
		c.Msg = strings.TrimSuffix(c.Msg, see)
		if c.Key == "sim.engine" {
			c.Key = ""
			c.Msg = "--engine " + c.Msg
		}
	case e.Set == "sim.engine":
		c.Flag, c.Set = "--engine", engine
		if c.Key == "sim.engine" { // the engine's own refusal: "flow: why"
			c.Key = ""
			c.Msg = strings.TrimPrefix(c.Msg, engine+": ")
		}
	case strings.HasSuffix(e.Set, ", sim.engine"):
		c.Set = strings.TrimSuffix(e.Set, "sim.engine") + "--engine " + engine
	default:
		return err
	}
	c.Msg = strings.ReplaceAll(c.Msg, "use sim.engine packet or auto", "use --engine packet or auto")
	c.Msg = strings.ReplaceAll(c.Msg, "drop the --set (or --seed)", "drop --engine")
	// Keep what was said before the scenario's error (its file name).
	msg, inner := err.Error(), e.Error()
	if msg == inner || !strings.HasSuffix(msg, inner) {
		return &c
	}
	return fmt.Errorf("%s%w", strings.TrimSuffix(msg, inner), &c)
}
