package hosts

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"fabriclab/engine"
	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/sim"
	"fabriclab/units"
)

// run is one execution of a plan on the agents.
type run struct {
	e        *Engine
	p        *plan.Plan
	l        *layout
	progress engine.Progress

	agents  []Agent  // by inventory index; nil for agents the plan does not use
	offsets []Offset // per agent
	hostOf  []int    // endpoint (host) → agent index
	t0      int64    // controller Unix ns of the run's time 0

	start, end []sim.Time
	delivered  int             // messages delivered (markers: completed)
	complete   int             // of those, with their start known too
	cut        int             // messages the agents cut (workload.DAG.Until)
	done       int             // agents whose share is done
	relay      map[int32][]int // message → agents to tell of its delivery (shares)
	notify     []*relayQueue   // per agent: the notifier's queue
	own        []int           // per agent: the messages of its share (shadows not counted)
	doneBy     []bool          // per agent: its share is done
	failed     chan error      // an agent's failure, first one wins
	counters   []metrics.AgentCounters
	udpStats   []wire.UDPStats // the probes at both ends, from Stop
	ended      sim.Time        // when the loop ended (0: still running)
}

// execute runs the stages: dial and clocks, prepare, connect, start, the
// executor loop, stop. Any agent failing fails the run; the others are
// aborted.
func (r *run) execute(ctx context.Context) (*engine.Trace, error) {
	inv := r.e.Inventory
	hosts := r.l.topo.Hosts
	eps, err := r.e.endpoints(hosts)
	if err != nil {
		return nil, err
	}
	r.hostOf = make([]int, hosts)
	at := inv.HostAgent()
	used := map[int]bool{}
	for h := 0; h < hosts; h++ {
		r.hostOf[h] = at[h].Agent
		used[at[h].Agent] = true
	}
	r.agents = make([]Agent, len(inv.Agents))
	r.offsets = make([]Offset, len(inv.Agents))
	defer r.closeAll()
	if err := r.dialAll(ctx, used); err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%s-%d", sanitize(r.p.Job.Variant), time.Now().UnixNano())
	if err := r.prepareAll(ctx, id, eps); err != nil {
		r.abortAll()
		return nil, err
	}
	if err := r.connectAll(ctx); err != nil {
		r.abortAll()
		return nil, err
	}
	return r.loop(ctx)
}

// sanitize keeps a run id printable without spaces.
func sanitize(s string) string {
	if s == "" {
		return "run"
	}
	return strings.Map(func(c rune) rune {
		if c <= ' ' || c > '~' {
			return '_'
		}
		return c
	}, s)
}

// each calls f for every agent in use, concurrently, and returns the first
// error, naming the agent.
func (r *run) each(f func(i int, a Agent) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.agents))
	for i, a := range r.agents {
		if a == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i, a)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", r.agentName(i), err)
		}
	}
	return nil
}

func (r *run) dialAll(ctx context.Context, used map[int]bool) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(r.agents))
	for i := range r.agents {
		if !used[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := r.e.Dial(ctx, r.e.Inventory.Agents[i])
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			r.agents[i] = a
			mu.Unlock()
		}()
	}
	wg.Wait()
	// A refused token is not transient: it stops this run and every
	// later one of the engine (Engine.Run), before any other error.
	for i, err := range errs {
		if wire.IsAuthFailure(err) {
			inv := r.e.Inventory
			ae := &AuthError{Agent: inv.Agents[i].Address, AgentFile: inv.Path, Err: err}
			if line, _ := inv.Position("token_file"); line > 0 {
				ae.TokenAt = inv.Where("token_file")
			}
			r.e.setAuthFailed(ae)
			return ae
		}
	}
	for i, err := range errs {
		if err != nil {
			// The agent client names the agent itself; a Dial that does
			// not is named here, once.
			name := "agent " + r.e.Inventory.Agents[i].Address + ": "
			if strings.HasPrefix(err.Error(), name) {
				return err
			}
			return fmt.Errorf("%s%w", name, err)
		}
	}
	// Clocks one agent at a time: round trips measured side by side
	// would queue behind each other and widen every bound.
	for i, a := range r.agents {
		if a == nil {
			continue
		}
		o, err := measureOffset(func() (int64, error) { return a.Clock(ctx) })
		if err != nil {
			return fmt.Errorf("agent %s: clock: %w", r.e.Inventory.Agents[i].Address, err)
		}
		r.offsets[i] = o
	}
	for i, o := range r.offsets {
		if r.agents[i] != nil {
			r.e.logf("agent %s: clock offset %v ± %v", r.e.Inventory.Agents[i].Address, time.Duration(o.Offset), time.Duration(o.Error))
		}
	}
	return nil
}

// ClockError is the largest estimated clock error of the run's agents.
func (r *run) clockError() time.Duration {
	var m int64
	for i, o := range r.offsets {
		if r.agents[i] != nil {
			m = max(m, o.Error)
		}
	}
	return time.Duration(m)
}

// wallLimit is how long the run may take: the scenario's time limit at the
// fabric's scale (the plan's scenario is scaled: at 1/1000 of the rates
// everything takes 1,000× longer), at least a second, at most 10 minutes.
func (r *run) wallLimit() time.Duration {
	lim := wallDuration(r.p.Job.Spec.Sim.TimeLimit)
	if lim <= 0 {
		return maxWall
	}
	return min(max(lim, time.Second), maxWall)
}

// maxWall caps a run's wall time so that with the agents' margin (5 s) it
// stays within their default --max-duration (10m).
const maxWall = 10*time.Minute - 10*time.Second

// cc is the congestion control the run asks the kernels for.
func (r *run) cc() string { return kernelCC(r.p.Job.Spec.Transport.Kind, r.e.CC) }

// kernelCC is the congestion control a run of transport kind asks the
// kernels for: flag (run --cc) if given, dctcp for transport.kind dctcp,
// else "" (each kernel's default).
func kernelCC(kind, flag string) string {
	if flag != "" {
		return flag
	}
	if kind == "dctcp" {
		return "dctcp"
	}
	return ""
}

func (r *run) prepareAll(ctx context.Context, id string, eps []wire.Endpoint) error {
	conns := make([][]wire.Conn, len(r.agents))
	for c, cn := range r.p.Conns {
		src, dst := int(cn.Src), int(cn.Dst)
		if src >= len(r.hostOf) || dst >= len(r.hostOf) {
			return fmt.Errorf("connection %d joins endpoints %d→%d, not hosts of the inventory", c, src, dst)
		}
		a := r.hostOf[src]
		conns[a] = append(conns[a], wire.Conn{ID: c, From: src, To: dst})
	}
	if r.p.PerMessage {
		return errNoConnections
	}
	local := make([][]int, len(r.agents))
	for h, a := range r.hostOf {
		local[a] = append(local[a], h)
	}
	rate := int64(r.l.spec.Topology.HostLink.Rate)
	// The agents' own limit runs from their start, a little after the
	// controller's: a margin, so that they never refuse a post the
	// controller's time limit still allows.
	dur := int64(r.wallLimit() + 5*time.Second)
	// One random session for the run: a data connection or datagram of
	// another run (a stale agent, another controller) is refused.
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	session := binary.LittleEndian.Uint64(b[:]) | 1
	dag, relay := shares(r.p, r.hostOf, len(r.agents))
	r.relay = relay
	until := int64(r.p.DAG.Until / units.Nanosecond)
	if until > dur {
		raise := "raise the scale"
		if line, _ := r.e.Inventory.Position("scale"); line > 0 {
			raise += " (" + r.e.Inventory.Where("scale") + ")"
		}
		return fmt.Errorf("the workload runs %v of wall time at this fabric's scale %g, longer than the run's limit of %v (sim.time_limit at that scale, at most %v): shorten workload.duration or %s",
			time.Duration(until), r.e.Inventory.Scale, r.wallLimit(), maxWall, raise)
	}
	r.own, r.doneBy = make([]int, len(r.agents)), make([]bool, len(r.agents))
	for i, sh := range dag {
		if err := checkShare(sh); err != nil {
			return fmt.Errorf("%s: %v", r.agentName(i), err)
		}
		for _, m := range sh {
			if !m.Shadow {
				r.own[i]++
			}
		}
	}
	udp := r.probes()
	return r.each(func(i int, a Agent) error {
		return a.Prepare(ctx, wire.RunSpec{Run: id, Session: session, CC: r.cc(), Duration: dur, NICRate: rate,
			Endpoints: eps, Local: local[i], Conns: conns[i], DAG: dag[i], Until: until, UDP: udp})
	})
}

func (r *run) connectAll(ctx context.Context) error {
	var mu sync.Mutex
	var fails []string
	err := r.each(func(i int, a Agent) error {
		fs, err := a.Connect(ctx)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, f := range fs {
			if f.Conn < 0 || f.Conn >= len(r.p.Conns) || r.hostOf[r.p.Conns[f.Conn].Src] != i {
				return fmt.Errorf("connect: the agent reported connection %d, which is not one of its own", f.Conn)
			}
			c := r.p.Conns[f.Conn]
			fails = append(fails, fmt.Sprintf("host %d → host %d: %s", c.Src, c.Dst, safetext.Terminal(f.Err)))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n := len(fails); n > 0 {
		sort.Strings(fails)
		more := ""
		if n > 5 {
			more = fmt.Sprintf(" (and %d more)", n-5)
			fails = fails[:5]
		}
		return fmt.Errorf("connect: %d connections failed: %s%s", n, strings.Join(fails, "; "), more)
	}
	r.e.logf("connected %d connections", len(r.p.Conns))
	return nil
}

// startLead is how far ahead of the Start calls time 0 is set.
const startLead = 50 * time.Millisecond

// wallDuration converts a scenario duration (picoseconds) to a wall-clock
// one.
func wallDuration(d units.Duration) time.Duration { return time.Duration(d / units.Nanosecond) }

// now is the run's time on the controller's clock.
func (r *run) now() sim.Time { return r.simTime(time.Now().UnixNano()) }

func (r *run) simTime(unixNano int64) sim.Time {
	return sim.Time(unixNano-r.t0) * units.Nanosecond
}

// agentEvent is an event and the agent it came from.
type agentEvent struct {
	agent int
	ev    wire.Event
}

// loop starts the run and drives the executor until every message is
// delivered, the time limit passes, ctx is cancelled or an agent fails.
func (r *run) loop(ctx context.Context) (*engine.Trace, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan agentEvent, 1024)
	r.failed = make(chan error, 1)
	fail := func(err error) {
		select {
		case r.failed <- err:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, a := range r.agents {
		if a == nil {
			continue
		}
		ch, err := a.Events(runCtx)
		if err != nil {
			r.abortAll()
			return nil, fmt.Errorf("agent %s: events: %w", r.e.Inventory.Agents[i].Address, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range ch {
				select {
				case events <- agentEvent{i, ev}:
				case <-runCtx.Done():
					return
				}
			}
			if runCtx.Err() == nil {
				fail(fmt.Errorf("%s: its event stream ended", r.agentName(i)))
			}
		}()
	}
	r.startNotifiers(runCtx, &wg, fail)
	r.startHeartbeats(runCtx, &wg, fail)

	n := len(r.p.DAG.Msgs)
	r.start, r.end = make([]sim.Time, n), make([]sim.Time, n)
	for i := range r.start {
		r.start[i], r.end[i] = -1, -1
	}
	// A synchronised start: time 0 a little ahead, told to every agent
	// on its own clock (the offsets); each agent then runs its share of
	// the DAG from it.
	r.t0 = time.Now().Add(startLead).UnixNano()
	if err := r.each(func(i int, a Agent) error { return a.Start(ctx, r.offsets[i].ToAgent(r.t0)) }); err != nil {
		r.abortAll()
		return r.trace(), err
	}
	inUse := 0
	for _, a := range r.agents {
		if a != nil {
			inUse++
		}
	}
	limit := time.NewTimer(r.wallLimit() - time.Duration(time.Now().UnixNano()-r.t0))
	defer limit.Stop()
	lastProgress := time.Now()
	var runErr error
loop:
	for r.complete+r.cut < n || r.done < inUse {
		select {
		case ae := <-events:
			if err := r.event(runCtx, ae); err != nil {
				runErr = err
				break loop
			}
		case err := <-r.failed:
			runErr = err
			break loop
		case <-limit.C:
			r.e.logf("time limit: %d of %d messages delivered", r.delivered, n)
			break loop
		case <-ctx.Done():
			break loop
		}
		if r.progress != nil && time.Since(lastProgress) > 100*time.Millisecond {
			lastProgress = time.Now()
			r.progress(float64(r.delivered) / float64(max(n, 1)))
		}
	}
	r.ended = r.now()
	cancel()
	// A run that finished or hit its time limit is stopped: its agents
	// hand over their counters (probes, host counters). A failed or
	// cancelled one is aborted at once.
	if runErr != nil || ctx.Err() != nil {
		r.abortAll()
	} else {
		r.stopAll()
	}
	return r.trace(), runErr
}

// event handles one agent event: a message's start, its delivery (a
// marker's completion), relayed to the agents that wait for it and
// cannot see it; an agent's share done; an agent that could not send.
func (r *run) event(ctx context.Context, ae agentEvent) error {
	ev := ae.ev
	switch ev.Kind {
	case wire.EventDone:
		if r.doneBy[ae.agent] {
			return nil // said twice
		}
		r.doneBy[ae.agent] = true
		r.done++
		r.cut += int(min(max(ev.Cut, 0), int64(r.own[ae.agent])))
		return nil
	case wire.EventFailed:
		return fmt.Errorf("%s: %s", r.agentName(ae.agent), safetext.Terminal(ev.Err))
	}
	if ev.Msg < 0 || ev.Msg >= int64(len(r.end)) {
		return nil
	}
	i := int32(ev.Msg)
	// Agents' clocks are known only within their offset errors: a
	// message's delivery never precedes its start.
	t := r.simTime(r.offsets[ae.agent].ToController(ev.T))
	switch ev.Kind {
	case wire.EventStarted:
		// The first byte left the sender: the message's start on real
		// hosts.
		if r.start[i] >= 0 {
			return nil
		}
		if r.end[i] >= 0 {
			t = min(t, r.end[i])
			r.complete++
		}
		r.start[i] = t
	case wire.EventDelivered:
		if r.end[i] >= 0 {
			return nil // a duplicate
		}
		if r.p.DAG.Msgs[i].Marker {
			r.start[i] = t
		}
		if r.start[i] >= 0 {
			t = max(t, r.start[i])
			r.complete++
		}
		r.end[i] = t
		r.delivered++
		for _, a := range r.relay[i] {
			r.notify[a].push(ev.Msg)
		}
	}
	return nil
}

// relayQueue is one agent's relayed deliveries waiting for its notifier.
// The loop never blocks on it: a full channel between the loop and the
// agent could otherwise close a cycle (loop → notifier → agent → events →
// loop) and hang the run.
type relayQueue struct {
	mu   sync.Mutex
	msgs []int64
	wake chan struct{} // 1 slot: something was pushed
}

func newRelayQueue() *relayQueue { return &relayQueue{wake: make(chan struct{}, 1)} }

func (q *relayQueue) push(m int64) {
	q.mu.Lock()
	q.msgs = append(q.msgs, m)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns up to max queued deliveries.
func (q *relayQueue) take(max int) []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.msgs), max)
	out := append([]int64(nil), q.msgs[:n]...)
	q.msgs = q.msgs[n:]
	if len(q.msgs) > 0 {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return out
}

// notifyBatch bounds one Notify (the agent takes at most 1<<16).
const notifyBatch = 4096

// startNotifiers runs one goroutine per agent that relays the deliveries
// its share waits for, in order, so that the loop never waits for a
// round trip.
func (r *run) startNotifiers(ctx context.Context, wg *sync.WaitGroup, fail func(error)) {
	r.notify = make([]*relayQueue, len(r.agents))
	for i, a := range r.agents {
		r.notify[i] = newRelayQueue()
		if a == nil {
			continue
		}
		q := r.notify[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-q.wake:
					b := q.take(notifyBatch)
					if len(b) == 0 {
						continue
					}
					if err := a.Notify(ctx, b); err != nil {
						if ctx.Err() == nil {
							fail(fmt.Errorf("%s: notify: %w", r.agentName(i), err))
						}
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
}

// missedChecks is how many checks in a row an agent may leave
// unanswered before it fails the run.
const missedChecks = 3

// heartbeat is how often every agent is checked on.
func (r *run) heartbeat() time.Duration {
	if hb := wallDuration(r.e.Heartbeat); hb > 0 {
		return hb
	}
	return 200 * time.Millisecond
}

// startHeartbeats checkpoints every agent each heartbeat; a check waits
// two heartbeats for its answer. An agent that leaves missedChecks checks
// in a row unanswered, or whose check fails otherwise (a reset
// connection, a refusal), fails the run, named: one late answer from a
// busy machine is not a dead agent.
func (r *run) startHeartbeats(ctx context.Context, wg *sync.WaitGroup, fail func(error)) {
	hb := r.heartbeat()
	for i, a := range r.agents {
		if a == nil {
			continue
		}
		// A lossy fabric can hold a flow in TCP's retransmission backoff
		// for seconds (four losses in a row: about 3 s): a stall is
		// nothing moved for stallTime.
		stalls := stallWatch{last: map[int]connProgress{}, after: int(max(stallTime/hb, 2))}
		missed := 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(hb)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*hb)
				cp, err := a.Checkpoint(cctx)
				cancel()
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					if missed++; errors.Is(err, wire.ErrNoAnswer) && missed < missedChecks {
						continue
					}
					fail(fmt.Errorf("%s stopped answering: %v", r.agentName(i), err))
					return
				}
				missed = 0
				if err := stalls.check(cp); err != nil {
					fail(fmt.Errorf("%s: %v", r.agentName(i), err))
					return
				}
				if cp.EventsDropped > 0 {
					fail(fmt.Errorf("%s lost %d delivery events (the controller fell behind); the run cannot be measured", r.agentName(i), cp.EventsDropped))
					return
				}
			}
		}()
	}
}

// agentName names agent i for messages: "agent 10.0.0.5:7470 (hosts 0, 1)".
func (r *run) agentName(i int) string {
	return fmt.Sprintf("agent %s (hosts %s)", r.e.Inventory.Agents[i].Address, r.hostList(i))
}

// hostList names agent i's hosts ("0, 1").
func (r *run) hostList(i int) string {
	var hs []string
	for _, h := range r.e.Inventory.Agents[i].Hosts {
		hs = append(hs, fmt.Sprint(h.Host))
	}
	return strings.Join(hs, ", ")
}

// stopAll ends the run on every agent and keeps their counters over the
// run (after − before; a counter missing on either side stays absent).
func (r *run) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	err := r.each(func(i int, a Agent) error {
		f, err := a.Stop(ctx)
		if err != nil {
			return err
		}
		c := map[string]int64{}
		for k, after := range f.HostAfter {
			if before, ok := f.HostBefore[k]; ok {
				c[k] = after - before
			}
		}
		mu.Lock()
		r.counters = append(r.counters, metrics.AgentCounters{Agent: r.e.Inventory.Agents[i].Address, Counters: c})
		r.udpStats = append(r.udpStats, f.UDP...)
		mu.Unlock()
		return nil
	})
	if err != nil {
		r.e.warnf("stop: %v", err)
	}
	sort.Slice(r.counters, func(a, b int) bool { return r.counters[a].Agent < r.counters[b].Agent })
}

// abortAll stops every agent at once (within a second).
func (r *run) abortAll() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.each(func(i int, a Agent) error { return a.Abort(ctx) })
}

func (r *run) closeAll() {
	for _, a := range r.agents {
		if a != nil {
			a.Close()
		}
	}
}

// trace is what the run recorded, measured against the declared fabric.
func (r *run) trace() *measure.Trace {
	agents := 0
	for _, a := range r.agents {
		if a != nil {
			agents++
		}
	}
	now := r.ended
	if now == 0 {
		now = r.now()
	}
	// Clocks are known within their offset errors: a message never
	// starts before what it waited for ended, nor ends before it starts.
	d := r.p.DAG
	for m := int32(0); m < int32(len(r.end)); m++ {
		if r.start[m] >= 0 && r.end[m] >= 0 && r.end[m] < r.start[m] {
			r.end[m] = r.start[m]
		}
		for _, j := range d.Successors(m) {
			if r.start[j] >= 0 && r.end[m] >= 0 && r.start[j] < r.end[m] {
				r.start[j] = r.end[m]
			}
		}
	}
	// A delivery whose start the run ended before hearing of (another
	// agent's stream) does not count: the trace has whole messages only.
	for i, e := range r.end {
		if e >= 0 && r.start[i] < 0 {
			r.end[i] = -1
			r.delivered--
		}
	}
	return &measure.Trace{Start: r.start, End: r.end, Delivered: r.delivered, Cut: r.cut, Now: now,
		Window: [2]int64{-1, -1}, Bounds: r.l.bounds(r.p),
		Hosts: &metrics.HostsRun{Engine: "hosts", Agents: agents, CC: r.cc(), Scale: r.e.Inventory.Scale,
			ClockErrorS: r.clockError().Seconds(), HostCounters: r.counters, Probes: r.probeResults()}}
}

// connProgress is what a sending connection had moved at a checkpoint, and
// for how many checkpoints in a row it had moved nothing while messages
// waited.
type connProgress struct {
	bytes, acked int64
	still        int
}

// stallTime is how long a connection with messages outstanding may move
// nothing before the run fails as stalled.
const stallTime = 5 * time.Second

// stallWatch finds an agent's sending connections that failed, or that
// have messages outstanding and moved nothing over after checkpoints in a
// row: a broken or stalled link.
type stallWatch struct {
	last  map[int]connProgress
	after int
}

func (w *stallWatch) check(cp wire.Checkpoint) error {
	for _, c := range cp.Conns {
		if c.Side != wire.SideSender {
			continue
		}
		if c.Err != "" {
			return fmt.Errorf("host %d → host %d: the connection failed: %s", c.From, c.To, c.Err)
		}
		p := w.last[c.Conn]
		if c.Outstanding > 0 && c.Bytes == p.bytes && c.Acked == p.acked {
			p.still++
		} else {
			p.still = 0
		}
		p.bytes, p.acked = c.Bytes, c.Acked
		w.last[c.Conn] = p
		if p.still >= max(w.after, 1) {
			return fmt.Errorf("host %d → host %d stalled: %d messages outstanding and nothing moved over %d checkpoints", c.From, c.To, c.Outstanding, p.still)
		}
	}
	return nil
}
