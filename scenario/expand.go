package scenario

import (
	"fmt"
	"strings"

	"fabriclab/units"
	"fabriclab/workload"
)

// Sizes lists the data sizes a variant runs, in order: the explicit list,
// or from, from×factor, … up to and including to (when the sweep hits it).
// For kind flows it is the one total of the flow list, for kind messages
// the size distribution's mean. spec must be valid.
func (f *File) Sizes(spec *Scenario) []units.Size {
	if k := kindOf(spec.Workload.Kind); !k.Sized() {
		return []units.Size{k.rowSize(f, spec.Workload)}
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
		if kindOf(v.Spec.Workload.Kind).ReadsFile {
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

// JobWorkload is the workload of job i of a scenario: 0 is the top-level
// workload ("main"), i > 0 is jobs[i−1].
func JobWorkload(s *Scenario, i int) Workload {
	if i == 0 {
		return s.Workload
	}
	return s.Jobs[i-1].Workload
}

// JobName is the name of job i: "main" for the top-level workload.
func JobName(s *Scenario, i int) string {
	if i == 0 {
		return "main"
	}
	return strings.TrimSpace(s.Jobs[i-1].Name)
}

// JobSeed is the seed of job i's random choices (placement, send order,
// arrivals): the scenario seed for the main job, a mix of it and i for the
// others, so that two identical jobs do not draw the same numbers.
func JobSeed(seed uint64, i int) uint64 {
	if i == 0 {
		return seed
	}
	return seed ^ (uint64(i) * 0x9E3779B97F4A7C15)
}

// JobHosts lists the hosts job workload w occupies on topology t (seed is
// the job's seed, see JobSeed): a collective's rank → host placement
// (shifted by host_offset), the host range of a permutation, uniform or
// messages job
// (or its placement_hosts with placement: list),
// the target and senders of an incast; nil for a flow list (its hosts come
// from the file). Servers are consecutive groups of gpus_per_server hosts on
// every topology kind (rail numbers hosts server-major), as topo builds them.
func JobHosts(w Workload, t Topology, seed uint64) ([]int, error) {
	k, ok := LookupWorkloadKind(w.Kind)
	if !ok {
		return nil, fmt.Errorf("unknown workload kind %q", w.Kind)
	}
	return k.Hosts(w, t, seed)
}

// maxRunJobs bounds the jobs of one run (variants × sweep points × sizes):
// 1,024 sweep points of 64 sizes each. Beyond it a file of a few KB would
// ask for millions of jobs (and their memory) before validating them.
const maxRunJobs = 1 << 16

// checkJobCount refuses a file that expands into more than maxRunJobs jobs,
// counted from the sizes each variant lists, before anything per job is
// built or validated.
func (f *File) checkJobCount() error {
	total := 0
	for _, rv := range f.variants {
		n := 1 // flows and messages: one row
		if k, ok := LookupWorkloadKind(rv.spec.Workload.Kind); !ok || k.Sized() {
			n = len(SweepSizes(rv.spec.Workload.Sizes))
		}
		total += n
		if total > maxRunJobs {
			at := f.baseLocs["workload.sizes"]
			if l, ok := f.baseLocs["sweep"]; ok {
				at = l
			}
			return at.err(f.Path, "", "workload.sizes", fmt.Sprintf("the variants and sweep points × their sizes make more than %d jobs; run fewer sizes or points at a time", maxRunJobs))
		}
	}
	return nil
}
