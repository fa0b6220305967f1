package hosts

import (
	"context"
	"testing"

	"fabriclab/engine"
	"fabriclab/scenario"
)

// Check refuses, without agents, what a run on agents refuses whatever
// they are, in the run's words; and passes what the simulator alone
// refuses (sim.engine flow with probes, read for hosts), which the agents
// run.
func TestCheckRefusesAsTheRunDoes(t *testing.T) {
	onHosts := func(src string, sets ...string) scenario.Job {
		t.Helper()
		f, err := scenario.ParseOptions("h.yaml", []byte(src), scenario.Options{Sets: sets, Engine: scenario.EngineHosts})
		if err != nil {
			t.Fatal(err)
		}
		return f.Jobs()[0]
	}
	for _, set := range []string{"topology.scale_up.rate=100Gbps", "transport.kind=homa"} {
		j := onHosts(scen, set)
		inv, n := rig(t, 4)
		_, runErr := engine.RunJob(context.Background(), &Engine{Inventory: inv, Dial: n.dial}, j, nil)
		err := Check(j)
		if err == nil || runErr == nil || err.Error() != runErr.Error() {
			t.Errorf("%s: Check %v, the run %v", set, err, runErr)
		}
	}
	for _, sets := range [][]string{
		nil,
		{"switch.forwarding=te"},
		{"sim.engine=flow", "sim.partitions=2", "probes=[{from: 0, to: 3, rate: 1Gbps}]"},
	} {
		j := onHosts(scen, sets...)
		if err := Check(j); err != nil {
			t.Errorf("%q: %v", sets, err)
		}
		if len(sets) == 3 && (len(j.Spec.Probes) != 1 || j.Spec.Sim.Engine != "flow") {
			t.Errorf("%q: probes %v, sim.engine %s", sets, j.Spec.Probes, j.Spec.Sim.Engine)
		}
	}
}
