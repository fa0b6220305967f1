package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// topoDir writes the topology files the custom-topology tests name: a
// leaf-spine of 8 hosts (2 leaves, 2 spines) as YAML and CSV, one of 4
// hosts, one with servers of 2, an ns-3 file.
func topoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csv := func(hosts, perLeaf, spines int, server bool) string {
		var b strings.Builder
		for i := range hosts / perLeaf {
			fmt.Fprintf(&b, "node,leaf%d,switch,leaf\n", i)
		}
		for j := range spines {
			fmt.Fprintf(&b, "node,spine%d,switch,spine\n", j)
		}
		for h := range hosts {
			if server {
				fmt.Fprintf(&b, "node,host%d,host,,srv%d\n", h, h/2)
			} else {
				fmt.Fprintf(&b, "node,host%d,host\n", h)
			}
			fmt.Fprintf(&b, "link,host%d,leaf%d,100Gbps,1us\n", h, h/perLeaf)
		}
		for i := range hosts / perLeaf {
			for j := range spines {
				fmt.Fprintf(&b, "link,leaf%d,spine%d,400Gbps,1us\n", i, j)
			}
		}
		return b.String()
	}
	files := map[string]string{
		"ls8.csv":     csv(8, 4, 2, false),
		"ls4.csv":     csv(4, 2, 1, false),
		"servers.csv": csv(8, 4, 2, true),
		"ls.yaml": "nodes:\n  - {name: leaf0, kind: switch, tier: leaf}\n  - {name: spine0, kind: switch}\n" +
			"  - {name: host0, kind: host}\n  - {name: host1, kind: host}\n" +
			"links:\n  - {a: host0, b: leaf0, rate: 100Gbps, delay: 1us}\n  - {a: host1, b: leaf0, rate: 25Gbps, delay: 1us}\n" +
			"  - {a: leaf0, b: spine0, rate: 400Gbps, delay: 500ns}\n",
		"topo.txt": "4 2 3\n2 3\n0 2 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n",
		"bad.csv":  "node,s0,switch\nnode,host0,host\nlink,host0,s0,1Gbps,1us\nlink,s0,host0,1Gbps,1us\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const customWork = "workload: {kind: alltoall, sizes: {list: [1MB]}}\n"

func TestCustomTopologyScenario(t *testing.T) {
	dir := topoDir(t)
	path := filepath.Join(dir, "s.yaml")
	text := "name: c\ntopology: {kind: custom, file: ls8.csv, host_link: {rate: 100Gbps}}\n" + customWork +
		"variants:\n  - name: csv\n  - name: yaml\n    topology: {file: ls.yaml}\n  - name: ns3\n    topology: {kind: ns3, file: topo.txt}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range f.Variants {
		got = append(got, fmt.Sprintf("%s %d hosts %d ranks", v.Name, Hosts(v.Spec.Topology), v.Spec.Workload.Ranks))
	}
	if want := "[csv 8 hosts 8 ranks yaml 2 hosts 2 ranks ns3 2 hosts 2 ranks]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	refs := f.ReferencedFiles()
	for _, name := range []string{"ls8.csv", "ls.yaml", "topo.txt"} {
		if !slices.Contains(refs, filepath.Join(dir, name)) {
			t.Errorf("ReferencedFiles %v lacks %s", refs, name)
		}
	}
	// The YAML file's host links are 100G and 25G: no note. A scenario
	// at another NIC rate gets one.
	if notes := Notes(f.Variants[1].Spec); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	f.Variants[1].Spec.Topology.HostLink.Rate *= 4
	if notes := Notes(f.Variants[1].Spec); len(notes) != 1 || !strings.Contains(notes[0], "(400Gbps) is not the rate of any host link in ls.yaml (100Gbps, 25Gbps)") {
		t.Errorf("notes %q", notes)
	}
	// --set changes the file, and the ranks that default to its hosts.
	if err := os.WriteFile(path, []byte("name: c\ntopology: {kind: custom, file: ls8.csv}\n"+customWork), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = LoadSets(path, []string{"topology.file=ls4.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Variants[0].Spec.Workload.Ranks; r != 4 || Hosts(f.Variants[0].Spec.Topology) != 4 {
		t.Fatalf("after --set: %d ranks", r)
	}
	// A sweep over files.
	if err := os.WriteFile(path, []byte("name: c\ntopology: {kind: custom, file: ls8.csv}\n"+customWork+"sweep:\n  topology.file: [ls8.csv, ls4.csv]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = Load(path); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, v := range f.Variants {
		got = append(got, fmt.Sprintf("%d/%d", Hosts(v.Spec.Topology), v.Spec.Workload.Ranks))
	}
	if fmt.Sprint(got) != "[8/8 4/4]" {
		t.Fatalf("sweep: %v", got)
	}
	spec := TopoSpec(f.Variants[1].Spec)
	if spec.Graph == nil || len(spec.Graph.HostNodes) != 4 || spec.Kind != "custom" {
		t.Fatalf("TopoSpec: %+v", spec)
	}
}

func TestCustomTopologyErrors(t *testing.T) {
	dir := topoDir(t)
	top := func(s string) string { return "topology: {" + s + "}\n" + customWork }
	cases := []struct{ name, text, want string }{
		{"no file", top("kind: custom"), "t.yaml:1:1: topology.file: topology.kind custom needs topology.file, the file of its nodes and links (relative to the scenario)"},
		{"missing", top("kind: custom, file: nope.csv"), "t.yaml:1:32: topology.file: nope.csv does not exist (a relative path is relative to the scenario file)"},
		{"extension", top("kind: custom, file: topo.txt"), "t.yaml:1:32: topology.file: topo.txt: a custom topology file is .yaml, .yml or .csv (for an ns-3 topology.txt use topology.kind: ns3)"},
		{"file error", top("kind: custom, file: bad.csv"),
			"t.yaml:1:32: topology.file: bad.csv:4: second link between s0 and host0 (the first is at line 3); parallel links are not modelled: give one link the combined rate"},
		{"ns3 error", top("kind: ns3, file: ls8.csv"), `t.yaml:1:29: topology.file: ls8.csv:1: want "nodes switches links" on the first line, got 1 field`},
		{"servers", top("kind: custom, file: servers.csv"),
			"t.yaml:1:1: topology.gpus_per_server: servers.csv puts 2 hosts in each server; set gpus_per_server: 2 (servers are consecutive hosts, as the file lists them)"},
		{"servers ok", top("kind: custom, file: servers.csv, gpus_per_server: 2"), ""},
		{"tier", top("kind: custom, file: ls8.csv") + "switch: {forwarding_tiers: [{tier: core, forwarding: ecmp}]}\n",
			`t.yaml:3:36: switch.forwarding_tiers[0].tier: a custom topology has no tier "core"; its tiers are: leaf, spine`},
		{"derived tiers", top("kind: ns3, file: topo.txt") + "switch: {forwarding_tiers: [{tier: tier1, forwarding: adaptive}]}\n", ""},
		{"failure", top("kind: custom, file: ls8.csv, failures: [{from: leaf0, to: spine9}]"),
			`t.yaml:1:70: topology.failures[0].to: there is no switch "spine9" in the topology (its switches: leaf0…leaf1, spine0…spine1)`},
		{"ranks", top("kind: custom, file: ls4.csv") + "variants:\n  - name: v\n    workload: {ranks: 5}\n",
			`t.yaml:5:23: variant "v": workload.ranks: 5 ranks do not fit the topology's 4 hosts`},
		{"file ignored by other kinds", "topology: {hosts: 8, hosts_per_leaf: 4, file: nope.csv}\n" + customWork, ""},
	}
	for _, c := range cases {
		if got := parseIn(t, dir, c.text); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestTopologyYAMLErrors(t *testing.T) {
	const head = "nodes:\n  - {name: s0, kind: switch}\n  - {name: host0, kind: host}\n"
	const link = "links:\n  - {a: host0, b: s0, rate: 1Gbps, delay: 1us}\n"
	cases := []struct{ name, text, want string }{
		{"empty", "", "t.yaml:1: the file needs a mapping of keys (nodes, links), got nothing"},
		{"one list", head, "t.yaml:1: a topology file has two lists, nodes and links"},
		{"kind", "nodes:\n  - {name: s0, kind: router}\n" + link, `t.yaml:2: node kind "router": want host or switch`},
		{"no kind", "nodes:\n  - {name: s0}\n" + link, `t.yaml:2: node "s0" needs a kind: host or switch`},
		{"no name", "nodes:\n  - kind: host\n" + link, "t.yaml:2: a node needs a name"},
		{"unknown key", head + "  - name: s1\n    kind: switch\n    colour: red\n" + link,
			`t.yaml:6: unknown key "colour" in a node; the keys are: name, kind, tier, server`},
		{"twice", head + "  - {name: s1, kind: switch, name: s2}\n" + link, "t.yaml:4: key name is given twice (first at line 4)"},
		{"list", "nodes: {name: s0}\n" + link, `t.yaml:1: nodes needs a list (- …), got a mapping`},
		{"missing delay", head + "links:\n  - {a: host0, b: s0, rate: 1Gbps}\n", "t.yaml:5: a link needs a, b, rate and delay; delay is missing"},
		{"rate", head + "links:\n  - a: host0\n    b: s0\n    rate: 10\n    delay: 1us\n", `t.yaml:7: rate: "10": a rate needs a unit (e.g. 400Gbps)`},
		{"self", head + link + "  - {a: s0, b: s0, rate: 1Gbps, delay: 1us}\n", `t.yaml:6: link from "s0" to itself`},
		{"unknown end", head + link + "  - {a: s0, b: s9, rate: 1Gbps, delay: 1us}\n", `t.yaml:6: link end "s9" is not a node of the file`},
		{"alias", head + "links:\n  - &l {a: host0, b: s0, rate: 1Gbps, delay: 1us}\n  - *l\n", "t.yaml:5: a link needs a mapping of keys (a, b, rate, delay), got an anchor"},
		{"nested value", head + "links:\n  - {a: [host0], b: s0, rate: 1Gbps, delay: 1us}\n", "t.yaml:5: a: needs a plain value, got a list"},
		{"syntax", head + "links:\n  - {a: host0, b: s0\n", "t.yaml:5: "},
		{"tab", head + "links:\n  - {a: host0, b: s0, rate: 1Gbps, delay: 1us}\n\t- {a: host0, b: s0, rate: 1Gbps, delay: 1us}\n",
			"t.yaml:6: a tab is used for indentation; YAML indents with spaces only (replace the tab with spaces)"},
		{"keys", head + "links: []\nmore: 1\n", "t.yaml:5: unknown key \"more\" in the file; the keys are: nodes, links"},
		{"ok", head + link, ""},
	}
	for _, c := range cases {
		_, err := ParseTopologyYAML("t.yaml", []byte(c.text))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want && !(strings.HasSuffix(c.want, ": ") && strings.HasPrefix(got, c.want)) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// The values limit stops a large file before the parser runs.
	var b strings.Builder
	b.WriteString(head + "links:\n")
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "  - {a: x%d, b: y%d, rate: 1Gbps, delay: 1us}\n", i, i)
	}
	_, err := ParseTopologyYAML("big.yaml", []byte(b.String()))
	if err == nil || !strings.HasSuffix(err.Error(), ": more than 200000 values (keys, scalars and list entries: about 20000 links); write a topology this large in CSV") {
		t.Fatalf("big file: %v", err)
	}
}

// FuzzParseTopologyYAML: any text is a checked graph or a one-line error
// naming the file and a line.
func FuzzParseTopologyYAML(f *testing.F) {
	f.Add("nodes:\n  - {name: s0, kind: switch, tier: leaf}\n  - {name: host0, kind: host, server: a}\nlinks:\n  - {a: host0, b: s0, rate: 1Gbps, delay: 1us}\n")
	f.Add("nodes:\n  - name: s0\n    kind: switch\nlinks:\n  - a: s0\n    b: s0\n    rate: 1Gbps\n    delay: 0\n")
	f.Add("nodes: [{name: a, kind: host}, {name: b, kind: host}]\nlinks: [{a: a, b: b, rate: 1Gbps, delay: 0}]\n")
	f.Add("nodes: &x []\nlinks: *x\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseTopologyYAML("f.yaml", []byte(text))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.yaml:") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		if len(g.HostNodes) == 0 || g.Switches == 0 || len(g.Tier) != len(g.Nodes) {
			t.Fatalf("unchecked graph: %+v", g)
		}
	})
}
