package nslab

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"fabriclab/hosts/inventory"
)

func planOf(t *testing.T, path string, o Options, sets ...string) *Lab {
	t.Helper()
	if o.StateDir == "" {
		o.StateDir = "/run/test-lab"
	}
	l, err := Plan(loadJob(t, path, sets...), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPlanLeafSpine(t *testing.T) {
	l := planOf(t, "testdata/leafspine.yaml", Options{Scale: 1.0 / 5000})
	wantNS := []string{"fl-h0", "fl-h1", "fl-h2", "fl-h3", "fl-leaf0", "fl-leaf1", "fl-spine0", "fl-spine1"}
	if !reflect.DeepEqual(l.Namespaces, wantNS) {
		t.Errorf("namespaces %v, want %v", l.Namespaces, wantNS)
	}
	h0 := l.Hosts[0]
	if h0.DataIP.String() != "10.70.0.2" || h0.Gateway.String() != "10.70.0.1" || h0.MgmtIP.String() != "10.254.0.1" || h0.RootDev != "fl-m0" {
		t.Errorf("host 0: %+v", h0)
	}
	if l.Hosts[3].DataIP.String() != "10.70.0.14" || l.Mgmt.RootIP.String() != "10.254.255.254" || l.Mgmt.Bridge != "fl-mgmt" {
		t.Errorf("host 3 %v, bridge %+v", l.Hosts[3].DataIP, l.Mgmt)
	}
	if len(l.Links) != 8 {
		t.Fatalf("%d links, want 4 host links and 4 uplinks", len(l.Links))
	}
	up := l.Links[4] // leaf0–spine0
	if up.A.NS != "fl-leaf0" || up.A.Dev != "spine0" || up.A.IP.String() != "10.71.0.1" || up.B.NS != "fl-spine0" || up.B.Dev != "leaf0" || up.B.IP.String() != "10.71.0.2" {
		t.Errorf("first uplink %+v", up)
	}
	// Rates and queues: 20 Mb/s everywhere; switch ports at the floor of
	// 64 frames (16MiB / 4 ports / 5000 is 838 B), the NIC 64 frames.
	frame := int64(1500 + 14)
	for _, lk := range l.Links {
		for _, e := range []End{lk.A, lk.B} {
			wantLimit := 64 * frame
			if !e.Switch {
				wantLimit = 64 * frame
			}
			if e.Rate != 20e6 || e.Limit != wantLimit || e.Burst != 2*frame {
				t.Errorf("%s %s: rate %d limit %d burst %d, want 20e6, %d, %d", e.NS, e.Dev, e.Rate, e.Limit, e.Burst, wantLimit, 2*frame)
			}
		}
	}
	routes := routesOf(l)
	// ECMP over both spines to host 2; host 3 pinned to spine1.
	if got := routes["fl-leaf0 10.70.0.10/32"]; got != "route replace 10.70.0.10/32 nexthop via 10.71.0.2 dev spine0 weight 1 nexthop via 10.71.0.6 dev spine1 weight 1" {
		t.Errorf("leaf0 → host 2: %q", got)
	}
	if got := routes["fl-leaf0 10.70.0.14/32"]; got != "route replace 10.70.0.14/32 via 10.71.0.6 dev spine1" {
		t.Errorf("leaf0 → host 3: %q", got)
	}
	if got, ok := routes["fl-leaf0 10.70.0.2/32"]; ok {
		t.Errorf("leaf0 has a route to its own host 0: %q", got)
	}
	if got := routes["fl-spine1 10.70.0.2/32"]; got != "route replace 10.70.0.2/32 via 10.71.0.5 dev leaf0" {
		t.Errorf("spine1 → host 0: %q", got)
	}
	if got := routes["fl-h1 10.70.0.0/16"]; got != "route replace 10.70.0.0/16 via 10.70.0.5 dev eth0 src 10.70.0.6" {
		t.Errorf("host 1's route: %q", got)
	}
}

// routesOf maps "ns dst" to the ip command of each route.
func routesOf(l *Lab) map[string]string {
	m := map[string]string{}
	for _, r := range l.Routes {
		m[r.NS+" "+r.Dst.String()] = routeLine(r)
	}
	return m
}

func TestPlanScaleAndQueues(t *testing.T) {
	l := planOf(t, "testdata/leafspine.yaml", Options{})
	if l.Scale != 0.001 || l.ScaleText != "1/1000" || l.HostRate != 100e6 {
		t.Errorf("auto scale for 100G: %g %s %d", l.Scale, l.ScaleText, l.HostRate)
	}
	l = planOf(t, "testdata/leafspine.yaml", Options{}, "topology.host_link.rate=400Gbps", "topology.fabric_link.rate=800Gbps")
	if l.ScaleText != "1/4000" || l.HostRate != 100e6 || l.FabricRate != 200e6 {
		t.Errorf("auto scale for 400G: %s %d %d", l.ScaleText, l.HostRate, l.FabricRate)
	}
	// A buffer large enough to be above the floor: 1GiB / 4 ports × 1/1000.
	l = planOf(t, "testdata/leafspine.yaml", Options{Scale: 0.001}, "switch.buffer=1GiB")
	if s := l.Switch("leaf0"); s.QueueLimit != (1<<30)/4/1000 || s.Ports != 4 {
		t.Errorf("leaf0 queue %d over %d ports, want %d", s.QueueLimit, s.Ports, (1<<30)/4/1000)
	}
	if _, err := Plan(loadJob(t, "testdata/leafspine.yaml"), Options{Scale: 1e-6, StateDir: "/x"}); err == nil ||
		!strings.Contains(err.Error(), "below the lab's 1Mbps: use a larger --scale") {
		t.Errorf("a scale too small: %v", err)
	}
}

func TestPlanDModKPicksOneSpine(t *testing.T) {
	l := planOf(t, "testdata/leafspine.yaml", Options{}, "switch.forwarding=d-mod-k")
	routes := routesOf(l)
	// d-mod-k: host h leaves a leaf through spine h mod 2.
	if got := routes["fl-leaf1 10.70.0.2/32"]; got != "route replace 10.70.0.2/32 via 10.71.0.10 dev spine0" {
		t.Errorf("leaf1 → host 0: %q", got)
	}
	if got := routes["fl-leaf1 10.70.0.6/32"]; got != "route replace 10.70.0.6/32 via 10.71.0.14 dev spine1" {
		t.Errorf("leaf1 → host 1: %q", got)
	}
	if got := routes["fl-leaf0 10.70.0.10/32"]; got != "route replace 10.70.0.10/32 via 10.71.0.2 dev spine0" {
		t.Errorf("leaf0 → host 2: %q", got)
	}
	if s := l.Switch("leaf0"); s.Forwarding != "d-mod-k" {
		t.Errorf("leaf0 forwards with %s", s.Forwarding)
	}
}

func TestPlanFatTreeAndRail(t *testing.T) {
	ft := planOf(t, "testdata/fattree.yaml", Options{Prefix: "flt0000a-"})
	rail := planOf(t, "testdata/rail.yaml", Options{Prefix: "flt0000a-"})
	for _, l := range []*Lab{ft, rail} {
		devs := map[string]map[string]bool{}
		for _, lk := range l.Links {
			for _, e := range []End{lk.A, lk.B} {
				if len(e.Dev) > 15 || devs[e.NS][e.Dev] {
					t.Errorf("%s: interface %q in %s is too long or twice", l.Topology, e.Dev, e.NS)
				}
				if devs[e.NS] == nil {
					devs[e.NS] = map[string]bool{}
				}
				devs[e.NS][e.Dev] = true
			}
		}
		// Every switch routes to every host it does not attach to.
		n := map[string]int{}
		for _, r := range l.Routes {
			n[r.NS]++
		}
		for _, s := range l.Switches {
			if n[s.NS] < len(l.Hosts)-s.Ports {
				t.Errorf("%s: %s has %d routes for %d hosts", l.Topology, s.Name, n[s.NS], len(l.Hosts))
			}
		}
	}
	if len(ft.Hosts) != 16 || len(ft.Switches) != 20 || len(rail.Hosts) != 8 || len(rail.Switches) != 4 {
		t.Errorf("fat-tree %d hosts %d switches, rail %d hosts %d switches", len(ft.Hosts), len(ft.Switches), len(rail.Hosts), len(rail.Switches))
	}
	down := 0
	for _, lk := range ft.Links {
		if lk.Down {
			down++
			if lk.A.Node != "edge0-0" || lk.B.Node != "agg0-0" {
				t.Errorf("down link %s–%s", lk.A.Node, lk.B.Node)
			}
		}
	}
	if down != 1 {
		t.Errorf("%d links down, want the one failing at 0", down)
	}
	// edge0-0 reaches the other pods through agg0-1 only.
	for _, r := range ft.Routes {
		if r.NS == "flt0000a-edge0-0" && r.Dst.Addr() == ft.Hosts[15].DataIP {
			if len(r.Via) != 1 || r.Via[0].Dev != "agg0-1" {
				t.Errorf("edge0-0 → host 15 via %+v", r.Via)
			}
		}
	}
	wantNotes := map[*Lab][]string{
		ft:   {"after time 0 is not emulated", "switch.forwarding adaptive is not emulated"},
		rail: {"topology.scale_up is not built"},
	}
	for l, want := range wantNotes {
		all := strings.Join(l.Notes, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: notes %q lack %q", l.Topology, all, w)
			}
		}
	}
}

func TestPlanRefusesWhatDoesNotFit(t *testing.T) {
	job := loadJob(t, "testdata/leafspine.yaml")
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{MgmtSubnet: netip.MustParsePrefix("10.9.0.0/30")}, "do not fit in the management subnet"},
		{Options{MgmtSubnet: netip.MustParsePrefix("10.70.8.0/24")}, "overlaps the lab's data subnets"},
		{Options{Prefix: "Lab"}, "may hold only"},
		{Options{Prefix: "waytoolongprefix-"}, "longer than 11"},
		{Options{Scale: 2}, "not in (0, 1]"},
		{Options{Shaper: "netem"}, "tbf or htb"},
	} {
		c.o.StateDir = "/x"
		if _, err := Plan(job, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	big := loadJob(t, "testdata/tiny.yaml", "topology.hosts=2048", "topology.hosts_per_leaf=32")
	if _, err := Plan(big, Options{StateDir: "/x"}); err == nil || !strings.Contains(err.Error(), "at most 1024 hosts") {
		t.Errorf("2048 hosts: %v", err)
	}
}

func TestParseScale(t *testing.T) {
	for in, want := range map[string]float64{"1/1000": 0.001, "0.001": 0.001, "1e-3": 0.001, "auto": 0, "1": 1, " 1/4000 ": 0.00025} {
		if got, err := ParseScale(in); err != nil || got != want {
			t.Errorf("ParseScale(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "2", "-1/1000", "1/0", "fast", ""} {
		if _, err := ParseScale(in); err == nil {
			t.Errorf("ParseScale(%q) accepted", in)
		}
	}
	for v, want := range map[float64]string{0.001: "1/1000", 0.00025: "1/4000", 1: "1", 0.3: "0.3", 0: "auto"} {
		if got := FormatScale(v); got != want {
			t.Errorf("FormatScale(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestAgentCommand(t *testing.T) {
	l := planOf(t, "testdata/leafspine.yaml", Options{StateDir: "/run/fabriclab/lab"})
	got := strings.Join(l.AgentCommand(l.Hosts[1], "/usr/bin/fabriclab"), " ")
	want := "ip netns exec fl-h1 /usr/bin/fabriclab agent --listen 10.254.0.2:7470 --data-ip 10.70.0.6 --token-file /run/fabriclab/lab/token --allow 10.70.0.0/16"
	if got != want {
		t.Errorf("agent command\n got %s\nwant %s", got, want)
	}
}

// The agents file is what hosts/inventory reads.
func TestAgentsFileReadsBack(t *testing.T) {
	l := planOf(t, "testdata/leafspine.yaml", Options{Scale: 1.0 / 5000, StateDir: "/run/lab"})
	inv, err := inventory.Parse("/run/lab/agents.yaml", agentsYAML(l))
	if err != nil {
		t.Fatal(err)
	}
	if inv.TokenFile != "/run/lab/token" || inv.Scale != 1.0/5000 || len(inv.Agents) != 4 {
		t.Fatalf("inventory %+v", inv)
	}
	for h, p := range inv.HostAgent() {
		a := inv.Agents[p.Agent]
		if a.Address != l.Hosts[h].AgentAddress(DefaultAgentPort) || p.Host.DataIP != l.Hosts[h].DataIP {
			t.Errorf("host %d: agent %s data %s", h, a.Address, p.Host.DataIP)
		}
	}
}
