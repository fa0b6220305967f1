package report

import (
	"testing"
)

// A saved run is read again for no engine: it was valid for whichever
// engine ran it. A real-hosts run of a scenario asking for the flow
// engine, with probes (which every simulator engine refuses), shows its
// fabric, even when no row says where it ran (every job failed, or the
// run stopped at a wrong agent token).
func TestSavedScenarioOfAHostsRun(t *testing.T) {
	const text = "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\n" +
		"workload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: flow, partitions: 2}\nprobes:\n  - {from: 0, to: 3, rate: 1Gbps}\n"
	fs, err := SavedFabrics([]string{"s.yaml"}, text, nil, nil)
	if err != nil || len(fs) != 1 {
		t.Errorf("the hosts run's fabric: %v %+v", err, fs)
	}
	if _, err := SavedScenarioIn([]string{"s.yaml"}, text, []string{"sim.engine=fluid"}, nil); err == nil {
		t.Error("an unknown sim.engine was read back")
	}
}
