package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"fabriclab/topo"
	"fabriclab/transport/roce"
	"fabriclab/units"
)

// minimal is the smallest valid scenario: everything else is defaulted.
const minimal = `topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}
workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}
`

func mustParse(t *testing.T, text string) *File {
	t.Helper()
	f, err := Parse("t.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func TestDefaults(t *testing.T) {
	f := mustParse(t, minimal)
	if len(f.Variants) != 1 || f.Variants[0].Name != "base" {
		t.Fatalf("variants = %+v, want one named base", f.Variants)
	}
	s := f.Variants[0].Spec
	want := Defaults()
	want.Name = "t"
	want.Topology.Hosts, want.Topology.HostsPerLeaf, want.Topology.Spines = 32, 8, 4
	want.Workload = Workload{Kind: "alltoall", Algorithm: "direct", Ranks: 32, QPs: 1, Iterations: 1,
		Sizes: Sizes{From: 8 * units.MB, To: 64 * units.MB, Factor: 2}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("spec =\n%+v\nwant\n%+v", s, want)
	}
	// Spot-check the documented values so a change to Defaults is deliberate.
	d := Defaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"topology.kind", d.Topology.Kind, "leaf-spine"},
		{"host_link", d.Topology.HostLink, Link{400 * units.Gbps, units.Microsecond}},
		{"fabric_link", d.Topology.FabricLink, Link{400 * units.Gbps, units.Microsecond}},
		{"mtu", d.NIC.MTU, units.Size(4096)},
		{"overhead", d.NIC.Overhead, units.Size(82)},
		{"ack_every", d.NIC.AckEvery, 1},
		{"burst", d.NIC.Burst, 1},
		{"rto", d.NIC.RTO, units.Millisecond},
		{"priorities", [2]int{d.NIC.DataPriority, d.NIC.ControlPriority}, [2]int{3, 6}},
		{"buffer", d.Switch.Buffer, 32 * units.MiB},
		{"ecn", d.Switch.ECN, ECN{true, 50 * units.KB, 200 * units.KB, 0.2, 100 * units.Gbps, "enqueue"}},
		{"pfc", d.Switch.PFC, PFC{true, 512 * units.KiB, 504 * units.KiB, 0, "static", 0.125, 0, Watchdog{}}},
		{"forwarding", d.Switch.Forwarding, "ecmp"},
		{"transport", d.Transport, Transport{Kind: "roce", DCQCN: DCQCN{Preset: "default"}}},
		{"sim", d.Sim, SimOpts{TimeLimit: units.Second, MemoryLimit: 8 * units.GiB, ExplainSlowdown: 1.5, Engine: "packet", FlowAbove: 256 * units.MiB}},
		{"seed", d.Seed, uint64(1)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("default %s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	// Defaults must be fresh values.
	a, b := Defaults(), Defaults()
	a.Workload.Sizes.List = append(a.Workload.Sizes.List, 1)
	if len(b.Workload.Sizes.List) != 0 {
		t.Error("Defaults shares state between calls")
	}
}

func TestUnits(t *testing.T) {
	f := mustParse(t, minimal+`
nic: {mtu: 9000B, overhead: 0.1KB, rto: 250us, max_inflight: 64KiB}
switch: {buffer: 16MB, ecn: {kmin: 5KB, kmax: 200KB, reference_rate: 25Gbps}}
sim: {time_limit: 2.5ms}
`)
	s := f.Base
	if s.NIC.MTU != 9000 || s.NIC.Overhead != 100 || s.NIC.RTO != 250*units.Microsecond || s.NIC.MaxInflight != 64*1024 {
		t.Errorf("nic = %+v", s.NIC)
	}
	if s.Switch.Buffer != 16e6 || s.Switch.ECN.KMin != 5000 || s.Switch.ECN.KMax != 200000 || s.Switch.ECN.ReferenceRate != 25e9 {
		t.Errorf("switch = %+v", s.Switch)
	}
	// Keys not written keep their defaults, also inside a written mapping.
	if !s.Switch.ECN.Enabled || s.Switch.ECN.PMax != 0.2 || !s.Switch.PFC.Enabled {
		t.Errorf("defaults lost under a written mapping: %+v", s.Switch)
	}
	if s.Sim.TimeLimit != 2500*units.Microsecond {
		t.Errorf("time_limit = %v", s.Sim.TimeLimit)
	}
	if s.NIC.AckEvery != 1 || s.NIC.DataPriority != 3 {
		t.Errorf("nic defaults lost: %+v", s.NIC)
	}

	// Scalars of other YAML types where text or units are expected.
	g := mustParse(t, minimal+"name: 2024\nseed: 0x10\nnic: {mtu: 4e3, rto: \"2ms\"}\nswitch: {ecn: {pmax: 1}}\n")
	if g.Base.Name != "2024" || g.Base.Seed != 16 || g.Base.NIC.MTU != 4000 || g.Base.NIC.RTO != 2*units.Millisecond || g.Base.Switch.ECN.PMax != 1 {
		t.Errorf("got name %q seed %d mtu %v rto %v pmax %v", g.Base.Name, g.Base.Seed, g.Base.NIC.MTU, g.Base.NIC.RTO, g.Base.Switch.ECN.PMax)
	}
}

// marker is written at the end of the line an error must point at.
const marker = "# <-"

var posRE = regexp.MustCompile(`^(.+?):(\d+):(\d+): `)

// checkError asserts the conventions every scenario error follows: one
// line, "file:line:col: " first, the key named.
func checkError(t *testing.T, name, text string, err error, key string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one about %s", key)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	m := posRE.FindStringSubmatch(msg)
	if m == nil || m[1] != name {
		t.Fatalf("error does not start with %s:line:col: %q", name, msg)
	}
	if key != "" {
		if !strings.Contains(msg, key) {
			t.Errorf("error does not name %s: %q", key, msg)
		}
		var e *Error
		if !errors.As(err, &e) || e.Key != key {
			t.Errorf("Error.Key = %+v, want %s", e, key)
		}
	}
	want := 0
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, marker) {
			want = i + 1
		}
	}
	if want == 0 {
		t.Fatalf("test case has no %q marker", marker)
	}
	if got, _ := strconv.Atoi(m[2]); got != want {
		t.Errorf("error at line %s, want %d: %q", m[2], want, msg)
	}
}

func TestValidationErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.txt", "0 1 1MB 0\n1 0 1MB 10us\n")
	write("bad.txt", "0 1 1MB\n0 0 1MB\n")
	write("badcdf.txt", "100 0.5\n50 1\n")
	write("far.txt", "0 1 1MB\n# comment\n0 99 1MB\n")
	write("empty.txt", "# nothing\n")
	write("late.txt", "0 1 1MB 0\n1 0 1MB 999ms\n# comment\n2 3 1MB 1s\n")

	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	const work = "workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}\n"
	cases := []struct {
		name, key, text string
	}{
		// Reading: keys, shapes, units.
		{"unknown top key", "foo", minimal + "foo: 1 # <-\n"},
		{"incast keys on another kind", "workload.senders", topo + "workload:\n  kind: any-to-any\n  clients: 2\n  servers: 2\n  duration: 1ms\n  senders: 3 # <-\n"},
		{"dcqcn detail value", "transport.dcqcn.first_cnp_cut", minimal + "transport:\n  dcqcn: {first_cnp_cut: later} # <-\n"},
		{"control wire too small", "nic.control_wire", minimal + "nic:\n  control_wire: 8B # <-\n"},
		{"cnp mode", "nic.cnp", minimal + "nic:\n  cnp: flag # <-\n"},
		{"until before at", "topology.failures[0].until", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures: [{from: leaf0, to: spine0, at: 20us, until: 10us}] # <-\n"},
		{"outages of one link overlap", "topology.failures[1]", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures:\n    - {from: leaf0, to: spine0, at: 5us, until: 10us}\n    - {from: spine0, to: leaf0, at: 7us, until: 12us} # <-\n"},
		{"a later outage of a link that stays down", "topology.failures[1]", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures:\n    - {from: leaf0, to: spine0, at: 5us}\n    - {from: leaf0, to: spine0, at: 1ms, until: 2ms} # <-\n"},
		{"outages of one link touch", "topology.failures[1]", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures:\n    - {from: leaf0, to: spine0, at: 200us, until: 300us}\n    - {from: leaf0, to: spine0, at: 100us, until: 200us} # <-\n"},
		{"flaps too far apart", "topology.failures[0].period", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures: [{from: leaf0, to: spine0, at: 20us, until: 50us, count: 10000, period: 1000s}] # <-\n"},
		{"flap overlaps", "topology.failures[0].period", "workload: {kind: alltoall, sizes: {list: [1MB]}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  failures: [{from: leaf0, to: spine0, at: 20us, until: 50us, count: 3, period: 20us}] # <-\n"},
		{"storm without pfc", "topology.pfc_storms", "workload: {kind: alltoall, sizes: {list: [1MB]}}\nswitch: {pfc: {enabled: false}}\ntopology:\n  hosts: 32\n  hosts_per_leaf: 8\n  pfc_storms: [{host: 3, at: 0, until: 1ms}] # <-\n"},
		{"watchdog action", "switch.pfc.watchdog.action", minimal + "switch:\n  pfc: {watchdog: {detect: 100us, restore: 200us, action: reboot}} # <-\n"},
		{"probe to itself", "probes[0].to", minimal + "probes:\n  - {from: 3, to: 3, rate: 1Gbps} # <-\n"},
		{"probe off the topology", "probes[1].to", minimal + "probes:\n  - {from: 0, to: 1, rate: 1Gbps}\n  - {from: 0, to: 32, rate: 1Gbps} # <-\n"},
		{"probe without a rate", "probes[0].rate", minimal + "probes:\n  - {from: 0, to: 1} # <-\n"},
		{"probe datagram too large", "probes[0].size", minimal + "probes:\n  - {from: 0, to: 1, rate: 1Gbps, size: 64KiB} # <-\n"},
		{"unknown nested key", "nic.mtuu", minimal + "nic:\n  mtuu: 4KB # <-\n"},
		{"bad rate unit", "topology.host_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  host_link: {rate: 400Gbs} # <-\n"},
		{"rate in bytes", "topology.fabric_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  fabric_link:\n    rate: 50GB/s # <-\n"},
		{"bad size unit", "nic.mtu", minimal + "nic:\n  mtu: 4KBB # <-\n"},
		{"duration without unit", "topology.host_link.delay", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  host_link: {delay: 5} # <-\n"},
		{"negative duration", "sim.time_limit", minimal + "sim:\n  time_limit: -1s # <-\n"},
		{"not an integer", "topology.spines", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: many # <-\n"},
		{"fraction for integer", "topology.spines", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 2.5 # <-\n"},
		{"not a bool", "sim.record_flows", minimal + "sim:\n  record_flows: yes # <-\n"},
		{"not a number", "switch.ecn.pmax", minimal + "switch:\n  ecn:\n    pmax: high # <-\n"},
		{"nan", "switch.ecn.pmax", minimal + "switch:\n  ecn:\n    pmax: .nan # <-\n"},
		{"scalar for mapping", "nic", minimal + "nic: 5 # <-\n"},
		{"list for mapping", "nic", minimal + "nic: [1, 2] # <-\n"},
		{"empty mapping", "nic", minimal + "nic: # <-\n"},
		{"empty scalar", "nic.mtu", minimal + "nic:\n  mtu: # <-\n"},
		{"scalar for list", "workload.sizes.list", topo + "workload:\n  kind: alltoall\n  sizes:\n    list: 1MB # <-\n"},
		{"tag", "nic.mtu", minimal + "nic:\n  mtu: !!str 4KB # <-\n"},
		{"duplicate key", "nic", minimal + "nic: {mtu: 4KB}\nnic: {mtu: 4KB} # <-\n"},
		{"duplicate nested key", "nic.mtu", minimal + "nic:\n  mtu: 4KB\n  mtu: 4KB # <-\n"},
		{"negative seed", "seed", minimal + "seed: -1 # <-\n"},
		{"key not a name", "", minimal + "nic:\n  [a]: 1 # <-\n"},
		{"seed too large", "seed", minimal + "seed: 99999999999999999999999 # <-\n"},
		{"bits for a size", "nic.mtu", minimal + "nic:\n  mtu: 8Kb # <-\n"},
		{"fractional bytes", "nic.mtu", minimal + "nic:\n  mtu: 4096.5B # <-\n"},
		{"upper-case duration", "nic.rto", minimal + "nic:\n  rto: 1MS # <-\n"},
		{"rate in upper-case bytes", "topology.host_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  host_link: {rate: 400GBPS} # <-\n"},
		{"integer too large", "topology.spines", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 18446744073709551615 # <-\n"},

		// Topology.
		{"unknown topology", "topology.kind", work + "topology:\n  kind: torus # <-\n"},
		{"leaf-spine without hosts", "topology.hosts", work + "topology: # <-\n  hosts_per_leaf: 8\n"},
		{"zero hosts per leaf", "topology.hosts_per_leaf", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 0 # <-\n"},
		{"hosts not whole leaves", "topology.hosts", work + "topology:\n  hosts: 30 # <-\n  hosts_per_leaf: 8\n"},
		{"negative spines", "topology.spines", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: -1 # <-\n"},
		{"no spines, no oversubscription", "topology.oversubscription", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 0 # <-\n"},
		{"tiny oversubscription", "topology.oversubscription", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 1e-300 # <-\n"},
		{"huge oversubscription", "topology.oversubscription", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 1.5e4 # <-\n"},
		{"oversubscription beyond float64", "topology.oversubscription", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 1e400 # <-\n"},
		{"odd k", "topology.k", work + "topology:\n  kind: fat-tree\n  k: 5 # <-\n"},
		{"k missing", "topology.k", work + "topology: # <-\n  kind: fat-tree\n"},
		{"huge k", "topology.k", work + "topology:\n  kind: fat-tree\n  k: 1000 # <-\n"},
		{"rail without servers", "topology.servers", work + "topology: # <-\n  kind: rail\n  gpus_per_server: 8\n"},
		{"rail without gpus", "topology.gpus_per_server", work + "topology:\n  kind: rail\n  servers: 4\n  gpus_per_server: 0 # <-\n"},
		{"rail groups", "topology.servers_per_group", work + "topology:\n  kind: rail\n  servers: 4\n  gpus_per_server: 8\n  servers_per_group: 3 # <-\n"},
		{"zero host rate", "topology.host_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  host_link:\n    rate: 0Gbps # <-\n"},
		{"host rate below a kilobit", "topology.host_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  host_link:\n    rate: 0.5bps # <-\n"},
		{"fabric rate above 100 Tbps", "topology.fabric_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  fabric_link: {rate: 1e17bps} # <-\n"},
		{"scale-up rate below a kilobit", "topology.scale_up.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  gpus_per_server: 4\n  scale_up: {rate: 999bps} # <-\n"},
		{"zero fabric rate", "topology.fabric_link.rate", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  fabric_link: {rate: 0bps} # <-\n"},

		// NIC.
		{"tiny mtu", "nic.mtu", minimal + "nic:\n  mtu: 32B # <-\n"},
		{"huge mtu", "nic.mtu", minimal + "nic:\n  mtu: 1MiB # <-\n"},
		{"ack_every 0", "nic.ack_every", minimal + "nic:\n  ack_every: 0 # <-\n"},
		{"rto 0", "nic.rto", minimal + "nic:\n  rto: 0 # <-\n"},
		{"rto below 1us", "nic.rto", minimal + "nic:\n  rto: 999ns # <-\n"},
		{"burst 0", "nic.burst", minimal + "nic:\n  burst: 0 # <-\n"},
		{"max_inflight below mtu", "nic.max_inflight", minimal + "nic:\n  max_inflight: 1KB # <-\n"},
		{"priority 8", "nic.data_priority", minimal + "nic:\n  data_priority: 8 # <-\n"},
		{"negative priority", "nic.control_priority", minimal + "nic:\n  control_priority: -1 # <-\n"},

		// Switch.
		{"zero buffer", "switch.buffer", minimal + "switch:\n  buffer: 0B # <-\n"},
		{"kmin above kmax", "switch.ecn.kmin", minimal + "switch:\n  ecn:\n    kmin: 1MB # <-\n    kmax: 100KB\n"},
		{"pmax above 1", "switch.ecn.pmax", minimal + "switch:\n  ecn: {pmax: 1.5} # <-\n"},
		{"xon above xoff", "switch.pfc.xon", minimal + "switch:\n  pfc:\n    xoff: 100KB\n    xon: 200KB # <-\n"},
		{"xon above inherited xoff", "switch.pfc.xon", minimal + "switch:\n  pfc:\n    xon: 1MB # <-\n"},
		{"xoff beyond buffer", "switch.pfc.xoff", minimal + "switch:\n  buffer: 1MB\n  pfc:\n    xoff: 2MB # <-\n    xon: 1KB\n"},
		{"unknown forwarding", "switch.forwarding", minimal + "switch:\n  forwarding: spray-all # <-\n"},

		// Transport.
		{"unknown transport", "transport.kind", minimal + "transport:\n  kind: quic # <-\n"},
		{"homa knob bad while roce", "transport.homa.max_resends", minimal + "transport:\n  homa:\n    max_resends: -1 # <-\n"},
		{"homa overcommit 9", "transport.homa.overcommit", minimal + "transport:\n  kind: homa\n  homa:\n    overcommit: 9 # <-\n"},
		{"homa fifo fraction 1", "transport.homa.fifo_grant_fraction", minimal + "transport:\n  kind: homa\n  homa:\n    fifo_grant_fraction: 1 # <-\n"},
		{"response size neither size nor same", "workload.response_size", "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload:\n  kind: messages\n  size_dist: w5\n  load: 0.1\n  duration: 1ms\n  response_size: often # <-\n"},
		{"flow engine with homa", "sim.engine", minimal + "transport: {kind: homa}\nsim:\n  engine: flow # <-\n"},
		{"more parts than hosts", "sim.partitions", "topology: {hosts: 4, hosts_per_leaf: 2}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim:\n  partitions: 5 # <-\n"},
		{"te with sprayed uet", "switch.forwarding", minimal + "switch:\n  forwarding: te # <-\ntransport: {kind: uet}\n"},
		{"te per tier", "switch.forwarding_tiers[0].forwarding", minimal + "switch:\n  forwarding_tiers:\n    - {tier: leaf, forwarding: te} # <-\n"},
		{"te with homa", "switch.forwarding", minimal + "switch:\n  forwarding: te # <-\ntransport: {kind: homa}\n"},
		{"unknown te method", "switch.te.method", minimal + "switch:\n  te: {method: ilp} # <-\n"},
		{"unknown entropy", "nic.entropy", minimal + "nic:\n  entropy: random # <-\n"},
		{"qp-aware with homa", "nic.entropy", minimal + "nic:\n  entropy: qp-aware # <-\ntransport: {kind: homa}\n"},
		{"qp-aware with adaptive", "nic.entropy", minimal + "nic:\n  entropy: qp-aware # <-\nswitch: {forwarding: adaptive}\n"},
		{"unknown cc", "transport.cc", minimal + "transport:\n  cc: timely # <-\n"},
		{"cc on homa", "transport.cc", minimal + "transport:\n  kind: homa\n  cc: hpcc # <-\n"},
		{"hpcc eta above 1", "transport.hpcc.eta", minimal + "transport:\n  cc: hpcc\n  hpcc:\n    eta: 1.5 # <-\n"},
		{"hpcc min rate above the link", "transport.hpcc.min_rate", minimal + "transport:\n  cc: hpcc\n  hpcc:\n    min_rate: 1Tbps # <-\n"},
		{"hpcc negative base rtt", "transport.hpcc.base_rtt", minimal + "transport:\n  hpcc:\n    base_rtt: -1us # <-\n"},
		{"tcp unknown connections", "transport.tcp.connections", minimal + "transport:\n  kind: dctcp\n  tcp:\n    connections: many # <-\n"},
		{"tcp pool without size", "transport.tcp.pool_size", minimal + "transport:\n  kind: tcp\n  tcp: # <-\n    connections: pool\n"},
		{"tcp pool size without pool", "transport.tcp.pool_size", minimal + "transport:\n  kind: tcp\n  tcp:\n    pool_size: 4 # <-\n"},
		{"tcp g above 1", "transport.tcp.g", minimal + "transport:\n  kind: dctcp\n  tcp:\n    g: 2 # <-\n"},
		{"unknown preset", "transport.dcqcn.preset", minimal + "transport:\n  dcqcn:\n    preset: fast # <-\n"},
		{"alpha_g 0", "transport.dcqcn.alpha_g", minimal + "transport:\n  dcqcn:\n    alpha_g: 0 # <-\n"},
		{"initial_alpha above 1", "transport.dcqcn.initial_alpha", minimal + "transport:\n  dcqcn:\n    initial_alpha: 1.5 # <-\n"},
		{"min_decrease_factor 0", "transport.dcqcn.min_decrease_factor", minimal + "transport:\n  dcqcn: {min_decrease_factor: 0} # <-\n"},
		{"alpha_interval 0", "transport.dcqcn.alpha_interval", minimal + "transport:\n  dcqcn:\n    alpha_interval: 0us # <-\n"},
		{"increase_interval 0", "transport.dcqcn.increase_interval", minimal + "transport:\n  dcqcn:\n    increase_interval: 0s # <-\n"},
		{"min_rate 0", "transport.dcqcn.min_rate", minimal + "transport:\n  dcqcn:\n    min_rate: 0bps # <-\n"},
		{"min_rate above line rate", "transport.dcqcn.min_rate", minimal + "transport:\n  dcqcn:\n    min_rate: 1Tbps # <-\n"},
		{"negative threshold", "transport.dcqcn.threshold", minimal + "transport:\n  dcqcn:\n    threshold: -1 # <-\n"},
		{"bad override unit", "transport.dcqcn.ai_rate", minimal + "transport:\n  dcqcn:\n    ai_rate: 5MB # <-\n"},
		{"decrease_coefficient 0", "transport.dcqcn.decrease_coefficient", minimal + "transport:\n  dcqcn:\n    decrease_coefficient: 0 # <-\n"},
		{"decrease_coefficient above 1", "transport.dcqcn.decrease_coefficient", minimal + "transport:\n  dcqcn:\n    decrease_coefficient: 1.01 # <-\n"},

		// Workload.
		{"no workload kind", "workload.kind", topo + "workload: {sizes: {from: 1MB, to: 2MB}} # <-\n"},
		{"unknown workload", "workload.kind", topo + "workload:\n  kind: broadcasting # <-\n"},
		{"zero qps", "workload.qps", topo + "workload:\n  kind: alltoall\n  qps: 0 # <-\n  sizes: {list: [1MB]}\n"},
		{"root out of range", "workload.root", topo + "workload:\n  kind: broadcast\n  root: 40 # <-\n  sizes: {list: [1MB]}\n"},
		{"negative message size", "workload.message_size", topo + "workload:\n  kind: allreduce\n  message_size: -1MB # <-\n  sizes: {list: [1MB]}\n"},
		{"qps on a pattern", "workload.kind", topo + "workload:\n  kind: permutation # <-\n  qps: 2\n  sizes: {list: [1MB]}\n"},
		{"unknown placement", "workload.placement", topo + "workload:\n  kind: alltoall\n  placement: diagonal # <-\n  sizes: {list: [1MB]}\n"},
		{"placement list length", "workload.placement_hosts", topo + "workload:\n  kind: alltoall\n  ranks: 3\n  placement: list\n  placement_hosts: [0, 1] # <-\n  sizes: {list: [1MB]}\n"},
		{"placement list unknown host", "workload.placement_hosts", topo + "workload:\n  kind: alltoall\n  ranks: 2\n  placement: list\n  placement_hosts: [0, 99] # <-\n  sizes: {list: [1MB]}\n"},
		{"placement list twice", "workload.placement_hosts", topo + "workload:\n  kind: alltoall\n  ranks: 2\n  placement: list\n  placement_hosts: [3, 3] # <-\n  sizes: {list: [1MB]}\n"},
		{"ranks per server too many", "workload.ranks_per_server", "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4, gpus_per_server: 4}\nworkload:\n  kind: alltoall\n  ranks_per_server: 5 # <-\n  sizes: {list: [1MB]}\n"},
		{"placement on a pattern", "workload.placement", topo + "workload:\n  kind: permutation\n  placement: spread # <-\n  sizes: {list: [1MB]}\n"},
		{"server across leaves", "topology.gpus_per_server", "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4, gpus_per_server: 3} # <-\nworkload: {kind: alltoall, sizes: {list: [1MB]}}\n"},
		{"wrong algorithm", "workload.algorithm", topo + "workload:\n  kind: alltoall\n  algorithm: ring # <-\n  sizes: {list: [1MB]}\n"},
		{"algorithm for permutation", "workload.algorithm", topo + "workload:\n  kind: permutation\n  algorithm: ring # <-\n  sizes: {list: [1MB]}\n"},
		{"ranks above hosts", "workload.ranks", topo + "workload:\n  kind: alltoall\n  ranks: 33 # <-\n  sizes: {list: [1MB]}\n"},
		{"negative ranks", "workload.ranks", topo + "workload:\n  kind: alltoall\n  ranks: -2 # <-\n  sizes: {list: [1MB]}\n"},
		{"one rank", "workload.ranks", topo + "workload:\n  kind: allreduce\n  ranks: 1 # <-\n  sizes: {list: [1MB]}\n"},
		{"permutation one host", "workload.ranks", topo + "workload:\n  kind: permutation\n  ranks: 1 # <-\n  sizes: {list: [1MB]}\n"},
		{"both size forms", "workload.sizes", topo + "workload:\n  kind: alltoall\n  sizes: {from: 1MB, to: 2MB, list: [1MB]} # <-\n"},
		{"no sizes", "workload.sizes", topo + "workload: # <-\n  kind: alltoall\n"},
		{"zero in list", "workload.sizes.list[1]", topo + "workload:\n  kind: alltoall\n  sizes:\n    list: [1MB, 0B] # <-\n"},
		{"no from", "workload.sizes.from", topo + "workload:\n  kind: alltoall\n  sizes: # <-\n    to: 8MB\n"},
		{"to below from", "workload.sizes.to", topo + "workload:\n  kind: alltoall\n  sizes:\n    from: 8MB\n    to: 1MB # <-\n"},
		{"factor 1", "workload.sizes.factor", topo + "workload:\n  kind: alltoall\n  sizes:\n    from: 1MB\n    to: 8MB\n    factor: 1 # <-\n"},
		{"file for a collective", "workload.file", topo + "workload:\n  kind: alltoall\n  file: good.txt # <-\n  sizes: {list: [1MB]}\n"},
		{"flows without file", "workload.file", topo + "workload: # <-\n  kind: flows\n"},
		{"flows file missing", "workload.file", topo + "workload:\n  kind: flows\n  file: nope.txt # <-\n"},
		{"flows file bad line", "workload.file", topo + "workload:\n  kind: flows\n  file: bad.txt # <-\n"},
		{"flows host out of range", "workload.file", topo + "workload:\n  kind: flows\n  file: far.txt # <-\n"},
		{"flow starts at the time limit", "workload.file", topo + "workload:\n  kind: flows\n  file: late.txt # <-\n"},
		{"flows file empty", "workload.file", topo + "workload:\n  kind: flows\n  file: empty.txt # <-\n"},
		{"flows file is a directory", "workload.file", topo + "workload:\n  kind: flows\n  file: . # <-\n"},
		{"messages without size_dist", "workload.size_dist", topo + "workload: # <-\n  kind: messages\n  load: 0.5\n  duration: 1ms\n"},
		{"messages unknown short name", "workload.size_dist", topo + "workload:\n  kind: messages\n  size_dist: w9 # <-\n  load: 0.5\n  duration: 1ms\n"},
		{"messages bad cdf", "workload.size_dist", topo + "workload:\n  kind: messages\n  size_dist: badcdf.txt # <-\n  load: 0.5\n  duration: 1ms\n"},
		{"messages load 0", "workload.load", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 0 # <-\n  duration: 1ms\n"},
		{"messages load above 1", "workload.load", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 1.5 # <-\n  duration: 1ms\n"},
		{"messages no duration", "workload.duration", topo + "workload: # <-\n  kind: messages\n  size_dist: w5\n  load: 0.5\n"},
		{"messages with sizes", "workload.sizes", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 0.5\n  duration: 1ms\n  sizes: {list: [1MB]} # <-\n"},
		{"messages unknown pattern", "workload.pattern", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 0.5\n  duration: 1ms\n  pattern: incast # <-\n"},
		{"messages log2 with count", "workload.bucket_count", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 0.5\n  duration: 1ms\n  buckets: log2\n  bucket_count: 5 # <-\n"},
		{"messages too many", "workload.duration", topo + "workload:\n  kind: messages\n  size_dist: w1\n  load: 0.9\n  duration: 1s # <-\n"},
		{"messages with a flow file", "workload.file", topo + "workload:\n  kind: messages\n  size_dist: w5\n  load: 0.5\n  duration: 1ms\n  file: good.txt # <-\n"},
		{"messages responses overload", "workload.response_size", topo + "workload:\n  kind: messages\n  size_dist: w1\n  load: 0.6\n  duration: 100us\n  response_size: 2KB # <-\n"},
		{"messages negative response", "workload.response_size", topo + "workload:\n  kind: messages\n  size_dist: w1\n  load: 0.6\n  duration: 100us\n  response_size: -2KB # <-\n"},
		{"size_dist for a collective", "workload.size_dist", topo + "workload:\n  kind: alltoall\n  size_dist: w5 # <-\n  sizes: {list: [1MB]}\n"},
		{"incast no senders", "workload.senders", topo + "workload: # <-\n  kind: incast\n  sizes: {list: [1MB]}\n"},
		{"incast target outside", "workload.target", topo + "workload:\n  kind: incast\n  senders: 4\n  target: 32 # <-\n  sizes: {list: [1MB]}\n"},
		{"incast too many senders", "workload.senders", topo + "workload:\n  kind: incast\n  senders: 32 # <-\n  sizes: {list: [1MB]}\n"},

		// Sim.
		{"zero time limit", "sim.time_limit", minimal + "sim:\n  time_limit: 0s # <-\n"},

		// Variants.
		{"variants not a list", "variants", minimal + "variants: 5 # <-\n"},
		{"variant without name", "variants[0]", minimal + "variants:\n  - nic: {mtu: 1KB} # <-\n"},
		{"variant empty name", "variants[0].name", minimal + "variants:\n  - name: \"\" # <-\n"},
		{"variant name twice", "variants[1].name", minimal + "variants:\n  - name: a\n  - name: a # <-\n"},
		{"variant unknown key", "variants[0].nmae", minimal + "variants:\n  - name: a\n    nmae: b # <-\n"},
		{"nested variants", "variants[0].variants", minimal + "variants:\n  - name: a\n    variants: [] # <-\n"},
		{"variant decode error", "nic.mtu", minimal + "variants:\n  - name: a\n  - name: b\n    nic: {mtu: 4 KBB} # <-\n"},
		{"variant validation error", "transport.dcqcn.preset", minimal + "variants:\n  - name: a\n  - name: b\n    transport:\n      dcqcn: {preset: nope} # <-\n"},
		{"variant breaks base topology", "topology.hosts", minimal + "variants:\n  - name: a\n    topology: {hosts: 33} # <-\n"},

		// YAML itself.
		{"syntax", "", "topology: [1, # <-\n"},
		{"two documents", "", minimal + "---\nnic: {} # <-\n"},
		{"unknown alias", "", minimal + "nic: *x # <-\n"},
		{"not a mapping", "", "- a # <-\n- b\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := filepath.Join(dir, "t.yaml")
			_, err := Parse(name, []byte(c.text))
			checkError(t, name, c.text, err, c.key)
		})
	}
}

func TestErrorColumn(t *testing.T) {
	_, err := Parse("t.yaml", []byte(minimal+"nic:\n  mtu: 4KBB\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:4:8: nic.mtu: ") {
		t.Errorf("err = %v, want it at 4:8 (the value)", err)
	}
	_, err = Parse("t.yaml", []byte(minimal+"nic:\n  mtuu: 4KB\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `t.yaml:4:3: nic.mtuu: unknown key "mtuu" (did you mean "mtu"?)`) {
		t.Errorf("err = %v, want it at 4:3 (the key) with a suggestion", err)
	}
}

// A byte-order mark (editors on Windows write one) is no part of the
// first key: the file reads as without it, and errors point where they do
// without it.
func TestByteOrderMark(t *testing.T) {
	src := "name: bom\n" + minimal
	plain, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	marked, err := Parse("t.yaml", []byte("\ufeff"+src))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain.Jobs(), marked.Jobs()) {
		t.Error("a byte-order mark changed the jobs")
	}
	if _, err := Parse("t.yaml", []byte("\ufeffnamee: bom\n"+minimal)); err == nil || !strings.HasPrefix(err.Error(), `t.yaml:1:1: namee: unknown key "namee"`) {
		t.Errorf("err = %v, want it at 1:1", err)
	}
	deep := "a: " + strings.Repeat("[", 100)
	_, plainErr := Parse("t.yaml", []byte(deep))
	_, markedErr := Parse("t.yaml", []byte("\ufeff"+deep))
	if plainErr == nil || markedErr == nil || plainErr.Error() != markedErr.Error() {
		t.Errorf("the nesting guard: %v without the mark, %v with it", plainErr, markedErr)
	}
}

func TestVariantsDeepMerge(t *testing.T) {
	f := mustParse(t, `
topology:
  hosts: 32
  hosts_per_leaf: 8
  spines: 4
  host_link: {rate: 100Gbps, delay: 2us}
transport:
  dcqcn: {preset: default, ai_rate: 1Gbps, byte_counter: 1MB}
workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}
variants:
  - name: off
    transport: {dcqcn: {preset: "off"}}
  - name: reset-ai
    transport: {dcqcn: {ai_rate: null}}
  - name: slow-host
    topology: {host_link: {rate: 25Gbps}}
  - name: list
    workload: {sizes: {list: [1MB]}}
  - name: seed
    seed: 7
    description: other seed
`)
	if len(f.Variants) != 5 {
		t.Fatalf("%d variants, want 5", len(f.Variants))
	}
	base := f.Base
	v := map[string]*Scenario{}
	for _, x := range f.Variants {
		v[x.Name] = x.Spec
	}
	off := v["off"]
	if off.Transport.DCQCN.Preset != "off" {
		t.Errorf("preset = %q", off.Transport.DCQCN.Preset)
	}
	if !reflect.DeepEqual(off.Topology, base.Topology) || !reflect.DeepEqual(off.Workload, base.Workload) || !reflect.DeepEqual(off.Switch, base.Switch) {
		t.Error("a variant changing only the preset changed other keys")
	}
	if off.Transport.DCQCN.AIRate == nil || *off.Transport.DCQCN.AIRate != units.Gbps {
		t.Error("the base's ai_rate override was lost")
	}
	if base.Transport.DCQCN.Preset != "default" {
		t.Error("a variant wrote through to the base")
	}
	if r := v["reset-ai"].Transport.DCQCN; r.AIRate != nil || r.ByteCounter == nil || *r.ByteCounter != units.MB {
		t.Errorf("null should reset only ai_rate: %+v", r)
	}
	p, err := DCQCNParams(v["reset-ai"])
	if def, _ := roce.Preset("default"); err != nil || p.AIRate != def.AIRate || p.ByteCounter != units.MB {
		t.Errorf("DCQCNParams = %+v, %v", p, err)
	}
	if h := v["slow-host"].Topology.HostLink; h.Rate != 25*units.Gbps || h.Delay != 2*units.Microsecond {
		t.Errorf("host_link = %+v, want 25Gbps and the base's 2us", h)
	}
	if s := v["list"].Workload.Sizes; len(s.List) != 1 || s.From != 0 || s.To != 0 {
		t.Errorf("sizes = %+v, want the list to replace the sweep", s)
	}
	if s := v["seed"]; s.Seed != 7 || s.Description != "other seed" || s.Name != base.Name {
		t.Errorf("seed variant = %d %q %q", s.Seed, s.Description, s.Name)
	}
	// Pointers are not shared between variants.
	*v["off"].Transport.DCQCN.AIRate = 1
	if *v["slow-host"].Transport.DCQCN.AIRate != units.Gbps || *base.Transport.DCQCN.AIRate != units.Gbps {
		t.Error("variants share override pointers")
	}
}

func TestVariantSwitchesKind(t *testing.T) {
	// The algorithm default follows the variant's kind, not the base's.
	f := mustParse(t, minimal+`
variants:
  - name: a2a
  - name: ar
    workload: {kind: allreduce}
  - name: ft
    topology: {kind: fat-tree, k: 4}
`)
	if a := f.Variants[0].Spec.Workload.Algorithm; a != "direct" {
		t.Errorf("a2a algorithm %q", a)
	}
	if a := f.Variants[1].Spec.Workload.Algorithm; a != "ring" {
		t.Errorf("ar algorithm %q", a)
	}
	if r := f.Variants[2].Spec.Workload.Ranks; r != 16 {
		t.Errorf("fat-tree k=4 ranks = %d, want 16", r)
	}
}

func TestAnchors(t *testing.T) {
	f := mustParse(t, `
topology: &topo {hosts: 32, hosts_per_leaf: 8, spines: 4}
workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}
transport: {dcqcn: &tuned {preset: tuned-final, ai_rate: 3Gbps}}
variants:
  - name: a
    transport: {dcqcn: *tuned}
  - name: b
    topology: {<<: *topo, hosts: 64}
    transport:
      dcqcn:
        <<: *tuned
        ai_rate: 4Gbps
`)
	a, b := f.Variants[0].Spec, f.Variants[1].Spec
	if *a.Transport.DCQCN.AIRate != 3*units.Gbps || a.Transport.DCQCN.Preset != "tuned-final" {
		t.Errorf("a = %+v", a.Transport.DCQCN)
	}
	if b.Topology.Hosts != 64 || b.Topology.Spines != 4 || *b.Transport.DCQCN.AIRate != 4*units.Gbps {
		t.Errorf("b = %+v %+v", b.Topology, b.Transport.DCQCN)
	}
}

func TestApplySets(t *testing.T) {
	f := mustParse(t, minimal+`
variants:
  - name: a
    transport: {dcqcn: {preset: tuned-final}}
  - name: b
`)
	err := ApplySets(f, []string{
		"transport.dcqcn.preset=off",
		"topology.host_link.rate=100Gbps",
		"workload.sizes.list=[1MB, 2MB]",
		"seed=9",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append([]Variant{{Name: "base", Spec: f.Base}}, f.Variants...) {
		s := v.Spec
		if s.Transport.DCQCN.Preset != "off" || s.Topology.HostLink.Rate != 100*units.Gbps || s.Seed != 9 {
			t.Errorf("%s: --set not applied: %+v", v.Name, s)
		}
		if !reflect.DeepEqual(s.Workload.Sizes.List, []units.Size{units.MB, 2 * units.MB}) || s.Workload.Sizes.From != 0 {
			t.Errorf("%s: sizes = %+v", v.Name, s.Workload.Sizes)
		}
		if s.Topology.FabricLink.Rate != 400*units.Gbps {
			t.Errorf("%s: --set changed a sibling key", v.Name)
		}
	}
	if len(f.Jobs()) != 4 {
		t.Errorf("%d jobs, want 2 variants × 2 sizes", len(f.Jobs()))
	}

	bad := []struct{ set, prefix string }{
		{"topology.hostz=1", `--set topology.hostz: unknown key "hostz" (did you mean "hosts"?)`},
		{"x.y=1", "--set x.y: x: unknown key"},
		{"nic.mtu=4KBB", `--set nic.mtu: "4KBB": unknown size unit`},
		{"nic.mtu=1B", "--set nic.mtu: variant \"a\": must be between"},
		{"transport.dcqcn.preset=nope", `--set transport.dcqcn.preset: variant "a": unknown preset "nope"`},
		{"nic", "--set nic: needs key=value"},
		{"=1", "--set =1: needs key=value"},
		{"Nic.MTU=1", "--set Nic.MTU: not a key"},
		{"nic.mtu=[1", "--set nic.mtu: "},
		{"nic={mtu: 2KB, x: 1}", `--set nic: nic.x: unknown key "x"`},
		{"variants=[]", "--set variants: variants cannot be set"},
		{"topology.hosts=30", "--set topology.hosts: variant \"a\": 30 hosts do not fill whole leaves"},
		{"switch.pfc.xoff=100KB", "--set switch.pfc.xoff: variant \"a\": switch.pfc.xon: 504KiB is above xoff 100KB; set xon at or below xoff (see t.yaml:4:11)"},
		{"workload.sizes.list=", "--set workload.sizes.list: variant \"a\": workload.sizes: needs the data sizes"},
	}
	for _, b := range bad {
		g := mustParse(t, minimal+"variants:\n  - name: a\n")
		before := *g.Variants[0].Spec
		err := ApplySets(g, []string{b.set})
		if err == nil || !strings.HasPrefix(err.Error(), b.prefix) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--set %s: err = %v, want prefix %q", b.set, err, b.prefix)
		}
		if !reflect.DeepEqual(*g.Variants[0].Spec, before) {
			t.Errorf("--set %s: a failed ApplySets changed the file", b.set)
		}
	}

	// An override may repair a file that is invalid on its own.
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(minimal+"nic: {mtu: 1B}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil {
		t.Error("Load accepted mtu 1B")
	}
	if g, err := LoadSets(p, []string{"nic.mtu=4KiB"}); err != nil || g.Base.NIC.MTU != 4096 {
		t.Errorf("LoadSets: %v", err)
	}
}

func TestJobs(t *testing.T) {
	f := mustParse(t, minimal+"seed: 5\nvariants:\n  - name: a\n  - name: b\n")
	jobs := f.Jobs()
	if len(jobs) != 8 {
		t.Fatalf("%d jobs, want 2 variants × 4 sizes (8MB..64MB ×2)", len(jobs))
	}
	want := []units.Size{8 * units.MB, 16 * units.MB, 32 * units.MB, 64 * units.MB}
	for i, j := range jobs {
		if j.Size != want[i%4] || j.SizeIndex != i%4 || j.VariantIndex != i/4 || j.Seed != 5 || j.Scenario != "t" || j.Spec != f.Variants[i/4].Spec || j.Dir != "." {
			t.Errorf("job %d = %+v", i, j)
		}
	}
	if jobs[0].Variant != "a" || jobs[4].Variant != "b" {
		t.Error("variant names")
	}

	sweeps := []struct {
		s    Sizes
		want int
	}{
		{Sizes{From: 8 * units.MiB, To: units.GiB, Factor: 2}, 8},
		{Sizes{From: 8 * units.MB, To: 100 * units.MB, Factor: 2}, 4}, // 8,16,32,64
		{Sizes{From: units.MiB, To: 256 * units.MiB, Factor: 4}, 5},
		{Sizes{From: 1, To: 1, Factor: 2}, 1},
		{Sizes{From: 1, To: 1 << 62, Factor: 2}, 63},
		{Sizes{From: 3, To: 1<<63 - 1, Factor: 1000}, 7},
		{Sizes{List: []units.Size{5, 1}}, 2},
	}
	for _, s := range sweeps {
		got := SweepSizes(s.s)
		if len(got) != s.want {
			t.Errorf("SweepSizes(%+v) = %v, want %d sizes", s.s, got, s.want)
		}
		for i := 1; i < len(got) && len(s.s.List) == 0; i++ {
			if got[i] <= got[i-1] || got[i] > s.s.To {
				t.Errorf("SweepSizes(%+v) = %v", s.s, got)
			}
		}
	}
}

func TestFlowsJob(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("0 1 1MB\n2 3 3MB 1us\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte("topology: {hosts: 4, hosts_per_leaf: 2, spines: 1}\nworkload: {kind: flows, file: f.txt}\nvariants:\n  - name: a\n  - name: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	jobs := f.Jobs()
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want one per variant", len(jobs))
	}
	for _, j := range jobs {
		if j.Size != 4*units.MB || len(j.FlowList) != 2 || j.FlowList[1].Start != units.Microsecond || j.Dir != dir {
			t.Errorf("job = %+v", j)
		}
	}
}

func TestHostsAndSpines(t *testing.T) {
	cases := []struct {
		t             Topology
		hosts, spines int
	}{
		{Topology{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8, Spines: 3}, 32, 3},
		{Topology{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8, Oversubscription: 1,
			HostLink: Link{Rate: 400 * units.Gbps}, FabricLink: Link{Rate: 400 * units.Gbps}}, 32, 8},
		{Topology{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8, Oversubscription: 3,
			HostLink: Link{Rate: 400 * units.Gbps}, FabricLink: Link{Rate: 400 * units.Gbps}}, 32, 3},
		{Topology{Kind: "leaf-spine", Hosts: 32, HostsPerLeaf: 8, Oversubscription: 1,
			HostLink: Link{Rate: 100 * units.Gbps}, FabricLink: Link{Rate: 400 * units.Gbps}}, 32, 2},
		{Topology{Kind: "fat-tree", K: 8}, 128, 0},
		{Topology{Kind: "rail", Servers: 4, GPUsPerServer: 8}, 32, 0},
		{Topology{Kind: "torus"}, 0, 0},
	}
	for _, c := range cases {
		if h := Hosts(c.t); h != c.hosts {
			t.Errorf("Hosts(%+v) = %d, want %d", c.t, h, c.hosts)
		}
		if c.t.Kind == "leaf-spine" {
			if s := topo.LeafSpines(topoSize(c.t)); s != c.spines {
				t.Errorf("LeafSpines(%+v) = %d, want %d", c.t, s, c.spines)
			}
		}
	}
}

// A leaf-spine whose derived spines cannot give the ratio asked says what
// the leaves are; one that can, or with spines given, says nothing.
func TestOversubscriptionNote(t *testing.T) {
	for _, c := range []struct{ topo, want string }{
		{"{kind: leaf-spine, hosts: 32, hosts_per_leaf: 8, oversubscription: 3}", "topology.oversubscription 3: 8 hosts per leaf at 400Gbps over 3 spines at 400Gbps make the leaves 2.67:1"},
		{"{kind: leaf-spine, hosts: 36, hosts_per_leaf: 6, oversubscription: 3}", ""},
		{"{kind: leaf-spine, hosts: 32, hosts_per_leaf: 8, oversubscription: 2}", ""},
		{"{kind: leaf-spine, hosts: 32, hosts_per_leaf: 8, spines: 3}", ""},
		{"{kind: leaf-spine, hosts: 32, hosts_per_leaf: 8, host_link: {rate: 100Gbps}, fabric_link: {rate: 400Gbps}}", ""},
		{"{kind: leaf-spine, hosts: 24, hosts_per_leaf: 3, host_link: {rate: 100Gbps}, fabric_link: {rate: 400Gbps}}", ""}, // 0.75:1, for 1:1 asked
		{"{kind: leaf-spine, hosts: 40, hosts_per_leaf: 10, oversubscription: 2, host_link: {rate: 100Gbps}, fabric_link: {rate: 400Gbps}}", "make the leaves 1.25:1"},
	} {
		f := mustParse(t, "topology: "+c.topo+"\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n")
		notes := strings.Join(Notes(f.Variants[0].Spec), "\n")
		if c.want == "" && strings.Contains(notes, "oversubscription") || c.want != "" && !strings.Contains(notes, c.want) {
			t.Errorf("%s: notes %q, want %q", c.topo, notes, c.want)
		}
	}
}

// Links down from the start for good that cut hosts apart get a note
// (the run could only end at its time limit); a spine left over, a link
// that fails later or comes back, do not.
func TestCutOffHostsNote(t *testing.T) {
	const base = "workload: {kind: alltoall, sizes: {list: [1MiB]}}\ntopology:\n  hosts: 8\n  hosts_per_leaf: 2\n  spines: %d\n  failures: %s\n"
	for _, c := range []struct {
		spines   int
		failures string
		want     string
	}{
		{1, "[{from: leaf1, to: spine0}]", "the link topology.failures[0] takes down from the start for good cuts the hosts into 2 groups with no path between them (host0's group holds 6 of the 8 hosts; host2 is outside it)"},
		{2, "[{from: leaf0, to: spine0}, {from: spine1, to: leaf0}]", "the links topology.failures[0], topology.failures[1] take down from the start for good cut the hosts into 2 groups with no path between them (host0's group holds 2 of the 8 hosts; host2 is outside it)"},
		{1, "[{from: leaf0, to: spine0}, {from: leaf1, to: spine0}]", "into 3 groups with no path between them (host0's group holds 2 of the 8 hosts; host2 is outside it)"},
		{2, "[{from: leaf0, to: spine0}]", ""},
		{1, "[{from: leaf0, to: spine0, at: 10us}]", ""},
		{1, "[{from: leaf0, to: spine0, at: 0, until: 10us}]", ""},
	} {
		f := mustParse(t, fmt.Sprintf(base, c.spines, c.failures))
		notes := strings.Join(Notes(f.Variants[0].Spec), "\n")
		got := strings.Contains(notes, "groups with no path")
		if c.want == "" && got || c.want != "" && !strings.Contains(notes, c.want) {
			t.Errorf("%s: notes %q, want %q", c.failures, notes, c.want)
		}
	}
}

// Sizes a block collective cannot run as asked get a note saying what
// runs instead; all-reduce runs any size.
func TestSizeRoundingNote(t *testing.T) {
	for _, c := range []struct{ work, want string }{
		{"{kind: alltoall, ranks: 8, sizes: {list: [1000B, 1001B, 4B, 64KiB]}}", "workload.sizes: alltoall on 8 ranks runs each rank's block in whole bytes, so the size is a multiple of the ranks: 1001B as 1000B, 4B as 8B"},
		{"{kind: allgather, ranks: 3, sizes: {list: [1MiB, 2MiB, 4MiB, 8MiB, 16MiB]}}", ": 1048576B as 1048575B, 2097152B as 2097150B, 4194304B as 4194303B, and 2 more"},
		{"{kind: allreduce, ranks: 8, sizes: {list: [1001B]}}", ""},
		{"{kind: alltoall, ranks: 8, sizes: {from: 8KiB, to: 1MiB}}", ""},
		{"{kind: allreduce, ranks: 8, sizes: {list: [1MiB]}}\njobs:\n  - {name: side, kind: alltoall, ranks: 3, host_offset: 8, sizes: {list: [1001B]}}", "jobs[0].sizes: alltoall on 3 ranks runs each rank's block in whole bytes, so the size is a multiple of the ranks: 1001B as 999B"},
	} {
		f := mustParse(t, "topology: {hosts: 16, hosts_per_leaf: 8}\nworkload: "+c.work+"\n")
		notes := strings.Join(Notes(f.Variants[0].Spec), "\n")
		if c.want == "" && strings.Contains(notes, "whole bytes") || c.want != "" && !strings.Contains(notes, c.want) {
			t.Errorf("%s: notes %q, want %q", c.work, notes, c.want)
		}
	}
}

// placement: list without ranks runs one rank on each listed host (it
// was refused as "lists 4 hosts for 32 ranks", the README's own example).
func TestPlacementListGivesTheRanks(t *testing.T) {
	f := mustParse(t, "topology: {kind: leaf-spine, hosts: 32, hosts_per_leaf: 8}\nworkload: {kind: alltoall, ranks: 8, sizes: {list: [4MiB]}}\n"+
		"jobs:\n  - {name: noise, kind: uniform, placement: list, placement_hosts: [16, 17, 18, 19], load: 0.3, duration: 200us, sizes: {list: [256KiB]}}\n")
	if w := f.Jobs()[0].Spec.Jobs[0].Workload; w.Ranks != 4 {
		t.Errorf("ranks %d, want 4", w.Ranks)
	}
}

// One link's outages: overlapping or touching ones meet, flaps are
// compared outage by outage (a one-off outage between two flaps is fine).
func TestOutagesMeet(t *testing.T) {
	us := units.Microsecond
	flap := Failure{At: 100 * us, Until: 200 * us, Period: 1000 * us, Count: 3} // down 100–200, 1100–1200, 2100–2200
	for _, c := range []struct {
		b    Failure
		meet bool
	}{
		{Failure{At: 500 * us, Until: 600 * us}, false},                                 // between two flaps
		{Failure{At: 1150 * us, Until: 1160 * us}, true},                                // inside the second
		{Failure{At: 1200 * us, Until: 1300 * us}, true},                                // at its "up"
		{Failure{At: 2300 * us}, false},                                                 // after the last, for good
		{Failure{At: 50 * us}, true},                                                    // before the first, for good
		{Failure{At: 0, Until: 100 * us}, true},                                         // up at the first "down"
		{Failure{At: 2201 * us, Until: 3000 * us}, false},                               // just after the last
		{Failure{At: 300 * us, Until: 400 * us, Period: 1000 * us, Count: 3}, false},    // interleaved flaps
		{Failure{At: 2150 * us, Until: 2160 * us, Period: 100 * us, Count: 5}, true},    // flaps meeting the third
		{Failure{At: 2250 * us, Until: 2260 * us, Period: 100 * us, Count: 500}, false}, // flaps after the last
	} {
		if got := outagesMeet(flap, c.b); got != c.meet {
			t.Errorf("%+v: meet %v, want %v", c.b, got, c.meet)
		}
		if got := outagesMeet(c.b, flap); got != c.meet {
			t.Errorf("%+v (swapped): meet %v, want %v", c.b, got, c.meet)
		}
	}
}

func TestDCQCNParams(t *testing.T) {
	f := mustParse(t, minimal+`
transport:
  dcqcn: {preset: tuned-ramp, hai_rate: 7Gbps, clamp_target_rate: true, threshold: 3, decrease_coefficient: 0.25,
          first_cnp_cut: next-check, alpha_on_new_episode: keep, byte_counter_off: zero}
variants:
  - name: ramp
  - name: off
    transport: {dcqcn: {preset: "off"}}
`)
	p, err := DCQCNParams(f.Variants[0].Spec)
	want, _ := roce.Preset("tuned-ramp")
	want.HAIRate, want.ClampTargetRate, want.Threshold, want.DecreaseCoefficient = 7*units.Gbps, true, 3, 0.25
	want.FirstCutAtCheck, want.KeepAlpha, want.ByteStagesOff = true, true, true
	if err != nil || p != want {
		t.Errorf("DCQCNParams = %+v, %v; want %+v", p, err, want)
	}
	// Without the override the preset's coefficient (rpg_gd 11 = 0.5) stays.
	if p, _ := DCQCNParams(mustParse(t, minimal).Base); p.DecreaseCoefficient != 0.5 {
		t.Errorf("default decrease_coefficient = %v, want 0.5", p.DecreaseCoefficient)
	}
	// The summary names each knob set beside the preset, in the type's
	// order, as the file spells it.
	if got, want := f.Base.Transport.DCQCN.Knobs(), "decrease_coefficient 0.25, clamp_target_rate true, threshold 3, hai_rate 7Gbps, "+
		"first_cnp_cut next-check, alpha_on_new_episode keep, byte_counter_off zero"; got != want {
		t.Errorf("Knobs = %q\nwant %q", got, want)
	}
	if got := mustParse(t, minimal).Base.Transport.DCQCN.Knobs(); got != "" {
		t.Errorf("no knobs set: Knobs = %q", got)
	}
	p, err = DCQCNParams(f.Variants[1].Spec)
	if err != nil || p.Enabled || p.HAIRate != 7*units.Gbps {
		t.Errorf("off: %+v, %v", p, err)
	}
	if _, err := DCQCNParams(&Scenario{Transport: Transport{DCQCN: DCQCN{Preset: "nope"}}}); err == nil {
		t.Error("unknown preset accepted")
	}
	// "off" unquoted is a string in YAML 1.2 (this library), not false.
	g := mustParse(t, minimal+"transport: {dcqcn: {preset: off}}\n")
	if g.Base.Transport.DCQCN.Preset != "off" {
		t.Errorf("preset = %q", g.Base.Transport.DCQCN.Preset)
	}
}

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, p := range files {
		f, err := Load(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(f.Jobs()) == 0 {
			t.Errorf("%s: no jobs", p)
		}
		text, _ := os.ReadFile(p)
		if !strings.HasPrefix(string(text), "#") || !strings.Contains(string(text), "go run ./cmd/fabriclab run examples/"+filepath.Base(p)) {
			t.Errorf("%s must start with a comment saying what it shows and how to run it", p)
		}
	}
	f, err := Load("../examples/alltoall-dcqcn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range f.Variants {
		names = append(names, v.Name)
	}
	if want := []string{"pfc-only", "dcqcn-default", "tuned-ramp", "tuned-increased-step", "tuned-final"}; !reflect.DeepEqual(names, want) {
		t.Errorf("variants %v, want %v", names, want)
	}
	if n := len(f.Jobs()); n != 5*8 {
		t.Errorf("%d jobs, want 5 variants × 8 sizes", n)
	}
}

func TestErrorsStayOneLine(t *testing.T) {
	_, err := Parse("t.yaml", []byte(minimal+"nic:\n  \"a\\nb\": 1\n"))
	if err == nil || strings.ContainsAny(err.Error(), "\r\n") || !strings.HasPrefix(err.Error(), `t.yaml:4:3: "nic.a\nb": unknown key`) {
		t.Errorf("err = %q", err)
	}
	f := mustParse(t, minimal)
	for _, s := range []string{"", "a\nb=1", "nic.mtu=1\n2"} {
		err := ApplySets(f, []string{s})
		if err == nil || strings.ContainsAny(err.Error(), "\r\n") || !strings.HasPrefix(err.Error(), "--set ") {
			t.Errorf("--set %q: err = %q", s, err)
		}
	}
}

// The wording of errors that used to mislead: each names the real problem.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "late.txt"), []byte("0 1 1MB 0\n# comment\n1 0 1MB 2ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const work = "workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}\n"
	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	cases := []struct {
		name, text, want string
	}{
		{"empty", "", "t.yaml:1:1: file is empty: a scenario needs at least topology and workload"},
		{"only comments", "# a scenario\n\n# to be written\n", "t.yaml:1:1: file is empty: a scenario needs at least topology and workload"},
		{"only a document marker", "---\n", "t.yaml:1:1: file is empty: a scenario needs at least topology and workload"},
		{"seed too large", minimal + "seed: 99999999999999999999999\n", "t.yaml:3:7: seed: a number of 23 digits is too large (max 2^64−1 = 18446744073709551615)"},
		{"int too large", work + "topology:\n  hosts: 99999999999999999999999\n", "t.yaml:3:10: topology.hosts: a number of 23 digits is too large (max 2^63−1 = 9223372036854775807)"},
		{"int too small", work + "topology:\n  spines: -99999999999999999999999\n", "topology.spines: a negative number of 23 digits is too small"},
		{"tiny oversubscription", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 1e-300\n",
			"t.yaml:5:21: topology.oversubscription: must be between 0.01 and 1000 when spines is 0 (spines are derived from it), got 1e-300"},
		{"float beyond float64", work + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 1e400\n",
			"t.yaml:5:21: topology.oversubscription: 1e400 is out of range for a number"},
		{"tab indentation", work + "topology:\n  hosts: 32\n\thosts_per_leaf: 8\n",
			"t.yaml:4:1: a tab is used for indentation; YAML indents with spaces only (replace the tab with spaces)"},
		{"tab before a top-level key", "\t" + work, "t.yaml:1:1: a tab is used for indentation"},
		{"rto", minimal + "nic: {rto: 100ns}\n",
			"t.yaml:3:12: nic.rto: must be at least 1us, got 100ns: a timeout shorter than a round trip retransmits everything"},
		{"flow after time limit", topo + "workload: {kind: flows, file: late.txt}\nsim: {time_limit: 2ms}\n",
			"workload.file: late.txt:3: the flow starts at 2ms, not before sim.time_limit 2ms, so it would never run"},
		{"bits for a size", minimal + "nic: {mtu: 8Mb}\n", `nic.mtu: "8Mb": b is bits; sizes are in bytes (e.g. 8MB)`},
		{"bytes for a rate", work + "topology: {hosts: 32, hosts_per_leaf: 8, host_link: {rate: 400GBPS}}\n",
			`topology.host_link.rate: "400GBPS": rates are in bits per second`},
		{"duration case", minimal + "sim: {time_limit: 1S}\n", `sim.time_limit: "1S": unknown duration unit "S" (did you mean s?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(filepath.Join(dir, "t.yaml"), []byte(c.text))
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			msg := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if !strings.Contains(msg, c.want) {
				t.Errorf("error\n  %q\nwant it to contain\n  %q", msg, c.want)
			}
		})
	}
	// Exponent forms the YAML library reads as text are numbers.
	f := mustParse(t, work+"topology: {hosts: 32, hosts_per_leaf: 8, oversubscription: 2e0}\nswitch: {ecn: {pmax: 5e-2}}\n")
	if f.Base.Topology.Oversubscription != 2 || f.Base.Switch.ECN.PMax != 0.05 {
		t.Errorf("oversubscription %v pmax %v", f.Base.Topology.Oversubscription, f.Base.Switch.ECN.PMax)
	}
	// A flow starting just before the limit is fine.
	g, err := Parse(filepath.Join(dir, "t.yaml"), []byte(topo+"workload: {kind: flows, file: late.txt}\nsim: {time_limit: 2001us}\n"))
	if err != nil || len(g.Jobs()) != 1 {
		t.Errorf("flow before the limit: %v", err)
	}
}

func TestNotesOnReorderingWithGoBackN(t *testing.T) {
	s := Defaults()
	if n := Notes(s); len(n) != 0 {
		t.Fatalf("defaults: %v", n)
	}
	s.Switch.Forwarding = "spray-rr"
	if n := Notes(s); len(n) != 1 || !strings.Contains(n[0], "out_of_order") {
		t.Fatalf("spraying with go-back-n: %v", n)
	}
	s.NIC.OutOfOrder = "accept"
	if n := Notes(s); len(n) != 0 {
		t.Fatalf("spraying with accept: %v", n)
	}
}

// Probes keep their order and values; a size left out is 1KiB. They run
// on real hosts only: the simulator refuses them at the key.
func TestProbes(t *testing.T) {
	src := minimal + "probes:\n  - {from: 0, to: 9, rate: 2Gbps}\n  - {from: 9, to: 0, rate: 10Mbps, size: 9000B}\n"
	const refusal = "t.yaml:3:1: probes: paced UDP probes run on real hosts only (--engine hosts); the simulator has no UDP transport"
	for _, engine := range []string{"packet", "auto"} {
		if _, err := ParseOptions("t.yaml", []byte(src), Options{Sets: []string{"sim.engine=" + engine}}); err == nil || err.Error() != refusal {
			t.Errorf("sim.engine %s: %v, want %s", engine, err, refusal)
		}
	}
	f, err := ParseOptions("t.yaml", []byte(src), Options{Engine: EngineHosts})
	if err != nil {
		t.Fatal(err)
	}
	want := []Probe{{From: 0, To: 9, Rate: 2 * units.Gbps, Size: units.KiB}, {From: 9, To: 0, Rate: 10 * units.Mbps, Size: 9000}}
	if got := f.Base.Probes; !reflect.DeepEqual(got, want) {
		t.Errorf("probes %+v, want %+v", got, want)
	}
}

// ACKs in the data class are allowed, with a note saying what it means.
func TestControlInTheDataClassIsANote(t *testing.T) {
	f := mustParse(t, minimal+"nic: {data_priority: 3, control_priority: 3}\n")
	notes := Notes(f.Base)
	if len(notes) == 0 || !strings.Contains(notes[0], "ACKs and CNPs queue behind data") || !strings.Contains(notes[0], "paused by PFC") {
		t.Errorf("notes %q", notes)
	}
}
