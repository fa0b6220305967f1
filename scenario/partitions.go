package scenario

import "fmt"

// MaxPartitions bounds sim.partitions.
const MaxPartitions = 64

// PartitionsSupport reports whether a partitioned run (sim.partitions > 1)
// can simulate s, and if not which key stands in the way and why. A part
// sees only its own switches and hosts, so whatever reads across the
// fabric at once is refused: messages that wait on others' deliveries
// (collectives, any-to-any, RPCs; a flow list's dependencies are found
// when the plan is built), transports other than RoCE (with DCQCN, HPCC
// or PFC only) and UET (TCP's and Homa's posting reaches into the
// receiver's NIC), link failures, PFC storms and
// the PFC watchdog. Routes that could close a cycle of PFC pauses are
// refused when the plan is built (the deadlock search reads the whole
// fabric).
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
		case k.Collective:
			return false, key + ".kind", w.Kind + ": a collective's messages wait on each other's deliveries, across the parts"
		case k.ReadsStreamKeys:
			return false, key + ".kind", w.Kind + ": each write waits on the one before it, across the parts"
		case w.ResponseSize.RPC():
			return false, key + ".response_size", "a response waits on its request's delivery, across the parts"
		}
	}
	return true, "", ""
}
