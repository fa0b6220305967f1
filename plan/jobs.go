package plan

import (
	"fmt"
	"path/filepath"

	"fabriclab/internal/inputfile"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/workload"
)

// MaxUniformMessages bounds a uniform or messages job (scenario validation
// says the same, with a location).
const MaxUniformMessages = workload.MaxUniformMessages

// jobDAG compiles job i of job's scenario (0 = the workload) at its size
// (JobSize) on layout. counts is the collective's workload.Count when the
// caller has it (nil, or Copies 0: the build counts).
func jobDAG(job scenario.Job, i int, layout Layout, dists SizeDists, counts *workload.Counts) (*workload.DAG, error) {
	w := scenario.JobWorkload(job.Spec, i)
	seed := scenario.JobSeed(job.Seed, i)
	hosts := layout.Hosts()
	ranks := w.Ranks
	if ranks == 0 {
		ranks = hosts - w.HostOffset
	}
	size := JobSize(job, i)
	flowList := job.FlowList
	if i > 0 {
		flowList = nil
	}
	if workload.Algorithms(w.Kind) != nil {
		// The same placement validation computed (servers are consecutive
		// gpus_per_server hosts on every topology, as topo builds them).
		rankHost, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, fmt.Errorf("workload.placement: %w", err)
		}
		rankServer := make([]int, ranks)
		rankRail := make([]int, ranks)
		for r, h := range rankHost {
			rankServer[r], rankRail[r] = layout.Server(h), layout.Rail(h)
		}
		ws := CollectiveSpec(w, seed, size, ranks, rankHost, rankServer, rankRail)
		if counts != nil && counts.Copies > 0 {
			ws.Counts = counts
		}
		d, err := workload.Build(ws)
		if err != nil {
			return nil, err
		}
		server := make([]int, hosts)
		for h := range server {
			server[h] = layout.Server(h)
		}
		for i := range d.Msgs {
			m := &d.Msgs[i]
			if m.Marker || server[m.Src] != server[m.Dst] {
				continue
			}
			if m.Src == m.Dst {
				return nil, fmt.Errorf("ranks %d and %d share host %d", m.SrcRank, m.DstRank, m.Src)
			}
			// Inside a server: over the scale-up domain when there is one,
			// else through the NICs and the edge switch.
			if src, ok := layout.ScaleUp(int(m.Src)); ok {
				dst, _ := layout.ScaleUp(int(m.Dst))
				m.Src, m.Dst = src, dst
			}
		}
		return d, nil
	}
	switch w.Kind {
	case "permutation", "uniform":
		hs, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if h < 0 || h >= hosts {
				return nil, fmt.Errorf("host %d is not in the topology (hosts 0–%d)", h, hosts-1)
			}
		}
		if w.Kind == "permutation" {
			d, err := workload.Permutation(len(hs), size, sim.NewRNG(seed, "permutation"))
			if err != nil {
				return nil, err
			}
			mapHosts(d, hs)
			return d, nil
		}
		return workload.Uniform(hs, size, w.Load, job.Spec.Topology.HostLink.Rate, w.Duration,
			sim.NewRNG(seed, "uniform"), MaxUniformMessages)
	case "incast":
		return workload.Incast(hosts, w.Senders, w.Target, size)
	case "messages":
		hs, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, err
		}
		nic := job.Spec.NIC
		dist, err := dists.Get(w.SizeDist, job.Dir)
		if err != nil {
			return nil, err
		}
		return workload.Messages(workload.MessagesSpec{Hosts: hs, Sizes: dist, Load: w.Load,
			Rate: job.Spec.Topology.HostLink.Rate, Payload: int64(nic.MTU), Header: int64(nic.Overhead),
			Duration: w.Duration, Pattern: w.Pattern, ResponseBytes: int64(w.ResponseSize), Seed: seed, Limit: MaxUniformMessages})
	case "flows":
		flows := flowList
		if flows == nil {
			// A hand-made Job: read the file the scenario names.
			path := w.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(job.Dir, path)
			}
			f, err := inputfile.Open(path, inputfile.Limit)
			if err != nil {
				return nil, fmt.Errorf("workload.file: %w", err)
			}
			defer f.Close()
			if flows, err = workload.ParseFlowList(path, f); err != nil {
				return nil, err
			}
		}
		return workload.Flows(hosts, flows)
	}
	return nil, fmt.Errorf("unknown workload kind %q", w.Kind)
}

// mapHosts moves a pattern built on hosts 0…n−1 to hosts hs.
func mapHosts(d *workload.DAG, hs []int) {
	for i := range d.Msgs {
		d.Msgs[i].Src = int32(hs[d.Msgs[i].Src])
		d.Msgs[i].Dst = int32(hs[d.Msgs[i].Dst])
	}
	d.RankHost = append([]int(nil), hs...)
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

// CollectiveSpec is the workload.Spec of collective workload w at size
// with its ranks on hosts rankHost (their servers and rails given).
func CollectiveSpec(w scenario.Workload, seed uint64, size int64, ranks int, rankHost, rankServer, rankRail []int) workload.Spec {
	return workload.Spec{
		Collective: w.Kind, Algorithm: w.Algorithm, Ranks: ranks, Size: size, Root: w.Root,
		RankHost: rankHost, RankServer: rankServer, RankRail: rankRail,
		ChunkSize: int64(w.MessageSize), QPs: w.QPs, Seed: seed,
		Iterations: w.Iterations, Warmup: w.Warmup,
	}
}
