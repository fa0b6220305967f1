package lab

import (
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"fabriclab/scenario"
	"fabriclab/units"
)

// The files a job reads itself (a hand-made Job: no flow list from
// validation) go through inputfile: a FIFO is refused at once instead of
// hanging the build, with the key named.
func TestStaticInputsRefuseFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	routes := leafSpine(16, 8, 2)
	routes.Workload = scenario.Workload{Kind: "permutation", Ranks: 16}
	routes.Switch.RoutesFile = "fifo.txt"
	flows := leafSpine(16, 8, 2)
	flows.Workload = scenario.Workload{Kind: "flows", File: "fifo.txt"}
	for _, c := range []struct {
		s    *scenario.Scenario
		want string
	}{
		{routes, "switch.routes_file: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{flows, fifo + " is a named pipe (FIFO), not a regular file"},
	} {
		j := job(c.s, 64*units.KiB)
		j.Dir = dir
		done := make(chan error, 1)
		go func() {
			_, err := Build(j)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Build blocked on a FIFO (%s)", c.want)
		}
	}
}

// Validation builds its fabric from scenario.TopoSpec: it must be the
// fabric the lab builds.
func TestStaticTopoSpecMatchesScenario(t *testing.T) {
	a := leafSpine(32, 8, 4)
	b := leafSpine(16, 4, 0)
	b.Switch.PFC.Enabled = false
	b.Switch.ForwardingTiers = []scenario.TierForwarding{{Tier: "spine", Forwarding: "adaptive"}}
	b.Topology.ScaleUp = scenario.Link{Rate: 3600 * units.Gbps, Delay: units.Microsecond}
	b.Topology.SwitchLatency = 300 * units.Nanosecond
	for _, s := range []*scenario.Scenario{a, b} {
		if got, want := scenario.TopoSpec(s), TopoSpec(s); !reflect.DeepEqual(got, want) {
			t.Errorf("scenario.TopoSpec\n%+v\nlab.TopoSpec\n%+v", got, want)
		}
	}
}
