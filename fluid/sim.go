package fluid

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
	"fabriclab/workload"
)

// never is the finish time of a flow without rate.
const never = sim.Time(math.MaxInt64)

// batchFlows: with at least this many flows active, the capacity flows
// free when they finish waits for the next rate computation until
// 1/batchShare of the flows active at the last one have finished (a flow
// that starts always gets its rate at once). Every computation costs in
// proportion to the flows still active, so a large all-to-all costs
// about batchShare full computations instead of one per finish; the
// freed capacity idles meanwhile (the CCT error this costs is in the
// package comment).
const (
	batchFlows = 4096
	batchShare = 64
)

// quantizeConns: a plan with at least this many connections rounds every
// message's end of sending up to a multiple of a power of two picoseconds
// no larger than 1/quantum of the time it has been sending (≤ 0.1% late),
// so that flows ending at nearly the same time share one event and one
// rate computation: max-min rates give almost every flow of a large
// all-to-all a finish time of its own. Smaller plans are exact.
const (
	quantizeConns = 4096
	quantum       = 1024
)

// fsim is one built, ready-to-run fluid simulation of a plan.
type fsim struct {
	job      scenario.Job
	spec     *scenario.Scenario
	tp       *topo.Topology
	plan     *plan.Plan
	dag      *workload.DAG
	exec     *workload.Executor
	routes   []topo.Route
	failures []plan.Failure // those after time 0, in order
	ran      bool

	// Model parameters (init).
	mtu, ovh int64
	ackFrac  float64 // ACK wire bytes per data wire byte, on the reverse path
	spread   bool    // lossless without congestion control: PFC spreads congestion
	window   float64 // nic.max_inflight in payload bytes (0: none)
	dynamic  []bool  // by switch: its policy splits flows over equal-cost hops

	// Links are the fabric's egress ports, by fabric.Port.ID.
	capBps   []float64   // wire bits per second; 0 when failed
	linkUses [][]linkUse // the active connections' entries on each link

	conns []conn // the connections' cold state
	// The connections' hot state, struct of arrays by connection index
	// (the solver's loops read a few fields of a million connections).
	path        []span     // its path entries: eLink… [off : off+n]
	rpath       []span     // its ACKs' entries: rLink… [off : off+n]
	rate, nrate []float64  // wire bits per second; the solver's new rate
	crem        []float64  // wire bytes of the head message left at last
	ceil        []float64  // rate ceiling, bits per second (+Inf: none)
	last        []sim.Time // when crem was last brought up to date
	began       []sim.Time // when the head message began to be sent
	at          []sim.Time // when the head message is all sent (never without rate)
	hpos        []int32    // index in the finish heap, −1 when inactive
	// Path entries (struct of arrays): every connection's links, its
	// share w of the connection's rate on each (1 on a static path, 1/k
	// after an even split over k hops), the hop depth from the source
	// NIC, and the entry's index in linkUses[link] while the connection
	// is active.
	eLink, eDepth, ePos []int32
	eW                  []float64
	// ACK entries (the reverse path, w the ACK load per data bit) and
	// ackLoad, each link's ACK bits per second at the current rates: a
	// link gives data what the ACKs leave (they have priority).
	rLink   []int32
	rW      []float64
	ackLoad []float64
	gen     uint32 // routing generation (bumped when routes reconverge)
	latEp   uint32 // bumped at every failure: cached latencies are stale

	// Messages.
	start, end []sim.Time
	next       []int32 // a connection's FIFO of messages: the one behind
	done       int     // delivered (markers included)
	total      int64   // payload of every message
	delivered  int64   // payload delivered
	sentWire   int64   // wire bytes of the messages all sent

	now      sim.Time
	events   uint64
	quantize bool // round finish times (see quantizeConns)
	wide     bool // the last rate computation covered ≥ 90% of the flows
	// Batching (see batchFlows): a flow started since the last rate
	// computation, flows gone since, and flows active at it.
	activated           bool
	gone, activeAtSolve int
	solves              int
	fin                 finishHeap
	arr                 arrivalHeap
	seq                 uint64

	// Scratch of the solver and the path walk (reused: no allocation per
	// event in steady state).
	dirty     []int32
	linkMark  []uint32
	connMark  []uint32
	epoch     uint32
	compFlows []int32
	compLinks []int32
	stack     []int32
	rem, wsum []float64
	cnt       []int32
	paused    []bool
	pq        []int32
	touch     []uint32
	touchEp   uint32
	touched   []int32
	frozen    []bool
	lh        linkHeap
	ceils     []ceilEnt
	front     []hop
	front2    []hop
	pmark     []uint32
	pidx      []int32
	pstamp    uint32
	reroute   []int32
}

// conn is the cold part of one connection of the plan (a fluid flow
// while it has messages to send, which it sends one after the other); the
// hot part is in fsim's per-connection arrays.
type conn struct {
	src, dst, sqp, dqp int32
	head, tail         int32  // the FIFO of its messages (−1: empty)
	gen                uint32 // routing generation of the path
	hasPath            bool
	split              bool     // the path splits over equal-cost hops
	lastArr            sim.Time // the latest delivery scheduled (FIFO order)
	// The latency of the last message sent (latency), for its last
	// packet's wire bytes, at failure epoch latEp: messages on a
	// connection are mostly of one size.
	latWire int64
	lat     sim.Time
	latEp   uint32
}

// span is a connection's entries: [off : off+n].
type span struct{ off, n int32 }

// linkUse is an active connection's entry on a link (and its depth).
type linkUse struct{ conn, ent, depth int32 }

// hop is a port of a path walk's frontier and the share of the flow on it.
type hop struct {
	port int32
	w    float64
}

// run executes the plan: events at flow finishes, deliveries and the
// executor's releases, each time's events together, then one rate
// computation over the links they changed.
func (s *fsim) run(ctx context.Context, progress func(float64)) error {
	limit := s.spec.Sim.TimeLimit
	type failEv struct {
		at       sim.Time
		f        int
		converge bool
	}
	var fevs []failEv
	for i, f := range s.failures {
		fevs = append(fevs, failEv{f.At, i, false}, failEv{f.At + s.spec.Topology.Convergence, i, true})
	}
	sort.SliceStable(fevs, func(a, b int) bool { return fevs[a].at < fevs[b].at })
	fi := 0
	s.now = 0
	s.post(s.exec.Ready(0))
	if err := s.solve3(); err != nil {
		return err
	}
	for !s.finished() {
		t := never
		if s.fin.len() > 0 {
			t = s.fin.h[0].at
		}
		if s.arr.len() > 0 && s.arr.h[0].at < t {
			t = s.arr.h[0].at
		}
		if at, ok := s.exec.NextRelease(); ok && at < t {
			t = at
		}
		if fi < len(fevs) && fevs[fi].at < t {
			t = fevs[fi].at
		}
		if t == never {
			break // nothing can move: stalled flows behind failed links
		}
		if limit >= 0 && t > limit {
			s.now = limit
			break
		}
		s.now = t
		s.events++
		for s.fin.len() > 0 && s.fin.h[0].at == t {
			s.sent(s.fin.h[0].c)
		}
		for s.arr.len() > 0 && s.arr.h[0].at == t {
			s.deliver(s.arr.pop().msg)
		}
		if at, ok := s.exec.NextRelease(); ok && at <= t {
			s.post(s.exec.Ready(t))
		}
		for fi < len(fevs) && fevs[fi].at == t {
			ev := fevs[fi]
			fi++
			if err := s.failure(s.failures[ev.f], ev.converge); err != nil {
				return err
			}
		}
		// Large runs: a rate computation for finished flows alone waits
		// until a batchShare of the flows active at the last one have
		// finished (see batchFlows).
		if s.activated || s.fin.len() < batchFlows || s.gone*batchShare >= s.activeAtSolve {
			if err := s.solve3(); err != nil {
				return err
			}
		}
		if s.events&255 == 0 {
			if ctx.Err() != nil {
				return nil
			}
			if progress != nil && s.total > 0 {
				progress(float64(s.delivered) / float64(s.total))
			}
		}
	}
	return nil
}

// finished reports whether every message was delivered or cut.
func (s *fsim) finished() bool { return s.done+s.exec.Cut() == len(s.dag.Msgs) }

// post starts the messages the executor released, in its order: a marker
// is already delivered, any other message joins its connection's FIFO.
func (s *fsim) post(msgs []int32) {
	for _, i := range msgs {
		m := &s.dag.Msgs[i]
		s.start[i] = s.now
		if m.Marker {
			s.end[i] = s.now
			s.done++
			continue
		}
		c := s.plan.Conn[i]
		cn := &s.conns[c]
		if cn.head >= 0 {
			s.next[cn.tail] = i
			cn.tail = i
			continue
		}
		cn.head, cn.tail = i, i
		s.activate(c)
	}
}

// deliver records message i's delivery and starts what it releases.
func (s *fsim) deliver(i int32) {
	if s.end[i] >= 0 {
		return
	}
	s.end[i] = s.now
	s.done++
	s.delivered += s.dag.Msgs[i].Bytes
	s.post(s.exec.Delivered(i, s.now))
}

// wire is message i's wire bytes and its last packet's.
func (s *fsim) wire(i int32) (all, last int64) {
	b := s.dag.Msgs[i].Bytes
	n := max((b+s.mtu-1)/s.mtu, 1)
	return b + n*s.ovh, b - (n-1)*s.mtu + s.ovh
}

// sent handles connection c's head message having left its sender (its
// last byte through the bottleneck): it is delivered the path's latency
// later, and the next message in the FIFO goes on at the same rate.
func (s *fsim) sent(c int32) {
	cn := &s.conns[c]
	m := cn.head
	w, last := s.wire(m)
	s.sentWire += w
	if cn.latEp != s.latEp || cn.latWire != last {
		cn.lat, cn.latWire, cn.latEp = s.latency(cn.src, cn.dst, last), last, s.latEp
	}
	at := s.now + cn.lat
	if at < cn.lastArr {
		at = cn.lastArr // a message never overtakes the one before it
	}
	cn.lastArr = at
	s.seq++
	s.arr.push(arrival{at: at, seq: s.seq, msg: m})
	cn.head = s.next[m]
	s.next[m] = -1
	if cn.head < 0 {
		cn.tail = -1
		s.deactivate(c)
		return
	}
	w, _ = s.wire(cn.head)
	s.crem[c], s.last[c], s.began[c] = float64(w), s.now, s.now
	s.at[c] = s.finishAt(c)
	s.fin.fix(s.hpos[c], s.at[c], s.hpos)
}

// finishAt is when c's head message is all sent at its current rate,
// rounded up when the plan is large (quantizeConns).
func (s *fsim) finishAt(c int32) sim.Time {
	d := drain(s.crem[c], s.rate[c])
	if d == never {
		return never
	}
	at := s.now + d
	if !s.quantize {
		return at
	}
	if span := (at - s.began[c]) / quantum; span > 1 {
		g := sim.Time(1) << (bits.Len64(uint64(span)) - 1)
		at = (at + g - 1) / g * g
	}
	return at
}

// drain is how long rem wire bytes take at rate bits per second.
func drain(rem, rate float64) sim.Time {
	if rate <= 0 {
		return never
	}
	if rem <= 0 {
		return 0
	}
	if rem == math.Trunc(rem) && rate == math.Trunc(rate) && rem < 1<<52 && rate < 1<<52 {
		return sim.Time(units.SerializationTime(units.Size(rem), units.Rate(rate)))
	}
	t := math.Ceil(rem * 8e12 / rate)
	if t >= 9e18 {
		return never
	}
	return sim.Time(t)
}

// latency is what a message's last packet adds after its last byte left
// the bottleneck: the propagation (and switch latency) of every hop and
// its store-and-forward on every hop but the slowest, on the path a
// packet takes alone (measure.FabricBounds.AloneFCT: first choice at each
// switch).
func (s *fsim) latency(src, dst int32, lastWire int64) sim.Time {
	net := s.tp.Net
	pt := net.HostPorts[src]
	slow, k := pt.Rate, 0
	for i := 1; i < 64; i++ {
		if pt = s.aloneNext(pt, dst); pt == nil {
			break
		}
		if pt.Rate < slow {
			slow, k = pt.Rate, i
		}
	}
	pt = net.HostPorts[src]
	var t sim.Time
	for i := 0; pt != nil && i < 64; i++ {
		t += pt.Delay
		if i != k {
			t += pt.TxTime(int32(lastWire))
		}
		pt = s.aloneNext(pt, dst)
	}
	return t
}

// activate makes connection c, whose FIFO just got its first message, a
// flow: its path's links are marked for the next rate computation.
func (s *fsim) activate(c int32) {
	cn := &s.conns[c]
	if !cn.hasPath || cn.gen != s.gen {
		s.pathOf(c)
	}
	w, _ := s.wire(cn.head)
	s.crem[c], s.last[c], s.rate[c], s.at[c], s.began[c] = float64(w), s.now, 0, never, s.now
	s.attach(c)
	s.fin.push(c, never, s.hpos)
	s.activated = true
}

// deactivate takes connection c, whose FIFO is empty, off its links.
func (s *fsim) deactivate(c int32) {
	s.detach(c)
	s.fin.remove(s.hpos[c], s.hpos)
	s.addAck(c, -s.rate[c])
	s.rate[c], s.at[c] = 0, never
	s.gone++
}

// addAck adds d bits per second of c's data rate to the ACK load of its
// reverse path, and marks the links with data on them whose share that
// moves.
func (s *fsim) addAck(c int32, d float64) {
	if d == 0 {
		return
	}
	rp := s.rpath[c]
	for k := rp.off; k < rp.off+rp.n; k++ {
		l, a := s.rLink[k], float64(s.rW[k]*d) // rounded: no fused multiply-add
		s.ackLoad[l] += a
		if len(s.linkUses[l]) > 0 && math.Abs(a) > 1e-9*s.capBps[l] {
			s.markDirty(l)
		}
	}
}

// attach puts c's entries on their links' lists and marks the links.
func (s *fsim) attach(c int32) {
	p := s.path[c]
	for k := p.off; k < p.off+p.n; k++ {
		l := s.eLink[k]
		s.ePos[k] = int32(len(s.linkUses[l]))
		s.linkUses[l] = append(s.linkUses[l], linkUse{c, k, s.eDepth[k]})
		s.markDirty(l)
	}
}

// detach removes c's entries from their links' lists and marks the links.
func (s *fsim) detach(c int32) {
	p := s.path[c]
	for k := p.off + p.n - 1; k >= p.off; k-- {
		l, pos := s.eLink[k], s.ePos[k]
		us := s.linkUses[l]
		last := int32(len(us) - 1)
		if pos != last {
			mv := us[last]
			us[pos] = mv
			s.ePos[mv.ent] = pos
		}
		s.linkUses[l] = us[:last]
		s.markDirty(l)
	}
}

func (s *fsim) markDirty(l int32) {
	if s.linkMark[l] == s.epoch+1 {
		return
	}
	s.linkMark[l] = s.epoch + 1
	s.dirty = append(s.dirty, l)
}

// solve3 computes rates, then again (at most twice) where the ACK load
// of the new rates moved a link's share; what is still marked waits for
// the next event.
func (s *fsim) solve3() error {
	s.activated, s.gone, s.activeAtSolve = false, 0, s.fin.len()
	rounds := 3
	if s.quantize {
		rounds = 1 // large plans: the ACK load lags one event
	}
	for i := 0; i < rounds && len(s.dirty) > 0; i++ {
		if err := s.solveDirty(); err != nil {
			return err
		}
	}
	return nil
}

// fullSolve makes every rate computation cover every active flow (tests
// compare it with the component-limited one).
var fullSolve bool

// solveDirty recomputes the rates of the flows in the connected component
// (links shared, directly or through other flows) of the links that
// changed, and reschedules those whose rate changed. The component's
// flows are taken in connection order, so that the solver's passes over
// the per-connection arrays run forward through memory.
func (s *fsim) solveDirty() error {
	if len(s.dirty) == 0 {
		return nil
	}
	s.solves++
	if fullSolve {
		for c, hp := range s.hpos {
			if hp >= 0 {
				p := s.path[c]
				for k := p.off; k < p.off+p.n; k++ {
					s.markDirty(s.eLink[k])
				}
			}
		}
	}
	s.epoch++
	ep := s.epoch // the dirty links carry this mark already
	s.compFlows, s.compLinks = s.compFlows[:0], s.compLinks[:0]
	s.stack = append(s.stack[:0], s.dirty...)
	s.dirty = s.dirty[:0]
	sorted := false
	if s.wide && s.fin.len() >= batchFlows {
		// The last component held nearly every flow: take them all
		// rather than walk the paths (a union of components solves as
		// each alone would).
		s.stack = s.stack[:0]
		for c, hp := range s.hpos {
			if hp >= 0 {
				s.compFlows = append(s.compFlows, int32(c))
			}
		}
		for l, us := range s.linkUses {
			if len(us) > 0 {
				s.compLinks = append(s.compLinks, int32(l))
			}
		}
		sorted = true
	}
	for len(s.stack) > 0 {
		l := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		s.compLinks = append(s.compLinks, l)
		for _, u := range s.linkUses[l] {
			if s.connMark[u.conn] == ep {
				continue
			}
			s.connMark[u.conn] = ep
			s.compFlows = append(s.compFlows, u.conn)
			p := s.path[u.conn]
			for k := p.off; k < p.off+p.n; k++ {
				if m := s.eLink[k]; s.linkMark[m] != ep {
					s.linkMark[m] = ep
					s.stack = append(s.stack, m)
				}
			}
		}
	}
	if len(s.compFlows) == 0 {
		return nil
	}
	if !sorted {
		slices.Sort(s.compFlows)
	}
	s.wide = 10*len(s.compFlows) >= 9*s.fin.len()
	s.solve()
	changed := 0
	for _, c := range s.compFlows {
		nr, r := s.nrate[c], s.rate[c]
		if nr == r {
			continue
		}
		if r > 0 {
			s.crem[c] = max(s.crem[c]-float64(r/8e12*float64(s.now-s.last[c])), 0) // rounded: no fused multiply-add
		}
		// The ACK load follows the new rate; the links it moves are
		// solved again (see solve3).
		s.addAck(c, nr-r)
		s.last[c], s.rate[c] = s.now, nr
		s.at[c] = s.finishAt(c)
		changed++
	}
	if changed == 0 {
		return nil
	}
	if changed > s.fin.len()/8 {
		for _, c := range s.compFlows {
			s.fin.h[s.hpos[c]].at = s.at[c]
		}
		s.fin.rebuild(s.hpos)
	} else {
		for _, c := range s.compFlows {
			if i := s.hpos[c]; s.fin.h[i].at != s.at[c] {
				s.fin.fix(i, s.at[c], s.hpos)
			}
		}
	}
	return nil
}

// failure takes a link down (the flows on it stall; those split by
// adaptive routing leave it at once) or, at converge, recomputes the
// routes around the failed links and moves every flow to its new path.
func (s *fsim) failure(f plan.Failure, converge bool) error {
	net := s.tp.Net
	s.latEp++
	if !converge {
		net.FailLink(f.Link)
		for _, pt := range [2]int{f.Link.ID, f.Link.Peer.ID} {
			s.capBps[pt] = 0
			s.markDirty(int32(pt))
			s.reroute = s.reroute[:0]
			for _, u := range s.linkUses[pt] {
				if s.conns[u.conn].split {
					s.reroute = append(s.reroute, u.conn)
				}
			}
			for _, c := range s.reroute {
				s.move(c)
			}
		}
		return nil
	}
	topo.ComputeRoutes(s.tp)
	if err := plan.ApplyRoutes(s.spec, s.tp, s.routes, true); err != nil {
		return err
	}
	net.DropBrokenPins() // as the packet engine: pins through the failed link give way
	s.gen++
	for c, hp := range s.hpos {
		if hp >= 0 {
			s.move(int32(c))
		}
	}
	return nil
}

// move recomputes active connection c's path.
func (s *fsim) move(c int32) {
	s.detach(c)
	s.pathOf(c)
	s.attach(c)
}

// pathOf computes connection c's path entries: its data from the source
// NIC, hop by hop, as the switches forward it (a static policy's choice,
// or an even split over the live equal-cost hops of a dynamic one), then
// its ACKs on the reverse path.
func (s *fsim) pathOf(c int32) {
	cn := &s.conns[c]
	off := int32(len(s.eLink))
	split := s.walk(cn.src, cn.dst, cn.sqp, cn.dqp, 1, false)
	s.path[c] = span{off, int32(len(s.eLink)) - off}
	roff := int32(len(s.rLink))
	if s.ackFrac > 0 {
		s.walk(cn.dst, cn.src, cn.dqp, cn.sqp, s.ackFrac, true)
	}
	s.rpath[c] = span{roff, int32(len(s.rLink)) - roff}
	cn.gen, cn.hasPath, cn.split = s.gen, true, split
	if s.window > 0 {
		s.ceil[c] = s.windowCeil(cn.src, cn.dst)
	}
}

// walk appends the entries of one direction of a path (the data's, or
// with ack the ACKs') and reports whether it splits. A path that cannot be
// followed (no route, a loop) ends where it fails: the flow crosses the
// links it reached (plan validation and the packet engine refuse such
// routes before any run).
func (s *fsim) walk(src, dst, sqp, dqp int32, scale float64, ack bool) bool {
	net := s.tp.Net
	if s.pmark == nil {
		s.pmark = make([]uint32, len(net.Ports))
		s.pidx = make([]int32, len(net.Ports))
	}
	split := false
	s.front = append(s.front[:0], hop{int32(net.HostPorts[src].ID), 1})
	for depth := 0; len(s.front) > 0 && depth <= len(net.Switches)+1; depth++ {
		s.pstamp++
		st := s.pstamp
		s.front2 = s.front2[:0]
		add := func(id int32, w float64) {
			if s.pmark[id] == st {
				s.front2[s.pidx[id]].w += w
				return
			}
			s.pmark[id], s.pidx[id] = st, int32(len(s.front2))
			s.front2 = append(s.front2, hop{id, w})
		}
		for _, h := range s.front {
			if ack {
				s.rLink = append(s.rLink, h.port)
				s.rW = append(s.rW, h.w*scale)
			} else {
				s.eLink = append(s.eLink, h.port)
				s.eDepth = append(s.eDepth, int32(depth))
				s.eW = append(s.eW, h.w*scale)
				s.ePos = append(s.ePos, 0)
			}
			pt := net.Ports[h.port]
			sw := pt.Peer.Sw()
			if sw == nil {
				continue // a host: the destination
			}
			if !s.dynamic[sw.ID] {
				if nh := sw.NextHop(src, dst, sqp, dqp); nh != nil {
					add(int32(nh.ID), h.w)
				}
				continue
			}
			var g []*fabricPort
			if int(dst) < len(sw.Next) {
				g = sw.Next[dst]
			}
			live := 0
			for _, p := range g {
				if !p.Dead() {
					live++
				}
			}
			if live == 0 {
				if len(g) > 0 {
					add(int32(g[0].ID), h.w)
				}
				continue
			}
			if live > 1 {
				split = true
			}
			for _, p := range g {
				if !p.Dead() {
					add(int32(p.ID), h.w/float64(live))
				}
			}
		}
		s.front, s.front2 = s.front2, s.front
	}
	return split
}

// aloneNext is the next port of the alone path toward dst after pt: the
// first choice of the switch pt leads to (nil at a host).
func (s *fsim) aloneNext(pt *fabricPort, dst int32) *fabricPort {
	sw := pt.Peer.Sw()
	if sw == nil || int(dst) >= len(sw.Next) || len(sw.Next[dst]) == 0 {
		return nil
	}
	return sw.Next[dst][0]
}

// windowCeil is the rate nic.max_inflight allows a connection: the window
// (in wire bytes) per unloaded round trip of a full packet and its ACK.
func (s *fsim) windowCeil(src, dst int32) float64 {
	var rtt sim.Time
	for _, ends := range [2][2]int32{{src, dst}, {dst, src}} {
		wire := int32(s.mtu + s.ovh)
		if ends[0] == dst {
			wire = 84
		}
		for pt := s.tp.Net.HostPorts[ends[0]]; pt != nil; pt = s.aloneNext(pt, ends[1]) {
			rtt += pt.Delay + pt.TxTime(wire)
		}
	}
	if rtt <= 0 {
		return math.Inf(1)
	}
	wire := s.window * float64(s.mtu+s.ovh) / float64(s.mtu)
	return wire * 8 / rtt.Seconds()
}

// String describes the simulation's state (for test failures).
func (s *fsim) String() string {
	return fmt.Sprintf("fluid at %v: %d/%d messages delivered, %d flows active", s.now, s.done, len(s.dag.Msgs), s.fin.len())
}
