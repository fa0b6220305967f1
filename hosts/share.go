package hosts

import (
	"slices"

	"fabriclab/hosts/wire"
	"fabriclab/plan"
	"fabriclab/units"
)

// shares splits the plan's DAG among the agents: each gets the messages
// its hosts start (a data message goes to its source's agent, a marker to
// its host's), with what each waits for, and runs the executor for them
// itself (package rankexec). relay lists, per message, the agents that wait
// for it but cannot see its delivery: neither its sender nor its receiver
// (for a marker: not its agent). The controller relays those deliveries.
func shares(p *plan.Plan, hostOf []int, agents int) (dag [][]wire.DAGMsg, relay map[int32][]int) {
	d := p.DAG
	n := int32(len(d.Msgs))
	owner := func(i int32) int { return hostOf[d.Msgs[i].Src] }
	deps := make([][]int64, n)
	relay = map[int32][]int{}
	for m := int32(0); m < n; m++ {
		msg := &d.Msgs[m]
		for _, j := range d.Successors(m) {
			deps[j] = append(deps[j], int64(m))
			a := owner(j)
			if a == owner(m) || (!msg.Marker && a == hostOf[msg.Dst]) {
				continue // it sees the delivery (sent, received or completed there)
			}
			if !slices.Contains(relay[m], a) {
				relay[m] = append(relay[m], a)
			}
		}
	}
	dag = make([][]wire.DAGMsg, agents)
	for i := int32(0); i < n; i++ {
		m := &d.Msgs[i]
		dm := wire.DAGMsg{Msg: int64(i), Conn: -1, At: int64(m.At / units.Nanosecond), Deps: deps[i]}
		if !m.Marker {
			dm.Conn, dm.Bytes = int(p.Conn[i]), m.Bytes
		}
		a := owner(i)
		dag[a] = append(dag[a], dm)
	}
	return dag, relay
}
