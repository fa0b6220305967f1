package topo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fabriclab/flow"
	"fabriclab/lab"
	"fabriclab/plan"
	"fabriclab/scenario"
)

// writeLeafSpine writes the leaf-spine of hosts/perLeaf leaves and spines
// spines as a custom topology file in the form ext says (csv or yaml):
// leaves, spines, hosts; every leaf's host links, then every spine's links
// to the leaves, the order the built-in builder connects them in.
func writeLeafSpine(t *testing.T, path, ext string, hosts, perLeaf, spines int, hostLink, fabLink string) {
	t.Helper()
	type node struct{ name, kind, tier string }
	type link struct{ a, b, rate, delay string }
	var nodes []node
	var links []link
	leaves := hosts / perLeaf
	for i := range leaves {
		nodes = append(nodes, node{fmt.Sprintf("leaf%d", i), "switch", "leaf"})
	}
	for j := range spines {
		nodes = append(nodes, node{fmt.Sprintf("spine%d", j), "switch", "spine"})
	}
	for h := range hosts {
		nodes = append(nodes, node{fmt.Sprintf("host%d", h), "host", ""})
	}
	hr, hd, _ := strings.Cut(hostLink, " ")
	fr, fd, _ := strings.Cut(fabLink, " ")
	for i := range leaves {
		for j := range perLeaf {
			links = append(links, link{fmt.Sprintf("host%d", i*perLeaf+j), fmt.Sprintf("leaf%d", i), hr, hd})
		}
	}
	for j := range spines {
		for i := range leaves {
			links = append(links, link{fmt.Sprintf("leaf%d", i), fmt.Sprintf("spine%d", j), fr, fd})
		}
	}
	var b strings.Builder
	switch ext {
	case "csv":
		b.WriteString("# leaf-spine written by the round-trip test\n")
		for _, n := range nodes {
			fmt.Fprintf(&b, "node,%s,%s,%s\n", n.name, n.kind, n.tier)
		}
		for _, l := range links {
			fmt.Fprintf(&b, "link, %s, %s, %s, %s\n", l.a, l.b, l.rate, l.delay)
		}
	case "yaml":
		b.WriteString("nodes:\n")
		for _, n := range nodes {
			if n.tier != "" {
				fmt.Fprintf(&b, "  - {name: %s, kind: %s, tier: %s}\n", n.name, n.kind, n.tier)
			} else {
				fmt.Fprintf(&b, "  - name: %s\n    kind: %s\n", n.name, n.kind)
			}
		}
		b.WriteString("links:\n")
		for _, l := range links {
			fmt.Fprintf(&b, "  - {a: %s, b: %s, rate: %s, delay: %s}\n", l.a, l.b, l.rate, l.delay)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runAll runs every job of the scenario text (written as dir/name) and
// returns each result as JSON, without its wall-clock time.
func runAll(t *testing.T, dir, name, text string) []string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range f.Jobs() {
		r, err := lab.Run(context.Background(), j, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", name, j.Variant, err)
		}
		if !r.Complete || !r.Conservation.OK {
			t.Fatalf("%s %s: complete=%v conservation=%+v", name, j.Variant, r.Complete, r.Conservation)
		}
		r.WallS = 0
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j.Variant+" "+string(b))
	}
	return out
}

// rest is the scenario around the topology: DCQCN with PFC and ECN on a
// 2:1 leaf-spine, every forwarding policy, a link failure mid-run and
// pinned routes, with explain mode, flow records and port counters.
const rest = `
seed: 5
switch: {buffer: 4MiB}
sim: {explain: true, record_flows: true, port_counters: true}
variants:
  - name: ecmp
  - name: spray
    switch: {forwarding: spray-rr}
    nic: {out_of_order: accept}
  - name: flowlet
    switch: {forwarding: flowlet}
  - name: adaptive
    switch: {forwarding: adaptive, forwarding_tiers: [{tier: spine, forwarding: ecmp}]}
    nic: {out_of_order: accept}
  - name: d-mod-k
    switch: {forwarding: d-mod-k}
  - name: failure
    topology: {failures: [{from: leaf0, to: spine1, at: 20us}, {from: spine0, to: leaf3}]}
  - name: pinned
    switch: {routes_file: routes.txt}
`

// A leaf-spine written as a custom file (CSV and YAML) gives bit-identical
// results to the built-in builder, for an all-to-all and a permutation.
func TestCustomRoundTrip(t *testing.T) {
	dir := t.TempDir()
	const links = `host_link: {rate: 100Gbps, delay: 1us}, fabric_link: {rate: 100Gbps, delay: 2us}`
	writeLeafSpine(t, filepath.Join(dir, "ls.csv"), "csv", 16, 4, 2, "100Gbps 1us", "100Gbps 2us")
	writeLeafSpine(t, filepath.Join(dir, "ls.yaml"), "yaml", 16, 4, 2, "100Gbps 1us", "100Gbps 2us")
	if err := os.WriteFile(filepath.Join(dir, "routes.txt"), []byte("leaf0 15 spine1\nspine1 15 leaf3\nleaf2 1 spine0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"workload: {kind: alltoall, sizes: {list: [256KiB]}}",
		"workload: {kind: permutation, sizes: {list: [1MiB]}}",
	} {
		start := time.Now()
		want := runAll(t, dir, "builtin.yaml", "name: rt\ntopology: {kind: leaf-spine, hosts: 16, hosts_per_leaf: 4, spines: 2, "+links+"}\n"+w+rest)
		for _, file := range []string{"ls.csv", "ls.yaml"} {
			got := runAll(t, dir, "custom.yaml", "name: rt\ntopology: {kind: custom, file: "+file+", "+links+"}\n"+w+rest)
			if len(got) != len(want) {
				t.Fatalf("%d jobs, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					v, _, _ := strings.Cut(want[i], " ")
					t.Errorf("%s, %s, variant %s: the custom topology's result differs from the built-in one", w, file, v)
				}
			}
		}
		t.Logf("%s: %d variants × 3 topologies in %v", w, len(want), time.Since(start).Round(time.Millisecond))
	}
}

// ns-3's topology.txt runs as it is: hosts in id order, switches swID.
func TestNS3Runs(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs("testdata/ns3-leafspine.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := "name: ns3\ntopology: {kind: ns3, file: " + abs + ", host_link: {rate: 100Gbps}, failures: [{from: sw8, to: sw11, at: 10us}]}\n" +
		"workload: {kind: alltoall, sizes: {list: [256KiB]}}\nswitch: {forwarding_tiers: [{tier: tier1, forwarding: adaptive}]}\nnic: {out_of_order: accept}\n"
	got := runAll(t, dir, "ns3.yaml", text)
	if len(got) != 1 {
		t.Fatalf("%d jobs", len(got))
	}
}

// analyze's static paths on a custom topology: a permutation on the
// leaf-spine file crosses the spines and finds the same collisions as on
// the built-in leaf-spine.
func TestAnalyzeCustom(t *testing.T) {
	dir := t.TempDir()
	writeLeafSpine(t, filepath.Join(dir, "ls.csv"), "csv", 16, 4, 2, "100Gbps 1us", "100Gbps 1us")
	analyze := func(topology string) string {
		path := filepath.Join(dir, "a.yaml")
		text := "name: a\ntopology: " + topology + "\nworkload: {kind: permutation, sizes: {list: [1MiB]}}\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := scenario.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		job := f.Jobs()[0]
		p, tp, err := plan.Static(job)
		if err != nil {
			t.Fatal(err)
		}
		flows, err := flow.RootFlows(p.DAG, flow.Routed(tp.Net, p))
		if err != nil {
			t.Fatal(err)
		}
		r := flow.Analyze(tp.Net, flows, flow.Options{Efficiency: 1, Tiers: tp.Tiers, EndpointName: tp.EndpointName})
		if len(r.Collisions) == 0 {
			t.Fatalf("%s: no collision groups", topology)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const links = "host_link: {rate: 100Gbps, delay: 1us}, fabric_link: {rate: 100Gbps, delay: 1us}"
	custom := analyze("{kind: custom, file: ls.csv, " + links + "}")
	builtin := analyze("{kind: leaf-spine, hosts: 16, hosts_per_leaf: 4, spines: 2, " + links + "}")
	if custom != builtin {
		t.Fatal("analyze on the custom leaf-spine differs from the built-in one")
	}
	if !strings.Contains(custom, "leaf→spine") {
		t.Fatalf("no leaf→spine group: %.300s", custom)
	}
}

// The shipped three-tier example, on a scaled-down copy of its topology
// (topo/testdata/three-tier-small.csv, same tiers) and a short window,
// runs to completion with bytes conserved in every variant.
func TestThreeTierExampleRuns(t *testing.T) {
	f, err := scenario.LoadSets("../examples/three-tier-websearch.yaml",
		[]string{"topology.file=../topo/testdata/three-tier-small.csv", "workload.duration=200us"})
	if err != nil {
		t.Fatal(err)
	}
	if refs := f.ReferencedFiles(); !slices.Contains(refs, filepath.Join("..", "topo", "testdata", "three-tier-small.csv")) {
		t.Fatalf("references %v", refs)
	}
	for _, j := range f.Jobs() {
		r, err := lab.Run(context.Background(), j, nil)
		if err != nil {
			t.Fatalf("%s: %v", j.Variant, err)
		}
		if !r.Complete || !r.Conservation.OK {
			t.Fatalf("%s: complete=%v conservation=%+v", j.Variant, r.Complete, r.Conservation)
		}
	}
}
