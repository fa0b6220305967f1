package topo

import (
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

func spec(kind string) Spec {
	return Spec{Kind: kind,
		HostLink:   Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
		FabricLink: Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
		Switch:     &fabric.SwitchConfig{Buffer: 1 << 25, XOFF: 1 << 18, XON: 1 << 17}}
}

// hops walks the first ECMP choice from src to dst and returns the number of
// links, failing on loops or dead ends.
func hops(t *testing.T, tp *Topology, src, dst int) int {
	t.Helper()
	pt := tp.Net.HostPorts[src]
	n := 1
	for {
		sw, ok := pt.Peer.Owner.(*fabric.Switch)
		if !ok {
			if pt.Peer != tp.Net.HostPorts[dst] {
				t.Fatalf("%d→%d delivered to the wrong host", src, dst)
			}
			return n
		}
		g := sw.Next[dst]
		if len(g) == 0 {
			t.Fatalf("%d→%d: %s has no route", src, dst, sw.Name())
		}
		pt = g[0]
		n++
		if n > 10 {
			t.Fatalf("%d→%d: loop", src, dst)
		}
	}
}

func TestLeafSpine(t *testing.T) {
	s := spec("leaf-spine")
	s.Hosts, s.HostsPerLeaf = 32, 8
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	// Non-blocking by default: 8 × 400G down needs 8 spines of 400G.
	if len(tp.Net.Switches) != 4+8 {
		t.Fatalf("%d switches", len(tp.Net.Switches))
	}
	if h := hops(t, tp, 0, 1); h != 2 {
		t.Fatalf("same leaf: %d links", h)
	}
	if h := hops(t, tp, 0, 31); h != 4 {
		t.Fatalf("across leaves: %d links", h)
	}
	if g := tp.Edge[0].Next[31]; len(g) != 8 {
		t.Fatalf("leaf ECMP group toward another leaf has %d ports, want 8", len(g))
	}
	// 2:1 oversubscription halves the spines.
	s.Oversubscription = 2
	tp, _ = Build(sim.NewScheduler(), 1, s)
	if len(tp.Net.Switches) != 4+4 {
		t.Fatalf("2:1: %d switches", len(tp.Net.Switches))
	}
}

func TestFatTree(t *testing.T) {
	s := spec("fat-tree")
	s.K = 4
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Hosts != 16 || len(tp.Net.Switches) != 4+8+8 {
		t.Fatalf("k=4: %d hosts %d switches", tp.Hosts, len(tp.Net.Switches))
	}
	for _, c := range []struct{ a, b, want int }{{0, 1, 2}, {0, 2, 4}, {0, 15, 6}} {
		if h := hops(t, tp, c.a, c.b); h != c.want {
			t.Errorf("%d→%d: %d links, want %d", c.a, c.b, h, c.want)
		}
	}
	// Edge switch: k/2 up choices toward another pod; agg: k/2 cores.
	if g := tp.Edge[0].Next[15]; len(g) != 2 {
		t.Fatalf("edge group %d", len(g))
	}
	for h := 0; h < tp.Hosts; h++ {
		for d := 0; d < tp.Hosts; d++ {
			if h != d {
				hops(t, tp, h, d)
			}
		}
	}
}

func TestRail(t *testing.T) {
	s := spec("rail")
	s.Servers, s.GPUsPerServer = 4, 8
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Hosts != 32 {
		t.Fatalf("%d hosts", tp.Hosts)
	}
	// NIC i of every server sits on rail leaf i.
	for sv := 0; sv < 4; sv++ {
		for g := 0; g < 8; g++ {
			h := sv*8 + g
			if tp.Edge[h] != tp.Edge[g] || tp.Server[h] != sv {
				t.Fatalf("host %d (server %d gpu %d) on %s", h, sv, g, tp.Edge[h].Name())
			}
		}
	}
	if h := hops(t, tp, 0, 8); h != 2 {
		t.Fatalf("same rail: %d links", h)
	}
	if h := hops(t, tp, 0, 1); h != 4 {
		t.Fatalf("cross rail: %d links", h)
	}
}

func TestImpossibleSpecs(t *testing.T) {
	for _, s := range []Spec{
		{Kind: "leaf-spine", Hosts: 10, HostsPerLeaf: 4},
		{Kind: "fat-tree", K: 3},
		{Kind: "rail", Servers: 0, GPUsPerServer: 8},
		{Kind: "torus"},
	} {
		s.HostLink, s.FabricLink = spec("").HostLink, spec("").FabricLink
		s.Switch = spec("").Switch
		if _, err := Build(sim.NewScheduler(), 1, s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

func TestNumSwitchesMatchesBuild(t *testing.T) {
	for _, s := range []Spec{
		{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8},
		{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8, Spines: 3},
		{Kind: "fat-tree", K: 4},
		{Kind: "fat-tree", K: 8},
		{Kind: "rail", Servers: 4, GPUsPerServer: 8},
		{Kind: "rail", Servers: 8, GPUsPerServer: 4, ServersPerGroup: 2},
	} {
		base := spec(s.Kind)
		s.HostLink, s.FabricLink, s.Switch = base.HostLink, base.FabricLink, base.Switch
		tp, err := Build(sim.NewScheduler(), 1, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := NumSwitches(s); got != len(tp.Net.Switches) {
			t.Errorf("%+v: NumSwitches %d, built %d", s, got, len(tp.Net.Switches))
		}
	}
}
