// Package topo builds fabrics (2-tier leaf-spine, 3-tier k-ary fat-tree,
// rail-optimized) on a fabric.Network and fills every switch's shortest-path
// ECMP next-hop table.
package topo

import (
	"fmt"
	"math"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// Link is a rate and a one-way propagation delay.
type Link struct {
	Rate  units.Rate
	Delay sim.Time
}

// The link rates a fabric may have. Below a kilobit per second a frame
// takes minutes and a run's clock (picoseconds in an int64, 106 days)
// is soon spent; above 100 Tbps (sixty times 2026's fastest links) a
// 64-byte frame takes under 6 ps, and rounding each frame's time up to
// whole picoseconds would slow small frames by a tenth or more.
const (
	MinLinkRate = units.Kbps
	MaxLinkRate = 100 * units.Tbps
)

// CheckLinkRate says why r cannot be a link's rate, or nil.
func CheckLinkRate(r units.Rate) error {
	switch {
	case r <= 0:
		return fmt.Errorf("must be more than 0, got %v", r)
	case r < MinLinkRate:
		return fmt.Errorf("%v is below the slowest link rate fabriclab models (%v)", r, MinLinkRate)
	case r > MaxLinkRate:
		return fmt.Errorf("%v is above the fastest link rate fabriclab models (%v)", r, MaxLinkRate)
	}
	return nil
}

// Spec describes a topology to build.
type Spec struct {
	Kind string // leaf-spine, fat-tree, rail, custom or ns3 (built from Graph)

	Hosts, HostsPerLeaf, Spines int
	Oversubscription            float64

	K int

	Servers, GPUsPerServer, ServersPerGroup int

	HostLink, FabricLink Link
	// ScaleUp, when its rate is set, gives every server a scale-up domain
	// (NVLink/NVSwitch-like): each GPU gets a second endpoint on a
	// non-blocking per-server switch, and intra-server transfers use it
	// instead of the NIC and the fabric.
	ScaleUp  Link
	Switch   *fabric.SwitchConfig
	ECMPSeed uint64
	// TierPolicy overrides Switch.Policy for the switches of a tier (leaf,
	// spine, edge, agg, core, rail).
	TierPolicy map[string]fabric.Policy
	// Graph is the checked topology of kinds custom and ns3 (see
	// custom.go); GPUsPerServer groups its hosts into servers as on
	// leaf-spine.
	Graph *Graph
}

// fromGraph reports whether spec's kind is built from its Graph.
func fromGraph(s Spec) bool { return s.Kind == "custom" || s.Kind == "ns3" }

// config is the switch configuration of a tier.
func (s Spec) config(tier string, cache map[string]*fabric.SwitchConfig) *fabric.SwitchConfig {
	p, ok := s.TierPolicy[tier]
	if !ok {
		return s.Switch
	}
	if c, ok := cache[tier]; ok {
		return c
	}
	c := *s.Switch
	c.Policy = p
	cache[tier] = &c
	return &c
}

// Topology is a built fabric plus what workloads and ideal-time formulas
// need to know about it.
type Topology struct {
	Net   *fabric.Network
	Hosts int
	// Edge[h] is the switch host h attaches to.
	Edge []*fabric.Switch
	// Server[h] is the server (scale-up domain) of host h and Rail[h] its
	// NIC's index within the server: consecutive groups of GPUsPerServer
	// hosts on leaf-spine and fat-tree (1 = every host its own server),
	// the servers of a rail topology.
	Server []int
	Rail   []int
	// ScaleUpEndpoint[h] is the network id of host h's scale-up endpoint
	// (nil without a scale-up domain). Network ids Hosts… are these
	// endpoints; Edge covers them too.
	ScaleUpEndpoint []int
	// Tiers lists switch tier names from the edge up.
	Tiers []string
}

// HostCount is the number of hosts (NICs) spec has: hosts for leaf-spine,
// k³/4 for a k-ary fat-tree, servers × gpus_per_server for rail; 0 for an
// unknown kind or missing sizes. It saturates instead of overflowing, so
// that validation can compare it with its limits.
func HostCount(s Spec) int {
	switch s.Kind {
	case "leaf-spine":
		return max(s.Hosts, 0)
	case "fat-tree":
		if s.K <= 0 {
			return 0
		}
		k := min(int64(s.K), 1<<20)
		return int(k * k * k / 4)
	case "rail":
		if s.Servers <= 0 || s.GPUsPerServer <= 0 {
			return 0
		}
		if s.Servers > math.MaxInt32 || s.GPUsPerServer > math.MaxInt32 {
			return math.MaxInt
		}
		return s.Servers * s.GPUsPerServer
	case "custom", "ns3":
		if s.Graph == nil {
			return 0
		}
		return len(s.Graph.HostNodes)
	}
	return 0
}

// NumHosts returns how many hosts spec will have (0 with an error for an
// impossible spec).
func NumHosts(s Spec) (int, error) {
	switch s.Kind {
	case "leaf-spine":
		if s.Hosts <= 0 || s.HostsPerLeaf <= 0 || s.Hosts%s.HostsPerLeaf != 0 {
			return 0, fmt.Errorf("leaf-spine: hosts (%d) must be a positive multiple of hosts_per_leaf (%d)", s.Hosts, s.HostsPerLeaf)
		}
	case "fat-tree":
		if s.K < 2 || s.K%2 != 0 {
			return 0, fmt.Errorf("fat-tree: k must be even and ≥ 2, got %d", s.K)
		}
	case "rail":
		if s.Servers <= 0 || s.GPUsPerServer <= 0 {
			return 0, fmt.Errorf("rail: servers and gpus_per_server must be ≥ 1")
		}
	case "custom", "ns3":
		if s.Graph == nil || len(s.Graph.HostNodes) == 0 {
			return 0, fmt.Errorf("%s: the topology file was not read", s.Kind)
		}
	default:
		return 0, fmt.Errorf("unknown topology kind %q", s.Kind)
	}
	return HostCount(s), nil
}

// LeafSpines is the number of spine switches of a leaf-spine spec: Spines
// when set, else SpinesFor its leaves.
func LeafSpines(s Spec) int {
	if s.Spines > 0 {
		return s.Spines
	}
	return SpinesFor(s.HostsPerLeaf, s.HostLink.Rate, s.FabricLink.Rate, s.Oversubscription)
}

// NumSwitches is how many switches spec builds (0 for an impossible spec).
func NumSwitches(s Spec) int {
	h, err := NumHosts(s)
	if err != nil {
		return 0
	}
	switch s.Kind {
	case "leaf-spine":
		return h/s.HostsPerLeaf + LeafSpines(s) + scaleUpSwitches(s, h)
	case "fat-tree":
		return s.K*s.K + s.K*s.K/4 + scaleUpSwitches(s, h)
	case "rail":
		per := s.ServersPerGroup
		if per <= 0 {
			per = s.Servers
		}
		ns := s.Spines
		if ns <= 0 {
			ns = SpinesFor(per, s.HostLink.Rate, s.FabricLink.Rate, s.Oversubscription)
		}
		return s.Servers/per*s.GPUsPerServer + ns + scaleUpSwitches(s, h)
	case "custom", "ns3":
		return s.Graph.Switches + scaleUpSwitches(s, h)
	}
	return 0
}

// scaleUpSwitches is one per server when the spec has a scale-up domain.
func scaleUpSwitches(s Spec, hosts int) int {
	if s.ScaleUp.Rate <= 0 {
		return 0
	}
	if s.Kind == "rail" {
		return s.Servers
	}
	g := max(s.GPUsPerServer, 1)
	return (hosts + g - 1) / g
}

// SpinesFor is the spine count a leaf-spine or rail fabric gets when it is
// not given: enough uplink capacity for down-capacity / oversubscription.
func SpinesFor(down int, host, fab units.Rate, oversub float64) int {
	if oversub <= 0 {
		oversub = 1
	}
	need := float64(down) * float64(host) / (oversub * float64(fab))
	n := int(need)
	if float64(n) < need-1e-9 {
		n++
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Build creates the network for spec on sched.
func Build(sched *sim.Scheduler, seed uint64, s Spec) (*Topology, error) {
	t, err := wire(sched, seed, s)
	if err != nil {
		return nil, err
	}
	ComputeRoutes(t)
	if err := t.Net.CheckBuffers(); err != nil {
		return nil, err
	}
	return t, nil
}

// Wire builds spec's switches, hosts and links as Build does, on a
// scheduler of its own, but neither fills the route tables (no
// per-destination state: it costs what the ports cost) nor checks the
// buffers: what validation needs to resolve names and links. Build is
// Wire, then ComputeRoutes and Net.CheckBuffers.
func Wire(seed uint64, s Spec) (*Topology, error) {
	return wire(sim.NewScheduler(), seed, s)
}

// wire creates spec's nodes and links on sched.
func wire(sched *sim.Scheduler, seed uint64, s Spec) (*Topology, error) {
	nh, err := NumHosts(s)
	if err != nil {
		return nil, err
	}
	if !fromGraph(s) && (s.HostLink.Rate <= 0 || s.FabricLink.Rate <= 0) {
		return nil, fmt.Errorf("link rates must be positive")
	}
	ids := nh
	if s.ScaleUp.Rate > 0 {
		ids = 2 * nh
	}
	t := &Topology{Net: fabric.NewNetwork(sched, seed, ids), Hosts: nh,
		Edge: make([]*fabric.Switch, ids), Server: make([]int, nh), Rail: make([]int, nh)}
	if g := max(s.GPUsPerServer, 1); s.Kind != "rail" {
		for h := range t.Server {
			t.Server[h], t.Rail[h] = h/g, h%g
		}
	}
	n := t.Net
	tiers := map[string]*fabric.SwitchConfig{}
	addHost := func(h int, sw *fabric.Switch) {
		n.ConnectHost(h, sw, s.HostLink.Rate, s.HostLink.Delay)
		t.Edge[h] = sw
	}
	link := func(a, b *fabric.Switch) {
		n.ConnectSwitches(a, b, s.FabricLink.Rate, s.FabricLink.Delay)
	}
	switch s.Kind {
	case "leaf-spine":
		t.Tiers = []string{"leaf", "spine"}
		nl := nh / s.HostsPerLeaf
		ns := LeafSpines(s)
		leaves := make([]*fabric.Switch, nl)
		for i := range leaves {
			leaves[i] = n.AddSwitch(fmt.Sprintf("leaf%d", i), "leaf", s.config("leaf", tiers), s.ECMPSeed)
			for j := 0; j < s.HostsPerLeaf; j++ {
				addHost(i*s.HostsPerLeaf+j, leaves[i])
			}
		}
		for j := 0; j < ns; j++ {
			sp := n.AddSwitch(fmt.Sprintf("spine%d", j), "spine", s.config("spine", tiers), s.ECMPSeed)
			for _, l := range leaves {
				link(l, sp)
			}
		}
	case "fat-tree":
		t.Tiers = []string{"edge", "agg", "core"}
		k, half := s.K, s.K/2
		cores := make([]*fabric.Switch, half*half)
		for i := range cores {
			cores[i] = n.AddSwitch(fmt.Sprintf("core%d", i), "core", s.config("core", tiers), s.ECMPSeed)
		}
		h := 0
		for p := 0; p < k; p++ {
			aggs := make([]*fabric.Switch, half)
			for a := range aggs {
				aggs[a] = n.AddSwitch(fmt.Sprintf("agg%d-%d", p, a), "agg", s.config("agg", tiers), s.ECMPSeed)
				aggs[a].DModKDiv = half // edges spread by dst mod k/2, aggs by ⌊dst/(k/2)⌋ mod k/2
				for c := 0; c < half; c++ {
					link(aggs[a], cores[a*half+c])
				}
			}
			for e := 0; e < half; e++ {
				edge := n.AddSwitch(fmt.Sprintf("edge%d-%d", p, e), "edge", s.config("edge", tiers), s.ECMPSeed)
				for _, a := range aggs {
					link(edge, a)
				}
				for j := 0; j < half; j++ {
					addHost(h, edge)
					h++
				}
			}
		}
	case "rail":
		t.Tiers = []string{"rail", "spine"}
		g := s.GPUsPerServer
		per := s.ServersPerGroup
		if per <= 0 {
			per = s.Servers
		}
		if s.Servers%per != 0 {
			return nil, fmt.Errorf("rail: servers_per_group (%d) must divide servers (%d)", per, s.Servers)
		}
		ns := s.Spines
		if ns <= 0 {
			ns = SpinesFor(per, s.HostLink.Rate, s.FabricLink.Rate, s.Oversubscription)
		}
		var rails []*fabric.Switch
		for grp := 0; grp < s.Servers/per; grp++ {
			for r := 0; r < g; r++ {
				leaf := n.AddSwitch(fmt.Sprintf("rail%d-g%d", r, grp), "rail", s.config("rail", tiers), s.ECMPSeed)
				rails = append(rails, leaf)
				for sv := grp * per; sv < (grp+1)*per; sv++ {
					hid := sv*g + r
					addHost(hid, leaf)
					t.Server[hid], t.Rail[hid] = sv, r
				}
			}
		}
		for j := 0; j < ns; j++ {
			sp := n.AddSwitch(fmt.Sprintf("spine%d", j), "spine", s.config("spine", tiers), s.ECMPSeed)
			for _, l := range rails {
				link(l, sp)
			}
		}
	case "custom", "ns3":
		wireGraph(t, s)
	default:
		return nil, fmt.Errorf("unknown topology kind %q", s.Kind)
	}
	if s.ScaleUp.Rate > 0 {
		buildScaleUp(t, s)
	}
	return t, nil
}

// buildScaleUp gives every server a non-blocking scale-up switch with one
// endpoint per GPU at the scale-up rate. The switch is lossless with a
// buffer large enough never to be the limit (a crossbar like NVSwitch is
// not buffer-bound at these scales) and marks nothing.
func buildScaleUp(t *Topology, s Spec) {
	cfg := *s.Switch
	cfg.ECN = false
	cfg.Buffer = 1 << 40
	t.ScaleUpEndpoint = make([]int, t.Hosts)
	switches := map[int]*fabric.Switch{}
	for h := 0; h < t.Hosts; h++ {
		sv := t.Server[h]
		sw, ok := switches[sv]
		if !ok {
			sw = t.Net.AddSwitch(fmt.Sprintf("scaleup%d", sv), "scale-up", &cfg, s.ECMPSeed)
			switches[sv] = sw
		}
		id := t.Hosts + h
		t.Net.ConnectHost(id, sw, s.ScaleUp.Rate, s.ScaleUp.Delay)
		t.Edge[id] = sw
		t.ScaleUpEndpoint[h] = id
	}
}

// ComputeRoutes fills every switch's Next table with all shortest-path
// next hops (ECMP groups) over the links that are up; run it again after a
// link fails to model the routing protocol converging. Groups are computed once per edge switch (a BFS
// over the switch graph) and shared by the hosts under it.
func ComputeRoutes(t *Topology) {
	n := t.Net
	ns := len(n.Switches)
	groups := map[*fabric.Switch][][]*fabric.Port{}
	dist := make([]int, ns)
	queue := make([]int, 0, ns)
	for _, edge := range t.Edge {
		if _, ok := groups[edge]; ok {
			continue
		}
		for i := range dist {
			dist[i] = -1
		}
		dist[edge.ID] = 0
		queue = append(queue[:0], edge.ID)
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, pt := range n.Switches[u].Ports {
				if pt.Dead() {
					continue
				}
				if v, ok := pt.Peer.Owner.(*fabric.Switch); ok && dist[v.ID] < 0 {
					dist[v.ID] = dist[u] + 1
					queue = append(queue, v.ID)
				}
			}
		}
		g := make([][]*fabric.Port, ns)
		for _, s := range n.Switches {
			if s == edge || dist[s.ID] < 0 {
				continue
			}
			for _, pt := range s.Ports {
				if pt.Dead() {
					continue
				}
				if v, ok := pt.Peer.Owner.(*fabric.Switch); ok && dist[v.ID] == dist[s.ID]-1 {
					g[s.ID] = append(g[s.ID], pt)
				}
			}
		}
		groups[edge] = g
	}
	for _, s := range n.Switches {
		s.Next = make([][]*fabric.Port, len(t.Edge))
	}
	for h, edge := range t.Edge {
		g := groups[edge]
		for _, s := range n.Switches {
			s.Next[h] = g[s.ID]
		}
		// The edge switch delivers straight to the host.
		edge.Next[h] = []*fabric.Port{n.HostPorts[h].Peer}
	}
	for _, s := range n.Switches {
		s.RoutesChanged()
	}
}

// Link finds the port of switch a on its link to node b (a switch or
// host name), or nil.
func (t *Topology) Link(a, b string) *fabric.Port {
	for _, s := range t.Net.Switches {
		if s.Name() != a {
			continue
		}
		for _, pt := range s.Ports {
			if pt.Peer.Owner != nil && pt.Peer.Owner.Name() == b {
				return pt
			}
		}
	}
	return nil
}
