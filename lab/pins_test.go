package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/scenario"
)

// A flow list's path column is the path taken, per packet, whatever the
// forwarding policy: on 2 leaves × 2 hosts and 2 spines, leaf0's uplink
// to each spine carries exactly the data packets of the flows pinned
// through it (the ACKs come back on the other leaf's uplinks).
func TestPinnedPathsAreThePathsTaken(t *testing.T) {
	dir := t.TempDir()
	flows := "src dst bytes start path\n" +
		"0 2 40KiB 0 leaf0>spine0>leaf1\n" + // 10 packets of 4 KiB
		"1 3 24KiB 0 leaf0>spine1>leaf1\n" + // 6
		"0 3 8KiB 0 leaf0>spine0>leaf1\n" // 2
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte(flows), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fw := range []string{"ecmp", "spray-random", "adaptive", "d-mod-k"} {
		src := `topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}
switch: {forwarding: ` + fw + `}
workload: {kind: flows, file: flows.txt}
`
		f, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Build(f.Jobs()[0])
		if err != nil {
			t.Fatal(err)
		}
		s.Run(context.Background(), nil)
		if !s.Done() {
			t.Fatalf("%s: not done", fw)
		}
		up := map[string]int64{}
		for _, sw := range s.Topo.Net.Switches {
			if sw.Name() != "leaf0" {
				continue
			}
			for _, pt := range sw.Ports {
				if peer := pt.Peer.Sw(); peer != nil {
					up[peer.Name()] = pt.TxPackets()
				}
			}
		}
		if up["spine0"] != 12 || up["spine1"] != 6 {
			t.Errorf("%s: leaf0 sent %d packets to spine0 (want 12) and %d to spine1 (want 6)", fw, up["spine0"], up["spine1"])
		}
	}
}

// A path that is not in the topology is refused where it is written, by
// validate as by a run.
func TestPinnedPathErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ line, want string }{
		{"0 2 1MB 0 leaf1>spine0>leaf1", "flows.txt:1: path: host 0 is attached to leaf0, not to leaf1"},
		{"0 2 1MB 0 leaf0>spine7>leaf1", `flows.txt:1: path: there is no switch "spine7" in the topology`},
		{"0 2 1MB 0 leaf0>leaf1", "flows.txt:1: path: leaf0 is not linked to leaf1"},
		{"0 2 1MB 0 leaf0>spine0>leaf0", "flows.txt:1: path: leaf0 is on the path twice"},
		{"0 3 1MB 0 leaf0>spine1", "flows.txt:1: path: host 3 is attached to leaf1, not to spine1"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte(c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte("topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\nworkload: {kind: flows, file: flows.txt}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.line, err, c.want)
		}
	}
	// A pinned path over a link down from the start for good would never
	// arrive (a run stopped at its time limit, analyze gave it a full
	// rate); one that fails later, or comes back, may be crossed.
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 2 1MB 0 leaf0>spine1>leaf1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for failure, want := range map[string]string{
		"{from: spine1, to: leaf0, at: 0}":             "flows.txt:1: path: it crosses leaf0–spine1, which topology.failures[0] takes down from the start for good",
		"{from: leaf0, to: spine1, at: 0, until: 5us}": "",
		"{from: leaf0, to: spine1, at: 1ms}":           "",
		"{from: leaf0, to: spine0, at: 0}":             "",
	} {
		_, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte("topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2, failures: ["+failure+"]}\nworkload: {kind: flows, file: flows.txt}\n"))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("failure %s: %v, want %q", failure, err, want)
		}
	}
}
