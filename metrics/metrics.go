// Package metrics holds what a run measures: per-flow records, counters, and
// the per-size summary (CCT, algbw, busbw, ideal time) with the formulas
// fixed in the README ("Metrics (fixed definitions)"). It depends on
// nothing but counters (the leaf the fabric counts with).
package metrics

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"fabriclab/counters"
)

// Collective names a workload kind for the busbw factor.
type Collective string

// Workload kinds known to the busbw table.
const (
	AllReduce     Collective = "allreduce"
	AllGather     Collective = "allgather"
	ReduceScatter Collective = "reducescatter"
	AllToAll      Collective = "alltoall"
	Broadcast     Collective = "broadcast"
	Reduce        Collective = "reduce"
	Gather        Collective = "gather"
	Scatter       Collective = "scatter"
	SendRecv      Collective = "sendrecv"
	Permutation   Collective = "permutation"
	Incast        Collective = "incast"
	FlowList      Collective = "flows"
	Uniform       Collective = "uniform"
	Messages      Collective = "messages"
	AnyToAny      Collective = "any-to-any"
)

// BusBWFactor is nccl-tests' factor turning algbw into busbw for n ranks:
// all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all, gather,
// scatter (n−1)/n; broadcast, reduce, send/recv 1 (traffic patterns that are
// not collectives use 1 as well).
//
// With one rank nothing crosses the network: the collectives' factors are 0
// there, as in nccl-tests.
func BusBWFactor(c Collective, n int) float64 {
	if n < 1 {
		n = 1
	}
	switch c {
	case AllReduce:
		return 2 * float64(n-1) / float64(n)
	case AllGather, ReduceScatter, AllToAll, Gather, Scatter:
		return float64(n-1) / float64(n)
	}
	return 1
}

// FlowRecord is one message/flow as measured: start is when the sender was
// allowed to send (its dependencies were met), end is when its last byte was
// delivered in order at the receiver.
type FlowRecord struct {
	ID       int     `json:"id"`
	Src      int     `json:"src"`
	Dst      int     `json:"dst"`
	SrcRank  int     `json:"src_rank"`
	DstRank  int     `json:"dst_rank"`
	Bytes    int64   `json:"bytes"`
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"`
	FCTS     float64 `json:"fct_s"`
	IdealS   float64 `json:"ideal_fct_s"` // the same flow alone on the idle fabric
	Slowdown float64 `json:"slowdown"`
	Done     bool    `json:"done"`
	// ScaleUp marks a transfer inside a server over its scale-up domain
	// (Src and Dst are still the GPUs' hosts).
	ScaleUp bool `json:"scale_up,omitempty"`
}

// Counters are event counts for one port, NIC or the whole run; the
// fabric and the transports count with them (package counters, a leaf, so
// that they need not import the results schema).
type Counters = counters.Counters

// Conservation is the packet balance checked at the end of every run:
// Injected = Delivered + Dropped + InFlight.
type Conservation = counters.Conservation

// PortCounters names a port (node:port→peer) with its counters.
type PortCounters struct {
	Node string `json:"node"`
	Peer string `json:"peer"`
	Tier string `json:"tier"` // host, leaf, spine, agg, core
	Counters
}

// Percentiles summarize a distribution.
type Percentiles struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Summarize computes percentiles (nearest-rank) of xs; xs is sorted in place.
func Summarize(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	sort.Float64s(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(xs)))) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(xs) {
			i = len(xs) - 1
		}
		return xs[i]
	}
	return Percentiles{Count: len(xs), Mean: sum / float64(len(xs)), P50: q(0.5), P90: q(0.9), P99: q(0.99), P999: q(0.999), Max: xs[len(xs)-1]}
}

// SizeResult is one row of the nccl-tests-style table: one data size of one
// variant. Field names are the documented output contract.
//
// It is composed of parts by what produces them, so that an engine fills
// the parts it can and leaves the others zero: Completion, Outcome and
// FlowStats are what any engine that runs the workload measures (a
// flow-level model or real hosts as well as the packet simulator);
// FabricTotals, FabricCounters, Explain and Conservation are what a packet
// fabric adds. The parts are embedded, so their fields read as the row's
// (r.CCTS, r.Drops) and its JSON is flat; the order of the parts and of
// their fields is the JSON key order, which is part of the contract.
type SizeResult struct {
	Completion
	FabricTotals
	Outcome
	FlowStats
	// Explain is filled with sim.explain: why the slow flows were slow.
	Explain *Explanation `json:"explain,omitempty"`
	// Jobs: with several jobs (scenario jobs:), each job's summary, job 0
	// ("main") first; the fields of the row are then main's, except the
	// event totals, the counters and the conservation, which are the whole
	// fabric's. Nil with one job.
	Jobs []JobResult `json:"jobs,omitempty"`
	FabricCounters
	Records []FlowRecord `json:"flows_records,omitempty"`
	// Events is how many events the engine executed; SimEndS the simulated
	// time at the end, WallS the wall-clock time the run took.
	Events       uint64       `json:"sim_events"`
	WallS        float64      `json:"wall_s"`
	SimEndS      float64      `json:"sim_end_s"`
	Conservation Conservation `json:"conservation"`
	// Hosts is what a run on real hosts (run --engine hosts) adds; nil for
	// a simulated run.
	Hosts *HostsRun `json:"hosts,omitempty"`
	// JainFlowRates is Jain's fairness index of the measured flows' rates
	// (bytes / FCT): (Σx)² / (n·Σx²), 1 when all got the same rate.
	JainFlowRates float64 `json:"jain_flow_rates,omitempty"`
	// Balance is the fabric's link balance per tier and its paused time
	// (nil without a simulated fabric).
	Balance *Balance `json:"balance,omitempty"`
	// Failures are the links' outages of topology.failures, in order.
	Failures []LinkFailure `json:"failures,omitempty"`
	// Engine is the simulator that produced the row when it is not the
	// packet engine: "flow" (sim.engine flow, or auto above its
	// threshold). Empty for the packet engine and for real hosts (Hosts).
	Engine string `json:"engine,omitempty"`
	// Endpoints and Checkpoints: an any-to-any run per endpoint pair, over
	// the run and per checkpoint interval.
	Endpoints   *Endpoints   `json:"endpoints,omitempty"`
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	// Telemetry is the busiest ports over time (sim.telemetry); nil when
	// off.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
}

// Telemetry is what sim.telemetry sampled: every port of the fabric every
// IntervalS, of which the busiest (by bytes sent over the run) are kept.
// Sample k of a series is the port at time (k+1)·IntervalS: the bytes
// queued then and whether the data priority was paused then, and what
// happened in the interval ending then; the last sample is at EndS, the
// run's end, and covers the time since the one before. Every series has
// Samples entries.
type Telemetry struct {
	IntervalS float64 `json:"interval_s"`
	Samples   int     `json:"samples"`
	// EndS is the time of the last sample: the run's end, so that sample
	// spans less than IntervalS (what is left since the one before).
	EndS float64 `json:"end_s"`
	// Decimated is how many times the samples were merged pairwise to stay
	// within the bound on samples (each doubles IntervalS; 0 = as asked).
	Decimated int `json:"decimated,omitempty"`
	// Ports are the kept ports, busiest first.
	Ports []PortSeries `json:"ports"`
	// Flows are the chosen flows' series (sim.telemetry.flows): the
	// slowest first, or in the order asked.
	Flows []FlowSeries `json:"flows,omitempty"`
}

// FlowSeries is one flow's samples on the telemetry's clock (sample k at
// (k+1)·IntervalS): from sample First, while the flow was in progress.
type FlowSeries struct {
	ID       int     `json:"id"` // the flow record's ID
	Src      string  `json:"src"`
	Dst      string  `json:"dst"`
	Bytes    int64   `json:"bytes"`
	FCTS     float64 `json:"fct_s"`
	Slowdown float64 `json:"slowdown"`
	First    int     `json:"first"`
	// Metric names Value's quantity: "rate_gbps" (RoCE: DCQCN's current
	// rate of the flow's queue pair), "cwnd_bytes" (TCP and DCTCP: the
	// connection's congestion window) or "granted_bytes" (Homa: the bytes
	// the receiver has granted the message).
	Metric string    `json:"metric"`
	Value  []float64 `json:"value"`
	// Delivered is the flow's payload delivered to the receiver by then.
	Delivered []int64 `json:"delivered_bytes"`
}

// PortSeries is one port's samples (see Telemetry): an egress port of
// switch Node toward Peer, or host Node's NIC port (Tier "host").
type PortSeries struct {
	Node string `json:"node"`
	Peer string `json:"peer"`
	Tier string `json:"tier"`
	// RateGbps is the port's line rate; TxBytes the wire bytes it sent over
	// the whole run (what it was ranked by).
	RateGbps float64 `json:"rate_gbps"`
	TxBytes  int64   `json:"tx_bytes"`
	// QueueBytes is the bytes queued for the port (all priorities).
	QueueBytes []int64 `json:"queue_bytes"`
	// Priorities are the queue of each priority that held anything at a
	// sample (the priorities the transport uses are sampled).
	Priorities []PrioQueue `json:"priorities,omitempty"`
	// UtilPct is the bytes sent in the interval over what the line rate
	// sends in one, in % (a frame counts when it starts; what would pass
	// 100% moves to the next interval).
	UtilPct []float64 `json:"util_pct"`
	// Paused is 1 when the data priority was paused by the peer's PFC.
	Paused []int8 `json:"paused"`
	// PauseFrames, ECNMarks and Drops count the interval's pause frames
	// received, packets marked and the port's drops (its counters').
	PauseFrames []int64 `json:"pause_frames"`
	ECNMarks    []int64 `json:"ecn_marks"`
	Drops       []int64 `json:"drops"`
}

// PrioQueue is one priority's queue of a port over time (PortSeries).
type PrioQueue struct {
	Prio       int     `json:"prio"`
	QueueBytes []int64 `json:"queue_bytes"`
}

// Endpoints summarizes an any-to-any run per endpoint pair (client →
// server): what each completed within the duration and its rate, against
// its fair share of the busier of its two NICs.
type Endpoints struct {
	Pairs int `json:"pairs"`
	// FullRateGbps is a pair's full rate: the smaller of its client's NIC
	// shared by the servers and its server's NIC shared by the clients.
	FullRateGbps float64 `json:"full_rate_gbps"`
	MinGbps      float64 `json:"min_gbps"`
	MeanGbps     float64 `json:"mean_gbps"`
	MaxGbps      float64 `json:"max_gbps"`
	// Spread is max/min (0 when a pair completed nothing); Jain is Jain's
	// fairness index of the pairs' rates (1 = all equal).
	Spread  float64          `json:"spread"`
	Jain    float64          `json:"jain"`
	PerPair []EndpointResult `json:"per_pair"`
}

// EndpointResult is one pair over the duration.
type EndpointResult struct {
	Client      int     `json:"client"`
	Server      int     `json:"server"`
	Completions int64   `json:"completions"`
	Bytes       int64   `json:"bytes"`
	Gbps        float64 `json:"gbps"`
	PctFull     float64 `json:"pct_full"`
}

// Checkpoint is what every endpoint pair completed in one checkpoint
// interval ending at TS (from the run's start); the last one, after the
// duration, holds the writes that were in flight when it ended.
type Checkpoint struct {
	TS        float64         `json:"t_s"`
	Endpoints []EndpointCount `json:"endpoints"`
}

// EndpointCount is one pair's completions and bytes in a checkpoint.
type EndpointCount struct {
	Client      int   `json:"client"`
	Server      int   `json:"server"`
	Completions int64 `json:"completions"`
	Bytes       int64 `json:"bytes"`
}

// String is "real hosts (4 agents, scale 0.001)".
func (h *HostsRun) String() string {
	agents := strconv.Itoa(h.Agents) + " agents"
	if h.Agents == 1 {
		agents = "1 agent"
	}
	return "real hosts (" + agents + ", scale " + strconv.FormatFloat(h.Scale, 'g', -1, 64) + ")"
}

// HostsRun describes a row measured on real hosts: the engine, the agents,
// the clocks and the kernels' counters.
type HostsRun struct {
	Engine string `json:"engine"` // "hosts"
	Agents int    `json:"agents"`
	// CC is the kernel congestion control the run asked for ("" = each
	// kernel's default).
	CC string `json:"cc,omitempty"`
	// Scale is the fraction of the scenario's link rates the fabric ran
	// at (1 on a real cluster; the namespace lab's --scale); ideal times
	// and % of ideal are against the scaled rates.
	Scale float64 `json:"scale"`
	// ClockErrorS bounds the error of the agents' clock offsets (the
	// largest half round trip of the best clock sample): start and end
	// times from different hosts are known to within it.
	ClockErrorS float64 `json:"clock_error_s"`
	// HostCounters are, per agent, its kernel's and NICs' counters over
	// the run (after − before); a counter an agent does not expose is
	// absent, never 0.
	HostCounters []AgentCounters `json:"host_counters,omitempty"`
	// Probes are the scenario's paced UDP probes, in its order.
	Probes []Probe `json:"probes,omitempty"`
}

// LinkFailure is one outage of a link (topology.failures; a flapping
// link has one per flap): when it went down and came back (0: it did
// not), what it lost — the packets queued for it or on its wire when it
// failed, and those the switches sent its way before routes converged —
// and the failover time: from the failure to the last packet lost to it.
type LinkFailure struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	DownS       float64 `json:"down_s"`
	UpS         float64 `json:"up_s"`
	LostPackets int64   `json:"lost_packets"`
	LostBytes   int64   `json:"lost_bytes"`
	FailoverS   float64 `json:"failover_s"`
}

// Balance is how evenly a run loaded the fabric's links, tier by tier (the
// benchmarking drafts' max-to-mean ratio, MMR), and how much of the run the
// ports spent paused by PFC.
type Balance struct {
	Tiers []TierLoad `json:"tiers"`
	// PFCPausedShare is the ports' paused time over all ports × the run
	// time (0…1); PFCPausedMax the most paused port's share.
	PFCPausedShare float64 `json:"pfc_paused_share"`
	PFCPausedMax   float64 `json:"pfc_paused_max"`
}

// TierLoad is the load of the links leaving one tier's nodes (hosts'
// NICs for "host"), as the bytes each carried over the run: mean and
// max in Gb/s, and their ratio.
type TierLoad struct {
	Tier     string  `json:"tier"`
	Links    int     `json:"links"`
	MeanGbps float64 `json:"mean_gbps"`
	MaxGbps  float64 `json:"max_gbps"`
	MMR      float64 `json:"mmr"` // max / mean; 1 = perfectly balanced, 0 = the tier carried nothing
}

// FabricMeasured reports whether the row's fabric counters (PFC pauses,
// ECN marks, drops, retransmissions, CNPs, ports) were measured: not on
// real hosts, whose fabric nobody counted, nor by the flow engine, which
// has no packets.
func (r *SizeResult) FabricMeasured() bool { return r.Hosts == nil && r.Engine == "" }

// Probe is one paced UDP probe over a run: what its sender sent and what
// its receiver counted by sequence number. Sent and SendErrors, or
// Received and what follows it, are −1 when that end reported nothing
// (its agent failed).
type Probe struct {
	From      int     `json:"from"`
	To        int     `json:"to"`
	RateGbps  float64 `json:"rate_gbps"`
	SizeBytes int64   `json:"size_bytes"`
	Sent      int64   `json:"sent"` // datagrams
	SentBytes int64   `json:"sent_bytes"`
	// SendErrors counts datagrams the sender's kernel refused (a full
	// socket buffer): never on the wire, not lost by the fabric.
	SendErrors    int64 `json:"send_errors"`
	Received      int64 `json:"received"` // datagrams, duplicates included
	ReceivedBytes int64 `json:"received_bytes"`
	// Lost are sequence numbers below the highest received that never
	// came; LossPct is Lost / Sent.
	Lost       int64   `json:"lost"`
	LossPct    float64 `json:"loss_pct"`
	Reordered  int64   `json:"reordered"`
	Duplicates int64   `json:"duplicates"`
	Late       int64   `json:"late"` // too far behind to tell reordered from duplicate
	// JitterS is the receiver's RFC 3550 interarrival jitter (one-way,
	// so clock offsets cancel).
	JitterS float64 `json:"jitter_s"`
}

// AgentCounters are one agent's counters over a run.
type AgentCounters struct {
	Agent    string           `json:"agent"`
	Counters map[string]int64 `json:"counters"`
}

// Completion is what ran (size, ranks, algorithm), how long it took, the
// rates that follow and the bounds it is measured against: what any engine
// reports.
type Completion struct {
	SizeBytes int64 `json:"size_bytes"`
	Ranks     int   `json:"ranks"`
	// Algorithm is the algorithm that ran, naming any fallback (e.g.
	// "recursive-doubling (Bruck: 6 ranks is not a power of two)").
	Algorithm string `json:"algorithm,omitempty"`
	// TE is what traffic engineering planned (switch.forwarding: te).
	TE *TEPlan `json:"te,omitempty"`
	// Transport is what carried the run, as the tables name it
	// ("RoCE/DCQCN default", "RoCE/HPCC", "UET reps/NSCC", "Homa", …).
	Transport string `json:"transport,omitempty"`
	Timing
	// CollectiveIdealS is the algorithm-independent bound: the time at which
	// busbw would equal the NIC rate (nccl-tests' factor × S / rate). IdealS
	// is the algorithm's own bound (its busiest link); for traffic patterns
	// the two are equal.
	CollectiveIdealS   float64 `json:"collective_ideal_s"`
	CollectiveIdealPct float64 `json:"collective_ideal_pct"`
}

// Timing is the completion time, the bandwidths derived from it and the
// algorithm's ideal time: the part a row and a job's entry share.
type Timing struct {
	CCTS      float64 `json:"cct_s"`
	AlgBWGBps float64 `json:"algbw_gbps"`
	BusBWGBps float64 `json:"busbw_gbps"`
	IdealS    float64 `json:"ideal_s"`
	IdealPct  float64 `json:"ideal_pct"`
}

// FabricTotals is what a fabric that routes packets adds to a row: the
// bound over the links the row's flows really take, and the whole run's
// event totals (from Counters). An engine without packets leaves it zero, one
// that sees only the hosts fills what they count.
type FabricTotals struct {
	// RoutedIdealS is the same bound as IdealS over the links the flows
	// really take (the ECMP hash as configured): the gap between IdealS and
	// RoutedIdealS is what static load balancing costs before any queueing.
	RoutedIdealS   float64 `json:"routed_ideal_s"`
	RoutedIdealPct float64 `json:"routed_ideal_pct"`
	PFCPauses      int64   `json:"pfc_pauses"`
	ECNMarks       int64   `json:"ecn_marks"`
	Drops          int64   `json:"drops"`
	Retransmits    int64   `json:"retransmits"`
	CNPs           int64   `json:"cnps"`
	Timeouts       int64   `json:"timeouts"`
}

// Outcome is whether the run finished, and its measured iterations.
type Outcome struct {
	// Complete is false when the run was interrupted or hit its time limit
	// before every flow finished; the numbers then describe a partial run.
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// Iterations measured (after warmup), each iteration's time, and their
	// distribution; CCTS is then the mean.
	Iterations  int         `json:"iterations,omitempty"`
	IterationsS []float64   `json:"iterations_s,omitempty"`
	IterCCT     Percentiles `json:"iteration_cct_s"`
}

// FlowStats is what the flows (messages) of a run did: any engine that
// knows when each flow started and finished can fill it.
type FlowStats struct {
	Flows     int         `json:"flows"`
	FCT       Percentiles `json:"fct_s"`
	Slowdown  Percentiles `json:"slowdown"`
	RankDoneS []float64   `json:"rank_done_s,omitempty"` // per rank: when its last incoming flow finished
	// RankBWGBps[i][j] is the bandwidth rank i achieved toward rank j: the
	// bytes it delivered to j over the span from its first such flow's start
	// to its last one's end (0 when it sent nothing). Kept up to 128 ranks, or
	// always with sim.record_flows.
	RankBWGBps [][]float64 `json:"rank_bw_gbps,omitempty"`
	// FCTCurveS is the sorted-FCT curve: every flow's FCT in increasing order
	// with sim.record_flows, else 201 evenly spaced quantiles (0, 0.5%, …,
	// 100%).
	FCTCurveS []float64 `json:"fct_curve_s,omitempty"`
	// SlowdownBySize (kind messages, also flows and uniform) is the
	// slowdown of the messages grouped by size; Load says what was offered
	// and carried (kind messages).
	SlowdownBySize []SizeBucket `json:"slowdown_by_size,omitempty"`
	Load           *MessageLoad `json:"load,omitempty"`
}

// FabricCounters are the whole run's counters (every port and NIC summed)
// and, with sim.port_counters, each port's.
type FabricCounters struct {
	Totals Counters       `json:"counters"`
	Ports  []PortCounters `json:"ports,omitempty"` // ports with any activity worth reporting
}

// JobResult is one job of a run with several jobs: its own CCT (first start
// to last delivery of its messages, or the mean of its measured iterations),
// bandwidths and ideal, next to the CCT of the same job run alone on the
// same fabric and the interference factor CCT / alone CCT. It shares the
// row's Timing, Outcome and FlowStats parts, without their per-iteration
// and per-rank lists (Job leaves them out). Its algorithm, ranks and size
// are its own fields: the contract orders them unlike the row's Completion.
type JobResult struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Algorithm string  `json:"algorithm,omitempty"`
	Ranks     int     `json:"ranks"`
	SizeBytes int64   `json:"size_bytes"`
	StartS    float64 `json:"start_s"`
	Timing
	AloneCCTS    float64 `json:"alone_cct_s"`
	Interference float64 `json:"interference"`
	Outcome
	// A message, uniform or flow-list job's slowdown per size bucket, and
	// a messages job's load (see SizeResult) are in FlowStats.
	FlowStats
}

// Job makes a job's entry from its summary (a SizeResult over its
// messages); the alone CCT and interference are filled by the caller.
// The per-iteration times and the per-rank lists stay on the row.
func Job(name, kind string, startS float64, r SizeResult) JobResult {
	j := JobResult{Name: name, Kind: kind, Algorithm: r.Algorithm, Ranks: r.Ranks, SizeBytes: r.SizeBytes, StartS: startS,
		Timing: r.Timing, Outcome: r.Outcome, FlowStats: r.FlowStats}
	j.IterationsS = nil
	j.RankDoneS, j.RankBWGBps, j.FCTCurveS = nil, nil, nil
	return j
}

// SetAlone records the CCT of the job alone and the interference factor
// (0 when either run is incomplete).
func (j *JobResult) SetAlone(cct float64, complete bool) {
	j.AloneCCTS = cct
	j.Interference = 0
	if complete && j.Complete && cct > 0 {
		j.Interference = j.CCTS / cct
	}
}

// Finish fills algbw, busbw and % ideal from S, CCT and ideal time with the
// nccl-tests definitions (GB/s = 1e9 B/s). An incomplete run has no
// meaningful bandwidth: its CCT is only how long it ran, so the rates and
// percentages stay 0. A flow list has no busbw (its S is the sum of flows
// between many pairs; algbw is then the aggregate throughput).
func (r *SizeResult) Finish(c Collective) {
	if r.CCTS > 0 && r.Complete {
		r.AlgBWGBps = float64(r.SizeBytes) / r.CCTS / 1e9
		if c != FlowList && c != Uniform && c != Messages {
			r.BusBWGBps = r.AlgBWGBps * BusBWFactor(c, r.Ranks)
		}
		r.IdealPct = 100 * r.IdealS / r.CCTS
		r.RoutedIdealPct = 100 * r.RoutedIdealS / r.CCTS
		r.CollectiveIdealPct = 100 * r.CollectiveIdealS / r.CCTS
	}
}

// Curve returns sorted xs as is when full, else the n+1 nearest-rank
// quantiles 0, 1/n, …, 1 (xs must be sorted).
func Curve(xs []float64, n int, full bool) []float64 {
	if full || len(xs) <= n+1 {
		return append([]float64(nil), xs...)
	}
	out := make([]float64, n+1)
	for i := range out {
		k := int(math.Ceil(float64(i)/float64(n)*float64(len(xs)))) - 1
		out[i] = xs[max(k, 0)]
	}
	return out
}

// Explanation says why the slow flows of a run were slow (explain mode).
type Explanation struct {
	// Threshold is the slowdown above which a flow counts as slow.
	Threshold float64 `json:"threshold"`
	SlowFlows int     `json:"slow_flows"`
	// Roles of the slow flows: victims waited mostly in queues paused by
	// PFC from congestion further on; culprits waited mostly at a congested
	// queue whose switch pushed back with PFC (they fed the congestion);
	// contending flows waited at congestion without PFC; sender-limited
	// flows hardly queued (their own NIC or rate limiter held them);
	// loss-limited flows lost packets to the PFC watchdog (their resends
	// held them; this role comes before the others, and its key is left
	// out when there are none).
	Victims       int `json:"victims"`
	Culprits      int `json:"culprits"`
	Contending    int `json:"contending"`
	SenderLimited int `json:"sender_limited"`
	LossLimited   int `json:"loss_limited,omitempty"`
	// Flows lists the slowest flows (at most 20) with where they queued.
	Flows []SlowFlow `json:"flows,omitempty"`
	// PauseTree lists who paused whom: a switch or a storming host's NIC
	// (From) sent pause frames to the node upstream of one of its ports
	// (To), which was held PausedS in all. Roots are where the pausing
	// started: switches that paused others without being paused, and hosts
	// whose NIC stormed (a host sends pauses only then). Roots is always
	// in the JSON, [] when there are none.
	PauseTree []PauseEdge `json:"pause_tree,omitempty"`
	Roots     []string    `json:"roots"`
}

// MarshalJSON writes x with its roots as [] when there are none (not
// null), so that scripts can always read the key.
func (x Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation // without this method
	p := plain(x)
	if p.Roots == nil {
		p.Roots = []string{}
	}
	return json.Marshal(p)
}

// SlowFlow is one slow flow and the queues it waited in.
type SlowFlow struct {
	ID       int         `json:"id"`
	Src      int         `json:"src"`
	Dst      int         `json:"dst"`
	Slowdown float64     `json:"slowdown"`
	Role     string      `json:"role"`
	QueuedS  float64     `json:"queued_s"`
	PausedS  float64     `json:"paused_s"`
	Links    []QueueStay `json:"links"`
	// Drops is the flow's packets the PFC watchdog dropped (left out when
	// none).
	Drops int64 `json:"drops,omitempty"`
}

// QueueStay is a flow's time in one egress queue (summed over its packets,
// divided by its packet count: the average wait of a packet there), and
// how many of its packets the PFC watchdog dropped there (left out when
// none).
type QueueStay struct {
	Link    string  `json:"link"`
	QueuedS float64 `json:"queued_s"`
	PausedS float64 `json:"paused_s"`
	Drops   int64   `json:"drops,omitempty"`
}

// PauseEdge is one direction of PFC back-pressure.
type PauseEdge struct {
	From    string  `json:"from"`
	To      string  `json:"to"`
	Pauses  int64   `json:"pauses"`
	PausedS float64 `json:"paused_s"`
}

// SizeBucket is the slowdown of the messages whose sizes lie in
// [LoBytes, HiBytes] (Slowdown.Count of them).
type SizeBucket struct {
	LoBytes  int64       `json:"lo_bytes"`
	HiBytes  int64       `json:"hi_bytes"`
	Slowdown Percentiles `json:"slowdown"`
	// RTT (RPCs: workload.response_size) is the round trip of the
	// requests of this bucket's sizes, request sent to response received.
	RTT *Percentiles `json:"rtt_s,omitempty"`
}

// TEPlan is traffic engineering's assignment: the method, how many
// connections it placed, the busiest link's traffic over the run (its
// bytes at its rate) and, for the exact method, whether that is proven
// the least possible.
type TEPlan struct {
	Method       string  `json:"method"`
	Connections  int     `json:"connections"`
	MaxLinkLoadS float64 `json:"max_link_load_s"`
	Optimal      bool    `json:"optimal"`
}

// Range is the bucket's sizes as the tables print them: "lo–hi", or
// one size.
func (b SizeBucket) Range() string {
	if b.LoBytes == b.HiBytes {
		return strconv.FormatInt(b.LoBytes, 10)
	}
	return strconv.FormatInt(b.LoBytes, 10) + "–" + strconv.FormatInt(b.HiBytes, 10)
}

// AttachRTT gives every bucket the round trips (rtts[i], of a request of
// sizes[i] bytes) of the requests whose size it holds.
func AttachRTT(buckets []SizeBucket, sizes []int64, rtts []float64) {
	if len(rtts) == 0 || len(sizes) != len(rtts) {
		return
	}
	per := make([][]float64, len(buckets))
	for i, b := range sizes {
		k := sort.Search(len(buckets), func(k int) bool { return buckets[k].HiBytes >= b })
		if k < len(buckets) && buckets[k].LoBytes <= b {
			per[k] = append(per[k], rtts[i])
		}
	}
	for k, xs := range per {
		if len(xs) > 0 {
			p := Summarize(xs)
			buckets[k].RTT = &p
		}
	}
}

// MessageLoad is what an open-loop message workload offered and what the
// fabric carried, both over the second half of the arrival window
// [DurationS/2, DurationS) (the first half fills the network): the
// payload of the messages that arrived in it, and the data payload hosts
// received in it, packet by packet, in Gb/s per host (with several jobs:
// the whole window's arrivals and the job's completed messages over its
// whole run). OfferedLoad is
// the offered wire bytes as a fraction of the host link (the target is
// TargetLoad; a heavy-tailed distribution needs a long window to meet it).
// Carried means every message completed and the throughput reached 90% of
// what was offered; DrainS is how long after the window the last message
// completed.
type MessageLoad struct {
	SizeDist       string  `json:"size_dist"`
	MeanBytes      float64 `json:"mean_bytes"`
	TargetLoad     float64 `json:"target_load"` // fraction of the host link, wire bytes
	OfferedLoad    float64 `json:"offered_load"`
	DurationS      float64 `json:"duration_s"`
	Hosts          int     `json:"hosts"`
	Messages       int     `json:"messages"`
	OfferedGbps    float64 `json:"offered_gbps"`
	ThroughputGbps float64 `json:"throughput_gbps"`
	DrainS         float64 `json:"drain_s"`
	Carried        bool    `json:"carried"`
	// With responses (RPCs): how many, and their round-trip times, from the
	// request's arrival to the response's last byte back at the client.
	RPCs int          `json:"rpcs,omitempty"`
	RTT  *Percentiles `json:"rtt_s,omitempty"`
}

// Bucket kinds for SlowdownBuckets.
const (
	EqualCount = "equal-count"
	Log2       = "log2"
)

// SlowdownBuckets groups messages by size (sizes[i], slowdown slows[i]):
// EqualCount makes up to n buckets with about as many messages each (the
// Homa paper's x axis), never splitting one size across two buckets; Log2
// makes one bucket per power of two, (2^(k−1), 2^k]. Empty buckets are
// left out.
func SlowdownBuckets(sizes []int64, slows []float64, kind string, n int) []SizeBucket {
	if len(sizes) == 0 || len(sizes) != len(slows) {
		return nil
	}
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sizes[idx[a]] < sizes[idx[b]] })
	var out []SizeBucket
	flush := func(group []int) {
		if len(group) == 0 {
			return
		}
		xs := make([]float64, len(group))
		for k, i := range group {
			xs[k] = slows[i]
		}
		out = append(out, SizeBucket{LoBytes: sizes[group[0]], HiBytes: sizes[group[len(group)-1]], Slowdown: Summarize(xs)})
	}
	if kind == Log2 {
		start := 0
		for k := 1; k <= len(idx); k++ {
			if k == len(idx) || log2Bucket(sizes[idx[k]]) != log2Bucket(sizes[idx[start]]) {
				flush(idx[start:k])
				start = k
			}
		}
		return out
	}
	if n < 1 {
		n = 10
	}
	start := 0
	for b := 1; b <= n && start < len(idx); b++ {
		end := len(idx) * b / n
		if b == n {
			end = len(idx)
		}
		if end <= start {
			continue
		}
		for end < len(idx) && sizes[idx[end]] == sizes[idx[end-1]] {
			end++ // one size stays in one bucket
		}
		flush(idx[start:end])
		start = end
	}
	return out
}

// log2Bucket is k such that 2^(k−1) < b ≤ 2^k.
func log2Bucket(b int64) int {
	k := 0
	for v := int64(1); v < b && k < 63; v <<= 1 {
		k++
	}
	return k
}
