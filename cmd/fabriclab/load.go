package main

import (
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

// withPath prefixes err with path unless it already names it.
func withPath(path string, err error) error {
	if strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
