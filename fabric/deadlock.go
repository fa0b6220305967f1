package fabric

import (
	"fmt"
	"slices"
	"strings"

	"fabriclab/sim"
)

// PFC deadlock: a cycle of egress queues, each paused by the ingress of
// the next switch whose packets wait in the next queue of the cycle. None
// can move until another does, so none ever will. The network looks for
// one whenever a queue is paused (only through paused queues, so the cost
// is nil while nothing is paused) and, when a cycle still holds
// deadlockConfirm later, reports it once through OnDeadlock.

// deadlockConfirm is how long a cycle of pauses must hold to be a
// deadlock rather than a passing one.
const deadlockConfirm = 100 * 1000 * 1000 // 100 µs in ps

// Deadlock is a cycle of paused egress ports on one priority.
type Deadlock struct {
	At    sim.Time
	Prio  uint8
	Ports []*Port // in cycle order: each is paused by the next one's switch
}

// String names the cycle: "leaf1→spine0 → spine0→leaf2 → …".
func (d *Deadlock) String() string {
	var hops []string
	for _, pt := range d.Ports {
		node, peer := PortName(pt)
		hops = append(hops, node+"→"+peer)
	}
	return fmt.Sprintf("PFC deadlock at %v on priority %d: %s, each paused by the next and waiting on it", d.At, d.Prio, strings.Join(hops, " → "))
}

// self is the identity: in one network every port is its own current
// copy (CycleThrough's own).
func self(pt *Port) *Port { return pt }

// CycleThrough looks for a cycle of paused egress queues through start on
// priority pr: an edge X → Y when X is paused by the ingress of Y's switch
// (X's peer) and Y, paused too, holds packets that came in there. own
// gives the copy of a port whose state is current: the port itself in
// one network, in a partitioned run the copy of the part that owns
// it, so that a cycle through several parts is found.
func CycleThrough(start *Port, pr uint8, own func(*Port) *Port) []*Port {
	var path []*Port
	seen := map[*Port]bool{}
	var dfs func(x *Port) bool
	dfs = func(x *Port) bool {
		path = append(path, x)
		seen[x] = true
		in := own(x.Peer)
		if sw := in.sw; sw != nil {
			for _, y := range sw.Ports {
				if y == in || !y.paused[pr] || y.queues[pr].bytes == 0 || !y.holdsFrom(in, pr) {
					continue
				}
				if y == start {
					return true
				}
				if !seen[y] && dfs(y) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if dfs(start) {
		return path
	}
	return nil
}

// holdsFrom reports whether this egress queue holds a packet that entered
// its switch through ingress port in.
func (pt *Port) holdsFrom(in *Port, pr uint8) bool {
	found := false
	pt.queues[pr].each(func(p *Packet) {
		if !found && p.inPort == int32(in.Index) {
			found = true
		}
	})
	return found
}

// CycleCheck is a cycle of pauses found on priority Prio, to be checked
// again: it is a deadlock if it still holds then, none of its queues
// having resumed (and maybe paused again) meanwhile.
type CycleCheck struct {
	Prio  uint8
	Ports []*Port
	seqs  []uint32 // each queue's pauses so far, when found
}

// NewCycleCheck notes cycle cyc on pr as it is now.
func NewCycleCheck(cyc []*Port, pr uint8) CycleCheck {
	c := CycleCheck{Prio: pr, Ports: cyc, seqs: make([]uint32, len(cyc))}
	for i, pt := range cyc {
		c.seqs[i] = pt.pauseSeq[pr]
	}
	return c
}

// Holds reports whether every queue of the cycle is still paused by the
// pause it had when found.
func (c *CycleCheck) Holds() bool {
	for i, pt := range c.Ports {
		if !pt.paused[c.Prio] || pt.pauseSeq[c.Prio] != c.seqs[i] {
			return false
		}
	}
	return true
}

// deadlockCheck is a candidate cycle, checked again deadlockConfirm later.
type deadlockCheck struct {
	n *Network
	CycleCheck
}

func (c *deadlockCheck) OnEvent(now sim.Time, _ uint64) {
	n := c.n
	if n.deadlock != nil || !c.Holds() {
		return // found already, or one of them moved: not a deadlock
	}
	n.deadlock = &Deadlock{At: now, Prio: c.Prio, Ports: c.Ports}
	if n.OnDeadlock != nil {
		n.OnDeadlock(n.deadlock)
	}
}

// watchCycle is called when egress port pt is paused on pr: a cycle of
// pauses through it is checked again deadlockConfirm later. The sweep is
// armed too: a cycle can also close later without a new pause, when a
// packet from the next switch enters a queue that was paused already.
func (n *Network) watchCycle(pt *Port, pr uint8) {
	if n.OnPause != nil {
		n.OnPause(pt, pr)
		return
	}
	if n.OnDeadlock == nil || n.deadlock != nil {
		return
	}
	n.armSweep()
	if searchAtPause {
		n.checkCycle(pt, pr)
	}
}

// searchAtPause is off only in a test that leaves detection to the sweep.
var searchAtPause = true

// SearchingAtPause reports whether a pause is searched from at once (on
// but in a test that leaves detection to the sweep, which a partitioned
// run's coordinator heeds too).
func SearchingAtPause() bool { return searchAtPause }

// sweepEvery bounds the sweep's backoff: after a pause the sweep comes
// deadlockConfirm later, then twice as long after each sweep that found
// nothing, up to this.
const sweepEvery = 100 * deadlockConfirm

// armSweep schedules the next sweep deadlockConfirm from now unless one is
// pending; a pending one comes at its time, and the one after it resets
// to deadlockConfirm.
func (n *Network) armSweep() {
	n.sweep.n = n
	n.sweep.wait = deadlockConfirm
	if !n.sweep.armed {
		n.sweep.schedule()
	}
}

// deadlockSweep searches the paused queues for a cycle no pause event
// revealed, while any switch queue is paused: one pass over the ports and
// the packets of the paused queues per sweep, sweeps backing off from
// deadlockConfirm to sweepEvery (10 ms) while nothing new is paused, and nothing
// while nothing is paused. It is a background event (sim.Scheduler): a run
// with nothing else left to do ends.
type deadlockSweep struct {
	n     *Network
	armed bool
	wait  sim.Time
}

func (w *deadlockSweep) schedule() {
	w.armed = true
	w.n.Sched.Background++
	w.n.Sched.After(w.wait, w, 0)
}

func (w *deadlockSweep) OnEvent(sim.Time, uint64) {
	n := w.n
	n.Sched.Background--
	w.armed = false
	if n.deadlock != nil || n.OnDeadlock == nil {
		return
	}
	paused := Sweep(n.Ports, self, func(pr uint8, cyc []*Port) { n.confirm(cyc[0], pr, cyc) })
	if paused && n.Sched.Foreground() > 0 {
		w.wait = NextSweepWait(w.wait)
		w.schedule()
	}
}

// Sweep looks for a cycle among the paused queues of ports (the current
// copies; own as for CycleThrough), on each priority where a switch queue
// is paused with packets behind the pause, and calls found with each
// cycle. It reports whether any switch queue is paused at all (the sweep
// goes on while one is).
func Sweep(ports []*Port, own func(*Port) *Port, found func(pr uint8, cyc []*Port)) (paused bool) {
	var prios [NumPrio]bool
	for _, pt := range ports {
		if pt.sw == nil {
			continue
		}
		for pr := range pt.paused {
			if pt.paused[pr] {
				paused = true
				prios[pr] = pt.queues[pr].bytes > 0 || prios[pr]
			}
		}
	}
	for pr, any := range prios {
		if any {
			if cyc := pausedCycle(ports, uint8(pr), own); cyc != nil {
				found(uint8(pr), cyc)
			}
		}
	}
	return paused
}

// NextSweepWait is the sweep's backoff: twice its last wait, at most
// sweepEvery (10 ms).
func NextSweepWait(wait sim.Time) sim.Time { return min(2*wait, sweepEvery) }

// pausedCycle is a cycle of paused queues on priority pr among ports, found
// in one pass: the graph of the paused queues holding packets (X → Y when
// X's peer switch holds, in Y, packets that came in from X) searched depth
// first without recursion. Nil when there is none. own is as for
// CycleThrough; ports are the current copies.
func pausedCycle(ports []*Port, pr uint8, own func(*Port) *Port) []*Port {
	holds := map[*Port][]int32{} // a paused queue: the ingress ports its packets came by
	var nodes []*Port
	for _, pt := range ports {
		if pt.sw == nil || !pt.paused[pr] || pt.queues[pr].bytes == 0 {
			continue
		}
		var ins []int32
		pt.queues[pr].each(func(p *Packet) {
			if !slices.Contains(ins, p.inPort) {
				ins = append(ins, p.inPort)
			}
		})
		holds[pt] = ins
		nodes = append(nodes, pt)
	}
	succ := func(x *Port, dst []*Port) []*Port {
		in := own(x.Peer)
		if in.sw == nil {
			return dst
		}
		for _, y := range in.sw.Ports {
			if y != in && slices.Contains(holds[y], int32(in.Index)) {
				dst = append(dst, y)
			}
		}
		return dst
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*Port]uint8, len(nodes))
	type frame struct {
		pt   *Port
		next []*Port
	}
	var path []frame
	for _, root := range nodes {
		if state[root] != unseen {
			continue
		}
		state[root] = onPath
		path = append(path[:0], frame{root, succ(root, nil)})
		for len(path) > 0 {
			top := &path[len(path)-1]
			if len(top.next) == 0 {
				state[top.pt] = done
				path = path[:len(path)-1]
				continue
			}
			y := top.next[0]
			top.next = top.next[1:]
			switch state[y] {
			case onPath:
				i := len(path) - 1
				for path[i].pt != y {
					i--
				}
				cyc := make([]*Port, 0, len(path)-i)
				for _, f := range path[i:] {
					cyc = append(cyc, f.pt)
				}
				return cyc
			case unseen:
				state[y] = onPath
				path = append(path, frame{y, succ(y, nil)})
			}
		}
	}
	return nil
}

// checkCycle looks for a cycle of pauses through pt on pr and, when there
// is one, checks it again deadlockConfirm later.
func (n *Network) checkCycle(pt *Port, pr uint8) {
	if cyc := CycleThrough(pt, pr, self); cyc != nil {
		n.confirm(pt, pr, cyc)
	}
}

// confirm checks cycle cyc (through pt, on pr) again deadlockConfirm
// later: still paused, none of it resumed meanwhile, it is a deadlock.
func (n *Network) confirm(pt *Port, pr uint8, cyc []*Port) {
	n.Sched.After(ConfirmWait(pt), &deadlockCheck{n: n, CycleCheck: NewCycleCheck(cyc, pr)}, 0)
}

// ConfirmWait is how long a cycle of pauses through pt must hold to be a
// deadlock: deadlockConfirm, and with a PFC watchdog its time to act too
// (the cycle may yet break).
func ConfirmWait(pt *Port) sim.Time {
	wait := sim.Time(deadlockConfirm)
	if sw := pt.sw; sw != nil && sw.cfg.WatchdogDetect > 0 {
		wait += sw.cfg.WatchdogDetect + sw.cfg.WatchdogRestore
	}
	return wait
}

// SweepFirst is the deadlock sweep's first wait after a pause
// (deadlockSweep), for a partitioned run's coordinator, which sweeps the
// same way.
const SweepFirst = sim.Time(deadlockConfirm)

// PausedAt is when priority pr of pt was last paused.
func (pt *Port) PausedAt(pr uint8) sim.Time { return pt.pausedAt[pr] }
