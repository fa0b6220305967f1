package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// End to end with the real loader and simulator: the same scenario and seed
// give the same JSON twice (apart from wall-clock fields), whatever -j is.
func TestRunRealScenarioIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	out := func(name string, parallel string) map[string]any {
		path := filepath.Join(dir, name)
		a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
		a.now = func() time.Time { return time.Unix(0, 0) }
		code := a.execute(context.Background(), []string{"run", "../../examples/incast.yaml", "-q", "-j", parallel,
			"--set", "workload.sizes.list=[64KiB,256KiB]", "--set", "sim.record_flows=true", "--set", "sim.port_counters=true",
			"--json", path})
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, v := range m["variants"].([]any) {
			for _, r := range v.(map[string]any)["results"].([]any) {
				delete(r.(map[string]any), "wall_s")
			}
		}
		delete(m, "started")
		delete(m, "finished")
		return m
	}
	a, b := out("a.json", "1"), out("b.json", "2")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("two runs of the same scenario and seed differ")
	}
	if len(ja) < 1000 {
		t.Fatalf("suspiciously small output: %s", ja)
	}
}

// A message workload end to end: the table has each variant's slowdown
// table, the JSON its buckets and load, the store keeps them, and the
// report draws the slowdown charts.
func TestRunMessageWorkload(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	db := filepath.Join(dir, "lab.db")
	report := filepath.Join(dir, "r.html")
	code := a.execute(context.Background(), []string{"run", "../../examples/homa-w5.yaml", "--set", "topology.hosts=32",
		"--set", "workload.duration=2ms", "--db", db, "--json", filepath.Join(dir, "out.json"), "--report", report})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stdout.String(), "# slowdown by message size over "); n != 4 || strings.Count(stdout.String(), " over Homa: w5, ") != 1 {
		t.Errorf("%d slowdown tables, want one per variant:\n%s", n, stdout.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.json"))
	var o struct {
		Variants []struct {
			Results []struct {
				Load     *struct{ Messages int } `json:"load"`
				Buckets  []any                   `json:"slowdown_by_size"`
				Complete bool                    `json:"complete"`
			} `json:"results"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	for i, v := range o.Variants {
		r := v.Results[0]
		if !r.Complete || r.Load == nil || r.Load.Messages == 0 || len(r.Buckets) == 0 {
			t.Errorf("variant %d: %+v", i, r)
		}
	}
	stdout.Reset()
	if code := newApp(&stdout, &bytes.Buffer{}).execute(context.Background(), []string{"show", "1", "--db", db}); code != 0 ||
		strings.Count(stdout.String(), "# slowdown by message size") != 4 {
		t.Errorf("show: exit %d\n%s", code, stdout.String())
	}
	h, _ := os.ReadFile(report)
	if !bytes.Contains(h, []byte("99th-percentile slowdown")) {
		t.Error("report has no slowdown chart")
	}
}
