package topo

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// leafSpineCSV writes the leaf-spine Build makes for s as a custom CSV
// topology: leaves, then spines, then hosts; every leaf's host links, then
// every spine's links to the leaves (the order the built-in builder
// connects them).
func leafSpineCSV(s Spec) string {
	var b strings.Builder
	leaves, spines := s.Hosts/s.HostsPerLeaf, LeafSpines(s)
	for i := range leaves {
		fmt.Fprintf(&b, "node,leaf%d,switch,leaf\n", i)
	}
	for j := range spines {
		fmt.Fprintf(&b, "node,spine%d,switch,spine\n", j)
	}
	for h := range s.Hosts {
		fmt.Fprintf(&b, "node,host%d,host\n", h)
	}
	for i := range leaves {
		for j := range s.HostsPerLeaf {
			fmt.Fprintf(&b, "link,host%d,leaf%d,%v,%v\n", i*s.HostsPerLeaf+j, i, s.HostLink.Rate, s.HostLink.Delay)
		}
	}
	for j := range spines {
		for i := range leaves {
			fmt.Fprintf(&b, "link,leaf%d,spine%d,%v,%v\n", i, j, s.FabricLink.Rate, s.FabricLink.Delay)
		}
	}
	return b.String()
}

// describe lists a network's switches and ports with everything that
// routing and queueing read.
func describeNet(tp *Topology) string {
	var b strings.Builder
	n := tp.Net
	fmt.Fprintf(&b, "hosts %d tiers %v\n", tp.Hosts, tp.Tiers)
	for _, s := range n.Switches {
		fmt.Fprintf(&b, "switch %d %s %s seed %x div %d\n", s.ID, s.Name(), s.Tier, s.HashSeed, s.DModKDiv)
		for dst, g := range s.Next {
			fmt.Fprintf(&b, " %d:", dst)
			for _, pt := range g {
				fmt.Fprintf(&b, " %d", pt.ID)
			}
		}
		b.WriteString("\n")
	}
	for _, pt := range n.Ports {
		peer := -1
		if pt.Peer != nil {
			peer = pt.Peer.ID
		}
		owner := ""
		if s, ok := pt.Owner.(*fabric.Switch); ok {
			owner = s.Name()
		}
		fmt.Fprintf(&b, "port %d %s %s idx %d rate %v delay %v peer %d\n", pt.ID, owner, pt.Tier, pt.Index, pt.Rate, pt.Delay, peer)
	}
	for h, e := range tp.Edge {
		fmt.Fprintf(&b, "edge %d %s server %d rail %d\n", h, e.Name(), tp.Server[h], tp.Rail[h])
	}
	return b.String()
}

// A leaf-spine written as a custom file builds the same network, port for
// port, as the built-in builder.
func TestCustomLeafSpineIsBuiltIn(t *testing.T) {
	s := spec("leaf-spine")
	s.Hosts, s.HostsPerLeaf, s.Spines, s.GPUsPerServer = 32, 8, 3, 2
	s.HostLink.Rate = 100 * units.Gbps
	want, err := Build(sim.NewScheduler(), 7, s)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseCustomCSV("ls.csv", strings.NewReader(leafSpineCSV(s)))
	if err != nil {
		t.Fatal(err)
	}
	c := s
	c.Kind, c.Graph = "custom", g
	if HostCount(c) != 32 || NumSwitches(c) != NumSwitches(s) || RouteTableBytes(c) != RouteTableBytes(s) {
		t.Fatalf("sizes: %d hosts, %d switches", HostCount(c), NumSwitches(c))
	}
	got, err := Build(sim.NewScheduler(), 7, c)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := describeNet(want), describeNet(got); a != b {
		t.Fatalf("custom leaf-spine differs from the built-in one:\n%s\nvs\n%s", firstDiff(a, b), "")
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(la), len(lb))
}

// The ns-3 file in testdata: 8 hosts (ids 0–7) under two ToRs (8, 9) and
// two spines (10, 11), host links at 100G and fabric links at 400G.
func TestParseNS3(t *testing.T) {
	f, err := os.Open("testdata/ns3-leafspine.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ParseNS3("ns3-leafspine.txt", f)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.HostNodes) != 8 || g.Switches != 4 || len(g.Links) != 12 {
		t.Fatalf("%d hosts, %d switches, %d links", len(g.HostNodes), g.Switches, len(g.Links))
	}
	if fmt.Sprint(g.Tiers) != "[tier1 tier2]" {
		t.Fatalf("tiers %v", g.Tiers)
	}
	s := spec("ns3")
	s.Graph = g
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Edge[0].Name() != "sw8" || tp.Edge[7].Name() != "sw9" {
		t.Fatalf("edges %s %s", tp.Edge[0].Name(), tp.Edge[7].Name())
	}
	if h := hops(t, tp, 0, 7); h != 4 {
		t.Fatalf("across ToRs: %d links", h)
	}
	if len(tp.Net.Switches[0].Next[7]) != 2 {
		t.Fatalf("ECMP group of sw8 toward host 7: %d ports", len(tp.Net.Switches[0].Next[7]))
	}
	hp := tp.Net.HostPorts[0]
	if hp.Rate != 100*units.Gbps || hp.Delay != units.Microsecond {
		t.Fatalf("host link %v %v", hp.Rate, hp.Delay)
	}
	up := tp.Net.Switches[0].Next[7][0]
	if up.Rate != 400*units.Gbps || up.Delay != 1500*units.Nanosecond {
		t.Fatalf("fabric link %v %v", up.Rate, up.Delay)
	}
	if pt, err := tp.SwitchLink("sw8", "sw10"); err != nil || pt == nil {
		t.Fatalf("link sw8–sw10: %v", err)
	}
}

// Every refusal names the file and the line.
func TestCustomErrors(t *testing.T) {
	const sw = "node,s0,switch\nnode,s1,switch\n"
	cases := []struct{ name, text, want string }{
		{"self link", sw + "node,host0,host\nlink,host0,s0,1Gbps,1us\nlink,s1,s1,1Gbps,1us\n", `t.csv:5: link from "s1" to itself`},
		{"duplicate link", sw + "node,host0,host\nlink,host0,s0,1Gbps,1us\nlink,s0,s1,1Gbps,1us\nlink,s1,s0,2Gbps,1us\n",
			"t.csv:6: second link between s1 and s0 (the first is at line 5); parallel links are not modelled: give one link the combined rate"},
		{"unknown node", sw + "node,host0,host\nlink,host0,s0,1Gbps,1us\nlink,s0,s9,1Gbps,1us\n", `t.csv:5: link end "s9" is not a node of the file`},
		{"host without a link", sw + "node,host0,host\nnode,host1,host\nlink,host0,s0,1Gbps,1us\nlink,s0,s1,1Gbps,1us\n", "t.csv:4: host host1 has no link"},
		{"host with two links", sw + "node,host0,host\nlink,host0,s0,1Gbps,1us\nlink,s1,host0,1Gbps,1us\n",
			"t.csv:5: host host0 has a second link (the first is at line 4); a host is one NIC with one link: list a server's NICs as hosts of one server"},
		{"two hosts linked", sw + "node,host0,host\nnode,host1,host\nlink,host0,host1,1Gbps,1us\n", "t.csv:5: link between two hosts (host0, host1); a host links to a switch"},
		{"not connected", sw + "node,host0,host\nlink,host0,s0,1Gbps,1us\n", "t.csv:2: node s1 is not connected to s0 (the topology must be connected)"},
		{"no hosts", sw + "link,s0,s1,1Gbps,1us\n", "t.csv:3: the file has no hosts"},
		{"bad rate", sw + "link,s0,s1,100GBps,1us\n", `t.csv:3: rate: "100GBps": rates are in bits per second, written with a lower-case b (e.g. 400Gbps or 25Gb/s); B is bytes`},
		{"zero rate", sw + "link,s0,s1,0,1us\n", "t.csv:3: link rate must be more than 0, got 0bps"},
		{"slow rate", sw + "link,s0,s1,10bps,1us\n", "t.csv:3: link rate 10bps is below the slowest link rate fabriclab models (1Kbps)"},
		{"fast rate", sw + "link,s0,s1,200Tbps,1us\n", "t.csv:3: link rate 200Tbps is above the fastest link rate fabriclab models (100Tbps)"},
		{"bare delay", sw + "link,s0,s1,1Gbps,5\n", `t.csv:3: delay: "5": a duration needs a unit (ps, ns, us, µs, ms, s)`},
		{"negative delay", sw + "link,s0,s1,1Gbps,-1us\n", `t.csv:3: delay: "-1us": duration must not be negative`},
		{"missing delay", sw + "link,s0,s1,1Gbps,\n", "t.csv:3: the link has no delay (e.g. 1us)"},
		{"fields", sw + "link,s0,s1,1Gbps\n", `t.csv:3: want "link,A,B,RATE,DELAY", got 4 fields`},
		{"record", "# c\n\nedge,s0,s1\n", `t.csv:3: a line starts with node or link, got "edge"`},
		{"kind", "node,s0,router\n", `t.csv:1: node kind "router": want host or switch`},
		{"defined twice", sw + "node,s0,switch\n", "t.csv:3: node s0 is defined twice (first at line 1); names must be unique"},
		{"bad name", "node,s 0,switch\n", `t.csv:1: node name "s 0" has ' '; names are letters, digits and _ . : / @ + -`},
		{"host name out of order", sw + "node,host1,host\n", "t.csv:3: host host1 is host 0 in file order (hosts are numbered in the order they are listed); rename it or move it"},
		{"switch named like a host", "node,host4,switch\n", "t.csv:1: switch name host4 is how the simulator names a host or a scale-up switch; rename the switch"},
		{"tier on a host", sw + "node,h,host,leaf\n", "t.csv:3: host h has a tier; tiers are for switches"},
		{"server on a switch", "node,s0,switch,,srv\n", "t.csv:1: switch s0 has a server; only hosts belong to servers"},
		{"reserved tier", "node,s0,switch,host\n", `t.csv:1: tier "host" is reserved (the simulator's name for host ports and scale-up switches)`},
		{"servers not together", "node,s0,switch\nnode,a,host,,x\nnode,b,host,,y\nnode,c,host,,x\nlink,a,s0,1Gbps,0\nlink,b,s0,1Gbps,0\nlink,c,s0,1Gbps,0\n", "t.csv:4: host c is in server x, whose other hosts are listed earlier; list a server's hosts together"},
		{"servers of two sizes", "node,s0,switch\nnode,a,host,,x\nnode,b,host,,x\nnode,c,host,,y\nlink,a,s0,1Gbps,0\nlink,b,s0,1Gbps,0\nlink,c,s0,1Gbps,0\n",
			"t.csv:4: server y has 1 host and server x 2; every server must have the same number of hosts"},
		{"some servers", "node,s0,switch\nnode,a,host,,x\nnode,b,host\nlink,a,s0,1Gbps,0\nlink,b,s0,1Gbps,0\n", "t.csv:3: host b has no server while host a has one; give every host a server, or none"},
	}
	for _, c := range cases {
		_, err := ParseCustomCSV("t.csv", strings.NewReader(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

func TestNS3Errors(t *testing.T) {
	const head = "3 1 2\n2\n"
	cases := []struct{ name, text, want string }{
		{"empty", "\n", `n.txt:1: the file is empty: an ns-3 topology starts with "nodes switches links"`},
		{"first line", "3 1\n", `n.txt:1: want "nodes switches links" on the first line, got 2 fields`},
		{"count", "3 x 2\n", `n.txt:1: switches: "x" is not a count`},
		{"too many switches", "3 4 2\n", "n.txt:1: 4 switches among 3 nodes"},
		{"switch limit", "9999999 9999999 2\n", "n.txt:1: 9999999 switches, more than the limit of 131072"},
		{"switch ids", "3 1 2\n1 2\n", "n.txt:2: the first line says 1 switch, this line lists 2 ids"},
		{"switch id range", "3 1 2\n3\n", `n.txt:2: switch id "3" is not a node id (0–2)`},
		{"error rate", head + "0 2 100Gbps 0.001ms 0.01\n", `n.txt:3: error rate "0.01": fabriclab loses no packets at random; set it to 0`},
		{"node range", head + "0 5 100Gbps 0.001ms 0\n", `n.txt:3: node "5" is not a node id (0–2)`},
		{"too few links", head + "0 2 100Gbps 0.001ms 0\n", "n.txt:3: the first line says 2 links, the file has 1"},
		{"too many links", head + "0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n", "n.txt:5: the first line says 2 links; this is one more"},
		{"duplicate", "3 1 2\n2\n0 2 100Gbps 0.001ms 0\n2 0 100Gbps 0.001ms 0\n",
			"n.txt:4: second link between sw2 and host0 (the first is at line 3); parallel links are not modelled: give one link the combined rate"},
		{"self", head + "2 2 100Gbps 0.001ms 0\n0 2 1Gbps 1us 0\n", "n.txt:3: link from node 2 to itself"},
		{"rate", head + "0 2 100 0.001ms 0\n", `n.txt:3: rate: "100": a rate needs a unit (e.g. 400Gbps)`},
		{"host without link", head + "0 2 100Gbps 0.001ms 0\n1 0 100Gbps 0.001ms 0\n", "n.txt:4: link between two hosts (host1, host0); a host links to a switch"},
	}
	for _, c := range cases {
		_, err := ParseNS3("n.txt", strings.NewReader(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// Tiers without names follow the distance from the hosts; named tiers are
// ordered by their lowest switch.
func TestCustomTiers(t *testing.T) {
	text := "node,core,switch,core\nnode,a,switch\nnode,b,switch\nnode,host0,host\nnode,host1,host\n" +
		"link,host0,a,1Gbps,0\nlink,host1,b,1Gbps,0\nlink,a,core,1Gbps,0\nlink,b,core,1Gbps,0\n"
	g, err := ParseCustomCSV("t.csv", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(g.Tiers) != "[tier1 core]" || g.Tier[0] != "core" || g.Tier[1] != "tier1" {
		t.Fatalf("tiers %v %q", g.Tiers, g.Tier)
	}
}

// FuzzParseCustomCSV: any text is a graph that builds or a one-line
// error naming the file and a line.
func FuzzParseCustomCSV(f *testing.F) {
	s := spec("leaf-spine")
	s.Hosts, s.HostsPerLeaf, s.Spines = 8, 4, 2
	f.Add(leafSpineCSV(s))
	f.Add("node,s0,switch,leaf\nnode,host0,host,,a\nlink,host0,s0,1Gbps,1us\n")
	f.Add("node,s0,switch\nlink,s0,s0,1Gbps,1us\n")
	f.Add("# x\n\nnode,a,host\nnode,b,host\nlink,a,b,1Gbps,0\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseCustomCSV("f.csv", strings.NewReader(text))
		checkParsed(t, g, err, "f.csv:")
	})
}

// FuzzParseNS3 is FuzzParseCustomCSV for the ns-3 format.
func FuzzParseNS3(f *testing.F) {
	if b, err := os.ReadFile("testdata/ns3-leafspine.txt"); err == nil {
		f.Add(string(b))
	}
	f.Add("3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n")
	f.Add("3 1 1\n2\n0 2 100Gbps 1us 0\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseNS3("f.txt", strings.NewReader(text))
		checkParsed(t, g, err, "f.txt:")
	})
}

// checkParsed: an error is one line starting with prefix; a graph builds.
func checkParsed(t *testing.T, g *Graph, err error, prefix string) {
	t.Helper()
	if err != nil {
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("error %q", msg)
		}
		return
	}
	if len(g.HostNodes) > 4096 || len(g.Links) > 1<<14 {
		return // big enough; building it proves nothing more
	}
	s := spec("custom")
	s.Graph = g
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatalf("checked graph does not build: %v", err)
	}
	if tp.Hosts > 64 {
		return
	}
	for h := range tp.Hosts {
		for d := range tp.Hosts {
			if h == d {
				continue
			}
			pt := tp.Net.HostPorts[h]
			for n := 0; ; n++ {
				sw, ok := pt.Peer.Owner.(*fabric.Switch)
				if !ok {
					if pt.Peer != tp.Net.HostPorts[d] {
						t.Fatalf("%d→%d delivered to the wrong host", h, d)
					}
					break
				}
				if g := sw.Next[d]; len(g) == 0 || n > len(tp.Net.Switches) {
					t.Fatalf("%d→%d: no route or a loop at %s", h, d, sw.Name())
				}
				pt = sw.Next[d][0]
			}
		}
	}
}

// The shipped three-tier example: 320 hosts under 20 ToRs, 5 pods of 4
// aggregation switches, 16 cores; 4 shortest paths within a pod and 16
// between pods, every host link 100G and every other link 400G.
func TestThreeTierExample(t *testing.T) {
	f, err := os.Open("../examples/three-tier-websearch.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ParseCustomCSV("three-tier-websearch.csv", f)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.HostNodes) != 320 || g.Switches != 56 || len(g.Links) != 320+80+80 || fmt.Sprint(g.Tiers) != "[tor agg core]" {
		t.Fatalf("%d hosts, %d switches, %d links, tiers %v", len(g.HostNodes), g.Switches, len(g.Links), g.Tiers)
	}
	s := spec("custom")
	s.Graph = g
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	paths := func(src, dst int) int {
		// Count shortest paths by following every ECMP choice.
		var walk func(pt *fabric.Port) int
		walk = func(pt *fabric.Port) int {
			sw, ok := pt.Peer.Owner.(*fabric.Switch)
			if !ok {
				return 1
			}
			n := 0
			for _, next := range sw.Next[dst] {
				n += walk(next)
			}
			return n
		}
		return walk(tp.Net.HostPorts[src])
	}
	if n := paths(0, 15); n != 1 {
		t.Fatalf("within a ToR: %d paths", n)
	}
	if n := paths(0, 16); n != 4 {
		t.Fatalf("within a pod: %d paths", n)
	}
	if n := paths(0, 319); n != 16 {
		t.Fatalf("between pods: %d paths", n)
	}
	for _, pt := range tp.Net.Ports {
		want := 400 * units.Gbps
		if pt.Tier == "host" || pt.Peer.Tier == "host" {
			want = 100 * units.Gbps
		}
		if pt.Rate != want {
			t.Fatalf("port %d (%s→%s) at %v", pt.ID, pt.Tier, pt.Peer.Tier, pt.Rate)
		}
	}
}

// An ns-3 header's counts allocate nothing before the file shows its
// links: a 20-byte file claiming a million nodes and four million links
// is refused cheaply.
func TestNS3HeaderDoesNotAllocateTheCounts(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ParseNS3("big.txt", strings.NewReader("1048576 1 4194304\n0\n"))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "the file has 0") {
		t.Fatalf("err = %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("refusing it allocated %d MB", got>>20)
	}
	if _, err := ParseNS3("few.txt", strings.NewReader("5 1 1\n4\n0 4 100Gbps 0.001ms 0\n")); err == nil || !strings.Contains(err.Error(), "cannot be connected") {
		t.Errorf("5 nodes, 1 link: %v", err)
	}
}
