package flow

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
	"fabriclab/workload"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMaxMinTwoFlowsShareOneLink(t *testing.T) {
	got := MaxMin([]Link{{"a", 10}}, [][]int{{0}, {0}})
	if !reflect.DeepEqual(got, []float64{5, 5}) {
		t.Fatalf("got %v, want [5 5]", got)
	}
}

// The classic example: flow 0 crosses both links, flow 1 only the big one,
// flow 2 only the small one. The small link saturates first (4/2 = 2 each);
// flow 1 then gets what flow 0 leaves on the big link (10 − 2 = 8).
func TestMaxMinClassicThreeFlows(t *testing.T) {
	links := []Link{{"big", 10}, {"small", 4}}
	rates, bn := Solve(links, [][]int{{0, 1}, {0}, {1}})
	if want := []float64{2, 8, 2}; !reflect.DeepEqual(rates, want) {
		t.Errorf("rates %v, want %v", rates, want)
	}
	if want := []int{1, 0, 1}; !reflect.DeepEqual(bn, want) {
		t.Errorf("bottlenecks %v, want %v", bn, want)
	}
}

func TestMaxMinEdgeCases(t *testing.T) {
	rates, bn := Solve([]Link{{"zero", 0}, {"x", 6}}, [][]int{{}, {0, 1}, {1}, {1, 1}})
	if !math.IsInf(rates[0], 1) || bn[0] != -1 {
		t.Errorf("flow without links: %v %d, want +Inf -1", rates[0], bn[0])
	}
	if rates[1] != 0 || bn[1] != 0 {
		t.Errorf("flow over a zero-capacity link: %v %d", rates[1], bn[1])
	}
	// Link x: flow 2 once, flow 3 twice: 6 = r + 2r.
	if rates[2] != 2 || rates[3] != 2 {
		t.Errorf("link listed twice: %v", rates[2:])
	}
	if got := MaxMin(nil, nil); len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
}

// naiveMaxMin is progressive filling the slow, obvious way.
func naiveMaxMin(links []Link, flows [][]int) []float64 {
	rates := make([]float64, len(flows))
	fixed := make([]bool, len(flows))
	rem := make([]float64, len(links))
	for l := range links {
		rem[l] = links[l].Capacity
	}
	for {
		best, bl := math.Inf(1), -1
		for l := range links {
			n := 0
			for f, p := range flows {
				if !fixed[f] {
					for _, x := range p {
						if x == l {
							n++
						}
					}
				}
			}
			if n > 0 && math.Max(rem[l], 0)/float64(n) < best {
				best, bl = math.Max(rem[l], 0)/float64(n), l
			}
		}
		if bl < 0 {
			break
		}
		for f, p := range flows {
			if fixed[f] {
				continue
			}
			hit := false
			for _, x := range p {
				hit = hit || x == bl
			}
			if hit {
				fixed[f], rates[f] = true, best
				for _, x := range p {
					rem[x] -= best
				}
			}
		}
	}
	for f, p := range flows {
		if len(p) == 0 {
			rates[f] = math.Inf(1)
		}
	}
	return rates
}

func TestMaxMinMatchesNaive(t *testing.T) {
	rng := sim.NewRNG(3, "maxmin")
	for trial := 0; trial < 300; trial++ {
		nl, nf := 1+rng.IntN(12), 1+rng.IntN(20)
		links := make([]Link, nl)
		for l := range links {
			links[l] = Link{fmt.Sprint(l), float64(1 + rng.IntN(100))}
		}
		flows := make([][]int, nf)
		for f := range flows {
			seen := map[int]bool{}
			for k := rng.IntN(5); k > 0; k-- {
				if l := rng.IntN(nl); !seen[l] {
					seen[l] = true
					flows[f] = append(flows[f], l)
				}
			}
		}
		got, bn := Solve(links, flows)
		want := naiveMaxMin(links, flows)
		for f := range flows {
			if !(near(got[f], want[f]) || math.IsInf(got[f], 1) && math.IsInf(want[f], 1)) {
				t.Fatalf("trial %d flow %d: %v, naive %v (links %v flows %v)", trial, f, got[f], want[f], links, flows)
			}
		}
		// Max-min property: every flow's bottleneck is on its path, full,
		// and no flow on it gets more.
		load := make([]float64, nl)
		for f, p := range flows {
			for _, l := range p {
				load[l] += got[f]
			}
		}
		for f, p := range flows {
			if len(p) == 0 {
				continue
			}
			b := bn[f]
			if !near(load[b], links[b].Capacity) {
				t.Fatalf("trial %d flow %d: bottleneck %d not full (%v of %v)", trial, f, b, load[b], links[b].Capacity)
			}
			for g, q := range flows {
				for _, l := range q {
					if l == b && got[g] > got[f]*(1+1e-9) {
						t.Fatalf("trial %d: flow %d gets more than flow %d on its bottleneck", trial, g, f)
					}
				}
			}
		}
	}
}

// twoLevel builds a leaf-spine fabric of 3 leaves × 8 hosts and 8 spines
// at rate (bits/s), forwarding with policy.
func twoLevel(t testing.TB, rate units.Rate, policy fabric.Policy) *topo.Topology {
	tp, err := topo.Build(sim.NewScheduler(), 1, topo.Spec{Kind: "leaf-spine", Hosts: 24, HostsPerLeaf: 8, Spines: 8,
		HostLink: topo.Link{Rate: rate, Delay: 1000}, FabricLink: topo.Link{Rate: rate, Delay: 1000},
		Switch: &fabric.SwitchConfig{Buffer: 1 << 25, MaxPacketWire: 4178, Policy: policy}})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func flowsFor(t testing.TB, net *fabric.Network, pairs [][2]int, bytes int64) []Flow {
	var fl []Flow
	for _, p := range pairs {
		path, err := StaticPath(net, int32(p[0]), int32(p[1]), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		fl = append(fl, Flow{Src: p[0], Dst: p[1], Bytes: bytes, Path: path, Msgs: 1})
	}
	return fl
}

// Reproduction 3 (README), the max-min fair view: 5 clients on leaf0 send
// to 5 servers elsewhere under static destination (d-mod-k) routing. Hosts
// 8 and 16 are both ≡ 0 mod 8 spines, so flows 0→8 and 4→16 share the
// uplink leaf0→spine0 and get half (0.40 GB/s at 6.4 Gb/s links); the
// others keep 0.80 GB/s. Swapping server 16 for 12 restores full rate.
func TestDModKSharedUplinkHalvesOnlyCollidingFlows(t *testing.T) {
	tp := twoLevel(t, 6_400_000_000, fabric.DModK)
	r := Analyze(tp.Net, flowsFor(t, tp.Net, [][2]int{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 16}}, 1e9), Options{Tiers: tp.Tiers})
	want := map[int]float64{8: 0.4, 9: 0.8, 10: 0.8, 11: 0.8, 16: 0.4}
	for _, f := range r.Flows {
		if !near(f.GBps, want[f.Dst]) {
			t.Errorf("%s→%s: %.3f GB/s, want %.2f", f.SrcName, f.DstName, f.GBps, want[f.Dst])
		}
		if want[f.Dst] == 0.4 && f.Bottleneck != "leaf0→spine0" {
			t.Errorf("%s→%s: bottleneck %q, want leaf0→spine0", f.SrcName, f.DstName, f.Bottleneck)
		}
	}
	if r.Limited != 2 || r.Links[0].Name != "leaf0→spine0" || r.Links[0].Flows != 2 {
		t.Errorf("limited %d, most loaded %+v", r.Limited, r.Links[0])
	}
	if c := r.Collisions[0]; c.Group != "leaf→spine" || c.Max != 2 || c.Flows != 5 || c.Links != 24 || c.Ideal != 1 {
		t.Errorf("collisions %+v", r.Collisions)
	}
	if !near(r.Slowdown, 2) {
		t.Errorf("slowdown %v, want 2", r.Slowdown)
	}

	r = Analyze(tp.Net, flowsFor(t, tp.Net, [][2]int{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}}, 1e9), Options{Tiers: tp.Tiers})
	for _, f := range r.Flows {
		if !near(f.GBps, 0.8) || f.Bottleneck != f.SrcName+"→leaf0" {
			t.Errorf("swapped: %s→%s: %.3f GB/s, bottleneck %s", f.SrcName, f.DstName, f.GBps, f.Bottleneck)
		}
	}
}

func fatTreePermutation(t testing.TB, k int) (*topo.Topology, []Flow) {
	tp, err := topo.Build(sim.NewScheduler(), 1, topo.Spec{Kind: "fat-tree", K: k,
		HostLink: topo.Link{Rate: 400_000_000_000, Delay: 1000}, FabricLink: topo.Link{Rate: 400_000_000_000, Delay: 1000},
		Switch: &fabric.SwitchConfig{Buffer: 1 << 25, MaxPacketWire: 4178, Policy: fabric.ECMP}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := workload.Permutation(tp.Hosts, 1<<26, sim.NewRNG(1, "permutation"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]int
	for _, m := range d.Msgs {
		pairs = append(pairs, [2]int{int(m.Src), int(m.Dst)})
	}
	return tp, flowsFor(t, tp.Net, pairs, 1<<26)
}

func TestAnalyzeDeterministic(t *testing.T) {
	tp, fl := fatTreePermutation(t, 8)
	a := Analyze(tp.Net, fl, Options{Efficiency: 4096.0 / 4178, Tiers: tp.Tiers})
	b := Analyze(tp.Net, fl, Options{Efficiency: 4096.0 / 4178, Tiers: tp.Tiers})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two analyses differ")
	}
	var groups []string
	for _, c := range a.Collisions {
		groups = append(groups, c.Group)
		if c.Max < c.Ideal || c.Mean > float64(c.Max) {
			t.Errorf("%+v", c)
		}
	}
	if want := []string{"edge→agg", "agg→core", "core→agg", "agg→edge"}; !reflect.DeepEqual(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	for _, f := range a.Flows {
		if f.GBps <= 0 || f.GBps > 50*4096.0/4178+1e-9 || f.Bottleneck == "" || len(f.Path) < 2 || f.AggGBps != f.GBps {
			t.Fatalf("flow %+v", f)
		}
	}
}

// A link down at time 0 is no link for ECMP: the routes go around it (as
// plan.FailAtStart leaves them) and the collision table neither counts it
// among a group's links nor counts a flow a pin still sends into it. Two
// leaves × 2 hosts, 2 spines, leaf0–spine0 down: the four cross-leaf flows
// all take spine1, and leaf1→spine0 stays idle (spine0 cannot reach
// leaf0). Counting the failed link gave 4 links, ideal 1, histogram 2 0 2.
func TestCollisionsLeaveOutFailedLinks(t *testing.T) {
	tp, err := topo.Build(sim.NewScheduler(), 1, topo.Spec{Kind: "leaf-spine", Hosts: 4, HostsPerLeaf: 2, Spines: 2,
		HostLink: topo.Link{Rate: 100_000_000_000, Delay: 1000}, FabricLink: topo.Link{Rate: 100_000_000_000, Delay: 1000},
		Switch: &fabric.SwitchConfig{Buffer: 1 << 25, MaxPacketWire: 4178, Policy: fabric.ECMP}})
	if err != nil {
		t.Fatal(err)
	}
	down := tp.Link("leaf0", "spine0")
	tp.Net.FailLink(down)
	topo.ComputeRoutes(tp)
	fl := flowsFor(t, tp.Net, [][2]int{{0, 2}, {1, 3}, {2, 0}, {3, 1}}, 1e6)
	want := []Collision{
		{Group: "leaf→spine", Links: 3, Flows: 4, Max: 2, Mean: 4.0 / 3, Ideal: 2, Histogram: []int{1, 0, 2}},
		{Group: "spine→leaf", Links: 3, Flows: 4, Max: 2, Mean: 4.0 / 3, Ideal: 2, Histogram: []int{1, 0, 2}},
	}
	if got := Analyze(tp.Net, fl, Options{Tiers: tp.Tiers}).Collisions; !reflect.DeepEqual(got, want) {
		t.Errorf("collisions\n got %+v\nwant %+v", got, want)
	}
	// A flow pinned over the failed link (a flow list's path, a link back
	// up later) is lost there: spine0→leaf1 after it carries nothing.
	pinned := Flow{Src: 1, Dst: 2, Bytes: 1e6, Msgs: 1,
		Path: []*fabric.Port{tp.Net.HostPorts[1], down, tp.Link("spine0", "leaf1"), tp.Net.HostPorts[2].Peer}}
	if got := Analyze(tp.Net, append(fl, pinned), Options{Tiers: tp.Tiers}).Collisions; !reflect.DeepEqual(got, want) {
		t.Errorf("with a flow pinned over the failed link\n got %+v\nwant %+v", got, want)
	}
}

type fakePather struct {
	net *fabric.Network
	d   *workload.DAG
}

func (p fakePather) Path(i int) ([]*fabric.Port, error) {
	m := p.d.Msgs[i]
	return StaticPath(p.net, m.Src, m.Dst, m.Channel, 0)
}
func (p fakePather) Conn(i int) uint64 {
	m := p.d.Msgs[i]
	return uint64(m.Src)<<40 | uint64(m.Dst)<<16 | uint64(m.Channel)
}

func TestRootFlowsMergesConnections(t *testing.T) {
	tp := twoLevel(t, 6_400_000_000, fabric.ECMP)
	d := &workload.DAG{}
	a := d.Add(workload.Message{Src: 0, Dst: 9, Bytes: 10})
	d.Add(workload.Message{Src: 0, Dst: 9, Bytes: 5})             // same connection
	d.Add(workload.Message{Src: 0, Dst: 9, Bytes: 7, Channel: 1}) // another QP
	d.Add(workload.Message{Src: 1, Dst: 1, Marker: true})
	d.Add(workload.Message{Src: 2, Dst: 3, Bytes: 1}, a) // a later step
	d.Finish()
	fl, err := RootFlows(d, fakePather{tp.Net, d})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != 2 || fl[0].Bytes != 15 || fl[0].Msgs != 2 || fl[1].Bytes != 7 || len(fl[0].Path) != 4 {
		t.Fatalf("%+v", fl)
	}
	if _, err := StaticPath(tp.Net, 0, 99, 0, 0); err == nil {
		t.Error("no error for an unknown host")
	}
}

// BenchmarkMaxMin1024Permutation: 1,024 hosts (k=16 fat-tree), a full
// permutation under ECMP; must stay far below a second.
func BenchmarkMaxMin1024Permutation(b *testing.B) {
	tp, fl := fatTreePermutation(b, 16)
	index := map[*fabric.Port]int{}
	var links []Link
	paths := make([][]int, len(fl))
	for f := range fl {
		for _, pt := range fl[f].Path {
			l, ok := index[pt]
			if !ok {
				l = len(links)
				index[pt] = l
				links = append(links, Link{Capacity: float64(pt.Rate)})
			}
			paths[f] = append(paths[f], l)
		}
	}
	_ = tp
	b.ResetTimer()
	for b.Loop() {
		MaxMin(links, paths)
	}
}

// BenchmarkAnalyze1024Permutation is the whole analysis (paths, max-min,
// naming, link loads, collisions) of the same permutation.
func BenchmarkAnalyze1024Permutation(b *testing.B) {
	tp, fl := fatTreePermutation(b, 16)
	b.ResetTimer()
	for b.Loop() {
		for f := range fl {
			fl[f].Path, _ = StaticPath(tp.Net, int32(fl[f].Src), int32(fl[f].Dst), 0, 0)
		}
		Analyze(tp.Net, fl, Options{Tiers: tp.Tiers})
	}
}
