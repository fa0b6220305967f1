package fabric

import (
	"fmt"
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

// cycleFrom looks for a cycle of paused egress queues through start on
// priority pr: an edge X → Y when X is paused by the ingress of Y's switch
// (X's peer) and Y, paused too, holds packets that came in there.
func (n *Network) cycleFrom(start *Port, pr uint8) []*Port {
	var path []*Port
	seen := map[*Port]bool{}
	var dfs func(x *Port) bool
	dfs = func(x *Port) bool {
		path = append(path, x)
		seen[x] = true
		in := x.Peer
		if sw := in.sw; sw != nil {
			for _, y := range sw.Ports {
				if y == in || !y.paused[pr] || y.qbytes[pr] == 0 || !y.holdsFrom(in, pr) {
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

// deadlockCheck is a candidate cycle, checked again deadlockConfirm later.
type deadlockCheck struct {
	n     *Network
	pr    uint8
	ports []*Port
	seqs  []uint32
}

func (c *deadlockCheck) OnEvent(now sim.Time, _ uint64) {
	n := c.n
	if n.deadlock != nil {
		return
	}
	for i, pt := range c.ports {
		if !pt.paused[c.pr] || pt.pauseSeq[c.pr] != c.seqs[i] {
			return // one of them moved: not a deadlock
		}
	}
	n.deadlock = &Deadlock{At: now, Prio: c.pr, Ports: c.ports}
	if n.OnDeadlock != nil {
		n.OnDeadlock(n.deadlock)
	}
}

// watchCycle is called when egress port pt is paused on pr: a cycle of
// pauses through it is checked again deadlockConfirm later. The sweep is
// armed too: a cycle can also close later without a new pause, when a
// packet from the next switch enters a queue that was paused already.
func (n *Network) watchCycle(pt *Port, pr uint8) {
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

// armSweep schedules the next sweep unless one is pending.
func (n *Network) armSweep() {
	if n.sweep.armed {
		return
	}
	n.sweep = deadlockSweep{n: n, armed: true}
	n.Sched.After(deadlockConfirm, &n.sweep, 0)
}

// deadlockSweep searches, every deadlockConfirm while any switch queue is
// paused, from every paused queue: the cycles no pause event revealed.
// It costs a pass over the ports per deadlockConfirm of paused time, and
// nothing while nothing is paused.
type deadlockSweep struct {
	n     *Network
	armed bool
}

func (w *deadlockSweep) OnEvent(sim.Time, uint64) {
	w.armed = false
	n := w.n
	if n.deadlock != nil || n.OnDeadlock == nil {
		return
	}
	paused := false
	for _, pt := range n.Ports {
		if pt.sw == nil {
			continue
		}
		for pr := range pt.paused {
			if pt.paused[pr] {
				paused = true
				if pt.qbytes[pr] > 0 {
					n.checkCycle(pt, uint8(pr))
				}
			}
		}
	}
	if paused {
		n.armSweep()
	}
}

// checkCycle looks for a cycle of pauses through pt on pr and, when there
// is one, checks it again deadlockConfirm later.
func (n *Network) checkCycle(pt *Port, pr uint8) {
	cyc := n.cycleFrom(pt, pr)
	if cyc == nil {
		return
	}
	c := &deadlockCheck{n: n, pr: pr, ports: cyc}
	for _, p := range cyc {
		c.seqs = append(c.seqs, p.pauseSeq[pr])
	}
	// With a PFC watchdog the cycle may yet break: wait for it to act.
	wait := sim.Time(deadlockConfirm)
	if sw := pt.sw; sw != nil && sw.cfg.WatchdogDetect > 0 {
		wait += sw.cfg.WatchdogDetect + sw.cfg.WatchdogRestore
	}
	n.Sched.After(wait, c, 0)
}
