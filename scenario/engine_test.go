package scenario

import (
	"strings"
	"testing"
)

// On real hosts (Options.Engine: EngineHosts, run/validate --engine hosts)
// no simulator runs: what only the flow engine or a partitioned run
// refuses is not refused there, and the same text read for the simulator
// still is, at the same key and in the same words. What holds whatever
// the engine (a known sim.engine, probes between hosts of the topology)
// is checked on hosts too.
func TestSimulatorRefusalsOnHosts(t *testing.T) {
	hosts := Options{Engine: EngineHosts}
	const flowProbes = minimal + "sim: {engine: flow}\nprobes:\n  - {from: 0, to: 3, rate: 1Gbps}\n"
	// Probes are refused at their key, pointing at --engine hosts only
	// (not at another sim.engine, which would refuse them too).
	const refusal = "t.yaml:4:1: probes: paced UDP probes run on real hosts only (--engine hosts); the simulator has no UDP transport"
	if _, err := Parse("t.yaml", []byte(flowProbes)); err == nil || err.Error() != refusal {
		t.Errorf("flow engine with probes on the simulator: %v\nwant %s", err, refusal)
	}
	f, err := ParseOptions("t.yaml", []byte(flowProbes), hosts)
	if err != nil || len(f.Base.Probes) != 1 || f.Base.Sim.Engine != "flow" {
		t.Fatalf("flow engine with probes on hosts: %v", err)
	}
	// The same by --set, and by a sweep point.
	const probes = minimal + "probes:\n  - {from: 0, to: 3, rate: 1Gbps}\n"
	if _, err := ParseOptions("t.yaml", []byte(probes), Options{Sets: []string{"sim.engine=flow"}}); err == nil || !strings.Contains(err.Error(), "probes: paced UDP probes run on real hosts only (--engine hosts); the simulator") {
		t.Errorf("--set sim.engine=flow with probes on the simulator: %v", err)
	}
	if _, err := ParseOptions("t.yaml", []byte(probes), Options{Sets: []string{"sim.engine=flow"}, Engine: EngineHosts}); err != nil {
		t.Errorf("--set sim.engine=flow with probes on hosts: %v", err)
	}
	if _, err := ParseOptions("t.yaml", []byte(probes), Options{Sweeps: []string{"sim.engine=packet,flow"}, Engine: EngineHosts}); err != nil {
		t.Errorf("a sweep over sim.engine with probes on hosts: %v", err)
	}
	// Every reason of the flow engine's, e.g. telemetry.
	const flowTelemetry = minimal + "sim: {engine: flow, telemetry: {ports: 4}}\n"
	if _, err := Parse("t.yaml", []byte(flowTelemetry)); err == nil || !strings.Contains(err.Error(), "sim.engine: flow: sim.telemetry") {
		t.Errorf("flow engine with telemetry on the simulator: %v", err)
	}
	if _, err := ParseOptions("t.yaml", []byte(flowTelemetry), hosts); err != nil {
		t.Errorf("flow engine with telemetry on hosts: %v", err)
	}
	// sim.partitions splits the packet engine's run, which hosts do not run.
	const parts = minimal + "sim: {engine: flow, partitions: 2}\n"
	if _, err := Parse("t.yaml", []byte(parts)); err == nil || !strings.Contains(err.Error(), "sim.partitions: 2 parts: partitions split the packet engine's run (sim.engine)") {
		t.Errorf("2 parts of a flow-engine run on the simulator: %v", err)
	}
	if _, err := ParseOptions("t.yaml", []byte(parts), hosts); err != nil {
		t.Errorf("2 parts of a flow-engine run on hosts: %v", err)
	}
	// Not the engine's: refused on hosts as on the simulator.
	for _, c := range []struct{ text, want string }{
		{minimal + "sim: {engine: fluid}\n", `sim.engine: unknown "fluid"`},
		{minimal + "sim: {engine: flow, partitions: 65}\n", "sim.partitions: must be between 0 and 64"},
		{minimal + "sim: {engine: flow}\nprobes:\n  - {from: 0, to: 32, rate: 1Gbps}\n", "probes[0].to: host 32 is not one of the topology's hosts 0…31"},
		{minimal + "sim: {engine: flow, telemetry: {interval: 1ns}}\n", "sim.telemetry.interval: must be at least 1us"},
	} {
		if _, err := ParseOptions("t.yaml", []byte(c.text), hosts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("on hosts:\n%s: %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := ParseOptions("t.yaml", []byte(minimal), Options{Engine: "flow"}); err == nil || !strings.Contains(err.Error(), `unknown engine "flow"`) {
		t.Errorf("Options.Engine flow (a sim.engine, not a place to run): %v", err)
	}
}
