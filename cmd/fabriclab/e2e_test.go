package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
