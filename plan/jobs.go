package plan

import (
	"fmt"

	"fabriclab/internal/inputfile"
	"fabriclab/scenario"
	"fabriclab/workload"
)

// MaxUniformMessages bounds a uniform or messages job (scenario validation
// says the same, with a location).
const MaxUniformMessages = workload.MaxUniformMessages

// jobDAG compiles job i of job's scenario (0 = the workload) at its size
// (JobSize) on layout, through its kind's descriptor: plan does the I/O a
// kind asks for (its size distribution, its flow list) and the layout's
// part (servers, rails, the scale-up domain). counts is the collective's
// workload.Count when the caller has it (nil, or Copies 0: the build
// counts).
func jobDAG(job scenario.Job, i int, layout Layout, dists SizeDists, counts *workload.Counts) (*workload.DAG, error) {
	w := scenario.JobWorkload(job.Spec, i)
	k, ok := scenario.LookupWorkloadKind(w.Kind)
	if !ok {
		return nil, fmt.Errorf("unknown workload kind %q", w.Kind)
	}
	hosts := layout.Hosts()
	in := scenario.BuildInput{Workload: w, Spec: job.Spec, Seed: scenario.JobSeed(job.Seed, i),
		Size: JobSize(job, i), NumHosts: hosts, Counts: counts}
	var err error
	if in.Hosts, err = k.Hosts(w, job.Spec.Topology, in.Seed); err != nil {
		if k.Collective {
			return nil, fmt.Errorf("workload.placement: %w", err)
		}
		return nil, err
	}
	if k.HostRange {
		for _, h := range in.Hosts {
			if h < 0 || h >= hosts {
				return nil, fmt.Errorf("host %d is not in the topology (hosts 0–%d)", h, hosts-1)
			}
		}
	}
	if k.Collective {
		// The same placement validation computed (servers are consecutive
		// gpus_per_server hosts on every topology, as topo builds them).
		in.Server, in.Rail = make([]int, len(in.Hosts)), make([]int, len(in.Hosts))
		for r, h := range in.Hosts {
			in.Server[r], in.Rail[r] = layout.Server(h), layout.Rail(h)
		}
	}
	if k.ReadsMessageKeys {
		if in.Dist, err = dists.Get(w.SizeDist, job.Dir); err != nil {
			return nil, err
		}
	}
	if k.ReadsFile {
		if in.Flows, err = flowList(job, i, w); err != nil {
			return nil, err
		}
	}
	d, err := k.Build(in)
	if err != nil || !k.Collective {
		return d, err
	}
	if err := scaleUp(d, layout); err != nil {
		return nil, err
	}
	return d, nil
}

// flowList is the flow list of job i: the one the scenario's loader read
// (the workload's), or its file, read now (a hand-made Job, an extra job).
func flowList(job scenario.Job, i int, w scenario.Workload) ([]workload.FlowSpec, error) {
	if i == 0 && job.FlowList != nil {
		return job.FlowList, nil
	}
	path := scenario.RelativeTo(job.Dir, w.File)
	f, err := inputfile.Open(path, inputfile.Limit)
	if err != nil {
		return nil, fmt.Errorf("workload.file: %w", err)
	}
	defer f.Close()
	return workload.ParseFlowList(path, f)
}

// scaleUp moves a collective's messages between GPUs of one server onto the
// layout's scale-up domain when it has one (else they go through the NICs
// and the edge switch).
func scaleUp(d *workload.DAG, layout Layout) error {
	server := make([]int, layout.Hosts())
	for h := range server {
		server[h] = layout.Server(h)
	}
	for i := range d.Msgs {
		m := &d.Msgs[i]
		if m.Marker || server[m.Src] != server[m.Dst] {
			continue
		}
		if m.Src == m.Dst {
			return fmt.Errorf("ranks %d and %d share host %d", m.SrcRank, m.DstRank, m.Src)
		}
		if src, ok := layout.ScaleUp(int(m.Src)); ok {
			dst, _ := layout.ScaleUp(int(m.Dst))
			m.Src, m.Dst = src, dst
		}
	}
	return nil
}

// JobSize is the size job i runs at: the job's Size for the workload, the
// first size of an extra job.
func JobSize(job scenario.Job, i int) int64 {
	if i > 0 {
		if sz := scenario.SweepSizes(scenario.JobWorkload(job.Spec, i).Sizes); len(sz) > 0 {
			return int64(sz[0])
		}
	}
	return int64(job.Size)
}
