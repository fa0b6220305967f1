package lab

import (
	"fabriclab/fabric"
	"fabriclab/sim"
)

// PFC deadlocks in a partitioned run. A cycle of paused queues can run
// through several parts' switches, which no part can see, so a part only
// notes the queues it pauses (fabric.Network.OnPause), and between two
// windows, while no part runs, the run's coordinator searches the whole
// fabric as one part's network searches itself (fabric/deadlock.go): a
// cycle through each queue paused, a sweep of every paused queue after
// the first pause, backing off while queues stay paused, and a cycle
// found checked again a confirmation wait after the pause that closed it,
// a deadlock if none of its queues resumed meanwhile. The windows end at
// each check's time, so a check sees the fabric as it is then: the run
// stops 100 µs after the pause that closed the cycle in this run, as one
// part does in its own (TestPartitionedDeadlockDetected). A pause is
// searched from at the end of the window it falls in, up to a lookahead
// after one part would (a cycle closing in between is still found, by the
// search or by the sweep).

// pausedQueue is a queue a part paused, and when.
type pausedQueue struct {
	pt *fabric.Port
	pr uint8
	at sim.Time
}

// deadlockCandidate is a cycle of pauses found, to be checked again at
// at.
type deadlockCandidate struct {
	fabric.CycleCheck
	at sim.Time
}

// deadlockWatch is the coordinator's search.
type deadlockWatch struct {
	// ports are every port, each its owner part's copy.
	ports []*fabric.Port
	// paused holds, by part, the queues it paused in the last window
	// (each part writes its own while it runs; the coordinator reads
	// them between windows).
	paused     [][]pausedQueue
	candidates []deadlockCandidate
	// sweepAt is the next sweep (−1: none), sweepWait the wait it was
	// set with.
	sweepAt, sweepWait sim.Time
	found              *fabric.Deadlock
}

// newDeadlockWatch takes over the deadlock search of parts sims (all of
// them: sims[0] is the coordinator's).
func newDeadlockWatch(sims []*Sim) *deadlockWatch {
	w := &deadlockWatch{ports: ownerPorts(sims), paused: make([][]pausedQueue, len(sims)), sweepAt: -1}
	for k, o := range sims {
		net := o.Topo.Net
		net.OnPause = func(pt *fabric.Port, pr uint8) {
			w.paused[k] = append(w.paused[k], pausedQueue{pt, pr, net.Sched.Now()})
		}
	}
	return w
}

// own is the copy of pt whose state is current: its owner part's.
func (w *deadlockWatch) own(pt *fabric.Port) *fabric.Port { return w.ports[pt.ID] }

// ownerPorts is every port's owner-part copy, by port id.
func ownerPorts(sims []*Sim) []*fabric.Port {
	s := sims[0]
	ports := make([]*fabric.Port, len(s.Topo.Net.Ports))
	for id := range ports {
		ports[id] = sims[s.partOf[id]].Topo.Net.Ports[id]
	}
	return ports
}

// due reports whether the coordinator has something to do after a window
// that ended at now: queues paused in it, or a check or the sweep due.
func (w *deadlockWatch) due(now sim.Time) bool {
	for _, p := range w.paused {
		if len(p) > 0 {
			return true
		}
	}
	t, _ := w.next()
	return t >= 0 && t <= now
}

// next is the time of the next check or sweep (−1: none), and whether it
// is a check: a check is due even when nothing else would happen, as in
// one part its event keeps the run going; the sweep is not.
func (w *deadlockWatch) next() (at sim.Time, check bool) {
	at = w.sweepAt
	for _, c := range w.candidates {
		if at < 0 || c.at < at {
			at = c.at
		}
		check = true
	}
	return at, check
}

// bound ends a window (end: its last picosecond, −1 when the run would
// end; lo: its first event, −1: none) at the next check or sweep, and
// within SweepFirst of its first event, so that what a pause in it sets
// (a check, the sweep) comes after it. A pending check carries a run
// whose parts have nothing left to run to its time, as one part's check
// event would, unless every message is delivered or the time is past
// limit.
func (w *deadlockWatch) bound(end, lo sim.Time, allDone bool, limit sim.Time) sim.Time {
	if end >= 0 && lo >= 0 {
		end = min(end, lo+fabric.SweepFirst-1)
	}
	t, check := w.next()
	switch {
	case t < 0:
		return end
	case end >= 0:
		return min(end, t)
	case check && !allDone && t <= limit:
		return t
	}
	return end
}

// check is the search after a window that ended at now, while no part
// runs: from each queue paused in it, then the checks and the sweep due.
// It sets found at the first deadlock.
func (w *deadlockWatch) check(now sim.Time) {
	search := fabric.SearchingAtPause()
	for k := range w.paused {
		if len(w.paused[k]) > 0 {
			// As one part's armSweep: the sweep comes a first wait after
			// the first pause, and backs off from there.
			w.sweepWait = fabric.SweepFirst
			if w.sweepAt < 0 {
				w.sweepAt = w.paused[k][0].at + fabric.SweepFirst
			}
		}
		for _, q := range w.paused[k] {
			pt := w.own(q.pt)
			if !search || !pt.Paused(q.pr) || pt.PausedAt(q.pr) != q.at {
				continue // resumed since, or paused again later in the window (searched then)
			}
			if cyc := fabric.CycleThrough(pt, q.pr, w.own); cyc != nil {
				// One part finds a cycle at the pause that closes it, the
				// latest of its queues', and names it from there; this
				// search comes at the window's end, when a pause later in
				// the window may have closed it.
				cyc = closedBy(cyc, q.pr)
				w.watch(cyc, q.pr, cyc[0].PausedAt(q.pr)+fabric.ConfirmWait(cyc[0]))
			}
		}
		w.paused[k] = w.paused[k][:0]
	}
	if w.sweepAt >= 0 && w.sweepAt <= now {
		w.sweep()
	}
	// The earliest due check that still holds is the deadlock (one part
	// runs its checks in time order and stops at the first).
	kept := w.candidates[:0]
	for _, c := range w.candidates {
		switch {
		case c.at > now:
			kept = append(kept, c)
		case c.Holds() && (w.found == nil || c.at < w.found.At):
			w.found = &fabric.Deadlock{At: c.at, Prio: c.Prio, Ports: c.Ports}
		}
	}
	w.candidates = kept
}

// sweep looks for a cycle among every paused queue holding packets, as
// one part's sweep does (fabric.Sweep), and sets the next sweep while any
// queue is paused.
func (w *deadlockWatch) sweep() {
	at := w.sweepAt
	w.sweepAt = -1
	paused := fabric.Sweep(w.ports, w.own, func(pr uint8, cyc []*fabric.Port) {
		w.watch(cyc, pr, at+fabric.ConfirmWait(cyc[0]))
	})
	if paused {
		w.sweepWait = fabric.NextSweepWait(w.sweepWait)
		w.sweepAt = at + w.sweepWait
	}
}

// watch checks cycle cyc on pr again at at.
func (w *deadlockWatch) watch(cyc []*fabric.Port, pr uint8, at sim.Time) {
	w.candidates = append(w.candidates, deadlockCandidate{fabric.NewCycleCheck(cyc, pr), at})
}

// closedBy turns cycle cyc so that it starts at the queue paused last
// (the first of them on a tie).
func closedBy(cyc []*fabric.Port, pr uint8) []*fabric.Port {
	i := 0
	for j, pt := range cyc {
		if pt.PausedAt(pr) > cyc[i].PausedAt(pr) {
			i = j
		}
	}
	return append(cyc[i:len(cyc):len(cyc)], cyc[:i]...)
}
