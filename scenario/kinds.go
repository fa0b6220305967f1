package scenario

import (
	"fmt"
	"strings"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// WorkloadKind is everything that differs between workload kinds, in one
// place: the keys the kind reads (validation refuses the others), its own
// checks, the hosts it occupies, whether it runs once per size or as one
// row, its closed-form ideal bytes, and how it compiles to a DAG. Adding a
// kind is adding one entry to workloadKindList (the memory estimate in lab
// has a test that fails until it knows the new kind too).
type WorkloadKind struct {
	Name string
	// Collective kinds run an algorithm of the workload catalogue
	// (workload.Build) on placed ranks, iterated, at each size of a sweep.
	Collective bool
	// HostRange kinds occupy ranks consecutive hosts from host_offset, or
	// the hosts of placement: list.
	HostRange bool
	// ReadsLoad kinds read load (an open-loop window's); ReadsDuration
	// kinds read duration.
	ReadsLoad, ReadsDuration bool
	// ReadsStreamKeys kinds read clients, servers, depth and checkpoint.
	ReadsStreamKeys bool
	// ReadsIncastKeys kinds read senders and target.
	ReadsIncastKeys bool
	// ranks, when set, is the kind's rank count (else ranks, or every
	// host from host_offset).
	ranks func(w Workload) int
	// ReadsMessageKeys kinds read size_dist, pattern, buckets, bucket_count
	// and response_size; their compile needs BuildInput.Dist.
	ReadsMessageKeys bool
	// ReadsFile kinds read a flow list (file); their compile needs
	// BuildInput.Flows.
	ReadsFile bool

	// rowSize, when set, makes the kind one row per run (sizes is not
	// read): the size reported for it.
	rowSize func(f *File, w Workload) units.Size
	// check validates the kind's own keys after the common ones (ranks are
	// resolved; hosts is the topology's count).
	check func(c *checker, p string, job int, w Workload, t Topology, ranks, hosts int, limit units.Duration)
	// hosts lists the hosts the job occupies; nil for a flow list.
	hosts func(w Workload, t Topology, seed uint64, hosts, ranks int) ([]int, error)
	// build compiles the job.
	build func(in BuildInput) (*workload.DAG, error)
	// idealBytes are the bytes the job forces through its busiest NIC per
	// run, and the runs (ok false: no closed form).
	idealBytes func(w Workload, t Topology, ranks int, size units.Size) (bytes float64, runs int, ok bool)
}

// Sized reports whether the kind runs once per size of workload.sizes
// (false: one row per run, sized by its file or distribution).
func (k *WorkloadKind) Sized() bool { return k.rowSize == nil }

// Hosts lists the hosts job workload w of this kind occupies on topology t
// (see JobHosts).
func (k *WorkloadKind) Hosts(w Workload, t Topology, seed uint64) ([]int, error) {
	hosts := Hosts(t)
	return k.hosts(w, t, seed, hosts, jobRanks(w, hosts))
}

// Build compiles the job described by in to its DAG on hosts numbered as
// in.Hosts says (collectives: before any scale-up remapping, which is the
// layout's business).
func (k *WorkloadKind) Build(in BuildInput) (*workload.DAG, error) { return k.build(in) }

// BuildInput is what compiling a job needs beyond its workload keys: the
// hosts it occupies and what the caller read for it.
type BuildInput struct {
	Workload Workload
	Spec     *Scenario // the host link rate, the NIC's MTU and overhead
	Seed     uint64    // the job's (JobSeed)
	Size     int64
	NumHosts int   // of the layout
	Hosts    []int // WorkloadKind.Hosts
	// Server and Rail are the layout's server and rail of each of Hosts
	// (collectives).
	Server, Rail []int
	// Counts is the collective's workload.Count when the caller has it.
	Counts *workload.Counts
	Dist   *workload.SizeDist  // ReadsMessageKeys: size_dist, read by the caller
	Flows  []workload.FlowSpec // ReadsFile: the flow list, read by the caller
}

// jobRanks is a workload's rank count with 0 = the kind's own count, the
// hosts of placement: list, or every host from host_offset.
func jobRanks(w Workload, hosts int) int {
	if w.Ranks == 0 {
		if k, ok := LookupWorkloadKind(w.Kind); ok && k.ranks != nil {
			return k.ranks(w)
		}
		if w.Placement == "list" && len(w.PlacementHosts) > 0 {
			return len(w.PlacementHosts)
		}
		return hosts - w.HostOffset
	}
	return w.Ranks
}

// LookupWorkloadKind is the descriptor of kind name.
func LookupWorkloadKind(name string) (*WorkloadKind, bool) {
	k, ok := workloadKindIndex[name]
	return k, ok
}

// WorkloadKinds names every workload kind: the collectives of the workload
// catalogue, then the traffic patterns.
func WorkloadKinds() []string {
	var out []string
	for _, k := range workloadKindList {
		out = append(out, k.Name)
	}
	return out
}

// kindOf is the descriptor of a kind validation accepted.
func kindOf(name string) *WorkloadKind {
	k, ok := LookupWorkloadKind(name)
	if !ok {
		panic(fmt.Sprintf("scenario: workload kind %q was not validated", name))
	}
	return k
}

// The registry, in catalogue order and by name (filled by init: the
// descriptors' functions refer back to the lookups).
var (
	workloadKindList  []*WorkloadKind
	workloadKindIndex = map[string]*WorkloadKind{}
)

func init() {
	workloadKindList = workloadKindsCatalogue()
	for _, k := range workloadKindList {
		workloadKindIndex[k.Name] = k
	}
}

func workloadKindsCatalogue() []*WorkloadKind {
	var list []*WorkloadKind
	for _, name := range workload.Collectives() {
		list = append(list, &WorkloadKind{Name: name, Collective: true,
			hosts: collectiveHosts, build: buildCollective, idealBytes: collectiveIdealBytes})
	}
	return append(list,
		&WorkloadKind{Name: "permutation", HostRange: true, hosts: rangeHosts,
			build: func(in BuildInput) (*workload.DAG, error) {
				d, err := workload.Permutation(len(in.Hosts), in.Size, sim.NewRNG(in.Seed, "permutation"))
				if err != nil {
					return nil, err
				}
				mapHosts(d, in.Hosts)
				return d, nil
			},
			idealBytes: func(_ Workload, _ Topology, _ int, size units.Size) (float64, int, bool) {
				return float64(size), 1, true // each host sends one size
			}},
		&WorkloadKind{Name: "incast", ReadsIncastKeys: true,
			check: func(c *checker, p string, _ int, w Workload, _ Topology, _, hosts int, _ units.Duration) {
				c.need(w.Senders >= 1, p+"senders", "incast needs at least 1 sender, got %d", w.Senders)
				c.need(w.Target >= 0 && w.Target < hosts, p+"target", "host %d is not in the topology (hosts 0–%d)", w.Target, hosts-1)
				c.need(w.Senders < hosts, p+"senders", "%d senders and a target need %d hosts; the topology has %d", w.Senders, w.Senders+1, hosts)
			},
			hosts: func(w Workload, _ Topology, _ uint64, hosts, _ int) ([]int, error) {
				hs := []int{w.Target}
				for k := 1; k <= w.Senders; k++ {
					hs = append(hs, (w.Target+k)%hosts)
				}
				return hs, nil
			},
			build: func(in BuildInput) (*workload.DAG, error) {
				return workload.Incast(in.NumHosts, in.Workload.Senders, in.Workload.Target, in.Size)
			},
			idealBytes: func(w Workload, _ Topology, _ int, size units.Size) (float64, int, bool) {
				return float64(w.Senders) * float64(size), 1, true // into the target
			}},
		&WorkloadKind{Name: "flows", ReadsFile: true,
			rowSize: func(f *File, w Workload) units.Size { return units.Size(f.flowFile(w.File).total) },
			check: func(c *checker, p string, _ int, w Workload, _ Topology, _, hosts int, limit units.Duration) {
				c.flowsAt(p+"file", w, hosts, limit)
			},
			hosts: func(Workload, Topology, uint64, int, int) ([]int, error) { return nil, nil },
			build: func(in BuildInput) (*workload.DAG, error) {
				d, err := workload.Flows(in.NumHosts, in.Flows)
				if err != nil {
					return nil, err
				}
				for k, pin := range d.Pins {
					pin.File = in.Workload.File
					d.Pins[k] = pin
				}
				return d, nil
			}},
		&WorkloadKind{Name: "uniform", HostRange: true, ReadsLoad: true, ReadsDuration: true, hosts: rangeHosts,
			check: func(c *checker, p string, _ int, w Workload, t Topology, ranks, _ int, limit units.Duration) {
				c.uniform(p, w, t, ranks, limit)
			},
			build: func(in BuildInput) (*workload.DAG, error) {
				w := in.Workload
				return workload.Uniform(in.Hosts, in.Size, w.Load, in.Spec.Topology.HostLink.Rate, w.Duration,
					sim.NewRNG(in.Seed, "uniform"), workload.MaxUniformMessages)
			}},
		&WorkloadKind{Name: "messages", HostRange: true, ReadsLoad: true, ReadsDuration: true, ReadsMessageKeys: true, hosts: rangeHosts,
			rowSize: func(f *File, w Workload) units.Size {
				// One row: its "size" is the distribution's mean message size.
				d, err := f.sizeDist(w.SizeDist)
				if err != nil {
					return 0
				}
				return units.Size(d.Mean() + 0.5)
			},
			check: func(c *checker, p string, job int, w Workload, _ Topology, ranks, _ int, limit units.Duration) {
				c.messages(p, job, w, c.spec, ranks, limit)
			},
			build: func(in BuildInput) (*workload.DAG, error) {
				w, nic := in.Workload, in.Spec.NIC
				return workload.Messages(workload.MessagesSpec{Hosts: in.Hosts, Sizes: in.Dist, Load: w.Load,
					Rate: in.Spec.Topology.HostLink.Rate, Payload: int64(nic.MTU), Header: int64(nic.Overhead),
					Duration: w.Duration, Pattern: w.Pattern, ResponseBytes: int64(w.ResponseSize), Seed: in.Seed,
					Limit: workload.MaxUniformMessages})
			}},
		&WorkloadKind{Name: "any-to-any", HostRange: true, ReadsDuration: true, ReadsStreamKeys: true, hosts: rangeHosts,
			ranks: func(w Workload) int { return min(max(w.Clients, 0), maxHosts) + min(max(w.Servers, 0), maxHosts) },
			check: func(c *checker, p string, job int, w Workload, t Topology, ranks, hosts int, limit units.Duration) {
				c.anyToAny(p, job, w, t, ranks, limit)
			},
			build: func(in BuildInput) (*workload.DAG, error) {
				w := in.Workload
				return workload.AnyToAny(AnyToAnySpec(w, in.Spec.Topology, in.Hosts, in.Size))
			}},
	)
}

// AnyToAnySpec is the workload.AnyToAnySpec of any-to-any workload w at
// write size on hosts hs (its clients, then its servers).
func AnyToAnySpec(w Workload, t Topology, hs []int, size int64) workload.AnyToAnySpec {
	c := min(max(w.Clients, 0), len(hs))
	return workload.AnyToAnySpec{Clients: hs[:c], Servers: hs[c:], Size: size, Depth: max(w.Depth, 1),
		Duration: w.Duration, Rate: t.HostLink.Rate, Limit: workload.MaxUniformMessages}
}

// CheckpointInterval is an any-to-any workload's checkpoint (a tenth of
// its duration when not given).
func CheckpointInterval(w Workload) units.Duration {
	if w.Checkpoint > 0 {
		return w.Checkpoint
	}
	return max(w.Duration/10, 1)
}

// collectiveHosts places a collective's ranks over the hosts from
// host_offset on (a list names hosts absolutely), then numbers them back.
// Servers are consecutive groups of gpus_per_server hosts on every
// topology kind, as topo builds them.
func collectiveHosts(w Workload, t Topology, seed uint64, hosts, ranks int) ([]int, error) {
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
}

// rangeHosts is a host-range kind's hosts: placement: list's, or ranks
// consecutive hosts from host_offset.
func rangeHosts(w Workload, _ Topology, _ uint64, hosts, ranks int) ([]int, error) {
	if w.Placement == "list" {
		return append([]int(nil), w.PlacementHosts...), nil
	}
	if w.HostOffset+ranks > hosts {
		return nil, fmt.Errorf("%d hosts from host_offset %d do not fit the topology's %d hosts", ranks, w.HostOffset, hosts)
	}
	hs := make([]int, ranks)
	for i := range hs {
		hs[i] = w.HostOffset + i
	}
	return hs, nil
}

func buildCollective(in BuildInput) (*workload.DAG, error) {
	ws := CollectiveSpec(in.Workload, in.Seed, in.Size, len(in.Hosts), in.Hosts, in.Server, in.Rail)
	if in.Counts != nil && in.Counts.Copies > 0 {
		ws.Counts = in.Counts
	}
	return workload.Build(ws)
}

// collectiveIdealBytes is the lab's algorithm-independent bound
// (metrics.BusBWFactor × the nccl-tests size) over every run (warmup and
// iterations); no closed form on servers with a scale-up domain, which
// carries part of the traffic past the NICs.
func collectiveIdealBytes(w Workload, t Topology, ranks int, size units.Size) (float64, int, bool) {
	if t.ScaleUp.Rate > 0 && t.GPUsPerServer > 1 || ranks < 2 {
		return 0, 0, false
	}
	return metrics.BusBWFactor(metrics.Collective(w.Kind), ranks) * float64(workload.NCCLSize(w.Kind, ranks, int64(size))), max(w.Iterations, 1) + max(w.Warmup, 0), true
}

// CollectiveSpec is the workload.Spec of collective workload w at size
// with its ranks on hosts rankHost (their servers and rails given).
func CollectiveSpec(w Workload, seed uint64, size int64, ranks int, rankHost, rankServer, rankRail []int) workload.Spec {
	return workload.Spec{
		Collective: w.Kind, Algorithm: w.Algorithm, Ranks: ranks, Size: size, Root: w.Root,
		RankHost: rankHost, RankServer: rankServer, RankRail: rankRail,
		ChunkSize: int64(w.MessageSize), QPs: w.QPs, Seed: seed,
		Iterations: w.Iterations, Warmup: w.Warmup,
	}
}

// mapHosts moves a pattern built on hosts 0…n−1 to hosts hs.
func mapHosts(d *workload.DAG, hs []int) {
	for i := range d.Msgs {
		d.Msgs[i].Src = int32(hs[d.Msgs[i].Src])
		d.Msgs[i].Dst = int32(hs[d.Msgs[i].Dst])
	}
	d.RankHost = append([]int(nil), hs...)
}

// TransportKind is what the scenario package, plan and the engines need to
// know of a transport beyond its own knobs: how messages map to
// connections, and the advice when forwarding reorders its packets. The
// packet engine's transports are registered in lab (a test checks that it
// has one for every kind here).
type TransportKind struct {
	Name string
	// PerMessage: no connections; every message is its own (Homa's RPCs).
	PerMessage bool
	// Streams: TCP byte streams, where transport.tcp.connections applies
	// (pool: up to pool_size connections per host pair).
	Streams bool
	// Partitioned: checked for partitioned runs (sim.partitions > 1):
	// each part runs the NICs of the hosts it owns, and whatever the
	// transport reaches across to the other end (TCP's framing) crosses
	// between parts (lab/partition_framing.go). A new transport sets it
	// once checked.
	Partitioned bool
	// reorderNote is the advice for a forwarding policy that reorders
	// packets ("" = none).
	reorderNote func(s *Scenario, policy string) string
}

// PoolSize is how many connections a host pair's messages are spread over
// (1 but for a stream transport with connections: pool).
func (k *TransportKind) PoolSize(t Transport) int {
	if k.Streams && t.TCP.Connections == "pool" {
		return max(t.TCP.PoolSize, 1)
	}
	return 1
}

var transportKindList = []*TransportKind{
	{Name: "roce", Partitioned: true, reorderNote: func(s *Scenario, p string) string {
		if s.NIC.OutOfOrder != "go-back-n" {
			return ""
		}
		return fmt.Sprintf("forwarding %s reorders packets but nic.out_of_order is go-back-n: every reordering costs a NACK and a resend (set nic.out_of_order: accept for NICs built for it)", p)
	}},
	{Name: "homa", PerMessage: true, Partitioned: true},
	{Name: "uet", Partitioned: true},
	{Name: "dctcp", Streams: true, Partitioned: true, reorderNote: tcpReorderNote},
	{Name: "tcp", Streams: true, Partitioned: true, reorderNote: tcpReorderNote},
}

func tcpReorderNote(_ *Scenario, p string) string {
	return fmt.Sprintf("forwarding %s reorders packets: TCP takes three duplicate ACKs as a loss, so reordering costs fast retransmits and window cuts (ecmp or flowlet keep a connection's packets in order)", p)
}

// ForwardingPolicies lists the forwarding policies the scenario's switches
// use: switch.forwarding, then each tier's override.
func (s *Scenario) ForwardingPolicies() []string {
	out := []string{s.Switch.Forwarding}
	for _, tf := range s.Switch.ForwardingTiers {
		out = append(out, tf.Forwarding)
	}
	return out
}

// FlowEngineSupports reports whether the flow-level engine (fluid) can
// express scenario s; why says what it cannot. It is the engine's own
// rule (fluid.Supports), here so that validation can apply it.
func FlowEngineSupports(s *Scenario) (ok bool, why string) {
	tk, found := LookupTransportKind(s.Transport.Kind)
	if !found {
		return false, fmt.Sprintf("unknown transport %q", s.Transport.Kind)
	}
	if tk.PerMessage {
		return false, fmt.Sprintf("transport %s schedules messages by priority at the receiver, which max-min sharing does not model", tk.Name)
	}
	for i := 0; i <= len(s.Jobs); i++ {
		if JobWorkload(s, i).Kind == "messages" {
			return false, "messages workloads measure queueing of short messages behind long ones, which a fluid model does not see"
		}
	}
	if s.Sim.Explain {
		return false, "sim.explain reads per-packet queueing and pauses"
	}
	if len(s.Topology.PFCStorms) > 0 {
		return false, "a PFC storm is pause frames, which the flow engine does not model"
	}
	if len(s.Probes) > 0 {
		return false, "probes are paced UDP streams, which run on real hosts only (--engine hosts)"
	}
	if s.Switch.PFC.Watchdog.Detect > 0 {
		return false, "the PFC watchdog acts on paused queues, which the flow engine does not model"
	}
	if s.Sim.Telemetry.On() {
		return false, "sim.telemetry samples the packet engine's ports"
	}
	if s.NIC.ActiveQPs > 0 {
		return false, "nic.active_qps is NIC arbitration of packets, which the flow engine does not model"
	}
	for _, f := range s.Topology.Failures {
		if f.Until > 0 {
			return false, "a link that comes back up (topology.failures until) is not modeled by the flow engine"
		}
	}
	for _, f := range s.ForwardingPolicies() {
		p, known := fabric.Policies[f]
		if !known {
			return false, fmt.Sprintf("unknown forwarding %q", f)
		}
		if p == fabric.Flowlet {
			return false, "forwarding flowlet re-hashes flows at random after idle gaps; the fluid model has no equivalent"
		}
	}
	return true, ""
}

// TransportLabel is the short name of what carries a scenario's traffic,
// as the result tables print it: RoCE/DCQCN with its preset, RoCE/HPCC,
// UET with its load balancing and congestion control, Homa, DCTCP, TCP.
func TransportLabel(s *Scenario) string {
	if s == nil {
		return ""
	}
	t := s.Transport
	switch t.Kind {
	case "", "roce":
		if t.CC == "hpcc" {
			return "RoCE/HPCC"
		}
		if t.DCQCN.Preset == "off" {
			return "RoCE, no CC"
		}
		return "RoCE/DCQCN " + t.DCQCN.Preset
	case "uet":
		u := t.UET.WithDefaults()
		return "UET " + u.LB + "/" + strings.ToUpper(u.CC)
	case "homa":
		return "Homa"
	case "dctcp":
		return "DCTCP"
	case "tcp":
		return "TCP"
	}
	return t.Kind
}

// TransportKinds names every transport.
func TransportKinds() []string {
	var out []string
	for _, k := range transportKindList {
		out = append(out, k.Name)
	}
	return out
}

// LookupTransportKind is the descriptor of transport name ("" = roce, the
// default).
func LookupTransportKind(name string) (*TransportKind, bool) {
	if name == "" {
		name = "roce"
	}
	for _, k := range transportKindList {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// TransportOf is the descriptor of a validated scenario's transport.
func TransportOf(s *Scenario) *TransportKind {
	k, ok := LookupTransportKind(s.Transport.Kind)
	if !ok {
		panic(fmt.Sprintf("scenario: transport %q was not validated", s.Transport.Kind))
	}
	return k
}

// maxCheckpointCells bounds an any-to-any row's pair × checkpoint counts.
const maxCheckpointCells = 1 << 20

// anyToAny checks an any-to-any workload: clients and servers that fit,
// the depth, a duration within the time limit, a checkpoint within the
// duration, writes the run can hold, and no other job beside it.
func (c *checker) anyToAny(p string, job int, w Workload, t Topology, ranks int, limit units.Duration) {
	c.need(w.Clients >= 1 && w.Clients <= maxHosts, p+"clients", "any-to-any needs 1 to %d clients, got %d", maxHosts, w.Clients)
	c.need(w.Servers >= 1 && w.Servers <= maxHosts, p+"servers", "any-to-any needs 1 to %d servers, got %d", maxHosts, w.Servers)
	c.need(ranks == w.Clients+w.Servers, p+"ranks", "any-to-any runs on its clients and servers (%d hosts); leave ranks out, got %d", w.Clients+w.Servers, ranks)
	c.need(w.Depth >= 0 && w.Depth <= 1024, p+"depth", "must be between 1 and 1024 writes outstanding per endpoint (0 = 1), got %d", w.Depth)
	c.need(w.Duration >= units.Microsecond, p+"duration", "any-to-any needs a duration (at least 1us) during which every endpoint writes, got %v", w.Duration)
	c.need(limit <= 0 || w.Duration < limit, p+"duration", "%v does not end before sim.time_limit %v: the writes in flight at its end need time to finish; raise sim.time_limit", w.Duration, limit)
	c.need(w.Checkpoint >= 0 && w.Checkpoint <= w.Duration, p+"checkpoint", "must be between 0 (a tenth of the duration) and the duration %v, got %v", w.Duration, w.Checkpoint)
	if w.Duration > 0 && w.Checkpoint > 0 {
		c.need(w.Duration/w.Checkpoint <= 1000, p+"checkpoint", "%v gives %d checkpoints in %v, more than the limit of 1000", w.Checkpoint, w.Duration/w.Checkpoint, w.Duration)
	}
	if c.err == nil && w.Duration > 0 {
		// Every checkpoint holds a count per pair.
		cps := int64((w.Duration+CheckpointInterval(w)-1)/CheckpointInterval(w)) + 1
		if cells := int64(w.Clients) * int64(w.Servers) * cps; cells > maxCheckpointCells {
			c.fail(p+"checkpoint", "%d pairs × %d checkpoints is more than the limit of %d counts; use fewer checkpoints or endpoints", int64(w.Clients)*int64(w.Servers), cps, maxCheckpointCells)
		}
	}
	c.need(job == 0 && len(c.spec.Jobs) == 0, p+"kind", "any-to-any runs alone: no jobs beside it")
	if c.err != nil {
		return
	}
	for _, size := range SweepSizes(w.Sizes) {
		s := AnyToAnySpec(w, t, make([]int, ranks), int64(size))
		if n := workload.AnyToAnyMessages(s); n > workload.MaxUniformMessages {
			c.fail(p+"duration", "about %.0f writes of %v for %v (each pair could complete %.0f), more than the limit of %d; use larger writes or a shorter duration",
				n, size, w.Duration, n/float64(max(w.Clients*w.Servers, 1)), workload.MaxUniformMessages)
			return
		}
	}
}
