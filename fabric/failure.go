package fabric

import "fabriclab/sim"

// FailLink takes the link of pt down in both directions: everything queued
// for it or on the wire is lost (counted as drops at that port), and
// whatever the switches still send its way until routes are recomputed is
// lost too. The transport recovers (NACK, timeout).
func (n *Network) FailLink(pt *Port) {
	pt.fail()
	pt.Peer.fail()
}

// RestoreLink brings the link of pt back up in both directions: it carries
// what the switches send its way from now on (routes still avoid it until
// they are recomputed).
func (n *Network) RestoreLink(pt *Port) {
	now := n.Sched.Now()
	for _, p := range []*Port{pt, pt.Peer} {
		if p.dead {
			p.dead = false
			// A pause the other end still holds, as far as its PFC frames
			// have told, applies again.
			for pr := range p.held {
				if p.held[pr] {
					p.pause(now, uint8(pr))
				}
			}
			p.Kick()
		}
	}
}

// Dead reports whether the port's link has failed.
func (pt *Port) Dead() bool { return pt.dead }

func (pt *Port) fail() {
	if pt.dead {
		return
	}
	pt.dead = true
	now := pt.net.Sched.Now()
	for pr := range pt.queues {
		for p := pt.queues[pr].pop(); p != nil; p = pt.queues[pr].pop() {
			pt.queues[pr].bytes -= int64(p.Wire)
			pt.total -= int64(p.Wire)
			if pt.sw != nil {
				pt.sw.release(p)
			}
			pt.lose(p)
		}
	}
	pt.queued = 0
	if pt.replica {
		// The sending part counts what is on the wire (below).
		for p := pt.pipe.pop(); p != nil; p = pt.pipe.pop() {
			pt.net.discard(p)
		}
		pt.net.failedAt[pt.ID] = now // for the frames still to come in (Import)
	} else {
		for p := pt.pipe.pop(); p != nil; p = pt.pipe.pop() {
			pt.lose(p)
		}
	}
	if pt.remote {
		// The frames this port put on the wire, in another part now:
		// those still on it are lost (that part discards them). The
		// failure comes before any other event at its time (the lab
		// schedules it first), so a frame due now is still on it, there
		// as here.
		w := pt.net.exported[pt.ID]
		if w == nil {
			panic("fabric: a link between parts failed, but the network was set up without failures (SetRemote)")
		}
		for w.Len() > 0 {
			if f := w.Pop(); f.at >= now {
				pt.countLoss(f.wire)
			}
		}
	}
	// The frame being sent is lost, but its end still comes: schedule it
	// if the port only reserved it. (Otherwise the wire's one pending
	// arrival, the oldest packet's, outlives it; now that may come before
	// the end, and nothing would be left at the end's time that kept the
	// run, its telemetry and its end time going until then.)
	if pt.sending() {
		pt.queueTxDone()
	}
	for pr := range pt.paused {
		if pt.paused[pr] {
			pt.pausedTotal[pr] += now - pt.pausedAt[pr]
			pt.C.PFCPausedS += (now - pt.pausedAt[pr]).Seconds()
		}
		pt.paused[pr] = false
	}
}

// lose drops p at this port.
func (pt *Port) lose(p *Packet) {
	pt.countLoss(p.Wire)
	pt.net.discard(p)
}

// countLoss counts a frame of wire bytes lost at this port now.
func (pt *Port) countLoss(wire int32) {
	pt.C.Drops++
	pt.lostAt = pt.net.Sched.Now()
	pt.lostPackets++
	pt.lostBytes += int64(wire)
}

// discard drops p from the network's balance.
func (n *Network) discard(p *Packet) {
	n.DroppedBytes += int64(p.Wire)
	n.DroppedPackets++
	n.Pool.Put(p)
}

// Losses is what this port's link has lost so far by failing (packets,
// wire bytes) and when it last lost one: failures account their
// disruption with it.
func (pt *Port) Losses() (packets, bytes int64, last sim.Time) {
	return pt.lostPackets, pt.lostBytes, pt.lostAt
}
