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
// pauses through it is checked again deadlockConfirm later.
func (n *Network) watchCycle(pt *Port, pr uint8) {
	if n.OnDeadlock == nil || n.deadlock != nil {
		return
	}
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
