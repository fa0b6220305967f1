package hosts

import (
	"fmt"

	"fabriclab/scenario"
)

// Notes says what of spec real hosts run otherwise than the simulator:
// they run kernel TCP between their NICs, with the congestion control the
// run asks for (kernelCC: run --cc, given as cc), so a scenario
// written for another transport measures TCP there. run --engine hosts
// prints them before it starts.
func Notes(spec *scenario.Scenario, cc string) []string {
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
