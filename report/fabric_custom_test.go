package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/measure"
	"fabriclab/scenario"
	"fabriclab/topo"
	"fabriclab/units"
)

// loadIn writes files (name → text) to a fresh directory and loads the
// scenario s.yaml from it.
func loadIn(t *testing.T, files map[string]string) *scenario.File {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := scenario.Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Two hosts at 100G/1us, switch links at 200G/3us.
const ns3Topology = `4 2 3
2 3
0 2 100Gbps 0.001ms 0
1 3 100Gbps 0.001ms 0
2 3 200Gbps 0.003ms 0
`

// A fabric read from a file is summarized from the file's nodes and
// links, not from host_link and fabric_link (400G, 1us by default), which
// it does not use for its links.
func TestFabricSummaryOfFile(t *testing.T) {
	f := loadIn(t, map[string]string{
		"ns.txt":    ns3Topology,
		"flows.txt": "src,dst,bytes,start\n0 1 1MB 0\n",
		"s.yaml":    "name: ns\ntopology: {kind: ns3, file: ns.txt}\nworkload: {kind: flows, file: flows.txt}\n",
	})
	var b bytes.Buffer
	fs := FabricsOfFile(f)
	if err := WriteFabric(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := "# fabric: ns3 (ns.txt), 2 hosts, 2 switches in 1 tier (tier1)\n" +
		"#   links: hosts 100Gbps (1us), fabric 200Gbps (3us) one-way\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got\n%s\nwant it to begin\n%s", b.String(), want)
	}
	if fs[0].NICGBps != 12.5 {
		t.Errorf("NIC %v GB/s, want the file's 100Gbps (12.5)", fs[0].NICGBps)
	}

	// Heterogeneous links are ranges; tiers, servers and failures are
	// counted from the file.
	f = loadIn(t, map[string]string{
		"het.yaml": `nodes:
  - {name: tor0, kind: switch, tier: tor}
  - {name: tor1, kind: switch, tier: tor}
  - {name: agg0, kind: switch, tier: agg}
  - {name: host0, kind: host, server: s0}
  - {name: host1, kind: host, server: s1}
links:
  - {a: host0, b: tor0, rate: 100Gbps, delay: 1us}
  - {a: host1, b: tor1, rate: 400Gbps, delay: 1us}
  - {a: tor0, b: agg0, rate: 400Gbps, delay: 500ns}
  - {a: tor1, b: agg0, rate: 800Gbps, delay: 3us}
`,
		"flows.txt": "src,dst,bytes,start\n0 1 1MB 0\n",
		"s.yaml":    "name: het\ntopology: {kind: custom, file: het.yaml, host_link: {rate: 100Gbps}, failures: [{from: tor0, to: agg0, at: 1ms}]}\nworkload: {kind: flows, file: flows.txt}\n",
	})
	fb := FabricsOfFile(f)[0]
	if got, want := fb.Fields[0].Value, "custom (het.yaml), 2 hosts, 3 switches in 2 tiers (tor, agg), servers of 1 host"; got != want {
		t.Errorf("topology\n got %q\nwant %q", got, want)
	}
	if got, want := fb.Fields[1].Value, "hosts 100–400Gbps (1us), fabric 400–800Gbps (500ns–3us) one-way; 1 link failure"; got != want {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	if fb.NICGBps != 0 {
		t.Errorf("NIC %v GB/s for host links of two rates, want 0 (no one NIC rate)", fb.NICGBps)
	}
}

// Counts of one are singular.
func TestFabricSummaryPlurals(t *testing.T) {
	ls := FabricOf("x", parsed(t, "name: t\ntopology: {kind: leaf-spine, hosts: 2, hosts_per_leaf: 2, spines: 1}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n").Base)
	if got, want := ls.Fields[0].Value, "leaf-spine, 2 hosts, 1 leaf of 2, 1 spine (2:1 oversubscribed)"; got != want {
		t.Errorf("leaf-spine\n got %q\nwant %q", got, want)
	}
	rail := FabricOf("x", parsed(t, "name: t\ntopology: {kind: rail, servers: 2, gpus_per_server: 1, spines: 1}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n").Base)
	if got, want := rail.Fields[0].Value, "rail-optimized, 2 servers × 1 GPU = 2 hosts, 1 group of 2 servers, 1 rail leaf, 1 spine (2:1 oversubscribed)"; got != want {
		t.Errorf("rail\n got %q\nwant %q", got, want)
	}
}

// The note on a host_link.rate that no host link of the file has says
// what that rate is used for, and no more: the results' ideal times are
// computed on the built fabric, whose NICs run at the file's rates.
func TestCustomHostRateNote(t *testing.T) {
	f := loadIn(t, map[string]string{
		"ns.txt":    ns3Topology,
		"flows.txt": "src,dst,bytes,start\n0 1 1MB 0\n",
		"s.yaml":    "name: ns\ntopology: {kind: ns3, file: ns.txt}\nworkload: {kind: flows, file: flows.txt}\n",
	})
	spec := f.Base
	if spec.Topology.HostLink.Rate != 400*units.Gbps {
		t.Fatalf("host_link.rate %v, want the default 400Gbps", spec.Topology.HostLink.Rate)
	}
	tp, err := topo.Wire(1, scenario.TopoSpec(spec))
	if err != nil {
		t.Fatal(err)
	}
	if r := measure.TopologyBounds(nil, tp).NICRate(0); r != 100*units.Gbps {
		t.Fatalf("the built fabric's NIC runs at %v, want the file's 100Gbps", r)
	}
	notes := scenario.Notes(spec)
	if len(notes) != 1 {
		t.Fatalf("notes %q", notes)
	}
	n := notes[0]
	if strings.Contains(n, "and ideal times are computed from host_link.rate") {
		t.Errorf("the note says ideal times come from host_link.rate: %q", n)
	}
	for _, want := range []string{"(400Gbps) is not the rate of any host link in ns.txt (100Gbps)", "workload loads", "Homa's RTT bytes", "sim.time_limit", "the results' ideal times use the file's links"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
}
