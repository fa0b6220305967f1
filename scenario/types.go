// Package scenario is the YAML schema of a fabriclab test: types, defaults,
// presets, strict validation with file:line:column errors, and expansion of
// variants × sweep points × data sizes into Jobs that the lab package runs.
package scenario

import (
	"cmp"
	"slices"

	"fabriclab/units"
	"fabriclab/workload"
)

// Scenario is one scenario file after parsing and defaulting. Every field has
// a yaml key; unknown keys are errors.
type Scenario struct {
	Name        string    `yaml:"name" json:"name"`
	Description string    `yaml:"description" json:"description,omitempty"`
	Seed        uint64    `yaml:"seed" json:"seed"`
	Topology    Topology  `yaml:"topology" json:"topology"`
	NIC         NIC       `yaml:"nic" json:"nic"`
	Switch      Switch    `yaml:"switch" json:"switch"`
	Transport   Transport `yaml:"transport" json:"transport"`
	Workload    Workload  `yaml:"workload" json:"workload"`
	// Jobs run alongside the workload (job 0, "main"), each with its own
	// start offset and one data size; see "Several jobs" in the README.
	Jobs []JobSpec `yaml:"jobs" json:"jobs,omitempty"`
	// Probes are paced UDP streams beside the workload, on real hosts
	// only (see "Real hosts" in the README).
	Probes []Probe `yaml:"probes" json:"probes,omitempty"`
	Sim    SimOpts `yaml:"sim" json:"sim"`
	// Variants override keys of the base scenario; each variant is run with
	// every data size. An empty list means one variant named "base".
	Variants []Variant `yaml:"variants" json:"-"`
	// Sweep runs every variant at every point of a grid of values of
	// dotted keys (see sweep.go). The loader reads it itself and fills it
	// in on File.Base only.
	Sweep []SweepDim `yaml:"sweep" json:"-"`
}

// Variant is a named set of overrides applied on top of the base scenario.
// In YAML a variant is a mapping with name: and any of the top-level keys
// but name and variants (topology, nic, switch, transport, workload, sim,
// seed, description); keys it does not mention keep the base value.
type Variant struct {
	Name string `json:"name"`
	// Spec is the fully resolved scenario of this variant (base + overrides),
	// filled by the loader.
	Spec *Scenario `json:"-"`
	// Sweep is the point of the sweep this variant is: each swept key with
	// its value as written, in sweep order (nil without a sweep).
	Sweep []SweepValue `json:"sweep,omitempty"`
	// Parent is the name of the file's variant a sweep point expands (""
	// without a sweep or for a file without variants).
	Parent string `json:"parent,omitempty"`
}

// Topology selects a builder and its links.
type Topology struct {
	// Kind is leaf-spine, fat-tree, rail, custom (File: a YAML or CSV file
	// of nodes and links) or ns3 (File: an ns-3 topology.txt).
	Kind string `yaml:"kind" json:"kind"`
	// File is the topology file of kinds custom and ns3, relative to the
	// scenario (see custom.go); the other kinds do not read it.
	File string `yaml:"file" json:"file,omitempty"`
	// leaf-spine: Hosts in total, HostsPerLeaf per leaf; every leaf has one
	// FabricLink uplink to every spine. Spines = 0 derives the spine count
	// from Oversubscription (downlink:uplink capacity per leaf, 1 =
	// non-blocking): see scenario.Spines.
	Hosts            int     `yaml:"hosts" json:"hosts,omitempty"`
	HostsPerLeaf     int     `yaml:"hosts_per_leaf" json:"hosts_per_leaf,omitempty"`
	Spines           int     `yaml:"spines" json:"spines,omitempty"`
	Oversubscription float64 `yaml:"oversubscription" json:"oversubscription,omitempty"`
	// fat-tree: K-ary three-tier fat-tree (k^3/4 hosts).
	K int `yaml:"k" json:"k,omitempty"`
	// rail: Servers with GPUsPerServer NICs each; NIC i of every server in a
	// group of ServersPerGroup servers attaches to rail leaf i of that group;
	// spines join all rail leaves.
	Servers         int `yaml:"servers" json:"servers,omitempty"`
	GPUsPerServer   int `yaml:"gpus_per_server" json:"gpus_per_server,omitempty"`
	ServersPerGroup int `yaml:"servers_per_group" json:"servers_per_group,omitempty"`

	HostLink   Link `yaml:"host_link" json:"host_link"`
	FabricLink Link `yaml:"fabric_link" json:"fabric_link"`
	// ScaleUp is each GPU's link into its server's scale-up domain
	// (NVLink/NVSwitch-like, non-blocking within the server). Transfers
	// between ranks of one server use it instead of the NIC and the fabric.
	// Rate 0 = no scale-up domain.
	ScaleUp Link `yaml:"scale_up" json:"scale_up"`
	// Failures take switch-to-switch links down during the run; routes are
	// recomputed Convergence later (a failure at 0 is routed around from
	// the start).
	Failures []Failure `yaml:"failures" json:"failures,omitempty"`
	// PFCStorms are hosts whose NIC keeps pausing its switch port (on the
	// data priority) from At until Until: a PFC storm.
	PFCStorms   []PFCStorm     `yaml:"pfc_storms" json:"pfc_storms,omitempty"`
	Convergence units.Duration `yaml:"convergence" json:"convergence"`
	// SwitchLatency is the fixed forwarding delay added inside each switch on
	// top of store-and-forward.
	SwitchLatency units.Duration `yaml:"switch_latency" json:"switch_latency"`

	// custom is File read and checked (kinds custom and ns3), attached by
	// the loader; shared, not copied, by the variants that name the file.
	custom *customTopology
}

// Failure takes the link between two switches (by name, e.g. leaf0 and
// spine3) down at a time.
type Failure struct {
	From string         `yaml:"from" json:"from"`
	To   string         `yaml:"to" json:"to"`
	At   units.Duration `yaml:"at" json:"at"`
	// Until brings the link back up (0: it stays down). With Count > 1 the
	// link flaps: down at At + k·Period, up at Until + k·Period, k = 0 …
	// Count−1.
	Until  units.Duration `yaml:"until" json:"until,omitempty"`
	Period units.Duration `yaml:"period" json:"period,omitempty"`
	Count  int            `yaml:"count" json:"count,omitempty"`
}

// Outages lists f's down and up times in order (up 0: it stays down).
func (f Failure) Outages() [][2]units.Duration {
	n := max(f.Count, 1)
	out := make([][2]units.Duration, 0, n)
	for k := range n {
		up := units.Duration(0)
		if f.Until > 0 {
			up = f.Until + units.Duration(k)*f.Period
		}
		out = append(out, [2]units.Duration{f.At + units.Duration(k)*f.Period, up})
	}
	return out
}

// PFCStorm is host Host pausing its switch port from At until Until.
type PFCStorm struct {
	Host  int            `yaml:"host" json:"host"`
	At    units.Duration `yaml:"at" json:"at"`
	Until units.Duration `yaml:"until" json:"until"`
}

// Watchdog is the switches' PFC watchdog: an egress queue paused without
// a break for Detect is taken out of PFC for Restore — its pauses ignored
// ("ignore"), or also its packets dropped ("drop") — then watched again.
// Detect 0 = off.
type Watchdog struct {
	Detect  units.Duration `yaml:"detect" json:"detect,omitempty"`
	Action  string         `yaml:"action" json:"action,omitempty"`
	Restore units.Duration `yaml:"restore" json:"restore,omitempty"`
}

// Probe is a paced UDP stream from host From to host To at Rate in
// datagrams of Size bytes of payload (sequence-numbered: loss,
// reordering, duplicates and one-way jitter are counted), from the run's
// start to its end.
type Probe struct {
	From int        `yaml:"from" json:"from"`
	To   int        `yaml:"to" json:"to"`
	Rate units.Rate `yaml:"rate" json:"rate"`
	Size units.Size `yaml:"size" json:"size"`
}

// Link is a rate and a one-way propagation delay.
type Link struct {
	Rate  units.Rate     `yaml:"rate" json:"rate"`
	Delay units.Duration `yaml:"delay" json:"delay"`
}

// NIC configures the host adapters.
type NIC struct {
	// Entropy is how a NIC picks its connections' UDP source ports, the
	// entropy the switches' ECMP hashes: hash (its QP number, whatever
	// path that hashes to) or qp-aware (ports planned so that the QPs
	// sharing a first hop spread over its next hops; plan.AssignQPEntropy).
	Entropy string `yaml:"entropy" json:"entropy,omitempty"`
	// MTU is the payload carried per data packet.
	MTU units.Size `yaml:"mtu" json:"mtu"`
	// Overhead is the wire bytes added to each packet: headers, FCS, preamble
	// and inter-frame gap (82 B for RoCEv2 over Ethernet).
	Overhead units.Size `yaml:"overhead" json:"overhead"`
	// AckEvery: the receiver acknowledges every n-th in-order data packet and
	// always the last packet of a message.
	AckEvery int `yaml:"ack_every" json:"ack_every"`
	// RTO is the retransmission timeout (go-back-N from the oldest unacked).
	RTO units.Duration `yaml:"rto" json:"rto"`
	// MaxInflight caps unacknowledged bytes per QP; 0 = no cap.
	MaxInflight units.Size `yaml:"max_inflight" json:"max_inflight"`
	// OutOfOrder is what a receiver does with a packet that arrives ahead of
	// the one it expects: go-back-n drops it and NACKs (classic RoCE), accept
	// holds it in a reorder buffer (NICs built for spraying and adaptive
	// routing).
	OutOfOrder string `yaml:"out_of_order" json:"out_of_order"`
	// Burst is how many packets one QP sends back to back before the NIC
	// serves the next QP (1 = perfect per-packet round-robin).
	Burst int `yaml:"burst" json:"burst"`
	// DataPriority and ControlPriority are traffic classes 0–7 (7 highest).
	// They may be equal: ACKs and CNPs then queue with data at switches
	// (and are paused with it under PFC).
	DataPriority    int `yaml:"data_priority" json:"data_priority"`
	ControlPriority int `yaml:"control_priority" json:"control_priority"`
	// ControlWire is the wire size of RoCE's ACK, NACK and CNP frames and
	// of TCP's pure ACKs.
	ControlWire units.Size `yaml:"control_wire" json:"control_wire"`
	// CNP is how RoCE carries a congestion notification: "packet" (a CNP
	// frame of its own) or "ack" (a flag on the QP's next ACK or NACK).
	CNP string `yaml:"cnp" json:"cnp"`
	// ActiveQPs > 0 lets at most that many QPs of a NIC send at once, as a
	// collective library's channels do: the others wait their turn (first
	// come, first served) and a QP keeps its slot, rate-limited or not,
	// until it has sent everything posted to it. 0 = every QP with data
	// shares the NIC's round-robin. RoCE only.
	ActiveQPs int `yaml:"active_qps" json:"active_qps,omitempty"`
}

// Switch configures every switch.
type Switch struct {
	// Buffer is the shared packet buffer of one switch.
	Buffer units.Size `yaml:"buffer" json:"buffer"`
	ECN    ECN        `yaml:"ecn" json:"ecn"`
	PFC    PFC        `yaml:"pfc" json:"pfc"`
	// Forwarding is the load-balancing policy among equal-cost next hops:
	// ecmp (5-tuple hash), spray-random, spray-rr (per packet), flowlet,
	// adaptive (least-loaded egress queue per packet), adaptive-flowlet, or
	// d-mod-k (InfiniBand-style static destination routing).
	Forwarding string `yaml:"forwarding" json:"forwarding"`
	// RoutesFile pins next hops explicitly, as an InfiniBand subnet
	// manager's tables do: one "switch dst-host next-node" per line (path
	// relative to the scenario). Listed destinations leave those switches
	// only toward the given node; everything else keeps its computed routes.
	RoutesFile string `yaml:"routes_file" json:"routes_file,omitempty"`
	// ForwardingTiers overrides Forwarding for the switches of one tier
	// (leaf, spine, edge, agg, core, rail), e.g. adaptive routing on the
	// leaves and ECMP above.
	ForwardingTiers []TierForwarding `yaml:"forwarding_tiers" json:"forwarding_tiers,omitempty"`
	// FlowletGap is the idle time after which a flowlet policy may move a
	// flow to another path.
	FlowletGap units.Duration `yaml:"flowlet_gap" json:"flowlet_gap"`
	// ECMPPolarized gives every switch the same hash seed, to show hash
	// polarization (each tier repeats the choice of the tier before).
	ECMPPolarized bool `yaml:"ecmp_polarized" json:"ecmp_polarized,omitempty"`
	// ECMPSeed perturbs every switch's hash (each switch also mixes in its id).
	ECMPSeed uint64 `yaml:"ecmp_seed" json:"ecmp_seed"`
	// TE is traffic engineering's controller (forwarding: te).
	TE TE `yaml:"te" json:"te,omitzero"`
	// Trimming cuts a lossy data packet that finds no buffer to its
	// headers (64 bytes) and forwards that at nic.control_priority, so its
	// receiver asks for it at once (UET's packet trimming; read without
	// PFC on the data priority, which never drops).
	Trimming bool `yaml:"trimming" json:"trimming,omitempty"`
}

// TE is how traffic engineering assigns paths (switch.forwarding: te):
// greedy (largest connection first, each on the path whose busiest link
// would be least busy) or optimal (the least maximum link load, searched
// exactly from the greedy one, within a budget). "" = greedy.
type TE struct {
	Method string `yaml:"method" json:"method,omitempty"`
}

// TierForwarding is the forwarding policy of one switch tier.
type TierForwarding struct {
	Tier       string `yaml:"tier" json:"tier"`
	Forwarding string `yaml:"forwarding" json:"forwarding"`
}

// ECN is RED-style marking on egress queue depth.
type ECN struct {
	Enabled bool       `yaml:"enabled" json:"enabled"`
	KMin    units.Size `yaml:"kmin" json:"kmin"`
	KMax    units.Size `yaml:"kmax" json:"kmax"`
	PMax    float64    `yaml:"pmax" json:"pmax"`
	// ReferenceRate: KMin/KMax are for a link of this rate and scale linearly
	// with each port's rate (so one setting fits 100G and 400G ports). 0 means
	// KMin/KMax are absolute.
	ReferenceRate units.Rate `yaml:"reference_rate" json:"reference_rate"`
	// MarkAt is where a packet is marked: "enqueue" (an arriving packet,
	// from the queue it joins) or "dequeue" (a departing one, from the
	// queue it leaves behind).
	MarkAt string `yaml:"mark_at" json:"mark_at,omitempty"`
}

// PFC is priority flow control per ingress port and priority.
type PFC struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	// XOFF: ingress bytes at which a pause is sent upstream; XON: bytes below
	// which a resume is sent.
	XOFF units.Size `yaml:"xoff" json:"xoff"`
	XON  units.Size `yaml:"xon" json:"xon"`
	// Headroom absorbs what is in flight when the pause is sent; 0 = sized
	// automatically from each link's rate × delay.
	Headroom units.Size `yaml:"headroom" json:"headroom"`
	// Mode is "static" (pause at XOFF) or "dynamic" (pause beyond Alpha ×
	// the free shared buffer, never below Reserved; resume XOFF − XON
	// below that).
	Mode     string     `yaml:"mode" json:"mode,omitempty"`
	Alpha    float64    `yaml:"alpha" json:"alpha,omitempty"`
	Reserved units.Size `yaml:"reserved" json:"reserved,omitempty"`
	Watchdog Watchdog   `yaml:"watchdog" json:"watchdog,omitempty"`
}

// Transport selects the host transport.
type Transport struct {
	// Kind is roce (RoCEv2 with DCQCN), homa (receiver-driven), dctcp or
	// tcp (window-based, ECN as DCTCP or as plain TCP).
	Kind string `yaml:"kind" json:"kind"`
	// CC is RoCE's congestion control: dcqcn (the default: ECN marks,
	// CNPs, transport.dcqcn's knobs) or hpcc (in-band telemetry stamped
	// by every switch, transport.hpcc's knobs).
	CC    string `yaml:"cc" json:"cc,omitempty"`
	DCQCN DCQCN  `yaml:"dcqcn" json:"dcqcn"`
	HPCC  HPCC   `yaml:"hpcc" json:"hpcc"`
	Homa  Homa   `yaml:"homa" json:"homa"`
	UET   UET    `yaml:"uet" json:"uet"`
	TCP   TCP    `yaml:"tcp" json:"tcp"`
}

// UET's knobs (transport.kind uet); zero means the default. The payload
// per packet is nic.mtu, the retransmission timeout nic.rto.
type UET struct {
	// LB spreads packets over paths: spray (a new entropy per packet,
	// cycling through Entropies), reps (reuse entropies acknowledged
	// without marks) or single (one entropy per connection). "" = spray.
	LB string `yaml:"lb" json:"lb,omitempty"`
	// Entropies is how many entropy values spray and reps cycle through
	// (0 = 256).
	Entropies int `yaml:"entropies" json:"entropies,omitempty"`
	// CC is nscc (sender window from ECN and delay), rccc (receiver
	// credits) or nscc+rccc. "" = nscc.
	CC string `yaml:"cc" json:"cc,omitempty"`
	// TargetDelay is NSCC's target queuing delay (0 = half the base RTT
	// between the first and last host).
	TargetDelay units.Duration `yaml:"target_delay" json:"target_delay,omitempty"`
	// IncreaseGain, FairIncrease (MTUs per RTT), DecreaseGain and
	// MaxWindow (in BDPs) are NSCC's (0 = 1, 1, 1, 1.25).
	IncreaseGain float64 `yaml:"increase_gain" json:"increase_gain,omitempty"`
	FairIncrease float64 `yaml:"fair_increase" json:"fair_increase,omitempty"`
	DecreaseGain float64 `yaml:"decrease_gain" json:"decrease_gain,omitempty"`
	MaxWindow    float64 `yaml:"max_window" json:"max_window,omitempty"`
	// BaseRTT (0 = each connection's unloaded round trip).
	BaseRTT units.Duration `yaml:"base_rtt" json:"base_rtt,omitempty"`
}

// WithDefaults is u with the choices it leaves empty filled in: spray,
// 256 entropies, nscc (the knobs of NSCC keep their zeros; UETConfig
// resolves them).
func (u UET) WithDefaults() UET {
	u.LB = cmp.Or(u.LB, "spray")
	u.CC = cmp.Or(u.CC, "nscc")
	u.Entropies = cmp.Or(u.Entropies, 256)
	return u
}

// HPCC's knobs (transport.cc: hpcc); zero means the default.
type HPCC struct {
	// Eta is the target utilisation η of the most loaded link (0 = 0.95).
	Eta float64 `yaml:"eta" json:"eta,omitempty"`
	// MaxStage is how many additive steps run before a multiplicative one
	// (0 = 5).
	MaxStage int `yaml:"max_stage" json:"max_stage,omitempty"`
	// RateAI is the additive increase of one update (0 = 50Mbps).
	RateAI units.Rate `yaml:"rate_ai" json:"rate_ai,omitempty"`
	// MinRate is the rate's floor (0 = 100Mbps).
	MinRate units.Rate `yaml:"min_rate" json:"min_rate,omitempty"`
	// BaseRTT is T (0 = each QP's unloaded round trip on its path).
	BaseRTT units.Duration `yaml:"base_rtt" json:"base_rtt,omitempty"`
}

// Homa's knobs (transport.kind homa); zero means the default documented
// in transport/homa. The payload per packet is nic.mtu.
type Homa struct {
	// RTTBytes is what a sender sends unscheduled and the receiver keeps
	// granted per message; 0 = the fabric's bandwidth-delay product
	// (host link rate × the unloaded round trip of a full packet and a grant
	// across the spine).
	RTTBytes units.Size `yaml:"rtt_bytes" json:"rtt_bytes,omitempty"`
	// Overcommit is how many messages a receiver grants to at once; 0 = one
	// per scheduled priority level.
	Overcommit int `yaml:"overcommit" json:"overcommit,omitempty"`
	// UnscheduledPriorities of the 8 levels go to unscheduled packets; 0 =
	// from the workload's size distribution (the paper's rule), 1 without one.
	UnscheduledPriorities int `yaml:"unscheduled_priorities" json:"unscheduled_priorities,omitempty"`
	// ResendTimeout: a receiver missing expected data asks for it again (and
	// a sender with nothing heard probes) after this long; 0 = 10ms.
	ResendTimeout units.Duration `yaml:"resend_timeout" json:"resend_timeout,omitempty"`
	// MaxResends: a message is abandoned after this many timeouts in a row;
	// 0 = 5.
	MaxResends int `yaml:"max_resends" json:"max_resends,omitempty"`
	// FIFOGrantFraction of grants go to the oldest message instead of the
	// shortest (the paper's guard against starvation); 0 = off.
	FIFOGrantFraction float64 `yaml:"fifo_grant_fraction" json:"fifo_grant_fraction,omitempty"`
}

// TCP's knobs (transport.kind dctcp or tcp); zero means the default
// documented in transport/tcp. The payload per segment is nic.mtu.
type TCP struct {
	// InitCwnd is the initial window in segments (0 = 10).
	InitCwnd int `yaml:"init_cwnd" json:"init_cwnd,omitempty"`
	// G is DCTCP's gain (0 = 1/16).
	G float64 `yaml:"g" json:"g,omitempty"`
	// MinRTO is the retransmission timeout's floor (0 = 10ms).
	MinRTO units.Duration `yaml:"min_rto" json:"min_rto,omitempty"`
	// AckEvery: the receiver acknowledges every n-th segment (0 = 1).
	AckEvery int `yaml:"ack_every" json:"ack_every,omitempty"`
	// Connections is the reuse policy: pair (one connection per host
	// pair, messages queue behind each other — head-of-line blocking) or
	// pool (PoolSize connections per pair, messages assigned round-robin).
	Connections string `yaml:"connections" json:"connections,omitempty"`
	PoolSize    int    `yaml:"pool_size" json:"pool_size,omitempty"`
}

// DCQCN names a preset and optional per-knob overrides (nil = preset value).
// Knob meanings are documented in transport/roce.
type DCQCN struct {
	Preset string `yaml:"preset" json:"preset"`

	AlphaG            *float64        `yaml:"alpha_g" json:"alpha_g,omitempty"`
	AlphaInterval     *units.Duration `yaml:"alpha_interval" json:"alpha_interval,omitempty"`
	InitialAlpha      *float64        `yaml:"initial_alpha" json:"initial_alpha,omitempty"`
	RateOnFirstCNP    *units.Rate     `yaml:"rate_on_first_cnp" json:"rate_on_first_cnp,omitempty"`
	MinDecreaseFactor *float64        `yaml:"min_decrease_factor" json:"min_decrease_factor,omitempty"`
	// DecreaseCoefficient: a cut removes α × this fraction of the rate
	// (0.5 = the NIC's rpg_gd 11, a cut of RC·α/2).
	DecreaseCoefficient *float64        `yaml:"decrease_coefficient" json:"decrease_coefficient,omitempty"`
	DecreaseInterval    *units.Duration `yaml:"decrease_interval" json:"decrease_interval,omitempty"`
	MinRate             *units.Rate     `yaml:"min_rate" json:"min_rate,omitempty"`
	ClampTargetRate     *bool           `yaml:"clamp_target_rate" json:"clamp_target_rate,omitempty"`
	ClampAfterTimeInc   *bool           `yaml:"clamp_after_time_increase" json:"clamp_after_time_increase,omitempty"`
	IncreaseInterval    *units.Duration `yaml:"increase_interval" json:"increase_interval,omitempty"`
	ByteCounter         *units.Size     `yaml:"byte_counter" json:"byte_counter,omitempty"`
	Threshold           *int            `yaml:"threshold" json:"threshold,omitempty"`
	AIRate              *units.Rate     `yaml:"ai_rate" json:"ai_rate,omitempty"`
	HAIRate             *units.Rate     `yaml:"hai_rate" json:"hai_rate,omitempty"`
	CNPInterval         *units.Duration `yaml:"cnp_interval" json:"cnp_interval,omitempty"`

	// Details implementations differ on (see roce.DCQCNParams): the first
	// CNP's cut "immediate" or at the "next-check"; α at a new episode
	// "reset" to initial_alpha or "keep" (as it decayed); the byte
	// counter's stage when it is off, "mirror-timer" or "zero".
	FirstCNPCut       *string `yaml:"first_cnp_cut" json:"first_cnp_cut,omitempty"`
	AlphaOnNewEpisode *string `yaml:"alpha_on_new_episode" json:"alpha_on_new_episode,omitempty"`
	ByteCounterOff    *string `yaml:"byte_counter_off" json:"byte_counter_off,omitempty"`
}

// Workload is the traffic of the test.
type Workload struct {
	// Kind is alltoall, allreduce, permutation, incast or flows.
	Kind string `yaml:"kind" json:"kind"`
	// Algorithm: alltoall → direct; allreduce → ring. Empty means the kind's
	// default, which the loader fills in.
	Algorithm string `yaml:"algorithm" json:"algorithm"`
	// Ranks is the number of ranks (one per NIC, packed); 0 = every host (the
	// loader fills in the host count).
	Ranks int `yaml:"ranks" json:"ranks"`
	// Placement maps ranks to hosts: packed, spread, rail-aligned,
	// random (seeded) or list (PlacementHosts).
	Placement      string `yaml:"placement" json:"placement"`
	PlacementHosts []int  `yaml:"placement_hosts" json:"placement_hosts,omitempty"`
	// RanksPerServer is how many GPUs of each server take a rank (0 = all).
	RanksPerServer int `yaml:"ranks_per_server" json:"ranks_per_server,omitempty"`
	// Root is the root rank of broadcast, reduce, gather and scatter.
	Root int `yaml:"root" json:"root,omitempty"`
	// MessageSize splits every rank-to-rank transfer into chunks of at most
	// this size (the pipeline chunk of chain and tree algorithms); 0 = whole
	// transfers (pipelined algorithms then use 8 chunks).
	MessageSize units.Size `yaml:"message_size" json:"message_size,omitempty"`
	// QPs spreads every chunk over this many queue pairs per rank pair, each
	// its own 5-tuple.
	QPs int `yaml:"qps" json:"qps"`
	// Iterations are measured back-to-back runs of the collective after
	// Warmup unmeasured ones, as in nccl-tests.
	Iterations int `yaml:"iterations" json:"iterations"`
	Warmup     int `yaml:"warmup" json:"warmup,omitempty"`
	// Sizes: the data size S swept like nccl-tests. For collectives S has
	// nccl-tests' meaning; for permutation and incast it is bytes per flow.
	Sizes Sizes `yaml:"sizes" json:"sizes"`
	// Incast: Senders hosts (the first ones after Target) send to Target.
	Senders int `yaml:"senders" json:"senders,omitempty"`
	Target  int `yaml:"target" json:"target,omitempty"`
	// File is a flow list (kind flows): one flow per line "src dst bytes
	// start", path relative to the scenario file.
	File string `yaml:"file" json:"file,omitempty"`
	// HostOffset places the job from host HostOffset on: a collective's
	// placement is shifted by it, a permutation or uniform job uses hosts
	// HostOffset … HostOffset+ranks−1.
	HostOffset int `yaml:"host_offset" json:"host_offset,omitempty"`
	// Load (kinds uniform and messages) is the offered load of every host
	// as a fraction of its link rate (Poisson arrivals), for Duration.
	// For messages it counts wire bytes (payload and per-packet overhead).
	Load     float64        `yaml:"load" json:"load,omitempty"`
	Duration units.Duration `yaml:"duration" json:"duration,omitempty"`
	// SizeDist (kind messages) draws message sizes: a short name (w1…w5,
	// websearch, hadoop, …) or a CDF file path relative to the scenario.
	SizeDist string `yaml:"size_dist" json:"size_dist,omitempty"`
	// Pattern (kind messages) picks destinations: uniform (any other host,
	// the default) or permutation (a fixed random one per host).
	Pattern string `yaml:"pattern" json:"pattern,omitempty"`
	// Buckets (kind messages) groups messages by size for the slowdown
	// table: equal-count (BucketCount buckets holding as many messages
	// each, the Homa paper's x axis; the default, 10) or log2 (powers of
	// two).
	Buckets     string `yaml:"buckets" json:"buckets,omitempty"`
	BucketCount int    `yaml:"bucket_count" json:"bucket_count,omitempty"`
	// ResponseSize (kind messages) > 0 makes every message a request that
	// its receiver answers with a response of this size once it has it all
	// (an RPC; load counts the requests); "same" answers each with as many
	// bytes as it asked (the RTT-by-length benchmark). The RTT is then
	// measured, overall and per request size.
	ResponseSize ResponseSize `yaml:"response_size" json:"response_size,omitempty"`
	// Clients and Servers (kind any-to-any, a hardware tester's streaming
	// test): Clients hosts (from host_offset, or the first of
	// placement_hosts) each keep Depth writes of the size outstanding to
	// each of the Servers hosts after them, for Duration; Checkpoint is the
	// interval of the per-endpoint counts (0 = a tenth of the duration).
	Clients    int            `yaml:"clients" json:"clients,omitempty"`
	Servers    int            `yaml:"servers" json:"servers,omitempty"`
	Depth      int            `yaml:"depth" json:"depth,omitempty"`
	Checkpoint units.Duration `yaml:"checkpoint" json:"checkpoint,omitempty"`
}

// JobSpec is one entry of jobs: a workload with a name and a start offset.
// Its sizes must give exactly one size.
type JobSpec struct {
	Name     string         `yaml:"name" json:"name"`
	Start    units.Duration `yaml:"start" json:"start,omitempty"`
	Workload `yaml:",inline" json:"workload"`
}

// UnmarshalYAML starts every job from the workload defaults (qps 1,
// iterations 1, …), so a job only writes what differs.
func (j *JobSpec) UnmarshalYAML(unmarshal func(any) error) error {
	type plain JobSpec
	p := plain{Workload: Defaults().Workload}
	if err := unmarshal(&p); err != nil {
		return err
	}
	*j = JobSpec(p)
	return nil
}

// Sizes is either a from/to/factor sweep or an explicit list.
type Sizes struct {
	From   units.Size   `yaml:"from" json:"from,omitempty"`
	To     units.Size   `yaml:"to" json:"to,omitempty"`
	Factor int          `yaml:"factor" json:"factor,omitempty"`
	List   []units.Size `yaml:"list" json:"list,omitempty"`
}

// SimOpts bound and shape a simulation.
type SimOpts struct {
	// TimeLimit stops a job whose flows have not all finished by then
	// (simulated time); the result is marked incomplete.
	TimeLimit units.Duration `yaml:"time_limit" json:"time_limit"`
	// MemoryLimit refuses a job whose estimated memory (route tables, flows,
	// connections) exceeds it, with a sentence instead of an out-of-memory
	// crash. Jobs run in parallel each get this much.
	MemoryLimit units.Size `yaml:"memory_limit" json:"memory_limit"`
	// RecordFlows keeps every flow record in the JSON output.
	RecordFlows bool `yaml:"record_flows" json:"record_flows"`
	// Explain records where every data packet queued and whether the queue
	// was paused by PFC, and reports for the flows slower than
	// ExplainSlowdown where they waited and whether they were victims of
	// PFC or culprits of the congestion, plus the pause propagation tree.
	Explain         bool    `yaml:"explain" json:"explain,omitempty"`
	ExplainSlowdown float64 `yaml:"explain_slowdown" json:"explain_slowdown,omitempty"`
	// PortCounters keeps per-port counters in the JSON output.
	PortCounters bool `yaml:"port_counters" json:"port_counters"`
	// Engine is the simulator: "packet" (the packet-level reference),
	// "flow" (the flow-level engine, package fluid) or "auto" (flow for
	// jobs of at least FlowAbove that it can express, else packet).
	Engine    string     `yaml:"engine" json:"engine,omitempty"`
	FlowAbove units.Size `yaml:"flow_above" json:"flow_above,omitempty"`
	// Telemetry samples every port of the fabric over time and keeps the
	// busiest ports' series in the row (packet engine; Ports 0 = off).
	Telemetry Telemetry `yaml:"telemetry" json:"telemetry,omitempty"`
	// Partitions splits the packet engine's run of the jobs together into
	// this many parts of the fabric, each simulated on its own goroutine
	// in lockstep windows of the shortest link delay between parts (0 or
	// 1: one part, the reference run). See PartitionsSupport.
	Partitions int `yaml:"partitions" json:"partitions,omitempty"`
}

// Telemetry samples, every Interval, every switch egress port and host NIC
// port: the bytes queued, the bytes sent (utilization), whether the data
// priority is paused, and the pause frames received, ECN marks and drops
// since the last sample. Every port is recorded; at the end of the run the
// Ports busiest by bytes sent (or the ports named) are kept. Flows picks
// flows whose sending rate and delivered bytes are sampled too: the ones
// named by ID, or the Top slowest, which takes a second, identical run
// (the first finds them). What, when given, keeps only those quantities.
// Nothing picked = off (nothing is scheduled). Interval 0 =
// DefaultTelemetryInterval.
type Telemetry struct {
	Interval units.Duration `yaml:"interval" json:"interval,omitempty"`
	Ports    Pick           `yaml:"ports" json:"ports,omitzero"`
	Flows    Pick           `yaml:"flows" json:"flows,omitzero"`
	What     []string       `yaml:"what" json:"what,omitempty"`
}

// TelemetryQuantities are the names sim.telemetry.what takes.
var TelemetryQuantities = []string{"queue", "util", "pause", "ecn", "drops", "rate", "delivered"}

// DefaultTelemetryInterval is sim.telemetry.interval when not given.
const DefaultTelemetryInterval = 10 * units.Microsecond

// MaxTelemetryPorts is the most ports sim.telemetry.ports keeps, and
// MaxTelemetryFlows the most flows sim.telemetry.flows samples.
const (
	MaxTelemetryPorts = 64
	MaxTelemetryFlows = 64
)

// MaxTelemetrySamples bounds the telemetry's memory: every port sampled
// every interval is at most this many port-samples (about 29 bytes each);
// a longer run merges its samples pairwise, doubling the interval, as
// often as it needs to.
const MaxTelemetrySamples = 1_000_000

// On reports whether telemetry is recorded.
func (t Telemetry) On() bool { return !t.Ports.IsZero() || !t.Flows.IsZero() }

// Records reports whether quantity q (one of TelemetryQuantities) is kept.
func (t Telemetry) Records(q string) bool { return len(t.What) == 0 || slices.Contains(t.What, q) }

// Every is the sampling interval (the default when not given).
func (t Telemetry) Every() units.Duration {
	if t.Interval > 0 {
		return t.Interval
	}
	return DefaultTelemetryInterval
}

// Samples is how many samples a run of up to limit takes: one at the end
// of every whole interval.
func (t Telemetry) Samples(limit units.Duration) int64 {
	if limit <= 0 {
		return 0
	}
	return int64(limit / t.Every())
}

// Job is one simulation to run: a variant at one data size.
type Job struct {
	Scenario     string
	Variant      string
	VariantIndex int
	SizeIndex    int
	Size         units.Size
	Seed         uint64
	Spec         *Scenario // resolved; shared read-only between jobs of a variant
	// FlowList is the parsed flow file for kind flows (nil otherwise);
	// shared read-only between jobs.
	FlowList []workload.FlowSpec
	Dir      string // directory of the scenario file, for relative paths
}

// ResponseSize is workload.response_size: a size, or SameSize.
type ResponseSize int64

// SameSize is response_size: same — every response as long as its request.
const SameSize ResponseSize = -1

// RPC reports whether messages are requests that draw responses.
func (r ResponseSize) RPC() bool { return r != 0 }

// Bytes is the response to a request of req bytes (0: none).
func (r ResponseSize) Bytes(req int64) int64 {
	if r == SameSize {
		return req
	}
	return int64(r)
}

// UnmarshalText reads "same" or a size (64KiB).
func (r *ResponseSize) UnmarshalText(b []byte) error {
	if string(b) == "same" {
		*r = SameSize
		return nil
	}
	var sz units.Size
	if err := sz.UnmarshalText(b); err != nil {
		return err
	}
	*r = ResponseSize(sz)
	return nil
}

// MarshalText writes "same" or the size in human units.
func (r ResponseSize) MarshalText() ([]byte, error) {
	if r == SameSize {
		return []byte("same"), nil
	}
	return units.Size(r).MarshalText()
}

// String is the value as a file would write it.
func (r ResponseSize) String() string {
	b, _ := r.MarshalText()
	return string(b)
}
