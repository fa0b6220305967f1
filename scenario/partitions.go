package scenario

import "fmt"

// MaxPartitions bounds sim.partitions.
const MaxPartitions = 64

// PartitionsSupport reports whether a partitioned run (sim.partitions > 1)
// can simulate s, and if not which key stands in the way and why. A part
// sees only its own switches and hosts, so whatever reads across the
// fabric at once is refused: any-to-any writes (each waits on the one
// before it, delivered elsewhere), transports other than RoCE (with
// DCQCN, HPCC or PFC only) and UET (TCP's and Homa's posting reaches into
// the receiver's NIC), link failures, PFC storms and the PFC watchdog.
// When the plan is built, deliveries that other parts wait on over a
// transport that may deliver a message on any packet (UET, receivers out
// of order) and routes that could close a cycle of PFC pauses (the
// deadlock search reads the whole fabric) are refused.
func PartitionsSupport(s *Scenario) (ok bool, key, why string) {
	switch {
	case s.Transport.Kind != "roce" && s.Transport.Kind != "uet":
		return false, "transport.kind", fmt.Sprintf("%s: a partitioned run takes RoCE and UET only (this transport's posting reaches into the receiver's NIC)", s.Transport.Kind)
	case len(s.Topology.Failures) > 0:
		return false, "topology.failures", "link failures reconverge the whole fabric's routes"
	case len(s.Topology.PFCStorms) > 0:
		return false, "topology.pfc_storms", "PFC storms are not partitioned"
	case s.Switch.PFC.Enabled && s.Switch.PFC.Watchdog.Detect > 0:
		return false, "switch.pfc.watchdog", "the watchdog reads whether the far end of a link still pauses it"
	case s.Sim.Engine != "packet":
		return false, "sim.engine", "partitions split the packet engine's run"
	}
	ws := []Workload{s.Workload}
	for _, j := range s.Jobs {
		ws = append(ws, j.Workload)
	}
	for i, w := range ws {
		key := "workload"
		if i > 0 {
			key = fmt.Sprintf("jobs[%d]", i-1)
		}
		k, ok := LookupWorkloadKind(w.Kind)
		switch {
		case !ok:
		case k.ReadsStreamKeys:
			return false, key + ".kind", w.Kind + ": each write waits on the one before it, across the parts"
		}
	}
	return true, "", ""
}
