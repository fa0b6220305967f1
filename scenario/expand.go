package scenario

import (
	"fmt"
	"strings"

	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// Sizes lists the data sizes a variant runs, in order: the explicit list,
// or from, from×factor, … up to and including to (when the sweep hits it).
// For kind flows it is the one total of the flow list, for kind messages
// the size distribution's mean. spec must be valid.
func (f *File) Sizes(spec *Scenario) []units.Size {
	if spec.Workload.Kind == "flows" {
		return []units.Size{units.Size(f.flowFile(spec.Workload.File).total)}
	}
	if spec.Workload.Kind == "messages" {
		// One row: its "size" is the distribution's mean message size.
		d, err := f.sizeDist(spec.Workload.SizeDist)
		if err != nil {
			return nil
		}
		return []units.Size{units.Size(d.Mean() + 0.5)}
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
	hosts := Hosts(t)
	ranks := w.Ranks
	if ranks == 0 {
		ranks = hosts - w.HostOffset
	}
	switch {
	case workload.Algorithms(w.Kind) != nil:
		// Place over the hosts from host_offset on (a list names hosts
		// absolutely), then number them back.
		off := w.HostOffset
		if w.Placement == "list" {
			off = 0
		}
		if off < 0 || off >= hosts {
			return nil, fmt.Errorf("host_offset %d is not a host of the topology (0–%d)", off, hosts-1)
		}
		g := max(t.GPUsPerServer, 1)
		server, rail := make([]int, hosts-off), make([]int, hosts-off)
		for i := range server {
			server[i], rail[i] = (off+i)/g, (off+i)%g
		}
		hs, err := workload.Place(w.Placement, ranks, server, rail, w.RanksPerServer, sim.NewRNG(seed, "placement"), w.PlacementHosts)
		if err != nil {
			return nil, err
		}
		if w.Placement != "list" {
			for r := range hs {
				hs[r] += off
			}
		}
		return hs, nil
	case (w.Kind == "permutation" || w.Kind == "uniform" || w.Kind == "messages") && w.Placement == "list":
		return append([]int(nil), w.PlacementHosts...), nil
	case w.Kind == "permutation" || w.Kind == "uniform" || w.Kind == "messages":
		if w.HostOffset+ranks > hosts {
			return nil, fmt.Errorf("%d hosts from host_offset %d do not fit the topology's %d hosts", ranks, w.HostOffset, hosts)
		}
		hs := make([]int, ranks)
		for i := range hs {
			hs[i] = w.HostOffset + i
		}
		return hs, nil
	case w.Kind == "incast":
		hs := []int{w.Target}
		for k := 1; k <= w.Senders; k++ {
			hs = append(hs, (w.Target+k)%hosts)
		}
		return hs, nil
	}
	return nil, nil
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
		if k := rv.spec.Workload.Kind; k != "flows" && k != "messages" {
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
