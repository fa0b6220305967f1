package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"fabriclab/engine"
	"fabriclab/fabric"
	"fabriclab/internal/hugepages"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/sim"
	"fabriclab/topo"
)

// A partitioned run (sim.partitions > 1) splits the fabric into parts,
// each a whole simulation of its own (the same build, so every port and
// host has the same number in each) that runs only what it owns: a block
// of hosts with their leaves, and a block of every other tier's switches.
// A frame sent on a link whose far end another part owns, and a PFC frame
// for a port another part owns, go to the sender's outbox instead of its
// scheduler (fabric.Export). The parts run in lockstep windows: each runs
// its events before the earliest pending event of all plus the lookahead,
// the shortest link delay between two parts (no frame sent in the window
// can arrive within it); then each takes in what was sent to it,
// sorted by arrival time, sender part and order of sending. So a run
// depends on the number of parts and never on how many cores ran them.
//
// It differs from the one-part run only in how ties between events at
// the same picosecond are broken (an imported frame is numbered at the
// window's end), which shifts a congested run's packets as another seed
// would. A delivery is heard in its receiver's part; one that another
// part waits on is sent there, and bounds the windows (partition_deps.go).

// partition makes s part k of parts. It runs before any message is
// posted.
func (s *Sim) partition(k, parts int) error {
	net := s.Topo.Net
	if H := s.Topo.Hosts; parts > H {
		return fmt.Errorf("sim.partitions: %d parts for %d hosts; every part needs a host", parts, H)
	}
	partOf := portParts(s.Topo, parts)
	s.part, s.parts, s.partOf = k, parts, partOf
	if err := s.crossParts(k, partOf); err != nil {
		return fmt.Errorf("sim.partitions: %d parts: %v; use 1 part", parts, err)
	}
	var remote, replicas []int
	s.lookahead = -1
	for _, pt := range net.Ports {
		if partOf[pt.ID] == partOf[pt.Peer.ID] {
			continue
		}
		switch k {
		case partOf[pt.ID]:
			remote = append(remote, pt.ID)
		case partOf[pt.Peer.ID]:
			replicas = append(replicas, pt.ID)
		}
		if s.lookahead < 0 || pt.Delay < s.lookahead {
			s.lookahead = pt.Delay
		}
	}
	switch {
	case s.lookahead < 0:
		return fmt.Errorf("sim.partitions: no link joins the %d parts; use 1", parts)
	case s.lookahead == 0:
		return fmt.Errorf("sim.partitions: a link between parts has no delay; partitioned runs need every link's delay above 0")
	}
	net.SetRemote(remote, len(s.Job.Spec.Topology.Failures) > 0)
	net.SetReplicas(replicas)
	if f, ok := s.tr.(framer); ok && f.frames() {
		s.framer = f
	}
	if s.tel != nil {
		s.tel.own(partOf, k)
	}
	// The PFC deadlock search reads the whole fabric: the run's
	// coordinator does it (partition_deadlock.go).
	net.OnDeadlock = nil
	return nil
}

// portParts is every port's part (by port ID) when tp is split into
// parts: a block of consecutive hosts each (a scale-up endpoint with its
// host); a switch with hosts goes with its first host; the others are
// dealt out in blocks, tier by tier, in the order the topology made them.
func portParts(tp *topo.Topology, parts int) []int {
	net, H := tp.Net, tp.Hosts
	hostPart := make([]int, len(net.HostPorts))
	for h := range H {
		hostPart[h] = h * parts / H
	}
	for h, id := range tp.ScaleUpEndpoint {
		hostPart[id] = hostPart[h]
	}
	hostOf := make(map[*fabric.Port]int, len(net.HostPorts))
	partOf := make([]int, len(net.Ports))
	for h, hp := range net.HostPorts {
		if hp != nil {
			hostOf[hp] = h
			partOf[hp.ID] = hostPart[h]
		}
	}
	tiers := map[string][]*fabric.Switch{}
	var order []string
	for _, sw := range net.Switches {
		leaf := -1
		for _, pt := range sw.Ports {
			if h, ok := hostOf[pt.Peer]; ok {
				leaf = hostPart[h]
				break
			}
		}
		if leaf >= 0 {
			for _, pt := range sw.Ports {
				partOf[pt.ID] = leaf
			}
			continue
		}
		t := ""
		if len(sw.Ports) > 0 {
			t = sw.Ports[0].Tier
		}
		if _, ok := tiers[t]; !ok {
			order = append(order, t)
		}
		tiers[t] = append(tiers[t], sw)
	}
	for _, t := range order {
		sws := tiers[t]
		for i, sw := range sws {
			for _, pt := range sw.Ports {
				partOf[pt.ID] = i * parts / len(sws)
			}
		}
	}
	return partOf
}

// owns reports whether host h is this part's (every host is, in a run of
// one part).
func (s *Sim) owns(h int) bool { return s.partOf == nil || s.hostPart(h) == s.part }

// ownsPort reports whether port id is this part's.
func (s *Sim) ownsPort(id int) bool { return s.partOf == nil || s.partOf[id] == s.part }

// hostPart is the part that runs host h (partitioned runs only).
func (s *Sim) hostPart(h int) int { return s.partOf[s.Topo.Net.HostPorts[h].ID] }

// spinBarrier holds its n goroutines until all have come. A window is
// short (a link delay of simulated time: a few microseconds of work to a
// millisecond), and waking a sleeping thread takes tens of microseconds,
// so a goroutine that waits spins, and yields only after a while (a
// machine busy with other work). A goroutine that fails (panics) aborts
// it: every wait then returns false at once.
type spinBarrier struct {
	n     int32
	count atomic.Int32
	gen   atomic.Uint32
	abort atomic.Bool
}

func (b *spinBarrier) wait() bool {
	g := b.gen.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.gen.Add(1)
		return !b.abort.Load()
	}
	for i := 0; b.gen.Load() == g; i++ {
		if b.abort.Load() {
			return false
		}
		if i >= 1<<16 {
			runtime.Gosched()
		}
	}
	return !b.abort.Load()
}

// PartPanic is a panic in a part of a partitioned run, raised again on
// the goroutine that ran it: Value is what the part panicked with.
type PartPanic struct {
	Value any
	stack []byte
}

func (p *PartPanic) String() string { return fmt.Sprint(p.Value) }

// PanicStack is the part's stack where it panicked (the runner reports
// it rather than the stack where the panic was raised again).
func (p *PartPanic) PanicStack() []byte { return p.stack }

// runParts runs part 0 (s) with the other parts, built here, each on a
// goroutine of its own, and returns the trace of the whole fabric.
func (s *Sim) runParts(ctx context.Context, progress engine.Progress) (*engine.Trace, error) {
	if s.others == nil {
		for k := 1; k < s.parts; k++ {
			opts := s.opts
			opts.part = k
			o, err := buildWith(s.Job, plan.Together, opts)
			if err != nil {
				return s.Trace(), err
			}
			s.others = append(s.others, o)
		}
	}
	sims := append([]*Sim{s}, s.others...)
	// sim.telemetry: every part's sampler takes its samples between two
	// windows, a window ending just before each (part 0's reads the
	// flows it follows in their senders' and receivers' parts). The
	// windows end there whether or not this build samples (the first run
	// of "top N" flows does not): frames taken in at a window's end are
	// numbered then, so other windows would break ties otherwise.
	every := sim.Time(-1)
	if o := s.Job.Spec.Sim.Telemetry; o.On() {
		every = o.Every()
	}
	if s.tel != nil {
		s.tel.parts = sims
	}
	total := s.payload()
	limit := s.Job.Spec.Sim.TimeLimit
	// One goroutine per core at most, each running its parts one after
	// another within a window: the result is the same on any number.
	workers := min(len(sims), runtime.GOMAXPROCS(0))
	b := &spinBarrier{n: int32(workers)}
	next := make([]sim.Time, len(sims)) // each part's next event (−1: none)
	done := make([]int, len(sims))      // each part's messages delivered or cut
	// each part's next delivery that another part could wait on (−1:
	// none; partition_deps.go)
	cross := slices.Repeat([]sim.Time{-1}, len(sims))
	stop := false // cancelled
	// A PFC deadlock is searched for where one part would search
	// (lab.go): between the windows, over every part.
	// Routes whose buffer dependencies close no cycle cannot deadlock
	// while no failure changes them (fabric/cdg.go): no search there.
	var dl *deadlockWatch
	if sp := s.Job.Spec; sp.Switch.PFC.Enabled && mayLoop(sp, s.Plan) &&
		(len(sp.Topology.Failures) > 0 || len(s.Topo.Net.DependencyCycles()) > 0) {
		dl = newDeadlockWatch(sims)
	}
	// What part k takes in, kept from window to window for its room.
	inbox := make([][]arrival, len(sims))
	deliveries := make([][]crossDelivery, len(sims))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed *PartPanic // the first part's panic
	work := func(w int) {
		defer wg.Done()
		defer func() {
			// A panic in a part stops every part, and is raised again on
			// the caller's goroutine (below), where the runner reports
			// it as the job's failure, with the part's stack.
			if r := recover(); r != nil {
				mu.Lock()
				if failed == nil {
					failed = &PartPanic{Value: r, stack: debug.Stack()}
				}
				mu.Unlock()
				b.abort.Store(true)
			}
		}()
		// A worker stays on one thread, which the kernel keeps on one
		// core: its parts' working set stays in that core's caches.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		sampleAt, last := s.Sched.Now()+every, sim.Time(-1) // the next sample, the last window's end
		// searchNow is whether worker 0 searches for a deadlock after the
		// last window, which every worker works out alike (dl changes
		// only while worker 0 searches, between two meetings).
		searchNow := false
		// Two meetings a window. Before the first, every part takes in
		// what the others sent it (in the last window, or while they
		// were built), says when its next event is and how many messages
		// it has delivered, and worker 0 looks at the context; each
		// worker then works out the same window from those. Between the
		// first and the second, every part clears its outbox (all taken
		// in) and runs the window, filling it again.
		for win := 0; ; win++ {
			for k := w; k < len(sims); k += workers {
				inbox[k] = sims[k].takeFrames(k, sims, inbox[k][:0])
				if sims[k].framer != nil {
					sims[k].takeFraming(k, sims)
				}
				if c := sims[k].cross; c != nil {
					deliveries[k] = sims[k].takeDeliveries(k, sims, deliveries[k][:0])
					cross[k] = sims[k].nextCrossing()
				}
				t, ok := sims[k].Sched.NextAt()
				if !ok {
					t = -1
				}
				next[k], done[k] = t, sims[k].done+sims[k].cutHere
			}
			if w == 0 {
				stop = ctx.Err() != nil
				if win%64 == 0 {
					hugepages.Maintain()
					if progress != nil && total > 0 {
						var got int64
						for _, o := range sims {
							got += o.tr.deliveredPayload()
						}
						progress(float64(got) / float64(total))
					}
				}
			}
			if !b.wait() {
				return
			}
			if searchNow {
				// Every part has taken in what it was sent, and none runs
				// while worker 0 searches.
				if w == 0 {
					dl.check(last)
				}
				if !b.wait() {
					return
				}
				if dl.found != nil {
					return
				}
			}
			end := s.nextWindowEnd(next, done, cross, limit)
			if dl != nil {
				lo, n := earliest(next, done)
				end = dl.bound(end, lo, n == len(s.DAG.Msgs), limit)
			}
			if stop || end < 0 {
				return
			}
			if every > 0 {
				if last == sampleAt-1 {
					// Every part has run to the sample, and none runs
					// while worker 0 takes it.
					if s.tel != nil {
						if w == 0 {
							s.sampleParts(sims, sampleAt)
						}
						if !b.wait() {
							return
						}
					}
					sampleAt += every
				}
				end = min(end, sampleAt-1)
			}
			for k := w; k < len(sims); k += workers {
				sims[k].clearSent() // taken in
				sims[k].Sched.Run(end)
			}
			if !b.wait() {
				return
			}
			last = end
			searchNow = dl != nil && dl.due(end)
		}
	}
	wg.Add(workers)
	for w := 1; w < workers; w++ {
		go work(w)
	}
	work(0)
	wg.Wait()
	if failed != nil {
		panic(failed)
	}
	for _, o := range sims {
		o.clearSent() // taken in (a Run after this one must not take them again)
	}
	// A deadlock stops the run at its time, before any limit.
	atLimit := (dl == nil || dl.found == nil) && s.pastLimit(sims, limit)
	if s.tel != nil && atLimit && ctx.Err() == nil {
		// Nothing runs before the limit any more: the one-part sampler
		// would go on to it.
		for at := s.tel.at + every; at <= limit; at += every {
			s.sampleParts(sims, at)
		}
	}
	t := mergeTraces(sims, atLimit)
	if s.tel != nil {
		t.Fabric.Telemetry = mergeTelemetry(sims, t.Now)
	}
	if dl != nil && dl.found != nil && !t.Done() {
		// The parts ran to the check; one with no event left stayed at
		// its last.
		t.Now = max(t.Now, dl.found.At)
		return t, errors.New(dl.found.String() + "; the run stopped there")
	}
	if t.Done() || ctx.Err() != nil || t.Now >= limit {
		return t, nil
	}
	// A message's sender and receiver may both give up, in their parts;
	// one side gives up on a message before the other part delivers it,
	// or after (which one part would not count).
	abandoned := map[int32]bool{}
	for _, o := range sims {
		for i, at := range o.abandoned {
			if t.End[i] < 0 || t.End[i] > at {
				abandoned[i] = true
			}
		}
	}
	if len(abandoned) > 0 {
		return t, abandonedError(len(abandoned))
	}
	return t, fmt.Errorf("the simulation stalled at %v: %d messages never completed and no event was left in any of the %d parts (a bug: please report it with the scenario)",
		t.Now, len(t.End)-t.Delivered, s.parts)
}

// arrival is a frame part k takes in, and the network that sent it.
type arrival struct {
	x    *fabric.Export
	from *fabric.Network
}

// takeFrames takes in, as part k, what the other parts sent it (into
// buf, returned for its room), in order of arrival time, then sending
// part and order of sending.
func (s *Sim) takeFrames(k int, sims []*Sim, buf []arrival) []arrival {
	for _, o := range sims {
		out := o.Topo.Net.Outbox
		for i := range out {
			if x := &out[i]; s.destination(o, x) == k {
				buf = append(buf, arrival{x, o.Topo.Net})
			}
		}
	}
	slices.SortStableFunc(buf, func(a, b arrival) int { return cmp.Compare(a.x.At, b.x.At) })
	for _, a := range buf {
		s.Topo.Net.Import(a.x, a.from)
	}
	return buf
}

// sampleParts takes every part's telemetry sample due at at, while no
// part runs.
func (s *Sim) sampleParts(sims []*Sim, at sim.Time) {
	for _, o := range sims {
		o.tel.take(at)
	}
}

// pastLimit reports whether an event is pending after the time limit.
func (s *Sim) pastLimit(sims []*Sim, limit sim.Time) bool {
	for _, o := range sims {
		if t, ok := o.Sched.NextAt(); ok && t > limit {
			return true
		}
	}
	return false
}

// clearSent forgets what the part sent the others in the last window
// (frames, TCP's framing, deliveries), all taken in.
func (s *Sim) clearSent() {
	s.Topo.Net.ClearOutbox()
	s.framing = s.framing[:0]
	if c := s.cross; c != nil {
		c.out = c.out[:0]
	}
}

// earliest is the earliest of the parts' next events (−1: none) and the
// messages they have delivered or cut, all told.
func earliest(next []sim.Time, done []int) (lo sim.Time, n int) {
	lo = -1
	for k, t := range next {
		if t >= 0 && (lo < 0 || t < lo) {
			lo = t
		}
		n += done[k]
	}
	return lo, n
}

// nextWindowEnd is the last picosecond of the next window, given each
// part's next event, messages delivered (or cut) and next delivery another part
// could wait on (−1: the run is over: every message delivered, nothing
// left to run, or past the time limit). A window ends a lookahead after
// its first event, less one; with deliveries that other parts wait on,
// at the earliest that could come (partition_deps.go), so that the parts
// that wait have not passed it.
func (s *Sim) nextWindowEnd(next []sim.Time, done []int, cross []sim.Time, limit sim.Time) sim.Time {
	lo, n := earliest(next, done)
	if lo < 0 || n == len(s.DAG.Msgs) || lo > limit {
		return -1
	}
	end := min(lo+s.lookahead-1, limit)
	if c := s.cross; c != nil {
		if c.hostDelay >= 0 {
			// A last packet not on a wire into a host yet arrives after
			// one more wire's delay.
			end = min(end, lo+c.hostDelay)
		}
		for _, t := range cross {
			if t >= 0 {
				end = min(end, t)
			}
		}
	}
	if end < lo {
		// Nothing would run, and the next window would be this one.
		panic(fmt.Sprintf("lab: a window from %v would end at %v (a bug: please report it with the scenario)", lo, end))
	}
	return end
}

// destination is the part an export of part o goes to.
func (s *Sim) destination(o *Sim, x *fabric.Export) int {
	if x.PFC {
		return s.partOf[x.Port]
	}
	return s.partOf[o.Topo.Net.Ports[x.Port].Peer.ID]
}

// mergeTraces makes the trace of the whole fabric from its parts': each
// message as its sender's part started it and its receiver's delivered
// it, each port's and NIC's counters from the part that owns it, the
// fabric's totals summed. It ends at the last delivery when every message
// was delivered, at the time limit when the run stopped there (events
// were left after it: atLimit), else where the parts stopped.
func mergeTraces(sims []*Sim, atLimit bool) *engine.Trace {
	s := sims[0]
	n := len(s.DAG.Msgs)
	start := slices.Repeat([]sim.Time{-1}, n)
	endT := slices.Repeat([]sim.Time{-1}, n)
	var events uint64
	done := 0
	last := sim.Time(0)
	for _, o := range sims {
		events += o.Sched.Executed
		done += o.done
		last = max(last, o.Sched.Now())
		for i := range n {
			if o.start[i] >= 0 {
				start[i] = o.start[i]
			}
			if o.end[i] >= 0 {
				endT[i] = o.end[i]
			}
		}
	}
	// A closed loop's end (DAG.Until) cuts what it would release after
	// it: a part's executor cuts a message once it has heard every
	// dependency, as the sender's does, and with it all that waits on
	// it, which other parts never release.
	cut := 0
	if s.DAG.Until > 0 {
		for i := range n {
			for _, o := range sims {
				if o.exec != nil && o.exec.IsCut(int32(i)) {
					cut++
					break
				}
			}
		}
	}
	now := last
	if atLimit && done+cut < n {
		now = max(now, s.Job.Spec.Sim.TimeLimit)
	}
	if done+cut == n {
		// The one-part run stops at the last delivery; so does this one.
		now = 0
		for _, e := range endT {
			now = max(now, e)
		}
	}
	t := &measure.Trace{Start: start, End: endT, Delivered: done, Cut: cut, Now: now, Events: events,
		Window: [2]int64{-1, -1}, Bounds: s.bounds()}
	if s.window {
		for k := range t.Window {
			var sum int64
			for _, o := range sims {
				d := o.windowData[k]
				if d < 0 && done+cut == n {
					d = o.Topo.Net.DeliveredData // the run ended before it (Trace)
				}
				if d < 0 {
					sum = -1 // not measured
					break
				}
				sum += d
			}
			t.Window[k] = sum
		}
	}
	ports := ownerPorts(sims)
	var transport metrics.Counters
	for _, o := range sims {
		transport.Add(o.tr.counters())
	}
	// The parts ran on to the end of their last window, a lookahead at
	// most past the last delivery: their counters are read there, so
	// that no pause is open before it began.
	f := s.fabricCounters(ports, max(now, last), func(h int) metrics.Counters {
		return sims[s.hostPart(h)].tr.nicCounters(h)
	}, transport)
	f.Failures = mergeFailures(sims, now)
	if s.explain_ != nil {
		// Each part saw the queues it owns: part 0's stays take the
		// others' in.
		for _, o := range sims[1:] {
			if o.explain_ != nil {
				s.explain_.merge(o.explain_)
				o.explain_ = nil // taken in: never twice
			}
		}
		f.Explain = &explainMode{s: s, e: s.explain_, ports: ports, now: max(now, last)}
	}
	for _, o := range sims {
		c := o.Topo.Net.Balance()
		f.Conservation.InjectedBytes += c.InjectedBytes
		f.Conservation.DeliveredBytes += c.DeliveredBytes
		f.Conservation.DroppedBytes += c.DroppedBytes
		f.Conservation.InFlightBytes += c.InFlightBytes
	}
	c := &f.Conservation
	c.OK = c.InjectedBytes == c.DeliveredBytes+c.DroppedBytes+c.InFlightBytes
	t.Fabric = f
	return t
}

// mergeFailures is the record of every outage begun by now: each part
// counted the losses of the ports it owns (a frame lost on a wire into
// another part, by its sender), and the failover is the last of them.
func mergeFailures(sims []*Sim, now sim.Time) []metrics.LinkFailure {
	var out []metrics.LinkFailure
	for i, f := range sims[0].outages {
		if f.rec.DownS > now.Seconds() {
			continue // the run ended before this outage
		}
		rec := *f.rec
		rec.LostPackets, rec.LostBytes, rec.FailoverS = 0, 0, 0
		for _, o := range sims {
			p := o.outages[i]
			p.finish() // a link still down at the end: its record so far
			rec.LostPackets += p.rec.LostPackets
			rec.LostBytes += p.rec.LostBytes
			if p.rec.LostPackets > 0 {
				rec.FailoverS = max(rec.FailoverS, p.rec.FailoverS)
			}
		}
		out = append(out, rec)
	}
	return out
}

// mergeTelemetry is the whole fabric's telemetry from its parts' samplers,
// which took their samples at the same moments: each port's series from
// the part that owns it, the followed flows from part 0's (which read
// them where they ran), every sampler closed at the run's end (now).
func mergeTelemetry(sims []*Sim, now sim.Time) *metrics.Telemetry {
	for _, o := range sims {
		o.tel.finishAt(now)
	}
	s := sims[0]
	m := *s.tel
	np, nq := 0, len(m.prios)
	if m.ports != nil {
		np = len(s.Topo.Net.Ports)
	}
	m.ports, m.ids = make([]*fabric.Port, np), nil
	m.queue, m.sent, m.paused = make([]int64, m.n*np), make([]int64, m.n*np), make([]bool, m.n*np)
	m.frames, m.marks, m.drops = make([]int32, m.n*np), make([]int32, m.n*np), make([]int32, m.n*np)
	m.qprio = make([]int32, m.n*np*nq)
	for _, o := range sims {
		t := o.tel
		for j, id := range t.ids {
			m.ports[id] = t.ports[j]
			for k := range m.n {
				i, from := k*np+id, k*len(t.ports)+j
				m.queue[i], m.sent[i], m.paused[i] = t.queue[from], t.sent[from], t.paused[from]
				m.frames[i], m.marks[i], m.drops[i] = t.frames[from], t.marks[from], t.drops[from]
				copy(m.qprio[i*nq:(i+1)*nq], t.qprio[from*nq:])
			}
		}
	}
	return m.result()
}
