package fabric_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/topo"
)

// ring is three switches a, b, c in a triangle, host i under the i-th
// (and pad more hosts under each, so that the links' ports come after
// them), with no route tables yet: link[x][y] is x's port toward y,
// host[i] the switch port toward host i.
type ring struct {
	cfg  *fabric.SwitchConfig // every switch's
	net  *fabric.Network
	sw   []*fabric.Switch
	link map[string]map[string]*fabric.Port
	host []*fabric.Port
}

func newRing(t *testing.T, lossless bool, pad ...int) *ring {
	t.Helper()
	cfg := &fabric.SwitchConfig{Buffer: 16 << 20, XOFF: 64 << 10, XON: 32 << 10, MaxPacketWire: mtuW}
	cfg.Lossless[3] = lossless
	extra := 0
	if len(pad) > 0 {
		extra = pad[0]
	}
	r := &ring{cfg: cfg, net: fabric.NewNetwork(sim.NewScheduler(), 1, 3+3*extra), link: map[string]map[string]*fabric.Port{}}
	for i, name := range []string{"a", "b", "c"} {
		s := r.net.AddSwitch(name, "leaf", cfg, 0)
		r.sw = append(r.sw, s)
		r.host = append(r.host, r.net.ConnectHost(i, s, g400, us).Peer)
		for k := range extra {
			r.net.ConnectHost(3+i*extra+k, s, g400, us)
		}
		r.link[name] = map[string]*fabric.Port{}
	}
	for _, e := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		x, y := r.sw[e[0]], r.sw[e[1]]
		px, py := r.net.ConnectSwitches(x, y, g400, us)
		r.link[x.Name()][y.Name()], r.link[y.Name()][x.Name()] = px, py
	}
	for _, s := range r.sw {
		s.Next = make([][]*fabric.Port, 3+3*extra)
	}
	return r
}

// route sets switch x's next hops toward host d.
func (r *ring) route(x string, d int, next ...string) {
	s := r.sw[x[0]-'a']
	var g []*fabric.Port
	for _, n := range next {
		if n == "host" {
			g = append(g, r.host[d])
		} else {
			g = append(g, r.link[x][n])
		}
	}
	s.Next[d] = g
}

// direct routes every host straight from its neighbours.
func (r *ring) direct() {
	names := []string{"a", "b", "c"}
	for d := range 3 {
		for i, x := range names {
			if i == d {
				r.route(x, d, "host")
			} else {
				r.route(x, d, names[d])
			}
		}
	}
}

// around routes the host two hops clockwise (a→b→c→a) the long way,
// through the switch between.
func (r *ring) around() {
	r.direct()
	r.route("a", 2, "b")
	r.route("b", 0, "c")
	r.route("c", 1, "a")
}

func hops(cs []fabric.DependencyCycle) [][]string {
	var out [][]string
	for _, c := range cs {
		out = append(out, c.Hops())
	}
	return out
}

func TestDependencyCyclesRing(t *testing.T) {
	for _, pad := range []int{0, 70} {
		t.Run(fmt.Sprintf("pad %d", pad), func(t *testing.T) { testRing(t, pad) })
	}
}

// testRing: with pad 70 the switches have 73 ports, the links' beyond the
// first 64.
func testRing(t *testing.T, pad int) {
	r := newRing(t, true, pad)
	r.direct()
	if cs := r.net.DependencyCycles(); cs != nil {
		t.Fatalf("direct routes: %v, want no cycle", hops(cs))
	}
	r.around()
	cs := r.net.DependencyCycles()
	want := [][]string{{"a→b", "b→c", "c→a"}}
	if !slices.EqualFunc(hops(cs), want, slices.Equal) {
		t.Fatalf("routes around the ring: cycles %v, want %v", hops(cs), want)
	}
	if cs[0].Prio != 3 {
		t.Errorf("priority %d, want 3", cs[0].Prio)
	}
	if got, w := cs[0].String(), "a→b → b→c → c→a (priority 3)"; got != w {
		t.Errorf("String() = %q, want %q", got, w)
	}

	// A failed link carries nothing: the cycle through it is gone.
	r.net.FailLink(r.link["b"]["c"])
	if cs := r.net.DependencyCycles(); cs != nil {
		t.Errorf("b–c down: %v, want no cycle", hops(cs))
	}
	r.net.RestoreLink(r.link["b"]["c"])
	if cs := r.net.DependencyCycles(); len(cs) != 1 {
		t.Errorf("b–c back up: %v, want the cycle again", hops(cs))
	}
}

// Without a lossless priority nothing pauses: no route can deadlock.
func TestDependencyCyclesLossy(t *testing.T) {
	r := newRing(t, false)
	r.around()
	if cs := r.net.DependencyCycles(); cs != nil {
		t.Fatalf("lossy: %v, want no cycle", hops(cs))
	}
}

// Every next hop of a group may be taken (a hash, a spray or adaptive
// routing), but d-mod-k only ever takes the one it computes.
func TestDependencyCyclesGroups(t *testing.T) {
	for _, tc := range []struct {
		policy fabric.Policy
		want   [][]string
	}{
		{fabric.ECMP, [][]string{{"a→b", "b→c", "c→a"}}},
		{fabric.Adaptive, [][]string{{"a→b", "b→c", "c→a"}}},
		{fabric.DModK, nil},
	} {
		r := newRing(t, true)
		r.direct()
		// d-mod-k takes member d mod 2: the direct one each time.
		r.route("a", 2, "c", "b")
		r.route("b", 0, "a", "c")
		r.route("c", 1, "a", "b")
		r.cfg.Policy = tc.policy
		if got := hops(r.net.DependencyCycles()); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("policy %d: cycles %v, want %v", tc.policy, got, tc.want)
		}
	}
}

// Paths pinned around the ring close the cycle on tables that do not.
func TestDependencyCyclesPins(t *testing.T) {
	r := newRing(t, true)
	r.direct()
	pin := func(src, dst int, path ...string) {
		for i, x := range path {
			out := r.host[dst]
			if i+1 < len(path) {
				out = r.link[x][path[i+1]]
			}
			r.sw[x[0]-'a'].Pin(int32(src), int32(dst), 0, 0, out)
		}
	}
	pin(0, 2, "a", "b", "c")
	pin(1, 0, "b", "c")
	if cs := r.net.DependencyCycles(); cs != nil {
		t.Fatalf("two pinned paths: %v, want no cycle", hops(cs))
	}
	// b→c→a for host 0 now, and c→a→b for host 1.
	pin(1, 0, "b", "c", "a")
	pin(2, 1, "c", "a", "b")
	want := [][]string{{"a→b", "b→c", "c→a"}}
	if got := hops(r.net.DependencyCycles()); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("pinned around the ring: cycles %v, want %v", got, want)
	}
}

// Only what traffic reaches counts: a loop in the tables of switches that
// no packet for that host ever enters is no dependency (stale entries);
// once a switch with hosts forwards into it, it is.
func TestDependencyCyclesReached(t *testing.T) {
	cfg := &fabric.SwitchConfig{Buffer: 16 << 20, XOFF: 64 << 10, XON: 32 << 10, MaxPacketWire: mtuW}
	cfg.Lossless[3] = true
	net := fabric.NewNetwork(sim.NewScheduler(), 1, 2)
	a := net.AddSwitch("a", "leaf", cfg, 0)
	b := net.AddSwitch("b", "leaf", cfg, 0)
	x := net.AddSwitch("x", "core", cfg, 0)
	y := net.AddSwitch("y", "core", cfg, 0)
	z := net.AddSwitch("z", "core", cfg, 0)
	h0 := net.ConnectHost(0, a, g400, us).Peer
	h1 := net.ConnectHost(1, b, g400, us).Peer
	ab, ba := net.ConnectSwitches(a, b, g400, us)
	_, _ = net.ConnectSwitches(a, x, g400, us)
	by, _ := net.ConnectSwitches(b, y, g400, us)
	xy, _ := net.ConnectSwitches(x, y, g400, us)
	yz, _ := net.ConnectSwitches(y, z, g400, us)
	zx, _ := net.ConnectSwitches(z, x, g400, us)
	for _, s := range net.Switches {
		s.Next = make([][]*fabric.Port, 2)
	}
	a.Next[0], a.Next[1] = []*fabric.Port{h0}, []*fabric.Port{ab}
	b.Next[0], b.Next[1] = []*fabric.Port{ba}, []*fabric.Port{h1}
	// A loop toward host 0 among x, y, z: nothing enters it.
	x.Next[0], y.Next[0], z.Next[0] = []*fabric.Port{xy}, []*fabric.Port{yz}, []*fabric.Port{zx}
	if cs := net.DependencyCycles(); cs != nil {
		t.Fatalf("a loop nothing enters: %v, want no cycle", hops(cs))
	}
	// b may now send host 0's packets into it as well.
	b.Next[0] = []*fabric.Port{ba, by}
	want := [][]string{{"x→y", "y→z", "z→x"}}
	if got := hops(net.DependencyCycles()); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("b forwards into the loop: cycles %v, want %v", got, want)
	}
}

// Shortest paths on the built topologies go up, then down: no cycle, and
// the check of a k=16 fat-tree (1,024 hosts, 320 switches) is quick.
func TestDependencyCyclesClos(t *testing.T) {
	cfg := func(p fabric.Policy) *fabric.SwitchConfig {
		c := &fabric.SwitchConfig{Buffer: 64 << 20, XOFF: 64 << 10, XON: 32 << 10, MaxPacketWire: mtuW, Policy: p}
		c.Lossless[3] = true
		return c
	}
	link := topo.Link{Rate: g400, Delay: us}
	for _, tc := range []struct {
		name string
		spec topo.Spec
	}{
		{"leaf-spine", topo.Spec{Kind: "leaf-spine", Hosts: 64, HostsPerLeaf: 8, Spines: 4}},
		{"leaf-spine d-mod-k", topo.Spec{Kind: "leaf-spine", Hosts: 64, HostsPerLeaf: 8, Spines: 4, Switch: cfg(fabric.DModK)}},
		{"fat-tree k=4", topo.Spec{Kind: "fat-tree", K: 4}},
		{"fat-tree k=16", topo.Spec{Kind: "fat-tree", K: 16}},
		{"rail", topo.Spec{Kind: "rail", Servers: 8, GPUsPerServer: 4, Spines: 4}},
	} {
		s := tc.spec
		s.HostLink, s.FabricLink = link, link
		if s.Switch == nil {
			s.Switch = cfg(fabric.ECMP)
		}
		tp, err := topo.Build(sim.NewScheduler(), 1, s)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t0 := time.Now()
		cs := tp.Net.DependencyCycles()
		took := time.Since(t0)
		if cs != nil {
			t.Errorf("%s: %v, want no cycle", tc.name, hops(cs))
		}
		if took > time.Second {
			t.Errorf("%s: the check took %v, want well under a second", tc.name, took)
		}
	}
}

// A ring of four switches on shortest paths (ECMP both ways round to the
// switch opposite) has a cycle each way: two components, each named from
// its lowest port, in order.
func TestDependencyCyclesShortestRing(t *testing.T) {
	cfg := &fabric.SwitchConfig{Buffer: 16 << 20, XOFF: 64 << 10, XON: 32 << 10, MaxPacketWire: mtuW}
	cfg.Lossless[3] = true
	tp := &topo.Topology{Net: fabric.NewNetwork(sim.NewScheduler(), 1, 4), Hosts: 4, Edge: make([]*fabric.Switch, 4)}
	var sw []*fabric.Switch
	for i := range 4 {
		s := tp.Net.AddSwitch(string(rune('a'+i)), "leaf", cfg, 0)
		tp.Net.ConnectHost(i, s, g400, us)
		tp.Edge[i] = s
		sw = append(sw, s)
	}
	for i := range 4 {
		tp.Net.ConnectSwitches(sw[i], sw[(i+1)%4], g400, us)
	}
	topo.ComputeRoutes(tp)
	want := [][]string{{"a→b", "b→c", "c→d", "d→a"}, {"b→a", "a→d", "d→c", "c→b"}}
	if got := hops(tp.Net.DependencyCycles()); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("cycles %v, want %v", got, want)
	}
}
