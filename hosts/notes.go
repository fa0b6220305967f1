package hosts

import (
	"fmt"
	"slices"
	"strings"

	"fabriclab/scenario"
)

// Notes says what of spec real hosts run otherwise than the simulator:
// they run kernel TCP between their NICs, with the congestion control the
// run asks for (kernelCC: run --cc, given as cc), so a scenario
// written for another transport measures TCP there; and what only the
// simulator does (links failing during the run, PFC storms, telemetry
// over time, explain mode) does not happen there. run --engine hosts prints them
// before it starts.
func Notes(spec *scenario.Scenario, cc string) []string {
	notes := transportNotes(spec, cc)
	var sim []string
	// Links down from the start for good are the fabric as built (the
	// namespace lab builds them down); those that change during the run
	// are the simulator's.
	if slices.ContainsFunc(spec.Topology.Failures, func(f scenario.Failure) bool { return f.At > 0 || f.Until > 0 }) {
		sim = append(sim, "topology.failures during the run")
	}
	if len(spec.Topology.PFCStorms) > 0 {
		sim = append(sim, "topology.pfc_storms")
	}
	if spec.Sim.Telemetry.On() {
		sim = append(sim, "sim.telemetry")
	}
	if spec.Sim.Explain {
		sim = append(sim, "sim.explain")
	}
	if len(sim) > 0 {
		notes = append(notes, fmt.Sprintf("%s: the simulator's only; real hosts fail no link, storm no port, and record no telemetry over time or explanation (each row has the hosts' counters over the run)", strings.Join(sim, ", ")))
	}
	return notes
}

func transportNotes(spec *scenario.Scenario, cc string) []string {
	kind := spec.Transport.Kind
	cc = kernelCC(kind, cc)
	ccText := "each kernel's default congestion control"
	if cc != "" {
		ccText = "congestion control " + cc
	}
	switch kind {
	case "tcp":
		return nil
	case "dctcp":
		if cc == "dctcp" {
			return nil
		}
		return []string{fmt.Sprintf("transport.kind dctcp runs with %s on real hosts (--cc)", ccText)}
	case "homa":
		return nil // refused: no connections to run over TCP
	}
	keys := "transport." + kind
	if kind == "roce" {
		keys = "transport.dcqcn and transport.hpcc"
	}
	return []string{fmt.Sprintf("transport.kind %s runs as kernel TCP with %s on real hosts: %s settings are not applied (the real NICs' and switches' behaviour is measured)", kind, ccText, keys)}
}
