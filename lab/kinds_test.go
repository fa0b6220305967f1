package lab

import (
	"strings"
	"testing"

	"fabriclab/scenario"
)

// Every kind the scenario package accepts has what the packet engine needs:
// a transport to attach, a memory estimate for each workload kind.
func TestEveryKindRegistered(t *testing.T) {
	for _, k := range scenario.TransportKinds() {
		if _, ok := transports[k]; !ok {
			t.Errorf("transport %q has no packet-engine transport in lab.transports", k)
		}
	}
	for name := range transports {
		if _, ok := scenario.LookupTransportKind(name); !ok {
			t.Errorf("lab.transports has %q, which the scenario package does not accept", name)
		}
	}
	spec := scenario.Defaults()
	for _, kind := range scenario.WorkloadKinds() {
		s := *spec
		s.Workload.Kind = kind
		j := estimateJob(scenario.Job{Spec: &s, Seed: 1, Size: 1 << 20}, 0, scenario.Hosts(s.Topology), sizeDists{})
		if j.Err != nil && strings.Contains(j.Err.Error(), "does not know") {
			t.Errorf("%s: %v", kind, j.Err)
		}
	}
	var s scenario.Scenario = *spec
	s.Workload.Kind = "no-such-kind"
	if j := estimateJob(scenario.Job{Spec: &s}, 0, 32, sizeDists{}); j.Err == nil {
		t.Error("an unknown kind was estimated")
	}
}
