package fabric

// FailLink takes the link of pt down in both directions: everything queued
// for it or on the wire is lost (counted as drops at that port), and
// whatever the switches still send its way until routes are recomputed is
// lost too. The transport recovers (NACK, timeout).
func (n *Network) FailLink(pt *Port) {
	pt.fail()
	pt.Peer.fail()
}

// Dead reports whether the port's link has failed.
func (pt *Port) Dead() bool { return pt.dead }

func (pt *Port) fail() {
	if pt.dead {
		return
	}
	pt.dead = true
	for pr := range pt.queues {
		for p := pt.queues[pr].pop(); p != nil; p = pt.queues[pr].pop() {
			pt.qbytes[pr] -= int64(p.Wire)
			pt.total -= int64(p.Wire)
			if pt.sw != nil {
				pt.sw.release(p)
			}
			pt.lose(p)
		}
	}
	for p := pt.pipe.pop(); p != nil; p = pt.pipe.pop() {
		pt.lose(p)
	}
	for pr := range pt.paused {
		pt.paused[pr] = false
	}
}

// lose drops p at this port.
func (pt *Port) lose(p *Packet) {
	pt.C.Drops++
	pt.net.DroppedBytes += int64(p.Wire)
	pt.net.DroppedPackets++
	pt.net.Pool.Put(p)
}
