// Package rankexec is one real-hosts agent's share of a workload's
// executor: the DAG messages its own ranks start (wire.DAGMsg), run by the
// same workload.Executor the simulator drives, with the messages they
// wait for that others start held as external ones. It is a pure state
// machine — no clock, no I/O: the agent tells it each delivery it sees
// (a message its endpoints received, one of its own acknowledged, one the
// controller relayed) and posts what it releases.
//
// A workload's DAG.Until (any-to-any) is kept the executor's way: a
// message whose dependencies are all delivered at or after Until is cut.
// After Until nothing can be released any more, so every own message not
// released by then is cut, and the agent is done once the released ones
// are delivered.
package rankexec

import (
	"fmt"

	"fabriclab/hosts/wire"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// Bounds on a share: they keep a malformed spec from allocating without
// limit (a spec is at most the agent's largest request anyway).
const (
	MaxMessages = 1 << 22
	MaxDeps     = 1 << 24 // dependencies over all messages
	maxMsgID    = 1<<40 - 1
)

// Release is one message the executor released: post Bytes on Conn under
// id Msg, or, for a marker, nothing (it is already delivered; a Shadow
// marker is another agent's, completed here too and reported by its owner).
type Release struct {
	Msg    int64
	Conn   int
	Bytes  int64
	Marker bool
	Shadow bool
}

// Exec is the state machine.
type Exec struct {
	dag   *workload.DAG
	ex    *workload.Executor
	until sim.Time
	ids   []int64         // local index → the run's message id
	index map[int64]int32 // the run's message id → local index
	conn  []int           // local index → connection (−1: marker or external)
	own   int             // own messages (shadows included) are local indices 0 … own−1
	// shadow marks the own messages that are copies of another agent's
	// markers: they are run here but counted nowhere.
	shadow  []bool
	shadows int

	released  []bool // own messages released (started)
	nReleased int    // of them, not shadows
	delivered int    // own messages delivered, not shadows
	out       []Release
}

// New builds the share of msgs (in the run's DAG order; every Deps entry
// names an earlier message of the run, own or not); until is
// workload.DAG.Until in nanoseconds (0: none).
func New(msgs []wire.DAGMsg, until int64) (*Exec, error) {
	if len(msgs) > MaxMessages {
		return nil, fmt.Errorf("%d DAG messages, at most %d", len(msgs), MaxMessages)
	}
	if until < 0 {
		return nil, fmt.Errorf("until %d is negative", until)
	}
	x := &Exec{index: make(map[int64]int32, len(msgs)), own: len(msgs), until: sim.Time(until) * units.Nanosecond}
	deps := 0
	for i, m := range msgs {
		switch {
		case m.Msg < 0 || m.Msg > maxMsgID:
			return nil, fmt.Errorf("DAG message %d: id %d outside 0…%d", i, m.Msg, int64(maxMsgID))
		case m.Conn < -1:
			return nil, fmt.Errorf("DAG message %d: connection %d", m.Msg, m.Conn)
		case m.Conn == -1 && m.Bytes != 0:
			return nil, fmt.Errorf("DAG message %d: a marker (connection −1) moves no bytes, not %d", m.Msg, m.Bytes)
		case m.Shadow && m.Conn != -1:
			return nil, fmt.Errorf("DAG message %d: only a marker (connection −1) can be a shadow", m.Msg)
		case m.Conn >= 0 && m.Bytes <= 0:
			return nil, fmt.Errorf("DAG message %d: %d bytes; a message moves at least one", m.Msg, m.Bytes)
		case m.At < 0:
			return nil, fmt.Errorf("DAG message %d: earliest start %d is negative", m.Msg, m.At)
		}
		if _, dup := x.index[m.Msg]; dup {
			return nil, fmt.Errorf("DAG message %d is listed twice", m.Msg)
		}
		deps += len(m.Deps)
		if deps > MaxDeps {
			return nil, fmt.Errorf("more than %d dependencies", MaxDeps)
		}
		x.index[m.Msg] = int32(i)
		x.ids = append(x.ids, m.Msg)
		x.conn = append(x.conn, m.Conn)
		x.shadow = append(x.shadow, m.Shadow)
		if m.Shadow {
			x.shadows++
		}
	}
	// The messages the own ones wait for that this agent does not start
	// become external ones after them, in the order first named.
	all := make([]workload.Message, len(msgs), len(msgs)+8)
	for i, m := range msgs {
		all[i] = workload.Message{Bytes: m.Bytes, Marker: m.Conn < 0, At: sim.Time(m.At) * units.Nanosecond}
	}
	waits := make([][]int32, len(msgs))
	for i, m := range msgs {
		seen := make(map[int64]bool, len(m.Deps))
		for _, dep := range m.Deps {
			if dep == m.Msg {
				return nil, fmt.Errorf("DAG message %d waits for itself", m.Msg)
			}
			if dep < 0 || dep > maxMsgID {
				return nil, fmt.Errorf("DAG message %d waits for message %d, outside 0…%d", m.Msg, dep, int64(maxMsgID))
			}
			if seen[dep] {
				return nil, fmt.Errorf("DAG message %d waits for message %d twice", m.Msg, dep)
			}
			seen[dep] = true
			j, ok := x.index[dep]
			if !ok {
				j = int32(len(x.ids))
				x.index[dep] = j
				x.ids = append(x.ids, dep)
				x.conn = append(x.conn, -1)
				all = append(all, workload.Message{External: true})
			} else if j >= int32(i) && j < int32(x.own) {
				return nil, fmt.Errorf("DAG message %d waits for message %d, which comes after it", m.Msg, dep)
			}
			waits[i] = append(waits[i], j)
		}
	}
	dag := &workload.DAG{Until: x.until}
	for i, m := range all {
		if i < len(waits) {
			dag.Add(m, waits[i]...)
		} else {
			dag.Add(m)
		}
	}
	dag.Finish()
	x.dag = dag
	x.ex = workload.NewExecutor(dag)
	x.released = make([]bool, x.own)
	return x, nil
}

// Ready releases the roots on the first call, then whatever's earliest
// start has come by now. The list is valid until the next call.
func (x *Exec) Ready(now sim.Time) []Release { return x.releases(x.ex.Ready(now)) }

// NextRelease is when the next waiting message may start (ok false: none
// waits).
func (x *Exec) NextRelease() (sim.Time, bool) { return x.ex.NextRelease() }

// Knows reports whether message id is in this share (own or waited for).
func (x *Exec) Knows(id int64) bool { _, ok := x.index[id]; return ok }

// Delivered records that message id was delivered at now (seen here, or
// relayed) and returns what this releases. A message the share does not
// know, or one delivered before, releases nothing.
func (x *Exec) Delivered(id int64, now sim.Time) []Release {
	i, ok := x.index[id]
	if !ok {
		return nil
	}
	if i < int32(x.own) && !x.released[i] {
		return nil // an own message is delivered only after it was released
	}
	before := x.ex.Completed()
	rel := x.ex.Delivered(i, now)
	if x.ex.Completed() > before && i < int32(x.own) && !x.shadow[i] {
		x.delivered++
	}
	return x.releases(rel)
}

// IsExternal reports whether id is a message this share waits for but
// does not run: what a relay may tell it.
func (x *Exec) IsExternal(id int64) bool {
	i, ok := x.index[id]
	return ok && i >= int32(x.own)
}

// releases converts the executor's list, counting the own releases and
// the markers among them (delivered at once).
func (x *Exec) releases(msgs []int32) []Release {
	x.out = x.out[:0]
	for _, i := range msgs {
		if i >= int32(x.own) {
			continue // external: never released here
		}
		x.released[i] = true
		c := x.conn[i]
		marker, sh := c < 0, x.shadow[i]
		if !sh {
			x.nReleased++
			if marker {
				x.delivered++
			}
		}
		x.out = append(x.out, Release{Msg: x.ids[i], Conn: c, Bytes: x.dag.Msgs[i].Bytes, Marker: marker, Shadow: sh})
	}
	return x.out
}

// Own is how many messages this agent starts and reports (shadows not
// included).
func (x *Exec) Own() int { return x.own - x.shadows }

// Done reports, at now, whether every own message was delivered or cut:
// all of them delivered, or — at or after Until, when nothing more can
// be released — every released one delivered and none waiting for its
// earliest start (a message released before Until starts at its time,
// even after Until).
func (x *Exec) Done(now sim.Time) bool {
	if x.delivered == x.Own() {
		return true
	}
	_, waiting := x.ex.NextRelease()
	return x.until > 0 && now >= x.until && x.delivered == x.nReleased && !waiting
}

// Cut is how many own messages were never released (at the end: cut).
func (x *Exec) Cut() int { return x.Own() - x.nReleased }
