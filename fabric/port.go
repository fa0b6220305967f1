package fabric

import (
	"math/bits"
	"unsafe"

	"fabriclab/counters"
	"fabriclab/internal/prefetch"
	"fabriclab/sim"
	"fabriclab/units"
)

// Node is anything a link delivers to: a switch or a host NIC.
type Node interface {
	// Receive takes a packet whose last bit has just arrived on in (the
	// receiving node's own port of that link).
	Receive(p *Packet, in *Port)
	Name() string
}

// Feeder lets a host NIC hand its port the next data packet only when the
// port can send, so that per-QP rate limiters pace exactly and the NIC never
// builds a queue of its own. Pull returns nil when nothing is ready; the
// feeder calls Port.Kick when that changes.
//
// Idle reports whether Pull would return nil now and change nothing, and
// will go on doing so until the feeder calls Port.Kick (false is always
// safe). A pause of the port's priority is not idleness: a resume during
// a frame whose end was only reserved pulls nothing at the end.
//
// A host port whose frame leaves its queues empty and its feeder idle
// does not schedule the frame's end, as a switch port with nothing queued
// does not: it reserves the end's place and schedules it only if a packet
// is queued or the feeder kicks the port before then, since at the end it
// would only have pulled nothing (two thirds of WebSearch's host frame
// ends were such).
type Feeder interface {
	Pull(now sim.Time, pt *Port) *Packet
	Idle() bool
}

// NumPrio is the number of traffic classes.
const NumPrio = 8

// Port events, packed in the low bits of the event argument.
const (
	evTxDone = iota
	evArrive
	evPFC      // arg >> 8: prio, bit 4: 1 = pause, 0 = resume
	evWatchdog // arg >> 8: prio, bits 32…: the pause's sequence number; bit 4: 1 = the restore ends
)

// PauseFrameWire is the wire size of a PFC frame (64 B + preamble/IFG).
const PauseFrameWire = 84

// Port is one end of a full-duplex link: it transmits toward Peer and is also
// the ingress identity of packets arriving from Peer (for PFC accounting).
type Port struct {
	// The fields a packet's hop reads come first, together, so that a hop
	// touches a few of a port's cache lines rather than all sixteen (the
	// ports of a 1,024-host fabric outgrow the caches).
	net  *Network
	sw   *Switch // owner, when it is a switch (buffer accounting on dequeue)
	Peer *Port
	// to is Peer.Owner, where this port's frames arrive: kept here so an
	// arrival does not read a line of the peer just to find its owner.
	to     Node
	pipe   fifo // packets on the wire toward Peer, in arrival order
	psPerB int64
	Delay  sim.Time // propagation (+ the owner's forwarding latency)
	// pmax is the ECN marking probability at kmax (read only for a queue
	// between the thresholds, so here rather than in the flags' line).
	pmax float64
	// busyTime is the time spent sending (utilization).
	busyTime sim.Time
	// A switch port whose frame has nothing queued behind it does not
	// schedule the frame's end: it holds the event's insertion number
	// (txSeq, sim.Scheduler.Reserve) and the time (txAt), and schedules
	// the event in its place only if a packet comes to wait (txQueued).
	// About a fifth of all events were such ends with nothing to do.
	txAt  sim.Time
	txSeq uint64
	// txPackets, txBytes and maxQueue are C's TxPackets, TxBytes and
	// MaxQueueBytes, kept apart so that a frame does not touch a line of
	// C (Counters, TxBytes and the rest read them).
	txPackets, txBytes int64

	// The egress's flags and ECN thresholds: one line.
	txWire   int32 // wire size of the frame being sent
	queued   uint8 // bit pr set: queues[pr] is not empty (trySend looks at those only)
	busy     bool
	txQueued bool
	dead     bool // the link failed
	remote   bool // another part owns the far end (partition.go)
	host     bool // owner is a host: count injections
	paused   [NumPrio]bool
	// watchdogged: the watchdog took this queue out of PFC.
	watchdogged [NumPrio]bool
	// observed is Network.observer != nil, here so that an enqueue onto a
	// busy port reads this line and its queue's only.
	observed bool
	// ecn thresholds (bytes) for this egress queue; kmax == 0 disables.
	kmin, kmax int64
	total      int64 // bytes queued
	maxQueue   int64

	// What a packet arriving through this port reads of it, its ingress:
	// one line, and its bytes per priority the next.
	Index     int           // index within the owner's port list
	pauseSent [NumPrio]bool // a pause is out for this priority
	// PFC thresholds
	xoff, xon, headroom int64
	waiting             bool // in its switch's poolWait list
	// replica: another part of a partitioned run owns this port and this
	// part its far end, where it carries the other part's frames
	// (partition.go). Here to fill the line.
	replica bool
	// lostAt is when this port last lost a packet to a failure (here to
	// fill the line).
	lostAt      sim.Time
	lostPackets int64
	// ingress: packets that arrived through this port and sit in the owner
	ingress [NumPrio]int64
	// queues are the egress queues, one per priority, each with its
	// bytes in one cache line.
	queues [NumPrio]prioQueue
	ID     int // index in Network.Ports
	// C is the port's counters, but for TxPackets, TxBytes and
	// MaxQueueBytes (txPackets…): read them all with Counters.
	C counters.Counters

	// Rarely read.
	Owner Node
	// feeder is the host NIC that supplies data packets (host ports).
	feeder      Feeder
	Tier        string
	Rate        units.Rate
	pausedAt    [NumPrio]sim.Time
	pauseSeq    [NumPrio]uint32   // pauses so far: a watchdog check is for one pause
	pausedTotal [NumPrio]sim.Time // closed pause intervals, summed
	// held is the peer's pause as this port last heard it: a pause frame
	// came and no resume since, whether or not the watchdog let it apply
	// or the link was down.
	held [NumPrio]bool
	// pauseLevel is the threshold each pause was sent at (dynamic PFC:
	// what the headroom counts from while paused).
	pauseLevel [NumPrio]int64
	lostBytes  int64
}

// prioQueue is one priority's egress queue and the bytes in it: half a
// cache line, so a hop touches one line of them.
type prioQueue struct {
	fifo
	bytes int64
}

// Paused reports whether the peer has paused priority prio on this port.
func (pt *Port) Paused(prio uint8) bool { return pt.paused[prio] }

// Busy reports whether the port is transmitting.
func (pt *Port) Busy() bool { return pt.sending() }

// sending reports whether the port is transmitting now. A frame whose end
// was not scheduled (txQueued false) ends at txAt, when the end event it
// reserved would have had its turn: events at txAt inserted before it see
// the port busy, those after it see it idle, exactly as if it had run.
func (pt *Port) sending() bool {
	if !pt.busy || pt.txQueued {
		return pt.busy
	}
	s := pt.net.Sched
	if now := s.Now(); pt.txAt > now || pt.txAt == now && pt.txSeq > s.Current() {
		return true
	}
	pt.busy = false
	return false
}

// queueTxDone schedules the end of the frame being sent, in the place it
// reserved, when something comes to wait for it.
func (pt *Port) queueTxDone() {
	if pt.busy && !pt.txQueued {
		pt.txQueued = true
		pt.net.Sched.AtSeq(pt.txAt, pt.txSeq, pt, evTxDone)
	}
}

// TxPackets and TxBytes are the frames and wire bytes sent so far;
// MaxQueueBytes is the most bytes queued at once.
func (pt *Port) TxPackets() int64     { return pt.txPackets }
func (pt *Port) TxBytes() int64       { return pt.txBytes }
func (pt *Port) MaxQueueBytes() int64 { return pt.maxQueue }

// QueueBytes is the bytes queued for transmission on this port.
func (pt *Port) QueueBytes() int64 { return pt.total }

// PrioBytes is the bytes queued for the port on priority pr.
func (pt *Port) PrioBytes(pr uint8) int64 { return pt.queues[pr].bytes }

// load is what adaptive routing compares: bytes queued plus the frame being
// sent, so a port that is merely busy does not look idle.
func (pt *Port) load() int64 {
	if pt.sending() {
		return pt.total + int64(pt.txWire)
	}
	return pt.total
}

// TxTime is how long wire bytes take on this port.
func (pt *Port) TxTime(wire int32) sim.Time {
	if pt.psPerB > 0 {
		return sim.Time(int64(wire) * pt.psPerB)
	}
	return units.SerializationTime(units.Size(wire), pt.Rate)
}

// Enqueue queues p for transmission (used by switches and by NICs for
// control packets).
func (pt *Port) Enqueue(p *Packet) {
	if pt.dead {
		if pt.sw != nil {
			pt.sw.release(p) // admitted into the switch, now leaving it
		}
		pt.lose(p)
		return
	}
	pr := p.Prio
	if pt.watchdogged[pr] && pt.sw != nil && pt.sw.cfg.WatchdogDrop {
		pt.sw.release(p) // admitted into the switch, dropped by the watchdog
		pt.dropWatchdog(p)
		return
	}
	if pt.observed {
		now := pt.net.Sched.Now()
		p.enq, p.enqPaused = now, pt.pausedFor(pr, now)
	}
	pt.queues[pr].push(p)
	pt.queued |= 1 << pr
	pt.queues[pr].bytes += int64(p.Wire)
	pt.total += int64(p.Wire)
	pt.maxQueue = max(pt.maxQueue, pt.total)
	if !pt.sending() {
		pt.trySend(pt.net.Sched.Now())
	} else {
		pt.queueTxDone()
	}
}

// Kick asks an idle port to look for something to send. A host port
// busy with a frame whose end it only reserved (its feeder was idle)
// schedules that end now, to pull at it.
func (pt *Port) Kick() {
	if !pt.sending() {
		pt.trySend(pt.net.Sched.Now())
	} else if pt.host {
		pt.queueTxDone()
	}
}

func (pt *Port) trySend(now sim.Time) {
	if pt.dead {
		return
	}
	var p *Packet
	for m := pt.queued; m != 0; { // strict priority: the highest first
		pr := bits.Len8(m) - 1
		m &^= 1 << pr
		if pt.paused[pr] {
			continue
		}
		q := &pt.queues[pr]
		p = q.pop()
		if q.head == nil {
			pt.queued &^= 1 << pr
		} else {
			// Its next packet goes a frame time from now, when it will
			// have been in the cache for a while.
			prefetch.Line(unsafe.Pointer(q.head))
		}
		pt.queues[pr].bytes -= int64(p.Wire)
		pt.total -= int64(p.Wire)
		if pt.sw != nil {
			if pt.sw.cfg.ECNAtDequeue {
				pt.mark(p, pt.queues[pr].bytes) // from the queue it leaves behind
			}
			pt.sw.release(p)
			if p.INT != 0 && p.Kind == Data {
				pt.net.INT.stamp(p, pt, now) // the ACK echoing it goes back unstamped
			}
			if pt.observed && p.Kind == Data && !p.Trimmed {
				pt.net.observer.Queued(p, pt, now-p.enq, pt.pausedFor(uint8(pr), now)-p.enqPaused)
			}
		}
		break
	}
	if p == nil && pt.host && pt.feeder != nil {
		p = pt.feeder.Pull(now, pt)
	}
	if p == nil {
		return
	}
	if pt.host {
		pt.net.InjectedBytes += int64(p.Wire)
		pt.net.InjectedPackets++
		if p.SentAt == 0 {
			p.SentAt = now
		}
	}
	tx := pt.TxTime(p.Wire)
	// A queue with a packet left has it waiting, and a host port pulls
	// its next packet at the frame's end unless its feeder is idle (it
	// kicks the port when that changes): both schedule the end.
	// Otherwise the port only reserves its place, before it counts as
	// busy (a renumbering the reservation sets off schedules the
	// reservations of busy ports: not this one's, which is not made yet).
	reserve := pt.total == 0 && (pt.sw != nil || pt.feeder == nil || pt.feeder.Idle())
	if reserve {
		pt.txSeq = pt.net.Sched.Reserve()
	}
	pt.busy = true
	pt.txWire = p.Wire
	pt.busyTime += tx
	pt.txPackets++
	pt.txBytes += int64(p.Wire)
	pt.txQueued = !reserve
	if reserve {
		pt.txAt = now + tx
	} else {
		pt.net.Sched.At(now+tx, pt, evTxDone)
	}
	p.arrival = now + tx + pt.Delay
	if pt.remote {
		pt.export(p) // the far end is another part's (partition.go)
		return
	}
	pt.onWire(p)
}

// onWire puts p, its arrival set, on the wire toward Peer. Only the
// wire's head has its arrival scheduled; a packet behind another is
// scheduled when that one arrives (OnEvent), from the arrival time the
// one ahead keeps for it (Packet.enq).
func (pt *Port) onWire(p *Packet) {
	tail := pt.pipe.tail
	pt.pipe.push(p)
	if tail != nil {
		tail.enq = p.arrival
		return
	}
	pt.net.Sched.At(p.arrival, pt, evArrive)
}

// OnEvent implements sim.Handler.
func (pt *Port) OnEvent(now sim.Time, arg uint64) {
	switch arg & 0xf {
	case evTxDone:
		pt.busy, pt.txQueued = false, false
		pt.trySend(now)
	case evArrive:
		if h := pt.pipe.head; h == nil || h.arrival != now {
			return // the link failed with its packet on it (and maybe came back since)
		}
		p := pt.pipe.pop()
		if h := pt.pipe.head; h != nil {
			// h.arrival, kept in p (Packet.enq), without reading h: a
			// packet sent a link delay ago is rarely still in the cache.
			// It is asked for now and read when it arrives, a frame time
			// later.
			prefetch.Line(unsafe.Pointer(h))
			pt.net.Sched.At(p.enq, pt, evArrive)
		}
		pt.to.Receive(p, pt.Peer)
	case evPFC:
		pr, on := uint8(arg>>8), arg&0x10 != 0
		pt.held[pr] = on
		if on {
			pt.C.PFCPausesRecv++
			if !pt.watchdogged[pr] {
				pt.pause(now, pr)
			}
		} else if pt.paused[pr] {
			pt.paused[pr] = false
			pt.pausedTotal[pr] += now - pt.pausedAt[pr]
			pt.C.PFCPausedS += (now - pt.pausedAt[pr]).Seconds()
			if !pt.sending() {
				pt.trySend(now)
			}
		}
	case evWatchdog:
		pt.watchdog(now, uint8(arg>>8), uint32(arg>>32), arg&0x10 != 0)
	}
}

// pause holds priority pr of this egress port from now (nothing if it is
// held already), with the watchdog and the deadlock search armed.
func (pt *Port) pause(now sim.Time, pr uint8) {
	if pt.paused[pr] {
		return
	}
	pt.paused[pr] = true
	pt.pausedAt[pr] = now
	pt.pauseSeq[pr]++
	if sw := pt.sw; sw != nil {
		if sw.cfg.WatchdogDetect > 0 {
			pt.net.Sched.At(now+sw.cfg.WatchdogDetect, pt, uint64(evWatchdog)|uint64(pr)<<8|uint64(pt.pauseSeq[pr])<<32)
		}
		pt.net.watchCycle(pt, pr)
	}
}

// dropWatchdog drops p for the watchdog's drop action.
func (pt *Port) dropWatchdog(p *Packet) {
	pt.C.Drops++
	pt.C.WatchdogDrops++
	if o := pt.net.dropObserver; o != nil && p.Kind == Data {
		o.Dropped(p, pt)
	}
	pt.net.DroppedBytes += int64(p.Wire)
	pt.net.DroppedPackets++
	pt.net.Pool.Put(p)
}

// stormRefresh is how often a storming host sends another pause frame
// (a real storm refreshes its pause quanta as they run out).
const stormRefresh = 10 * units.Microsecond

// Storm makes host h pause priority prio of its switch's port toward it
// from at until until, sending a pause frame every stormRefresh (a
// storming NIC: the switch cannot send it anything on that priority),
// then a resume. One event at a time is pending per storm.
//
// The storm is a schedule, not a reaction, so each side can play it
// alone: pause applies the frames to the switch's port (the part of a
// partitioned run that owns it), count counts them as the host's sent
// frames (the part that owns the host); one part does both.
func (n *Network) Storm(h int, prio uint8, at, until sim.Time, pause, count bool) {
	if pause || count {
		n.Sched.At(at, &storm{host: n.HostPorts[h], prio: prio, until: until, pause: pause, count: count}, 0)
	}
}

// storm is one storming host's pause frames.
type storm struct {
	host         *Port
	prio         uint8
	until        sim.Time
	pause, count bool
}

func (s *storm) OnEvent(now sim.Time, _ uint64) {
	sp := s.host.Peer // the switch's port toward the host: the one paused
	if now >= s.until {
		if s.pause {
			sp.OnEvent(now, uint64(evPFC)|uint64(s.prio)<<8)
		}
		return
	}
	if s.count {
		s.host.C.PFCPausesSent++
	}
	if s.pause {
		sp.OnEvent(now, uint64(evPFC)|uint64(s.prio)<<8|0x10)
	}
	next := min(now+stormRefresh, s.until)
	s.host.net.Sched.At(next, s, 0)
}

// watchdog acts on priority pr of this egress port: when the pause it was
// set for (seq) still holds, the queue leaves PFC for the restore time
// (its pause lifted and ignored; with the drop action its packets
// dropped); when the restore time ends (end), it is watched again.
func (pt *Port) watchdog(now sim.Time, pr uint8, seq uint32, end bool) {
	cfg := pt.sw.cfg
	if end {
		pt.watchdogged[pr] = false
		// PFC is level-triggered: a pause the downstream still holds, as
		// far as its frames have told, applies again, and is watched again.
		if pt.held[pr] {
			pt.pause(now, pr)
		}
		return
	}
	if !pt.paused[pr] || pt.pauseSeq[pr] != seq {
		return // that pause ended in time
	}
	pt.C.WatchdogTrips++
	pt.paused[pr] = false
	pt.pausedTotal[pr] += now - pt.pausedAt[pr]
	pt.C.PFCPausedS += (now - pt.pausedAt[pr]).Seconds()
	pt.watchdogged[pr] = true
	pt.net.Sched.At(now+cfg.WatchdogRestore, pt, uint64(evWatchdog)|uint64(pr)<<8|0x10)
	if cfg.WatchdogDrop {
		for p := pt.queues[pr].pop(); p != nil; p = pt.queues[pr].pop() {
			pt.queues[pr].bytes -= int64(p.Wire)
			pt.total -= int64(p.Wire)
			pt.sw.release(p)
			pt.dropWatchdog(p)
		}
		pt.queued &^= 1 << pr
	}
	if !pt.sending() {
		pt.trySend(now)
	}
}

// sendPFC sends a pause (on=true) or resume for prio to the upstream end of
// this ingress port. The frame goes out at once, ahead of queued data and
// without waiting for a frame this port may be sending (a simplification
// worth at most one frame time), and reaches the peer after one frame time
// plus the link delay.
func (pt *Port) sendPFC(prio uint8, on bool) {
	arg := uint64(evPFC) | uint64(prio)<<8
	if on {
		arg |= 0x10
		pt.C.PFCPausesSent++
	}
	pt.pauseSent[prio] = on
	d := pt.TxTime(PauseFrameWire) + pt.Peer.Delay
	if pt.remote {
		pt.exportPFC(pt.net.Sched.Now()+d, arg) // the peer is another part's
		return
	}
	pt.net.Sched.After(d, pt.Peer, arg)
}

// inFlight adds this port's queued and on-wire bytes and packets. A host
// port's queue holds packets not yet injected (a packet counts as injected
// when its host starts sending it), so only its wire counts.
func (pt *Port) inFlight() (bytes, pkts int64) {
	if !pt.host {
		for i := range pt.queues {
			pt.queues[i].each(func(p *Packet) { bytes += int64(p.Wire); pkts++ })
		}
	}
	pt.pipe.each(func(p *Packet) { bytes += int64(p.Wire); pkts++ })
	return
}

// Counters returns this port's counters, closing any open pause interval at
// now and computing utilization over [0, now].
func (pt *Port) Counters(now sim.Time) counters.Counters {
	c := pt.C
	c.TxPackets, c.TxBytes, c.MaxQueueBytes = pt.txPackets, pt.txBytes, pt.maxQueue
	for pr := range pt.paused {
		if pt.paused[pr] {
			c.PFCPausedS += (now - pt.pausedAt[pr]).Seconds()
		}
	}
	if now > 0 {
		c.UtilizationPct = 100 * float64(pt.busyTime) / float64(now)
	}
	return c
}

// pausedFor is how long priority pr of this egress port has been paused by
// its peer since the start, up to now.
func (pt *Port) pausedFor(pr uint8, now sim.Time) sim.Time {
	t := pt.pausedTotal[pr]
	if pt.paused[pr] {
		t += now - pt.pausedAt[pr]
	}
	return t
}

// Sw is the switch owning this port (nil for a host's port).
func (pt *Port) Sw() *Switch { return pt.sw }
