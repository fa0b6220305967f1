package scenario

import (
	"fabriclab/units"
	"fabriclab/workload"
)

// Sizes lists the data sizes a variant runs, in order: the explicit list,
// or from, from×factor, … up to and including to (when the sweep hits it).
// For kind flows it is the one total of the flow list. spec must be valid.
func (f *File) Sizes(spec *Scenario) []units.Size {
	if spec.Workload.Kind == "flows" {
		return []units.Size{units.Size(f.flowFile(spec.Workload.File).total)}
	}
	return SweepSizes(spec.Workload.Sizes)
}

// SweepSizes expands a Sizes value (list, or from..to by factor).
func SweepSizes(s Sizes) []units.Size {
	if len(s.List) > 0 {
		return append([]units.Size(nil), s.List...)
	}
	if s.From <= 0 || s.To < s.From || s.Factor < 2 {
		return nil
	}
	var out []units.Size
	for v := s.From; ; v *= units.Size(s.Factor) {
		out = append(out, v)
		if v > s.To/units.Size(s.Factor) {
			break // the next step passes to (or would overflow)
		}
	}
	return out
}

// Jobs expands the file into one job per variant and data size, variants in
// file order (with a sweep: each file variant's points in sweep order) and
// sizes ascending within a variant. For kind flows a variant
// is one job whose Size is the total bytes of its flow list.
func (f *File) Jobs() []Job {
	var jobs []Job
	for vi, v := range f.Variants {
		var flows []workload.FlowSpec
		if v.Spec.Workload.Kind == "flows" {
			flows = f.flowFile(v.Spec.Workload.File).flows
		}
		for si, size := range f.Sizes(v.Spec) {
			jobs = append(jobs, Job{
				Scenario:     v.Spec.Name,
				Variant:      v.Name,
				VariantIndex: vi,
				SizeIndex:    si,
				Size:         size,
				Seed:         v.Spec.Seed,
				Spec:         v.Spec,
				FlowList:     flows,
				Dir:          f.Dir,
			})
		}
	}
	return jobs
}
