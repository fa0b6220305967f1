package hosts

import (
	"fmt"
	"slices"

	"fabriclab/hosts/rankexec"
	"fabriclab/hosts/wire"
	"fabriclab/plan"
	"fabriclab/units"
)

// shares splits the plan's DAG among the agents: each gets the messages
// its hosts start (a data message goes to its source's agent, a marker to
// its host's), with what each waits for, and runs the executor for them
// itself (package rankexec).
//
// An agent sees a data message's delivery when it holds either end (it is
// received there, or acknowledged to the sender there) and a marker's when
// it owns it. A marker that another agent waits for but cannot see — a
// transfer split into pieces (QPs, chunks) is joined on the receiver's
// marker, and the sender's next step waits on it — becomes a shadow in
// that agent's share when it can see everything the marker waits for:
// it completes its copy itself. What is left, relay lists per message:
// the agents that wait for it and can neither see it nor shadow it; the
// controller relays those deliveries.
func shares(p *plan.Plan, hostOf []int, agents int) (dag [][]wire.DAGMsg, relay map[int32][]int) {
	d := p.DAG
	n := int32(len(d.Msgs))
	owner := func(i int32) int { return hostOf[d.Msgs[i].Src] }
	deps := make([][]int64, n)
	for m := int32(0); m < n; m++ {
		for _, j := range d.Successors(m) {
			deps[j] = append(deps[j], int64(m))
		}
	}
	shadows := make([][]int, n) // per marker: the agents holding a shadow of it
	sees := func(a int, m int32) bool {
		msg := &d.Msgs[m]
		if msg.Marker {
			return owner(m) == a || slices.Contains(shadows[m], a)
		}
		return owner(m) == a || hostOf[msg.Dst] == a
	}
	relay = map[int32][]int{}
	for m := int32(0); m < n; m++ {
		for _, j := range d.Successors(m) {
			a := owner(j)
			if sees(a, m) {
				continue
			}
			if d.Msgs[m].Marker && allSeen(deps[m], a, sees) {
				shadows[m] = append(shadows[m], a)
				continue
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
		for _, b := range shadows[i] {
			sh := dm
			sh.Shadow = true
			dag[b] = append(dag[b], sh)
		}
	}
	return dag, relay
}

// allSeen reports whether agent a sees every message of deps.
func allSeen(deps []int64, a int, sees func(int, int32) bool) bool {
	for _, d := range deps {
		if !sees(a, int32(d)) {
			return false
		}
	}
	return true
}

// maxShareBytes is what a share may take in the Prepare request: the
// agent reads at most 64 MiB, and the rest of the spec needs room too.
const maxShareBytes = 48 << 20

// checkShare refuses, before anything is sent, a share an agent would
// refuse: more messages or dependencies than rankexec takes, or more
// than a Prepare request carries (about 80 bytes a message and 12 a
// dependency, in JSON).
func checkShare(sh []wire.DAGMsg) error {
	if len(sh) > rankexec.MaxMessages {
		return fmt.Errorf("its share of the DAG is %d messages; an agent runs at most %d: spread the hosts over more agents or run fewer iterations or smaller pieces", len(sh), rankexec.MaxMessages)
	}
	deps, bytes := 0, 0
	for _, m := range sh {
		deps += len(m.Deps)
		bytes += 80 + 12*len(m.Deps)
	}
	if deps > rankexec.MaxDeps {
		return fmt.Errorf("its share of the DAG has %d dependencies; an agent takes at most %d", deps, rankexec.MaxDeps)
	}
	if bytes > maxShareBytes {
		return fmt.Errorf("its share of the DAG (%d messages, %d dependencies) is about %d MiB, more than the %d MiB a Prepare request carries: spread the hosts over more agents or run fewer iterations or smaller pieces",
			len(sh), deps, bytes>>20, maxShareBytes>>20)
	}
	return nil
}
