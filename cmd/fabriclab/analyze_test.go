package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small case of reproduction 3 (README, "Results and reproductions"; the
// reproduction itself is repro/testdata/repro3-static-routes.txt) for the
// analyze command's tests: 5 clients on leaf0 stream to 5 servers under
// static destination routing (d-mod-k, 8 spines); servers 8 and 16 are
// both ≡ 0 mod 8, so two flows share leaf0→spine0.
const repro3 = `name: repro3
topology:
  kind: leaf-spine
  hosts: 24
  hosts_per_leaf: 8
  spines: 8
  host_link: {rate: 6400Mbps, delay: 1us}
  fabric_link: {rate: 6400Mbps, delay: 1us}
nic: {mtu: 4096B, overhead: 82B}
switch:
  pfc: {enabled: false}
  forwarding: d-mod-k
workload:
  kind: flows
  file: flows.txt
variants:
  - name: static
  - name: ecmp
    switch: {forwarding: ecmp}
`

const repro3Flows = `src,dst,bytes,start
0 8 1GB 0
1 9 1GB 0
2 10 1GB 0
3 11 1GB 0
4 16 1GB 0
`

func writeRepro3(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte(repro3Flows), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "repro3.yaml")
	if err := os.WriteFile(path, []byte(repro3), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnalyzeJSONAndVariant(t *testing.T) {
	path := writeRepro3(t)
	a, stdout, stderr := newTestApp(nil, quickRun)
	a.load = newApp(nil, nil).load // the real loader
	if code := a.execute(context.Background(), []string{"analyze", "--variant", "ecmp", "--size", "1MB", "--json", "-", path}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Variant    string `json:"variant"`
		SizeBytes  int64  `json:"size_bytes"`
		Forwarding string `json:"forwarding"`
		Flows      []struct {
			Src  int      `json:"src"`
			BW   float64  `json:"bw_gbytes_s"`
			Path []string `json:"path"`
		} `json:"flows"`
		Collisions []struct{ Group string } `json:"collisions"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Variant != "ecmp" || r.SizeBytes != 1e6 || r.Forwarding != "ecmp" || len(r.Flows) != 5 || len(r.Flows[0].Path) != 4 ||
		len(r.Collisions) != 2 || r.Collisions[0].Group != "leaf→spine" {
		t.Errorf("%+v", r)
	}
}

func TestAnalyzeErrors(t *testing.T) {
	path := writeRepro3(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"analyze"}, 2, "analyze needs exactly one scenario file"},
		{[]string{"analyze", "--variant", "nope", path}, 2, `no variant "nope"`},
		{[]string{"analyze", "--size", "8Mb", path}, 2, `--size "8Mb"`},
		{[]string{"analyze", "--top", "-1", path}, 2, "--top must be at least 0"},
		{[]string{"analyze", "missing.yaml"}, 1, "missing.yaml"},
	} {
		a, _, stderr := newTestApp(nil, quickRun)
		a.load = newApp(nil, nil).load // the real loader
		code := a.execute(context.Background(), c.args)
		if code != c.code || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func TestAnalyzeHelp(t *testing.T) {
	a, stdout, _ := newTestApp(nil, quickRun)
	if code := a.execute(context.Background(), []string{"analyze", "--help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"max-min fair", "Examples:", "--variant NAME", "--size S", "--top N", "--json FILE"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// The ECMP table describes the fabric at time 0 as a run routes it: a
// link failed from the start for good is neither a usable link nor a path
// (2 leaves × 2 hosts, 2 spines, leaf0–spine0 down: the four cross-leaf
// flows share spine1, leaf1→spine0 idles; counting the failed link said 4
// links, ideal 1), a link that fails later is up then, and stderr says so.
func TestAnalyzeLeavesOutFailedLinks(t *testing.T) {
	dir := t.TempDir()
	const scen = `name: failed
topology:
  kind: leaf-spine
  hosts: 4
  hosts_per_leaf: 2
  spines: 2
  host_link: {rate: 100Gbps, delay: 1us}
  fabric_link: {rate: 100Gbps, delay: 1us}
  failures:
    - {from: leaf0, to: spine0, at: 0s}
    - {from: leaf1, to: spine1, at: 1ms, until: 2ms, period: 5ms, count: 3}
workload:
  kind: flows
  file: flows.txt
`
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 2 1MB\n1 3 1MB\n2 0 1MB\n3 1 1MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "failed.yaml")
	if err := os.WriteFile(path, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	a, stdout, stderr := newTestApp(nil, quickRun)
	a.load = newApp(nil, nil).load // the real loader
	if code := a.execute(context.Background(), []string{"analyze", path}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := stdout.String()
	for _, want := range []string{
		"\n      leaf→spine      3      4     2   1.33      2  0×1 2×2\n",
		"\n      spine→leaf      3      4     2   1.33      2  0×1 2×2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if want := "fabriclab: topology.failures[1]: leaf1–spine1 fails at 1ms (3 outages); analyze shows the fabric at time 0, with it up\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
