package lab

import (
	"sort"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/sim"
	"fabriclab/units"
)

// maxHops bounds the queues remembered per message (a 3-tier fat-tree
// path has 5 switch egress queues).
const maxHops = 8

type stay struct {
	port         int32
	drops        int32 // packets the PFC watchdog dropped here (in the padding)
	wait, paused sim.Time
	pkts         int32
}

// per is t per packet of n (0 for none: a queue where a message's packets
// were only dropped).
func per(t sim.Time, n int32) sim.Time {
	if n == 0 {
		return 0
	}
	return t / sim.Time(n)
}

// explainer is the fabric.Observer of explain mode: for every message it
// sums, per switch egress queue, how long its packets waited there and how
// much of that the queue was paused by PFC from downstream, and (as a
// fabric.DropObserver) how many of them the PFC watchdog dropped there.
type explainer struct {
	stays [][maxHops]stay
	n     []uint8
}

func newExplainer(msgs int) *explainer {
	return &explainer{stays: make([][maxHops]stay, msgs), n: make([]uint8, msgs)}
}

// Queued implements fabric.Observer.
func (e *explainer) Queued(p *fabric.Packet, pt *fabric.Port, wait, paused sim.Time) {
	if st := e.stayAt(p, pt); st != nil {
		st.wait += wait
		st.paused += paused
		st.pkts++
	}
}

// Dropped implements fabric.DropObserver: the PFC watchdog dropped p from
// pt's queue.
func (e *explainer) Dropped(p *fabric.Packet, pt *fabric.Port) {
	if st := e.stayAt(p, pt); st != nil {
		st.drops++
	}
}

// stayAt is p's message's stay at pt, begun at its first packet there; nil
// for a packet of no message or when the message has maxHops stays.
func (e *explainer) stayAt(p *fabric.Packet, pt *fabric.Port) *stay {
	i := int(p.Msg)
	if i < 0 || i >= len(e.n) {
		return nil
	}
	st := &e.stays[i]
	for k := uint8(0); k < e.n[i]; k++ {
		if st[k].port == int32(pt.ID) {
			return &st[k]
		}
	}
	if e.n[i] == maxHops {
		return nil
	}
	s := &st[e.n[i]]
	*s = stay{port: int32(pt.ID)}
	e.n[i]++
	return s
}

// merge adds o's stays to e's, message by message (up to maxHops each):
// a partitioned run's parts each saw the queues they own.
func (e *explainer) merge(o *explainer) {
	for i, n := range o.n {
		for k := uint8(0); k < n && e.n[i] < maxHops; k++ {
			e.stays[i][e.n[i]] = o.stays[i][k]
			e.n[i]++
		}
	}
}

// explainMode is explain mode's measure.Explainer: the simulation's
// stays, and every port (by ID) as it was when the run ended (now), in a
// partitioned run from the part that owns it.
type explainMode struct {
	s     *Sim
	e     *explainer
	ports []*fabric.Port
	now   sim.Time
}

// Explain builds the explanation of a part's slow flows from their
// slowdowns (by message index: the part's measured, delivered messages).
func (em *explainMode) Explain(_ plan.Part, slowByMsg map[int]float64) *metrics.Explanation {
	s, e, ports, now := em.s, em.e, em.ports, em.now
	thr := s.Job.Spec.Sim.ExplainSlowdown
	x := &metrics.Explanation{Threshold: thr}

	// Which switches pushed back (sent PFC pauses) and which were pushed. A
	// host sends pauses only when its NIC storms (topology.pfc_storms): not
	// back-pressure but a cause, a root whether or not it was paused.
	pushed := map[*fabric.Switch]bool{}
	paused := map[*fabric.Switch]bool{}
	for _, pt := range ports {
		if pt.C.PFCPausesSent > 0 {
			node, peer := fabric.PortName(pt)
			if sw := pt.Sw(); sw != nil {
				pushed[sw] = true
			} else {
				x.Roots = append(x.Roots, node)
			}
			x.PauseTree = append(x.PauseTree, metrics.PauseEdge{From: node, To: peer,
				Pauses: pt.C.PFCPausesSent, PausedS: ports[pt.Peer.ID].Counters(now).PFCPausedS})
		}
		if pt.C.PFCPausesRecv > 0 {
			if sw := pt.Sw(); sw != nil {
				paused[sw] = true
			}
		}
	}
	for sw := range pushed {
		if !paused[sw] {
			x.Roots = append(x.Roots, sw.Name())
		}
	}
	sort.Strings(x.Roots)
	sort.Slice(x.PauseTree, func(a, b int) bool {
		if x.PauseTree[a].Pauses != x.PauseTree[b].Pauses {
			return x.PauseTree[a].Pauses > x.PauseTree[b].Pauses
		}
		return x.PauseTree[a].From+x.PauseTree[a].To < x.PauseTree[b].From+x.PauseTree[b].To
	})

	type slow struct {
		i    int
		sd   float64
		flow metrics.SlowFlow
	}
	var slows []slow
	for i, sd := range slowByMsg {
		if sd <= thr {
			continue
		}
		m := s.DAG.Msgs[i]
		f := metrics.SlowFlow{ID: i, Src: int(m.Src), Dst: int(m.Dst), Slowdown: sd}
		var wait, pausedT sim.Time
		var main *stay
		for k := uint8(0); k < e.n[i]; k++ {
			st := &e.stays[i][k]
			wait += per(st.wait, st.pkts)
			pausedT += per(st.paused, st.pkts)
			f.Drops += int64(st.drops)
			if main == nil || st.wait > main.wait {
				main = st
			}
			node, peer := fabric.PortName(ports[st.port])
			f.Links = append(f.Links, metrics.QueueStay{Link: node + "→" + peer,
				QueuedS: per(st.wait, st.pkts).Seconds(), PausedS: per(st.paused, st.pkts).Seconds(), Drops: int64(st.drops)})
		}
		sort.Slice(f.Links, func(a, b int) bool { return f.Links[a].QueuedS > f.Links[b].QueuedS })
		f.QueuedS, f.PausedS = wait.Seconds(), pausedT.Seconds()

		// The alone time is in the slowdown; a flow whose packets hardly
		// waited in the fabric was held at its sender.
		fct := sd * s.AloneFCT(int(m.Src), int(m.Dst), m.Bytes).Seconds()
		// Time the sender's NIC port spent paused by its leaf, bounded by the
		// flow's life (the port keeps only a total, so this is an upper
		// bound; exact for flows that span the run).
		nic := ports[s.Topo.Net.HostPorts[m.Src].ID]
		nicPaused := min(nic.Counters(now).PFCPausedS, fct)
		// A flow whose packets the PFC watchdog dropped is loss-limited: it
		// waits for their resends (a timeout or a round trip and what
		// follows them), which outweighs its queueing, and the watchdog drops
		// only from a queue held for its detect time, so the pause was the
		// first of its troubles. Otherwise, a flow that waited (a
		// microsecond or more per packet) in an unpaused queue of a switch
		// that pushed back fed the congestion: a culprit, even if its own NIC
		// was paused too. Otherwise it is a victim when PFC held it (paused
		// queues or a paused NIC), contending when it waited at congestion
		// without PFC, and sender-limited when it hardly waited at all.
		keep := 3 // queues listed
		switch {
		case f.Drops > 0:
			f.Role = "loss-limited"
			x.LossLimited++
			// Where it lost most first (stable: by queueing otherwise).
			sort.SliceStable(f.Links, func(a, b int) bool { return f.Links[a].Drops > f.Links[b].Drops })
		case main != nil && per(main.wait, main.pkts) >= sim.Time(units.Microsecond) &&
			2*main.paused < main.wait && pushed[ports[main.port].Sw()]:
			f.Role = "culprit"
			x.Culprits++
		case 2*pausedT > wait && wait > 0:
			f.Role = "victim"
			x.Victims++
		case nicPaused >= 0.1*fct:
			f.Role = "victim"
			f.PausedS += nicPaused
			f.Links = append([]metrics.QueueStay{{Link: "NIC " + nic.Owner.Name() + " (paused)",
				PausedS: nicPaused}}, f.Links...)
			keep++ // the NIC and the three queues
			x.Victims++
		case main != nil && wait.Seconds() >= 0.1*fct:
			f.Role = "contending"
			x.Contending++
		default:
			f.Role = "sender-limited"
			x.SenderLimited++
		}
		f.Links = f.Links[:min(len(f.Links), keep)]
		slows = append(slows, slow{i, sd, f})
	}
	x.SlowFlows = len(slows)
	sort.Slice(slows, func(a, b int) bool {
		if slows[a].sd != slows[b].sd {
			return slows[a].sd > slows[b].sd
		}
		return slows[a].i < slows[b].i
	})
	for k := 0; k < len(slows) && k < 20; k++ {
		x.Flows = append(x.Flows, slows[k].flow)
	}
	return x
}
