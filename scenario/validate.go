package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unsafe"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
	"fabriclab/topo"
	"fabriclab/transport/roce"
	"fabriclab/units"
	"fabriclab/workload"
)

// What the simulator can build today. Extending a list here is all the
// scenario package needs when another package grows a new kind.
var (
	topologyKinds = []string{"leaf-spine", "fat-tree", "rail", "custom", "ns3"}
	// topologyTiers are the switch tiers of each topology kind, edge first.
	topologyTiers = map[string][]string{
		"leaf-spine": {"leaf", "spine"},
		"fat-tree":   {"edge", "agg", "core"},
		"rail":       {"rail", "spine"},
	}
	forwardingKinds = []string{"ecmp", "spray-random", "spray-rr", "flowlet", "adaptive", "adaptive-flowlet", "d-mod-k", "te"}
)

// Limits that keep a typo from asking for an absurd run.
const (
	maxHosts = 1 << 20
	minMTU   = 64 * units.Byte
	maxMTU   = 64 * units.KiB
	// minRTO is far below any fabric's round trip but keeps a typo (1ns,
	// 1ps) from making every packet time out.
	minRTO = units.Microsecond
	// Oversubscription (a leaf's down:up capacity) beyond these bounds is a
	// typo: 0.01 already asks for 100× more uplink than downlink.
	minOversubscription = 0.01
	maxOversubscription = 1000
	// maxFlowFile bounds every file a scenario names (flow lists, routes,
	// size distributions).
	maxFlowFile = inputfile.Limit
)

// Hosts is the number of hosts (NICs) of a topology (topo.HostCount: it
// saturates instead of overflowing and is 0 for an unknown kind).
func Hosts(t Topology) int { return topo.HostCount(topoSize(t)) }

// topoSize is the part of topo.Spec that sizes a topology (what its
// formulas need; TopoSpec gives the whole spec).
func topoSize(t Topology) topo.Spec {
	return topo.Spec{Kind: t.Kind, Hosts: t.Hosts, HostsPerLeaf: t.HostsPerLeaf, Spines: t.Spines,
		Oversubscription: t.Oversubscription, K: t.K, Servers: t.Servers,
		GPUsPerServer: t.GPUsPerServer, ServersPerGroup: t.ServersPerGroup,
		HostLink: topo.Link{Rate: t.HostLink.Rate}, FabricLink: topo.Link{Rate: t.FabricLink.Rate},
		Graph: t.graph()}
}

// Validate checks every resolved scenario of the file (the base when there
// are no variants, else each variant) and returns the first problem as an
// *Error.
func (f *File) Validate() error {
	f.attachTopologies()
	if len(f.sweep) > 0 {
		return f.checkPoints()
	}
	for _, rv := range f.variants {
		if err := f.check(rv, f.variantName(rv)); err != nil {
			return err
		}
	}
	return nil
}

// variantName is how errors name a variant: not at all for the base.
func (f *File) variantName(rv rawVariant) string {
	if !f.explicit {
		return ""
	}
	return rv.name
}

// check validates one resolved variant, errors naming it as variant.
func (f *File) check(rv rawVariant, variant string) error {
	c := &checker{f: f, variant: variant, locs: []map[string]loc{rv.locs, f.baseLocs}, fallback: rv.at}
	return c.check(rv.spec)
}

type checker struct {
	f        *File
	variant  string
	locs     []map[string]loc // searched in order, for the key then its parents
	fallback loc
	err      *Error
	spec     *Scenario // the variant being checked
}

// at finds where key was written: the key itself, else the closest parent
// key, in the variant before the base.
func (c *checker) at(key string) loc {
	for k := key; k != ""; k = parent(k) {
		for _, m := range c.locs {
			if l, ok := m[k]; ok {
				return l
			}
		}
	}
	return c.fallback
}

func parent(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// fail records the first problem.
func (c *checker) fail(key, format string, args ...any) {
	if c.err == nil {
		c.err = c.at(key).err(c.f.Path, c.variant, key, fmt.Sprintf(format, args...))
	}
}

func (c *checker) need(ok bool, key, format string, args ...any) {
	if !ok {
		c.fail(key, format, args...)
	}
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

func choices(list []string) string { return strings.Join(list, ", ") }

func (c *checker) check(s *Scenario) error {
	c.spec = s
	c.f.attachTopology(s)
	c.topology(s.Topology)
	c.nic(s.NIC)
	c.switches(s.Switch, s.Topology.Kind)
	c.transport(s.Transport, s.Topology)
	c.workload(s.Workload, s.Topology, s.Sim.TimeLimit)
	c.jobs(s)
	c.probes(s)
	c.entropy(s)
	if k, ok := LookupTransportKind(s.Transport.Kind); ok && k.PerMessage && s.Switch.Forwarding == "te" {
		c.fail("switch.forwarding", "te pins connections to paths; transport %s has none (every message is its own)", k.Name)
	}
	if s.Switch.Forwarding == "te" && s.Transport.Kind == "uet" && s.Transport.UET.LB != "single" {
		c.fail("switch.forwarding", "te pins connections by their 5-tuple, but UET sprays every packet with its own entropy (transport.uet.lb: %s); use lb: single, or forwarding ecmp", cmp.Or(s.Transport.UET.LB, "spray"))
	}
	c.need(len(s.Topology.PFCStorms) == 0 || s.Switch.PFC.Enabled, "topology.pfc_storms", "a PFC storm pauses switch ports: it needs switch.pfc.enabled")
	c.need(s.Sim.TimeLimit > 0, "sim.time_limit", "must be more than 0, got %v", s.Sim.TimeLimit)
	c.need(s.Sim.MemoryLimit >= units.MiB, "sim.memory_limit", "must be at least 1MiB, got %v", s.Sim.MemoryLimit)
	c.need(s.Sim.ExplainSlowdown >= 1 && s.Sim.ExplainSlowdown <= 1e6, "sim.explain_slowdown", "must be between 1 and 1e6, got %v", s.Sim.ExplainSlowdown)
	c.need(oneOf(s.Sim.Engine, []string{"packet", "flow", "auto"}), "sim.engine", "unknown %q; use packet, flow (the flow-level engine) or auto (flow for jobs of at least sim.flow_above it can express)", s.Sim.Engine)
	// What one simulator engine cannot run is refused only where that
	// engine runs: on real hosts, or with no engine (Options.Engine),
	// neither the engine sim.engine picks nor sim.partitions applies (their
	// values are still checked).
	simulated := c.f.engine == ""
	// No simulator engine has a UDP transport: a file that validates must
	// run (and this comes before the flow engine's reasons, whose advice,
	// another sim.engine, would not help).
	c.need(len(s.Probes) == 0 || !simulated, "probes", "paced UDP probes run on real hosts only (--engine hosts); the simulator has no UDP transport")
	if s.Sim.Engine == "flow" && simulated {
		if ok, why := FlowEngineSupports(s); !ok {
			c.fail("sim.engine", "flow: %s; use sim.engine packet or auto", why)
		}
	}
	c.need(s.Sim.FlowAbove >= 0, "sim.flow_above", "must not be negative, got %v", s.Sim.FlowAbove)
	c.need(s.Sim.Partitions >= 0 && s.Sim.Partitions <= MaxPartitions, "sim.partitions", "must be between 0 and %d, got %d", MaxPartitions, s.Sim.Partitions)
	if h := Hosts(s.Topology); h > 0 && s.Sim.Partitions > h {
		c.fail("sim.partitions", "%d parts for %d hosts: every part needs a host", s.Sim.Partitions, h)
	}
	if s.Sim.Partitions > 1 && simulated {
		if ok, key, why := PartitionsSupport(s); !ok {
			c.fail("sim.partitions", "%d parts: %s (%s); leave sim.partitions at 1", s.Sim.Partitions, why, key)
		}
	}
	c.telemetry(s.Sim)
	if c.err == nil {
		c.fabric(s)
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

func (c *checker) topology(t Topology) {
	const p = "topology."
	if !oneOf(t.Kind, topologyKinds) {
		c.fail(p+"kind", "unknown topology %q; use one of: %s", t.Kind, choices(topologyKinds))
		return
	}
	switch t.Kind {
	case "leaf-spine":
		c.need(t.Hosts > 0, p+"hosts", "leaf-spine needs the number of hosts (> 0), got %d", t.Hosts)
		c.need(t.Hosts <= maxHosts, p+"hosts", "%d hosts is more than the limit of %d", t.Hosts, maxHosts)
		c.need(t.HostsPerLeaf > 0, p+"hosts_per_leaf", "leaf-spine needs hosts per leaf (> 0), got %d", t.HostsPerLeaf)
		if t.Hosts > 0 && t.HostsPerLeaf > 0 {
			c.need(t.Hosts%t.HostsPerLeaf == 0, p+"hosts", "%d hosts do not fill whole leaves of hosts_per_leaf %d", t.Hosts, t.HostsPerLeaf)
		}
		c.need(t.Spines >= 0, p+"spines", "must not be negative, got %d", t.Spines)
		c.need(t.Spines <= maxHosts, p+"spines", "%d spines is more than the limit of %d", t.Spines, maxHosts)
		if t.Spines == 0 {
			c.need(t.Oversubscription >= minOversubscription && t.Oversubscription <= maxOversubscription, p+"oversubscription",
				"must be between %v and %v when spines is 0 (spines are derived from it), got %v", minOversubscription, maxOversubscription, t.Oversubscription)
		}
		c.serverSize(t, t.HostsPerLeaf, "hosts_per_leaf")
	case "fat-tree":
		c.need(t.K >= 2 && t.K%2 == 0, p+"k", "fat-tree needs an even k ≥ 2, got %d", t.K)
		c.need(Hosts(t) <= maxHosts, p+"k", "k=%d gives %d hosts, more than the limit of %d", t.K, Hosts(t), maxHosts)
		c.serverSize(t, t.K/2, "k/2 hosts per edge switch")
	case "rail":
		c.need(t.Servers >= 1, p+"servers", "rail needs at least 1 server, got %d", t.Servers)
		c.need(t.GPUsPerServer >= 1, p+"gpus_per_server", "rail needs at least 1 GPU per server, got %d", t.GPUsPerServer)
		c.need(t.ServersPerGroup >= 0, p+"servers_per_group", "must not be negative (0 = all servers), got %d", t.ServersPerGroup)
		if t.ServersPerGroup > 0 && t.Servers >= 1 {
			c.need(t.Servers%t.ServersPerGroup == 0, p+"servers_per_group", "%d servers do not split into groups of %d", t.Servers, t.ServersPerGroup)
		}
		c.need(t.Spines >= 0, p+"spines", "must not be negative, got %d", t.Spines)
		c.need(Hosts(t) <= maxHosts, p+"servers", "%d servers × %d GPUs is more than the limit of %d hosts", t.Servers, t.GPUsPerServer, maxHosts)
	case "custom", "ns3":
		c.customCheck(t)
	}
	c.link(p+"host_link", t.HostLink)
	c.link(p+"fabric_link", t.FabricLink)
	c.need(t.SwitchLatency >= 0, p+"switch_latency", "must not be negative, got %v", t.SwitchLatency)
	if r := t.ScaleUp.Rate; r < 0 {
		c.fail(p+"scale_up.rate", "must not be negative (0 = no scale-up domain), got %v", r)
	} else if err := topo.CheckLinkRate(r); r > 0 && err != nil {
		c.fail(p+"scale_up.rate", "%v", err)
	}
	c.need(t.ScaleUp.Delay >= 0, p+"scale_up.delay", "must not be negative, got %v", t.ScaleUp.Delay)
	c.need(t.Convergence >= 0, p+"convergence", "must not be negative, got %v", t.Convergence)
	for i, st := range t.PFCStorms {
		k := fmt.Sprintf("%spfc_storms[%d]", p, i)
		c.need(st.Host >= 0 && st.Host < Hosts(t), k+".host", "host %d is not one of the topology's hosts 0…%d", st.Host, Hosts(t)-1)
		c.need(st.At >= 0 && st.Until > st.At, k+".until", "a storm lasts from at to until: until %v must be after at %v", st.Until, st.At)
		c.need((st.Until-st.At)/(10*units.Microsecond) <= 1<<20, k+".until", "a storm sends a pause every 10us: %v is more than a million of them", st.Until-st.At)
	}
	for i, f := range t.Failures {
		k := fmt.Sprintf("%sfailures[%d]", p, i)
		c.need(f.From != "" && f.To != "" && f.From != f.To, k, "needs two different switch names in from and to (e.g. from: leaf0, to: spine3)")
		c.need(f.At >= 0, k+".at", "must not be negative, got %v", f.At)
		c.need(f.Until == 0 || f.Until > f.At, k+".until", "the link comes back up after it fails: until %v must be after at %v (0 = it stays down)", f.Until, f.At)
		c.need(f.Count >= 0 && f.Count <= maxFlaps, k+".count", "must be 0…%d, got %d", maxFlaps, f.Count)
		c.need(f.At <= maxFailureTime && f.Until <= maxFailureTime, k, "a link fails and comes back within %v of the start, got at %v, until %v", maxFailureTime, f.At, f.Until)
		if f.Count > 1 {
			c.need(f.Until > 0, k+".until", "a flapping link (count %d) needs until, when each flap's link comes back up", f.Count)
			c.need(f.Period > f.Until-f.At, k+".period", "each flap must end before the next: period %v must be longer than until − at = %v", f.Period, f.Until-f.At)
			c.need(f.Period <= (maxFailureTime-f.Until)/units.Duration(max(f.Count-1, 1)), k+".period", "the last flap must end within %v of the start: %d flaps %v apart from until %v do not", maxFailureTime, f.Count, f.Period, f.Until)
		} else {
			c.need(f.Period == 0, k+".period", "is only read with count > 1 (a flapping link)")
		}
	}
}

// overlappingOutages finds two failures of one link (either direction
// names it) whose outages overlap or touch (one's "up" at the other's
// "down"): the later would change nothing, or be undone by an "up" that
// runs first, yet its record would count losses. It compares the
// outages themselves, so flaps may interleave with other failures.
func overlappingOutages(fs []Failure) (i, j int, found bool) {
	for i, a := range fs {
		for j, b := range fs[:i] {
			if (a.From == b.From && a.To == b.To || a.From == b.To && a.To == b.From) && outagesMeet(a, b) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// outagesMeet reports whether an outage of a meets one of b: both lists
// run in time order without overlapping themselves, so one walk through
// them, always past the outage that ends first, finds any that meet.
func outagesMeet(a, b Failure) bool {
	end := func(o [2]units.Duration) units.Duration {
		if o[1] == 0 {
			return units.Duration(math.MaxInt64) // down for good
		}
		return o[1]
	}
	oa, ob := a.Outages(), b.Outages()
	for i, j := 0, 0; i < len(oa) && j < len(ob); {
		if oa[i][0] <= end(ob[j]) && ob[j][0] <= end(oa[i]) {
			return true
		}
		if end(oa[i]) < end(ob[j]) {
			i++
		} else {
			j++
		}
	}
	return false
}

// maxFailureTime bounds when failures and flaps happen: far beyond any
// run, and far from the overflow of the picosecond clock.
const maxFailureTime = 24 * 3600 * units.Second

// maxFlaps bounds a link's flaps.
const maxFlaps = 10000

// serverSize checks gpus_per_server on leaf-spine and fat-tree, where
// servers are consecutive hosts: a server must sit under one edge switch.
func (c *checker) serverSize(t Topology, perEdge int, edgeName string) {
	const p = "topology.gpus_per_server"
	c.need(t.GPUsPerServer >= 0, p, "must not be negative (0 or 1 = every host its own server), got %d", t.GPUsPerServer)
	if g := t.GPUsPerServer; g > 1 && perEdge > 0 {
		c.need(perEdge%g == 0, p, "servers of %d GPUs do not fit evenly under edge switches of %d hosts (%s)", g, perEdge, edgeName)
	}
}

func (c *checker) link(p string, l Link) {
	if err := topo.CheckLinkRate(l.Rate); err != nil {
		c.fail(p+".rate", "%v", err)
	}
	c.need(l.Delay >= 0, p+".delay", "must not be negative, got %v", l.Delay)
}

// entropy checks nic.entropy: qp-aware plans RoCE's UDP source ports for
// the switches' ECMP hash, so it needs both.
func (c *checker) entropy(s *Scenario) {
	e := s.NIC.Entropy
	if e == "" || e == "hash" {
		return
	}
	if e != "qp-aware" {
		c.fail("nic.entropy", "unknown %q; use hash or qp-aware", e)
		return
	}
	k := s.Transport.Kind
	c.need(k == "roce", "nic.entropy", "qp-aware plans RoCE queue pairs' UDP source ports; transport.kind is %s", k)
	c.need(s.Switch.Forwarding == "ecmp" && len(s.Switch.ForwardingTiers) == 0, "nic.entropy", "qp-aware plans for the switches' ECMP hash; switch.forwarding is %s (use ecmp, without forwarding_tiers)", s.Switch.Forwarding)
}

func (c *checker) nic(n NIC) {
	const p = "nic."
	c.need(n.MTU >= minMTU && n.MTU <= maxMTU, p+"mtu", "must be between %v and %v, got %v", minMTU, maxMTU, n.MTU)
	c.need(n.Overhead >= 0, p+"overhead", "must not be negative, got %v", n.Overhead)
	c.need(n.AckEvery >= 1, p+"ack_every", "must be at least 1, got %d", n.AckEvery)
	c.need(n.RTO >= minRTO, p+"rto", "must be at least %v, got %v: a timeout shorter than a round trip retransmits everything", minRTO, n.RTO)
	c.need(n.MaxInflight == 0 || n.MaxInflight >= n.MTU, p+"max_inflight", "must be 0 (no cap) or at least one MTU (%v), got %v", n.MTU, n.MaxInflight)
	c.need(n.Burst >= 1, p+"burst", "must be at least 1 packet, got %d", n.Burst)
	c.need(n.OutOfOrder == "go-back-n" || n.OutOfOrder == "accept", p+"out_of_order", "unknown %q; use go-back-n or accept", n.OutOfOrder)
	c.need(n.DataPriority >= 0 && n.DataPriority <= 7, p+"data_priority", "must be a priority 0–7, got %d", n.DataPriority)
	c.need(n.ControlPriority >= 0 && n.ControlPriority <= 7, p+"control_priority", "must be a priority 0–7, got %d", n.ControlPriority)
	c.need(n.ControlWire >= 20 && n.ControlWire <= n.MTU+n.Overhead, p+"control_wire", "must be between 20B and a data frame (%v), got %v", n.MTU+n.Overhead, n.ControlWire)
	c.need(n.CNP == "packet" || n.CNP == "ack", p+"cnp", "unknown %q; use packet (a CNP frame) or ack (a flag on the next ACK)", n.CNP)
	c.need(n.ActiveQPs >= 0, p+"active_qps", "must be 0 (every QP sends) or a number of QPs, got %d", n.ActiveQPs)
}

func (c *checker) switches(s Switch, kind string) {
	const p = "switch."
	c.need(s.Buffer > 0, p+"buffer", "must be more than 0, got %v", s.Buffer)
	c.need(s.TE.Method == "" || s.TE.Method == "greedy" || s.TE.Method == "optimal", p+"te.method", "unknown %q; use greedy or optimal", s.TE.Method)
	if s.ECN.Enabled {
		c.need(s.ECN.KMin >= 0, p+"ecn.kmin", "must not be negative, got %v", s.ECN.KMin)
		c.need(s.ECN.KMax > 0, p+"ecn.kmax", "must be more than 0, got %v", s.ECN.KMax)
		c.need(s.ECN.KMin <= s.ECN.KMax, p+"ecn.kmin", "%v is above kmax %v", s.ECN.KMin, s.ECN.KMax)
		c.need(s.ECN.PMax >= 0 && s.ECN.PMax <= 1, p+"ecn.pmax", "must be a probability in [0, 1], got %v", s.ECN.PMax)
		c.need(s.ECN.ReferenceRate >= 0, p+"ecn.reference_rate", "must not be negative (0 = absolute thresholds), got %v", s.ECN.ReferenceRate)
		c.need(s.ECN.MarkAt == "enqueue" || s.ECN.MarkAt == "dequeue", p+"ecn.mark_at", "unknown %q; use enqueue or dequeue", s.ECN.MarkAt)
	}
	if s.PFC.Enabled {
		c.need(s.PFC.XOFF > 0, p+"pfc.xoff", "must be more than 0, got %v", s.PFC.XOFF)
		c.need(s.PFC.XOFF < s.Buffer, p+"pfc.xoff", "%v does not fit in the switch buffer of %v", s.PFC.XOFF, s.Buffer)
		c.need(s.PFC.XON >= 0, p+"pfc.xon", "must not be negative, got %v", s.PFC.XON)
		c.need(s.PFC.XON <= s.PFC.XOFF, p+"pfc.xon", "%v is above xoff %v; set xon at or below xoff", s.PFC.XON, s.PFC.XOFF)
		c.need(s.PFC.Headroom >= 0, p+"pfc.headroom", "must not be negative (0 = automatic), got %v", s.PFC.Headroom)
		c.need(s.PFC.Mode == "static" || s.PFC.Mode == "dynamic", p+"pfc.mode", "unknown %q; use static or dynamic", s.PFC.Mode)
		c.need(s.PFC.Alpha > 0 && s.PFC.Alpha <= 64, p+"pfc.alpha", "must be in (0, 64] (the share of the free buffer one queue may take; 1/8 is common), got %v", s.PFC.Alpha)
		c.need(s.PFC.Reserved >= 0 && s.PFC.Reserved < s.Buffer, p+"pfc.reserved", "must be at least 0 and below the buffer %v, got %v", s.Buffer, s.PFC.Reserved)
		if wd := s.PFC.Watchdog; wd.Detect != 0 || wd.Action != "" || wd.Restore != 0 {
			c.need(wd.Detect > 0, p+"pfc.watchdog.detect", "must be more than 0 (how long a queue may stay paused), got %v", wd.Detect)
			c.need(wd.Restore > 0, p+"pfc.watchdog.restore", "must be more than 0 (how long the queue stays out of PFC), got %v", wd.Restore)
			c.need(wd.Action == "drop" || wd.Action == "ignore", p+"pfc.watchdog.action", "unknown %q; use drop (discard the stuck queue's packets) or ignore (ignore its pauses)", wd.Action)
		}
	}
	c.need(oneOf(s.Forwarding, forwardingKinds), p+"forwarding", "unknown forwarding %q; use one of: %s", s.Forwarding, choices(forwardingKinds))
	c.need(s.FlowletGap > 0, p+"flowlet_gap", "must be more than 0, got %v", s.FlowletGap)
	if s.RoutesFile != "" {
		if _, err := c.routes(s.RoutesFile); err != nil {
			c.fail(p+"routes_file", "%v", err)
		}
	}
	seen := map[string]bool{}
	for i, tf := range s.ForwardingTiers {
		k := fmt.Sprintf("%sforwarding_tiers[%d]", p, i)
		tiers := c.topologyTiersOf(kind)
		c.need(oneOf(tf.Tier, tiers), k+".tier", "a %s topology has no tier %q; its tiers are: %s", kind, tf.Tier, choices(tiers))
		c.need(!seen[tf.Tier], k+".tier", "tier %q is given twice", tf.Tier)
		seen[tf.Tier] = true
		c.need(oneOf(tf.Forwarding, forwardingKinds), k+".forwarding", "unknown forwarding %q; use one of: %s", tf.Forwarding, choices(forwardingKinds))
		c.need(tf.Forwarding != "te", k+".forwarding", "te plans whole paths across tiers; set switch.forwarding: te instead")
	}
}

func (c *checker) transport(t Transport, topo Topology) {
	const p = "transport."
	if _, ok := LookupTransportKind(t.Kind); !ok || t.Kind == "" {
		c.fail(p+"kind", "unknown transport %q; use one of: %s", t.Kind, choices(TransportKinds()))
		return
	}
	c.transportKnobs(t)
	if t.CC != "" {
		c.need(t.CC == "dcqcn" || t.CC == "hpcc", p+"cc", "unknown congestion control %q; use dcqcn or hpcc", t.CC)
		c.need(t.Kind == "roce", p+"cc", "is RoCE's congestion control (transport.kind: roce), not %s's", t.Kind)
	}
	if t.CC == "hpcc" {
		c.need(t.HPCC.MinRate <= topo.HostLink.Rate, p+"hpcc.min_rate", "%v is above the host link rate %v", t.HPCC.MinRate, topo.HostLink.Rate)
	}
	const d = p + "dcqcn."
	if _, err := roce.Preset(t.DCQCN.Preset); err != nil {
		c.fail(d+"preset", "unknown preset %q; use one of: %s", t.DCQCN.Preset, choices(roce.PresetNames()))
		return
	}
	o := t.DCQCN
	unit := func(key string, v *float64, lo float64, loOpen bool) {
		if v == nil {
			return
		}
		ok := *v <= 1 && (*v > lo || !loOpen && *v == lo)
		bracket := "["
		if loOpen {
			bracket = "("
		}
		c.need(ok, d+key, "must be in %s%v, 1], got %v", bracket, lo, *v)
	}
	unit("alpha_g", o.AlphaG, 0, true)
	unit("initial_alpha", o.InitialAlpha, 0, false)
	unit("min_decrease_factor", o.MinDecreaseFactor, 0, true)
	unit("decrease_coefficient", o.DecreaseCoefficient, 0, true)
	positive := func(key string, ok bool, v any) { c.need(ok, d+key, "must be more than 0, got %v", v) }
	nonNeg := func(key string, ok bool, v any) { c.need(ok, d+key, "must not be negative, got %v", v) }
	if o.AlphaInterval != nil {
		positive("alpha_interval", *o.AlphaInterval > 0, *o.AlphaInterval)
	}
	if o.IncreaseInterval != nil {
		positive("increase_interval", *o.IncreaseInterval > 0, *o.IncreaseInterval)
	}
	if o.MinRate != nil {
		positive("min_rate", *o.MinRate > 0, *o.MinRate)
		c.need(*o.MinRate <= topo.HostLink.Rate, d+"min_rate", "%v is above the host link rate %v", *o.MinRate, topo.HostLink.Rate)
	}
	if o.DecreaseInterval != nil {
		nonNeg("decrease_interval", *o.DecreaseInterval >= 0, *o.DecreaseInterval)
	}
	if o.CNPInterval != nil {
		nonNeg("cnp_interval", *o.CNPInterval >= 0, *o.CNPInterval)
	}
	choice := func(key string, v *string, allowed ...string) {
		if v != nil {
			c.need(oneOf(*v, allowed), d+key, "unknown %q; use %s", *v, strings.Join(allowed, " or "))
		}
	}
	choice("first_cnp_cut", o.FirstCNPCut, "immediate", "next-check")
	choice("alpha_on_new_episode", o.AlphaOnNewEpisode, "reset", "keep")
	choice("byte_counter_off", o.ByteCounterOff, "mirror-timer", "zero")
	if o.RateOnFirstCNP != nil {
		nonNeg("rate_on_first_cnp", *o.RateOnFirstCNP >= 0, *o.RateOnFirstCNP)
	}
	if o.ByteCounter != nil {
		nonNeg("byte_counter", *o.ByteCounter >= 0, *o.ByteCounter)
	}
	if o.Threshold != nil {
		nonNeg("threshold", *o.Threshold >= 0, *o.Threshold)
	}
	if o.AIRate != nil {
		nonNeg("ai_rate", *o.AIRate >= 0, *o.AIRate)
	}
	if o.HAIRate != nil {
		nonNeg("hai_rate", *o.HAIRate >= 0, *o.HAIRate)
	}
	if c.err != nil {
		return
	}
	// Whatever the knobs above miss, the reaction point's own check catches.
	params, err := dcqcnParams(t.DCQCN)
	if err == nil {
		err = params.Validate()
	}
	if err != nil {
		c.fail(d[:len(d)-1], "%v", err)
	}
}

func (c *checker) workload(w Workload, t Topology, limit units.Duration) {
	c.workloadAt("workload.", 0, w, t, limit)
}

// workloadAt checks job i's workload (0 = the top-level one), written under
// key prefix p ("workload." or "jobs[i-1].").
func (c *checker) workloadAt(p string, job int, w Workload, t Topology, limit units.Duration) {
	k, ok := LookupWorkloadKind(w.Kind)
	if !ok {
		if w.Kind == "" {
			c.fail(p+"kind", "is required; use one of: %s", choices(WorkloadKinds()))
		} else {
			c.fail(p+"kind", "unknown workload %q; use one of: %s", w.Kind, choices(WorkloadKinds()))
		}
		return
	}
	if algos := workload.Algorithms(w.Kind); len(algos) > 0 {
		c.need(w.Algorithm == "" || oneOf(w.Algorithm, algos), p+"algorithm", "unknown %s algorithm %q; use one of: %s", w.Kind, w.Algorithm, choices(algos))
	} else {
		c.need(w.Algorithm == "", p+"algorithm", "%s has no algorithm to choose; remove the key", w.Kind)
	}
	hosts := Hosts(t)
	if c.err != nil {
		return // the topology is wrong: host counts below would mislead
	}
	c.need(w.Ranks >= 0, p+"ranks", "must not be negative (0 = every host), got %d", w.Ranks)
	c.need(w.Ranks <= hosts, p+"ranks", "%d ranks do not fit the topology's %d hosts", w.Ranks, hosts)
	c.need(w.HostOffset >= 0 && w.HostOffset < hosts, p+"host_offset", "host %d is not in the topology (hosts 0–%d)", w.HostOffset, hosts-1)
	ranks := jobRanks(w, hosts)
	if c.err != nil {
		return
	}
	if k.Collective {
		c.need(ranks >= 2, p+"ranks", "%s needs at least 2 ranks, got %d", w.Kind, ranks)
		c.need(w.Root >= 0 && w.Root < max(ranks, 1), p+"root", "rank %d is not one of the %d ranks", w.Root, ranks)
		c.need(w.MessageSize >= 0, p+"message_size", "must not be negative (0 = whole transfers), got %v", w.MessageSize)
		c.need(w.QPs >= 1, p+"qps", "needs at least 1 queue pair per rank pair, got %d", w.QPs)
		c.need(w.QPs <= 1024, p+"qps", "%d queue pairs per rank pair is more than the limit of 1024", w.QPs)
		c.need(w.Iterations >= 1, p+"iterations", "needs at least 1 measured iteration, got %d", w.Iterations)
		c.need(w.Warmup >= 0, p+"warmup", "must not be negative, got %d", w.Warmup)
		c.need(w.Iterations+w.Warmup <= 10000, p+"iterations", "%d iterations plus warmup is more than the limit of 10000", w.Iterations+w.Warmup)
		c.placementAt(p, w, t, ranks)
	} else {
		c.need(w.Root == 0, p+"root", "is only read by rooted collectives; remove it")
		if k.HostRange && w.Placement == "list" {
			c.placementAt(p, w, t, ranks) // the hosts it uses, in rank order
		} else {
			c.need(w.Placement == "" && len(w.PlacementHosts) == 0 && w.RanksPerServer == 0, p+"placement",
				"%s addresses hosts directly; placement, placement_hosts and ranks_per_server are for collectives (%s take placement: list)", w.Kind, hostRangeKinds())
		}
		c.need(w.QPs == 1 && w.MessageSize == 0 && w.Iterations == 1 && w.Warmup == 0, p+"kind",
			"%s takes no qps, message_size, iterations or warmup (collectives only)", w.Kind)
	}
	loadKinds := kindsWhere(func(k *WorkloadKind) bool { return k.ReadsLoad }, " and ")
	switch {
	case !k.ReadsLoad && !k.ReadsDuration:
		c.need(w.Load == 0 && w.Duration == 0, p+"load", "load and duration are only read by kinds %s (and duration by %s); remove them",
			loadKinds, kindsWhere(func(k *WorkloadKind) bool { return k.ReadsDuration && !k.ReadsLoad }, " and "))
	case !k.ReadsLoad:
		c.need(w.Load == 0, p+"load", "load is only read by kinds %s; remove it", loadKinds)
	}
	if !k.ReadsStreamKeys {
		c.need(w.Clients == 0 && w.Servers == 0 && w.Depth == 0 && w.Checkpoint == 0, p+"clients",
			"clients, servers, depth and checkpoint are only read by kind %s; remove them", kindsWhere(func(k *WorkloadKind) bool { return k.ReadsStreamKeys }, " and "))
	}
	if !k.ReadsIncastKeys {
		key := p + "senders"
		if w.Senders == 0 {
			key = p + "target"
		}
		c.need(w.Senders == 0 && w.Target == 0, key,
			"senders and target are only read by kind %s; remove them", kindsWhere(func(k *WorkloadKind) bool { return k.ReadsIncastKeys }, " and "))
	}
	if !k.ReadsMessageKeys {
		c.need(w.SizeDist == "" && w.Pattern == "" && w.Buckets == "" && w.BucketCount == 0 && !w.ResponseSize.RPC(), p+"size_dist",
			"size_dist, pattern, buckets, bucket_count and response_size are only read by kind %s; remove them", kindsWhere(func(k *WorkloadKind) bool { return k.ReadsMessageKeys }, " and "))
	}
	switch {
	case k.HostRange:
		c.need(ranks >= 2, p+"ranks", "%s needs at least 2 hosts, got %d", w.Kind, ranks)
		c.need(w.Placement == "list" || w.HostOffset+ranks <= hosts, p+"ranks", "%d hosts from host_offset %d do not fit the topology's %d hosts", ranks, w.HostOffset, hosts)
	case !k.Collective:
		c.need(w.HostOffset == 0, p+"host_offset", "%s addresses hosts directly (target, senders, the file); host_offset is not read", w.Kind)
	}
	if k.check != nil {
		k.check(c, p, job, w, t, ranks, hosts, limit)
	}
	if !k.ReadsFile {
		c.need(w.File == "", p+"file", "is only read by kind %s; remove it or set kind: %[1]s", kindsWhere(func(k *WorkloadKind) bool { return k.ReadsFile }, " or "))
	}
	if k.Sized() {
		c.sizesAt(p+"sizes", w.Sizes)
	}
}

// hostRangeKinds names the kinds that take placement: list
// ("permutation, uniform and messages").
func hostRangeKinds() string {
	return kindsWhere(func(k *WorkloadKind) bool { return k.HostRange }, " and ")
}

// kindsWhere names the workload kinds with property has, in catalogue
// order, the last two joined by and ("a, b and c").
func kindsWhere(has func(*WorkloadKind) bool, and string) string {
	var names []string
	for _, k := range workloadKindList {
		if has(k) {
			names = append(names, k.Name)
		}
	}
	switch n := len(names); n {
	case 0:
		return ""
	case 1:
		return names[0]
	default:
		return strings.Join(names[:n-1], ", ") + and + names[n-1]
	}
}

// maxUniformMessages bounds the messages a uniform job may generate.
const maxUniformMessages = workload.MaxUniformMessages

func (c *checker) uniform(p string, w Workload, t Topology, ranks int, limit units.Duration) {
	c.need(w.Load > 0 && w.Load <= 1, p+"load", "uniform needs a load in (0, 1] (fraction of the host link rate), got %v", w.Load)
	c.need(w.Duration > 0, p+"duration", "uniform needs a duration (> 0) during which hosts send, got %v", w.Duration)
	c.need(limit <= 0 || w.Duration <= limit, p+"duration", "%v is beyond sim.time_limit %v", w.Duration, limit)
	if c.err != nil {
		return
	}
	for _, size := range SweepSizes(w.Sizes) {
		if n := workload.UniformMessages(ranks, int64(size), w.Load, t.HostLink.Rate, w.Duration); n > maxUniformMessages {
			c.fail(p+"duration", "about %.0f messages of %v at load %v for %v, more than the limit of %d; shorten duration or use larger sizes",
				n, size, w.Load, w.Duration, maxUniformMessages)
			return
		}
	}
}

func (c *checker) sizes(s Sizes) { c.sizesAt("workload.sizes", s) }

func (c *checker) sizesAt(p string, s Sizes) {
	sweep := s.From != 0 || s.To != 0
	switch {
	case sweep && len(s.List) > 0:
		c.fail(p, "give either from/to/factor or list, not both")
	case len(s.List) > 0:
		for i, v := range s.List {
			c.need(v > 0, fmt.Sprintf("%s.list[%d]", p, i), "sizes must be more than 0, got %v", v)
		}
	case sweep:
		c.need(s.From > 0, p+".from", "must be more than 0, got %v", s.From)
		c.need(s.To >= s.From, p+".to", "%v is below from %v", s.To, s.From)
		c.need(s.Factor >= 2, p+".factor", "must be at least 2, got %d", s.Factor)
	default:
		c.fail(p, "needs the data sizes: from/to (and factor) or list")
	}
}

func (c *checker) flowsAt(p string, w Workload, hosts int, limit units.Duration) {
	if w.File == "" {
		c.fail(p, "kind flows needs a flow list file (src dst bytes [start] per line)")
		return
	}
	// Parsing a long list costs memory before any estimate can run: count
	// its lines first and refuse what sim.memory_limit cannot hold.
	if lim := int64(c.spec.Sim.MemoryLimit); lim > 0 {
		n, err := c.f.flowLines(w.File)
		if err == nil && n*flowSpecPeak > lim {
			c.fail(p, "%s has %d lines: parsing it needs about %.1f GiB, more than sim.memory_limit=%v; use a shorter flow list or raise sim.memory_limit",
				w.File, n, float64(n*flowSpecPeak)/float64(units.GiB), c.spec.Sim.MemoryLimit)
			return
		}
	}
	ff := c.f.flowFile(w.File)
	if ff.err != nil {
		c.fail(p, "%v", ff.err)
		return
	}
	if len(ff.flows) == 0 {
		c.fail(p, "%s has no flows", w.File)
		return
	}
	var tp *topo.Topology      // built for the first pinned path
	var dead map[[2]string]int // deadLinks, for the first pinned path
	for _, fl := range ff.flows {
		if fl.Src >= hosts || fl.Dst >= hosts {
			c.fail(p, "%s:%d: host %d is not in the topology (hosts 0–%d)", w.File, fl.Line, max(fl.Src, fl.Dst), hosts-1)
			return
		}
		if len(fl.Path) > 0 && c.err == nil {
			if tp == nil {
				var err error
				if tp, err = topo.Wire(c.spec.Seed, TopoSpec(c.spec)); err != nil {
					return // the topology's own error is reported where it is checked
				}
			}
			if _, err := tp.PinPath(fl.Src, fl.Dst, fl.Path); err != nil {
				c.fail(p, "%s:%d: path: %v", w.File, fl.Line, err)
				return
			}
			if dead == nil {
				dead = deadLinks(c.spec.Topology.Failures)
			}
			if msg := pinnedOverDeadLink(fl.Path, dead); msg != "" {
				c.fail(p, "%s:%d: path: %s", w.File, fl.Line, msg)
				return
			}
		}
		if limit > 0 && fl.Start >= limit {
			c.fail(p, "%s:%d: the flow starts at %v, not before sim.time_limit %v, so it would never run; raise sim.time_limit or start it earlier",
				w.File, fl.Line, fl.Start, limit)
			return
		}
	}
}

// deadLinks are the links down from the start for good, both ways round,
// with the failure that takes each down.
func deadLinks(failures []Failure) map[[2]string]int {
	dead := map[[2]string]int{}
	for j, f := range failures {
		if f.At == 0 && f.Until == 0 {
			dead[[2]string{f.From, f.To}], dead[[2]string{f.To, f.From}] = j, j
		}
	}
	return dead
}

// pinnedOverDeadLink says why a pinned path cannot deliver: it crosses a
// link down from the start for good (dead: deadLinks; a pinned flow is
// never routed around). "" when it does not; a link that fails later may
// well go after the flow is done.
func pinnedOverDeadLink(path []string, dead map[[2]string]int) string {
	for i := 1; i < len(path); i++ {
		if j, ok := dead[[2]string{path[i-1], path[i]}]; ok {
			return fmt.Sprintf("it crosses %s–%s, which topology.failures[%d] takes down from the start for good: the flow could never arrive (a pinned path is not routed around); pin another path", path[i-1], path[i], j)
		}
	}
	return ""
}

// flowFile reads and parses a flow list once per path.
// flowSpecPeak is what one parsed flow costs while the list is read: the
// FlowSpec twice over (the slice's last regrowth holds the old array too).
const flowSpecPeak = 2 * int64(unsafe.Sizeof(workload.FlowSpec{}))

// flowLines counts the lines of a flow list without parsing it (an upper
// bound on its flows), reading it once per file.
func (f *File) flowLines(name string) (int64, error) {
	path := RelativeTo(f.Dir, name)
	f.read.mu.Lock()
	defer f.read.mu.Unlock()
	if n, ok := f.read.lines[path]; ok {
		return n, nil
	}
	if err := f.allowed(name, path); err != nil {
		return 0, err
	}
	r, err := openReferenced(name, path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	buf := make([]byte, 64<<10)
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if f.read.lines == nil {
		f.read.lines = map[string]int64{}
	}
	f.read.lines[path] = n + 1
	return n + 1, nil
}

func (f *File) flowFile(name string) *flowFile {
	path := RelativeTo(f.Dir, name)
	f.read.mu.Lock()
	defer f.read.mu.Unlock()
	if ff, ok := f.read.files[path]; ok {
		return ff
	}
	ff := &flowFile{}
	f.read.files[path] = ff
	if ff.err = f.allowed(name, path); ff.err != nil {
		return ff
	}
	r, err := openReferenced(name, path)
	if err != nil {
		ff.err = err
		return ff
	}
	defer r.Close()
	ff.flows, ff.err = workload.ParseFlowList(name, r)
	for _, fl := range ff.flows {
		if ff.total > math.MaxInt64-fl.Bytes {
			ff.err = fmt.Errorf("%s: the flows add up to more than %d bytes", name, int64(math.MaxInt64))
			break
		}
		ff.total += fl.Bytes
	}
	return ff
}

// placement checks the rank placement against the topology's servers.
func (c *checker) placementAt(p string, w Workload, t Topology, ranks int) {
	if w.Placement != "" && !oneOf(w.Placement, workload.Placements()) {
		c.fail(p+"placement", "unknown placement %q; use one of: %s", w.Placement, choices(workload.Placements()))
		return
	}
	perServer := max(t.GPUsPerServer, 1)
	c.need(w.RanksPerServer >= 0 && w.RanksPerServer <= perServer, p+"ranks_per_server",
		"must be between 0 (all) and the %d GPUs of a server, got %d", perServer, w.RanksPerServer)
	if w.Placement == "list" {
		c.need(w.HostOffset == 0, p+"host_offset", "is not read with placement: list (the list gives the hosts)")
		c.need(len(w.PlacementHosts) == ranks, p+"placement_hosts", "lists %d hosts for %d ranks", len(w.PlacementHosts), ranks)
		hosts := Hosts(t)
		seen := map[int]bool{}
		for i, h := range w.PlacementHosts {
			c.need(h >= 0 && h < hosts, p+"placement_hosts", "rank %d: host %d is not in the topology (hosts 0–%d)", i, h, hosts-1)
			c.need(!seen[h], p+"placement_hosts", "rank %d: host %d already holds a rank", i, h)
			seen[h] = true
		}
		return
	}
	c.need(len(w.PlacementHosts) == 0, p+"placement_hosts", "is only read with placement: list")
	if w.RanksPerServer > 0 {
		servers := (Hosts(t) + perServer - 1) / perServer
		c.need(ranks <= servers*w.RanksPerServer, p+"ranks", "%d ranks do not fit %d servers × %d ranks per server", ranks, servers, w.RanksPerServer)
	}
	if c.err == nil && w.HostOffset > 0 {
		// The seed does not change whether a placement fits.
		if _, err := JobHosts(w, t, 0); err != nil {
			c.fail(p+"host_offset", "%v", err)
		}
	}
}

// Probe bounds: a datagram holds the data plane's sequence header and
// fits one IPv4 UDP datagram.
const (
	maxProbes       = 1024
	minProbeSize    = 40 // hosts/dataplane.UDPHeaderLen: flow, ends, session, sequence, send time
	maxProbeSize    = 65507
	defaultProbeLen = 1024
)

// probes checks the UDP probes: two different hosts of the topology, a
// rate, a datagram size.
func (c *checker) probes(s *Scenario) {
	if len(s.Probes) == 0 {
		return
	}
	c.need(len(s.Probes) <= maxProbes, "probes", "%d probes is more than the limit of %d", len(s.Probes), maxProbes)
	hosts := Hosts(s.Topology)
	for i, pr := range s.Probes {
		p := fmt.Sprintf("probes[%d].", i)
		c.need(pr.From >= 0 && pr.From < hosts, p+"from", "host %d is not one of the topology's hosts 0…%d", pr.From, hosts-1)
		c.need(pr.To >= 0 && pr.To < hosts, p+"to", "host %d is not one of the topology's hosts 0…%d", pr.To, hosts-1)
		c.need(pr.From != pr.To, p+"to", "a probe runs between two different hosts, got %d → %d", pr.From, pr.To)
		c.need(pr.Rate > 0, p+"rate", "a probe needs a rate (e.g. 1Gbps), got %v", pr.Rate)
		c.need(pr.Size == 0 || pr.Size >= minProbeSize && pr.Size <= maxProbeSize, p+"size", "must be between %dB and %dB of payload (0 = %dB), got %v", minProbeSize, maxProbeSize, defaultProbeLen, pr.Size)
	}
}

// maxJobs bounds the jobs of one scenario.
const maxJobs = 64

// jobs checks the extra jobs: each like the workload (errors inside its
// mapping), a unique name, one data size, a start inside the time limit,
// and no host shared with another job.
func (c *checker) jobs(s *Scenario) {
	if c.err != nil || len(s.Jobs) == 0 {
		return
	}
	c.need(len(s.Jobs) < maxJobs, "jobs", "%d jobs is more than the limit of %d", len(s.Jobs)+1, maxJobs)
	names := map[string]bool{"main": true}
	for i, j := range s.Jobs {
		p := fmt.Sprintf("jobs[%d].", i)
		name := strings.TrimSpace(j.Name)
		switch {
		case name == "":
			c.fail(p+"name", "a job needs a name (- name: …)")
		case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			c.fail(p+"name", "a job name must be one line of printable text, got %q", name)
		case name == "main":
			c.fail(p+"name", "\"main\" is the name of the top-level workload; choose another")
		case names[name]:
			c.fail(p+"name", "job %q is defined twice; names must be unique", name)
		}
		names[name] = true
		c.workloadAt(p, i+1, j.Workload, s.Topology, s.Sim.TimeLimit)
		if c.err != nil {
			return
		}
		if j.Kind != "flows" && j.Kind != "messages" {
			c.need(len(SweepSizes(j.Sizes)) == 1, p+"sizes", "a job runs at one data size (the rows are the sizes of workload), got %d; write sizes: {list: [SIZE]}", len(SweepSizes(j.Sizes)))
		}
		c.need(j.Start >= 0, p+"start", "must not be negative, got %v", j.Start)
		c.need(j.Start < s.Sim.TimeLimit, p+"start", "%v is not before sim.time_limit %v, so the job would never run", j.Start, s.Sim.TimeLimit)
		if j.Kind == "uniform" || j.Kind == "messages" {
			c.need(j.Start+j.Duration <= s.Sim.TimeLimit, p+"duration", "start %v + duration %v ends after sim.time_limit %v, so the job could never finish",
				j.Start, j.Duration, s.Sim.TimeLimit)
		}
	}
	if c.err != nil {
		return
	}
	// Jobs share the fabric, never a host.
	owner := map[int]int{}
	for i := 0; i <= len(s.Jobs); i++ {
		hs, err := JobHosts(JobWorkload(s, i), s.Topology, JobSeed(s.Seed, i))
		key := "workload"
		if i > 0 {
			key = fmt.Sprintf("jobs[%d]", i-1)
		}
		if err != nil {
			c.fail(key, "%v", err)
			return
		}
		if w := JobWorkload(s, i); w.Kind == "flows" && len(s.Jobs) > 0 {
			// A flow list's hosts are its sources and destinations.
			for _, fl := range c.f.flowFile(w.File).flows {
				hs = append(hs, fl.Src, fl.Dst)
			}
		}
		for _, h := range hs {
			if o, ok := owner[h]; ok && o != i {
				c.fail(key, "job %q and job %q both use host %d; jobs must not share a host (use host_offset or placement: list)", JobName(s, o), JobName(s, i), h)
				return
			}
			owner[h] = i
		}
	}
}

// Notes are advice about a valid scenario that is probably not what was
// meant (not errors): e.g. a forwarding policy that reorders packets with
// receivers that drop out-of-order packets, or a time limit below a job's
// ideal time, so that the job can only end incomplete.
func Notes(s *Scenario) []string {
	var out []string
	reorders := map[string]bool{"spray-random": true, "spray-rr": true, "adaptive": true}
	for _, p := range s.ForwardingPolicies() {
		if !reorders[p] {
			continue
		}
		k, ok := LookupTransportKind(s.Transport.Kind)
		if !ok || k.reorderNote == nil {
			break
		}
		if note := k.reorderNote(s, p); note != "" {
			out = append(out, note)
			break // one note is enough
		}
	}
	if s.NIC.DataPriority == s.NIC.ControlPriority {
		note := fmt.Sprintf("nic.control_priority is the data priority (%d): ACKs and CNPs queue behind data at every switch", s.NIC.DataPriority)
		if s.Switch.PFC.Enabled {
			note += " and are paused by PFC with it"
		}
		out = append(out, note)
	}
	if s.Switch.Trimming && s.Switch.PFC.Enabled {
		out = append(out, "switch.trimming acts on lossy traffic only: with PFC on the data priority nothing is dropped, so nothing is trimmed (set switch.pfc.enabled: false, as UET intends)")
	}
	if s.Switch.Trimming && s.Transport.Kind != "uet" {
		out = append(out, fmt.Sprintf("switch.trimming: %s treats a trimmed packet as lost (only UET asks for it again at once)", s.Transport.Kind))
	}
	if note := oversubscriptionNote(s.Topology); note != "" {
		out = append(out, note)
	}
	notes := []string{cutOffNote(s), sizeRoundingNote("workload.sizes", s.Workload)}
	for i, j := range s.Jobs {
		notes = append(notes, sizeRoundingNote(fmt.Sprintf("jobs[%d].sizes", i), j.Workload))
	}
	for _, note := range notes {
		if note != "" {
			out = append(out, note)
		}
	}
	out = append(out, customNotes(s)...)
	return append(out, timeLimitNotes(s)...)
}

// sizeRoundingNote names the sizes (at key) a per-rank block collective
// cannot run as asked: each rank's block is a whole number of bytes, one at
// least, so the size is rounded down to a multiple of the ranks (or up to
// the ranks), as nccl-tests does, and two sizes may become one job.
func sizeRoundingNote(key string, w Workload) string {
	ranks := w.Ranks
	if !workload.BlockCollective(w.Kind) || ranks < 2 {
		return ""
	}
	var cut []string
	for _, size := range SweepSizes(w.Sizes) {
		if ran := workload.NCCLSize(w.Kind, ranks, int64(size)); ran != int64(size) {
			cut = append(cut, fmt.Sprintf("%dB as %dB", int64(size), ran))
		}
	}
	if len(cut) == 0 {
		return ""
	}
	if len(cut) > 3 {
		cut = append(cut[:3], fmt.Sprintf("and %d more", len(cut)-3))
	}
	return fmt.Sprintf("%s: %s on %d ranks runs each rank's block in whole bytes, so the size is a multiple of the ranks: %s",
		key, w.Kind, ranks, strings.Join(cut, ", "))
}

// cutOffNote says when the links down from the start for good leave some
// hosts without a path to others: what they send each other can never
// arrive, and a job that needs it ends at sim.time_limit. A note, not an
// error: a workload may keep to hosts that still reach each other (a flow
// list within one leaf).
func cutOffNote(s *Scenario) string {
	var dead []int
	for i, f := range s.Topology.Failures {
		if f.At == 0 && f.Until == 0 {
			dead = append(dead, i)
		}
	}
	if len(dead) == 0 {
		return ""
	}
	// The variants of a sweep mostly share their fabric and failures:
	// building it takes 50 ms at 1,024 hosts, so the last answer is kept.
	ts := TopoSpec(s)
	if ts.Graph != nil {
		return cutOff(s, ts, dead) // a custom fabric's key would hold its address
	}
	k := ts
	k.Switch, k.ECMPSeed = nil, 0 // neither changes which links are up
	key := fmt.Sprintf("%+v|%+v", k, s.Topology.Failures)
	lastCutOff.Lock()
	defer lastCutOff.Unlock()
	if lastCutOff.key == key {
		return lastCutOff.note
	}
	note := cutOff(s, ts, dead)
	lastCutOff.key, lastCutOff.note = key, note
	return note
}

// lastCutOff is cutOffNote's last answer.
var lastCutOff struct {
	sync.Mutex
	key, note string
}

// cutOff builds the fabric of ts, takes the dead links down and says
// which hosts can no longer reach each other.
func cutOff(s *Scenario, ts topo.Spec, dead []int) string {
	tp, err := topo.Wire(s.Seed, ts)
	if err != nil {
		return "" // validation says why
	}
	for _, i := range dead {
		f := s.Topology.Failures[i]
		pt, err := tp.SwitchLink(f.From, f.To)
		if err != nil {
			return ""
		}
		tp.Net.FailLink(pt)
	}
	group, n := tp.HostGroups()
	if n < 2 {
		return ""
	}
	// The first host of another group than host 0's, and how many hosts
	// host 0 can still reach.
	other, with0 := -1, 0
	for h, g := range group {
		if g == 0 {
			with0++
		} else if other < 0 {
			other = h
		}
	}
	keys := make([]string, len(dead))
	for i, j := range dead {
		keys[i] = fmt.Sprintf("topology.failures[%d]", j)
	}
	what := "the link " + keys[0] + " takes down from the start for good cuts"
	if len(keys) > 1 {
		what = "the links " + strings.Join(keys, ", ") + " take down from the start for good cut"
	}
	return fmt.Sprintf("%s the hosts into %d groups with no path between them (%s's group holds %d of the %d hosts; %s is outside it): traffic between groups can never arrive, and a job that sends any ends at sim.time_limit",
		what, n, fabric.HostName(0), with0, len(group), fabric.HostName(other))
}

// oversubscriptionNote says when a leaf-spine's spines, derived from
// topology.oversubscription, give its leaves another ratio: spines are
// whole, so the uplinks are rounded up (3 for 8 hosts at 3:1 make 2.67:1).
func oversubscriptionNote(t Topology) string {
	if t.Kind != "leaf-spine" || t.Spines != 0 || t.HostsPerLeaf <= 0 || t.HostLink.Rate <= 0 || t.FabricLink.Rate <= 0 {
		return ""
	}
	want := t.Oversubscription
	if want <= 1 {
		return "" // non-blocking asked: more uplinks than that harm nothing
	}
	spines := topo.SpinesFor(t.HostsPerLeaf, t.HostLink.Rate, t.FabricLink.Rate, want)
	got := float64(t.HostsPerLeaf) * float64(t.HostLink.Rate) / (float64(spines) * float64(t.FabricLink.Rate))
	if math.Abs(got-want) <= 1e-9*want {
		return ""
	}
	return fmt.Sprintf("topology.oversubscription %g: %d hosts per leaf at %v over %d spines at %v make the leaves %.3g:1 (spines are whole: rounded up); for %g:1 set hosts_per_leaf or the rates so that the uplinks come out whole, or spines",
		want, t.HostsPerLeaf, t.HostLink.Rate, spines, t.FabricLink.Rate, got, want)
}

// openReferenced opens a file the scenario names (name as written, path
// resolved against the scenario's directory) through inputfile: a regular
// file of at most maxFlowFile bytes, opened without blocking.
func openReferenced(name, path string) (*inputfile.File, error) {
	r, err := inputfile.Open(path, maxFlowFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (a relative path is relative to the scenario file)", name)
	}
	return r, err
}

// validation holds what validating a file works out once for all the
// variants and sweep points that share it (they often share a fabric):
// routing tables by path, fabric checks by fabric. It lives with the file's
// readCache, for the file's lifetime.
type validation struct {
	mu     sync.Mutex
	routes map[string]routesEntry
	fabric map[string]fabricIssue
	// topologies are the topology files read (custom.go), by kind and
	// path.
	topologies map[string]*customTopology
}

type routesEntry struct {
	routes []topo.Route
	err    error
}

// validation is the cache of c's file.
func (c *checker) validation() *validation { return &c.f.read.checks }

// routes reads and parses switch.routes_file once per path.
func (c *checker) routes(name string) ([]topo.Route, error) {
	path := RelativeTo(c.f.Dir, name)
	v := c.validation()
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.routes[path]; ok {
		return e.routes, e.err
	}
	var e routesEntry
	if e.err = c.f.allowed(name, path); e.err != nil {
		return nil, e.err
	}
	r, err := openReferenced(name, path)
	if err != nil {
		e.err = err
	} else {
		e.routes, e.err = topo.ParseRoutes(name, r)
		r.Close()
	}
	if v.routes == nil {
		v.routes = map[string]routesEntry{}
	}
	v.routes[path] = e
	return e.routes, e.err
}

// TrimWire is what switch.trimming leaves of a packet: its headers.
const TrimWire = 64

// TopoSpec is what topo builds for a scenario: its topology and switch
// sections, with the NIC's largest frame and the data priority made
// lossless when PFC is on.
func TopoSpec(spec *Scenario) topo.Spec {
	t, sw, nic := spec.Topology, spec.Switch, spec.NIC
	cfg := &fabric.SwitchConfig{
		Buffer:            int64(sw.Buffer),
		XOFF:              int64(sw.PFC.XOFF),
		XON:               int64(sw.PFC.XON),
		Headroom:          int64(sw.PFC.Headroom),
		ECN:               sw.ECN.Enabled,
		ECNAtDequeue:      sw.ECN.MarkAt == "dequeue",
		PFCDynamic:        sw.PFC.Mode == "dynamic",
		PFCAlpha:          sw.PFC.Alpha,
		PFCReserved:       max(int64(sw.PFC.Reserved), int64(nic.MTU+nic.Overhead)),
		WatchdogDetect:    sw.PFC.Watchdog.Detect,
		WatchdogRestore:   sw.PFC.Watchdog.Restore,
		WatchdogDrop:      sw.PFC.Watchdog.Action == "drop",
		KMin:              int64(sw.ECN.KMin),
		KMax:              int64(sw.ECN.KMax),
		PMax:              sw.ECN.PMax,
		ECNRefRateBps:     int64(sw.ECN.ReferenceRate),
		MaxPacketWire:     int64(nic.MTU + nic.Overhead),
		ForwardingLatency: t.SwitchLatency,
		Policy:            fabric.Policies[sw.Forwarding],
		FlowletGap:        sw.FlowletGap,
		Polarized:         sw.ECMPPolarized,
		Trimming:          sw.Trimming,
		TrimWire:          TrimWire,
		TrimPrio:          uint8(nic.ControlPriority),
	}
	if sw.PFC.Enabled {
		cfg.Lossless[nic.DataPriority] = true
	}
	var tiers map[string]fabric.Policy
	for _, tf := range sw.ForwardingTiers {
		if tiers == nil {
			tiers = map[string]fabric.Policy{}
		}
		tiers[tf.Tier] = fabric.Policies[tf.Forwarding]
	}
	s := topoSize(t)
	s.HostLink.Delay, s.FabricLink.Delay = t.HostLink.Delay, t.FabricLink.Delay
	s.ScaleUp = topo.Link{Rate: t.ScaleUp.Rate, Delay: t.ScaleUp.Delay}
	s.TierPolicy, s.Switch, s.ECMPSeed = tiers, cfg, sw.ECMPSeed
	return s
}

// telemetry checks sim.telemetry's own keys (the bound on port-samples
// needs the fabric's ports: see fabric).
func (c *checker) telemetry(o SimOpts) {
	t := o.Telemetry
	c.need(t.Ports.Top >= 0 && t.Ports.Top <= MaxTelemetryPorts, "sim.telemetry.ports", "must be between 0 (off) and %d (the busiest ports kept), got %d", MaxTelemetryPorts, t.Ports.Top)
	c.need(len(t.Ports.List) <= MaxTelemetryPorts, "sim.telemetry.ports", "lists %d ports, at most %d", len(t.Ports.List), MaxTelemetryPorts)
	seen := map[string]int{}
	for i, name := range t.Ports.List {
		node, peer, ok := PortPair(name)
		c.need(ok, fmt.Sprintf("sim.telemetry.ports[%d]", i), "needs a port as node->peer (an egress port of switch node toward peer, or host node's NIC), got %s", brief(name))
		if j, dup := seen[node+"->"+peer]; ok && dup {
			c.fail(fmt.Sprintf("sim.telemetry.ports[%d]", i), "names the same port as sim.telemetry.ports[%d]", j)
		}
		seen[node+"->"+peer] = i
	}
	c.need(t.Flows.Top >= 0 && t.Flows.Top <= MaxTelemetryFlows, "sim.telemetry.flows", "must be between 0 (none) and %d (the slowest flows sampled), got %d", MaxTelemetryFlows, t.Flows.Top)
	c.need(len(t.Flows.List) <= MaxTelemetryFlows, "sim.telemetry.flows", "lists %d flows, at most %d", len(t.Flows.List), MaxTelemetryFlows)
	ids := map[int]int{}
	for i, id := range t.Flows.List {
		n, err := strconv.Atoi(id)
		key := fmt.Sprintf("sim.telemetry.flows[%d]", i)
		c.need(err == nil && n >= 0 && n <= math.MaxInt32, key, "needs a flow ID (a whole number, the id of sim.record_flows' records), got %s", brief(id))
		if j, dup := ids[n]; err == nil && dup {
			c.fail(key, "names the same flow as sim.telemetry.flows[%d]", j)
		}
		ids[n] = i
	}
	for i, q := range t.What {
		c.need(slices.Contains(TelemetryQuantities, q), fmt.Sprintf("sim.telemetry.what[%d]", i), "must be one of %s, got %s", strings.Join(TelemetryQuantities, ", "), brief(q))
	}
	c.need(t.Interval == 0 || t.Interval >= units.Microsecond, "sim.telemetry.interval", "must be at least 1us, got %v", t.Interval)
}

// fabricIssue is a problem of a fabric, found once for every variant that
// builds the same one: the key to blame and the message. Ports is how many
// ports it has (0 when it was not built).
type fabricIssue struct {
	key, msg string
	ports    int
	// names are the ports as sim.telemetry.ports names them (node->peer),
	// when the scenario names any; example is one of them.
	names   map[string]bool
	example string
}

// fabric resolves against the topology what run resolves when it builds a
// job, so that a scenario that validates runs: the route tables fit
// sim.memory_limit, every switch buffer holds its ports' PFC headroom,
// topology.failures name links between switches, and switch.routes_file
// pins switches of the topology to working links toward hosts it has,
// without loops or dead ends (topo.ApplyRoutes, as run applies it, after
// the links down from the start). The switches and links are built
// without route tables (topo.Wire); the tables are computed only to check
// a routes file.
func (c *checker) fabric(s *Scenario) {
	ts := TopoSpec(s)
	if lim := int64(s.Sim.MemoryLimit); lim > 0 {
		if need := topo.RouteTableBytes(ts); need > lim {
			c.fail("topology", "the route tables of this topology need about %.1f GiB, more than sim.memory_limit (%v); use fewer hosts or switches, or raise sim.memory_limit",
				float64(need)/float64(units.GiB), s.Sim.MemoryLimit)
			return
		}
	}
	if !s.Switch.PFC.Enabled && len(s.Topology.Failures) == 0 && s.Switch.RoutesFile == "" && !s.Sim.Telemetry.On() {
		return // nothing to resolve
	}
	var routes []topo.Route
	if name := s.Switch.RoutesFile; name != "" {
		var err error
		if routes, err = c.routes(name); err != nil {
			c.fail("switch.routes_file", "%v", err)
			return
		}
	}
	sw := *ts.Switch
	ts.Switch = nil
	named := len(s.Sim.Telemetry.Ports.List) > 0
	key := fmt.Sprintf("%+v|%+v|%+v|%q|%v", ts, sw, s.Topology.Failures, s.Switch.RoutesFile, named)
	ts.Switch = &sw
	v := c.validation()
	v.mu.Lock()
	issue, ok := v.fabric[key]
	v.mu.Unlock()
	if !ok {
		issue = checkFabric(s, ts, routes)
		v.mu.Lock()
		if v.fabric == nil {
			v.fabric = map[string]fabricIssue{}
		}
		v.fabric[key] = issue
		v.mu.Unlock()
	}
	if issue.key != "" {
		c.fail(issue.key, "%s", issue.msg)
		return
	}
	if err := CheckTelemetry(s.Sim, issue.ports); err != nil {
		c.fail("sim.telemetry", "%s", strings.TrimPrefix(err.Error(), "sim.telemetry "))
	}
	for i, name := range s.Sim.Telemetry.Ports.List {
		node, peer, ok := PortPair(name)
		if ok && !issue.names[node+"->"+peer] {
			c.fail(fmt.Sprintf("sim.telemetry.ports[%d]", i), "the fabric has no port %s (a port is an egress port of switch node toward peer, or host node's NIC toward its switch, e.g. %s)", brief(node+"->"+peer), issue.example)
		}
	}
}

// checkFabric builds the fabric of s and resolves its references in the
// order run does (lab.Build: the topology, the failures, the routes).
func checkFabric(s *Scenario, ts topo.Spec, routes []topo.Route) fabricIssue {
	tp, err := topo.Wire(s.Seed, ts)
	if err != nil {
		return fabricIssue{key: "topology", msg: err.Error()}
	}
	if err := tp.Net.CheckBuffers(); err != nil {
		return fabricIssue{key: "switch.buffer", msg: err.Error()}
	}
	for i, f := range s.Topology.Failures {
		k := fmt.Sprintf("topology.failures[%d]", i)
		for _, end := range []struct{ key, name string }{{".from", f.From}, {".to", f.To}} {
			if !tp.HasNode(end.name) {
				return fabricIssue{key: k + end.key, msg: fmt.Sprintf("there is no switch %q in the topology (its switches: %s)", end.name, tp.SwitchNames())}
			}
		}
		pt, err := tp.SwitchLink(f.From, f.To)
		if err != nil {
			return fabricIssue{key: k, msg: err.Error()}
		}
		if f.At == 0 {
			tp.Net.FailLink(pt) // routed around from the start
		}
	}
	if i, j, ok := overlappingOutages(s.Topology.Failures); ok {
		f := s.Topology.Failures[i]
		return fabricIssue{key: fmt.Sprintf("topology.failures[%d]", i),
			msg: fmt.Sprintf("link %s–%s is down already then, or comes back up just then (failures[%d]): one link's outages must neither overlap nor touch; join them into one", f.From, f.To, j)}
	}
	if len(routes) > 0 {
		topo.ComputeRoutes(tp)
		if err := topo.ApplyRoutes(tp, s.Switch.RoutesFile, routes, false); err != nil {
			return fabricIssue{key: "switch.routes_file", msg: err.Error()}
		}
	}
	issue := fabricIssue{ports: len(tp.Net.Ports)}
	if len(s.Sim.Telemetry.Ports.List) > 0 {
		issue.names = portNames(tp.Net)
		// The example: a port between two switches, as users mostly
		// want to watch; a host-facing one on a fabric of one switch.
		hosts := hostPorts(tp.Net)
		for _, pt := range tp.Net.Ports {
			if pt.Sw() == nil || pt.Peer.Sw() == nil && issue.example != "" {
				continue
			}
			node, peer := labelPort(tp.Net, pt, hosts)
			issue.example = node + "->" + peer
			if pt.Peer.Sw() != nil {
				break
			}
		}
	}
	return issue
}

// portNames are the fabric's ports as node->peer, hosts named as their
// NICs will be (fabric.HostName).
func portNames(n *fabric.Network) map[string]bool {
	hosts := hostPorts(n)
	names := make(map[string]bool, len(n.Ports))
	for _, pt := range n.Ports {
		node, peer := labelPort(n, pt, hosts)
		names[node+"->"+peer] = true
	}
	return names
}

// hostPorts numbers the hosts' NIC ports.
func hostPorts(n *fabric.Network) map[*fabric.Port]int {
	hosts := make(map[*fabric.Port]int, len(n.HostPorts))
	for h, pt := range n.HostPorts {
		if pt != nil {
			hosts[pt] = h
		}
	}
	return hosts
}

// labelPort names port pt's ends; a host's end without its NIC yet is
// named by its index in hosts.
func labelPort(n *fabric.Network, pt *fabric.Port, hosts map[*fabric.Port]int) (string, string) {
	name := func(p *fabric.Port) string {
		if p.Owner != nil {
			return p.Owner.Name()
		}
		if h, ok := hosts[p]; ok {
			return fabric.HostName(h)
		}
		return "?"
	}
	return name(pt), name(pt.Peer)
}

// idealTime is the least time job workload w can take at data size size on
// topology t, known before running: the bytes it forces through the
// busiest NIC at the host link rate, for each of its runs (warmup and
// iterations). For a collective these are the bytes of the lab's
// algorithm-independent bound (metrics.BusBWFactor × the nccl-tests size),
// for a permutation the size each host sends, for an incast what its
// target receives. ok is false for the other kinds (a flow list's or an
// open-loop window's time is its own) and for a collective on servers with
// a scale-up domain, which carries part of the traffic past the NICs.
func idealTime(w Workload, t Topology, size units.Size) (d units.Duration, runs int, ok bool) {
	hosts := Hosts(t)
	rate := t.HostLink.Rate
	k, known := LookupWorkloadKind(w.Kind)
	if hosts <= 0 || rate <= 0 || size <= 0 || !known || k.idealBytes == nil {
		return 0, 0, false
	}
	bytes, runs, ok := k.idealBytes(w, t, jobRanks(w, hosts), size)
	if !ok {
		return 0, 0, false
	}
	if bytes*float64(runs) > float64(math.MaxInt64/8) {
		return math.MaxInt64, runs, true
	}
	return units.SerializationTime(units.Size(bytes*float64(runs)), rate), runs, true
}

// approx rounds d to two significant digits for a note ("2.7ms").
func approx(d units.Duration) units.Duration {
	if d <= 0 {
		return d
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(d)))-1)
	return units.Duration(math.Round(float64(d)/p) * p)
}

// timeLimitNotes warns of jobs that cannot finish within sim.time_limit:
// their ideal time (see idealTime) is already beyond it.
func timeLimitNotes(s *Scenario) []string {
	limit := s.Sim.TimeLimit
	if limit <= 0 {
		return nil
	}
	var out []string
	runsText := func(runs int) string {
		if runs > 1 {
			return fmt.Sprintf(" for %d runs: warmup and iterations", runs)
		}
		return ""
	}
	// The rows: the workload at each of its sizes.
	var over []units.Size
	var first, last units.Duration
	runs := 1
	for _, size := range SweepSizes(s.Workload.Sizes) {
		d, r, ok := idealTime(s.Workload, s.Topology, size)
		if !ok || d <= limit {
			continue
		}
		if len(over) == 0 {
			first = d
		}
		over, last, runs = append(over, size), d, r
	}
	switch len(over) {
	case 0:
	case 1:
		out = append(out, fmt.Sprintf("sim.time_limit=%v is below the ideal time of the %v size (%v%s): that job will end incomplete; raise sim.time_limit",
			limit, over[0], approx(last), runsText(runs)))
	default:
		out = append(out, fmt.Sprintf("sim.time_limit=%v is below the ideal time of the sizes from %v to %v (%v to %v%s): those jobs will end incomplete; raise sim.time_limit",
			limit, over[0], over[len(over)-1], approx(first), approx(last), runsText(runs)))
	}
	// The other jobs run at their one size beside every row.
	for _, j := range s.Jobs {
		sizes := SweepSizes(j.Sizes)
		if len(sizes) != 1 {
			continue
		}
		d, r, ok := idealTime(j.Workload, s.Topology, sizes[0])
		if !ok || j.Start+d <= limit {
			continue
		}
		name := strings.TrimSpace(j.Name)
		if j.Start > 0 {
			out = append(out, fmt.Sprintf("sim.time_limit=%v is below the start of job %q (%v) plus its ideal time at %v (%v%s): every row will end incomplete; raise sim.time_limit",
				limit, name, j.Start, sizes[0], approx(d), runsText(r)))
		} else {
			out = append(out, fmt.Sprintf("sim.time_limit=%v is below the ideal time of job %q at %v (%v%s): every row will end incomplete; raise sim.time_limit",
				limit, name, sizes[0], approx(d), runsText(r)))
		}
	}
	return out
}

// CheckTelemetry refuses telemetry on a fabric of ports ports too large
// to keep two samples of every port within MaxTelemetrySamples (a longer
// run merges samples, so the time limit does not matter).
func CheckTelemetry(o SimOpts, ports int) error {
	if !o.Telemetry.On() || ports <= MaxTelemetrySamples/2 {
		return nil
	}
	return fmt.Errorf("sim.telemetry samples every port of the fabric, and its %s ports are more than the %s it can follow; turn sim.telemetry off for a fabric this large",
		groupDigits(int64(ports)), groupDigits(MaxTelemetrySamples/2))
}

// brief quotes a value for a message, at most 40 characters of it.
func brief(s string) string {
	if r := []rune(s); len(r) > 40 {
		return fmt.Sprintf("%q… (%d characters)", string(r[:40]), len(r))
	}
	return fmt.Sprintf("%q", s)
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
