package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
)

// A run's stages, in order.
type runState int

const (
	statePreparing runState = iota // Prepare is building the plane
	statePrepared
	stateConnected
	stateStarted
	stateEnded // the agent closed the plane at the run's duration; Stop collects
)

// How runs end, the label of the runs metric.
const (
	outcomeStopped      = "stopped"
	outcomeAborted      = "aborted"
	outcomeLease        = "lease_expired"
	outcomeDisconnected = "disconnected"
	outcomeShutdown     = "shutdown"
)

// maxStartAhead bounds how far ahead a start time may be: further is a
// controller's clock error, not a plan.
const maxStartAhead = time.Minute

// activeRun is the agent's one run.
type activeRun struct {
	*checkedRun
	id         string
	owner      *session
	localConns map[int]bool
	done       chan struct{} // closed when the run is detached (stopped or aborted)
	// out carries the events the controller hears, from the executor
	// loop (drive) to the Events stream; notify the relayed deliveries
	// from Notify to the loop.
	out    chan wire.Event
	notify chan []int64

	// plane is written under both s.mu and mu, once, before the state
	// leaves statePreparing; readers hold either.
	plane Plane

	mu          sync.Mutex // one operation at a time (Abort does not wait for it)
	state       runState
	hostBefore  wire.HostCounters
	hostUnavail map[string]string
	timer       *time.Timer

	final     atomic.Pointer[wire.Final] // set when the plane has ended
	streaming atomic.Bool                // an Events stream is attached
	closeOnce sync.Once
}

// closePlane closes the plane once, whoever asks first.
func (r *activeRun) closePlane() {
	r.closeOnce.Do(func() {
		if r.plane != nil {
			r.plane.Close()
		}
	})
}

// lastRun keeps a finished run's counters for /metrics.
type lastRun struct {
	id       string
	cp       wire.Checkpoint
	connByID map[int]wire.Conn
}

func (s *Server) logRun(format string, a ...any) { s.cfg.Logf(format, a...) }

// refuse counts and logs a refusal and makes it the client's error.
func (s *Server) refuse(ctx context.Context, code connect.Code, err error) error {
	var rf *refusal
	if errors.As(err, &rf) {
		s.metrics.refusals.WithLabelValues(rf.reason).Inc()
	}
	s.cfg.Logf("%s (controller %s)", safetext.Terminal(err.Error()), peerOf(ctx))
	return connect.NewError(code, err)
}

func peerOf(ctx context.Context) string {
	if cs := connFrom(ctx); cs != nil {
		return safetext.Terminal(cs.remote)
	}
	return "?"
}

// ownRun is the run the request's session owns, with its lock held.
func (s *Server) ownRun(ctx context.Context) (*activeRun, error) {
	ss := sessionFrom(ctx)
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("no run is prepared on this agent"))
	}
	if r.owner != ss {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("run %s belongs to another controller session", r.id))
	}
	r.mu.Lock()
	select {
	case <-r.done:
		r.mu.Unlock()
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s was aborted", r.id))
	default:
	}
	return r, nil
}

func (s *Server) info(context.Context, *connect.Request[wire.Empty]) (*connect.Response[wire.Info], error) {
	in := &wire.Info{
		Version:     s.cfg.Version,
		MaxRate:     s.cfg.MaxRate,
		MaxDuration: int64(s.cfg.MaxDuration),
		Lease:       int64(s.cfg.Lease),
		Allow:       []string{},
		DataIPs:     []string{},
	}
	in.Hostname, _ = osHostname()
	if cc, err := s.cfg.AvailableCC(); err == nil {
		in.CongestionControls = cc
	}
	for _, p := range s.cfg.Allow {
		in.Allow = append(in.Allow, p.String())
	}
	for _, a := range s.cfg.DataIPs {
		in.DataIPs = append(in.DataIPs, a.String())
	}
	s.mu.Lock()
	if s.run != nil {
		in.Run = s.run.id
	}
	s.mu.Unlock()
	return connect.NewResponse(in), nil
}

// clock is as cheap as a handler gets: the controller's offset estimate
// takes the fastest of many round trips.
func (s *Server) clock(context.Context, *connect.Request[wire.Empty]) (*connect.Response[wire.ClockResponse], error) {
	return connect.NewResponse(&wire.ClockResponse{T: time.Now().UnixNano()}), nil
}

func (s *Server) prepare(ctx context.Context, req *connect.Request[wire.RunSpec]) (*connect.Response[wire.Empty], error) {
	spec := req.Msg
	if err := s.waitClosed(ctx); err != nil {
		return nil, s.refuse(ctx, connect.CodeFailedPrecondition, err)
	}
	cc, err := s.cfg.AvailableCC()
	lim := s.lim
	if err == nil {
		lim.cc = cc
	}
	chk, err := checkRun(*spec, lim)
	if err != nil {
		code := connect.CodePermissionDenied
		if rf := (*refusal)(nil); errors.As(err, &rf) && rf.reason == reasonInvalid {
			code = connect.CodeInvalidArgument
		}
		return nil, s.refuse(ctx, code, err)
	}
	r := &activeRun{checkedRun: chk, id: spec.Run, owner: sessionFrom(ctx), done: make(chan struct{}), localConns: map[int]bool{},
		out: make(chan wire.Event, 4096), notify: make(chan []int64, 64)}
	for _, c := range chk.conns {
		r.localConns[c.ID] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.mu.Lock()
	if s.run != nil {
		busy := s.run.id
		s.mu.Unlock()
		return nil, s.refuse(ctx, connect.CodeFailedPrecondition, &refusal{reasonBusy, fmt.Sprintf("busy: run %s is active", busy)})
	}
	s.run = r
	s.metrics.active.Set(1)
	s.mu.Unlock()

	r.hostBefore, r.hostUnavail = s.cfg.HostCounters(ctx, localAddrs(chk.local))
	p, err := s.cfg.NewPlane(PlaneSpec{
		CC: chk.spec.CC, Allowed: chk.allowed, MaxRate: s.cfg.MaxRate, Session: chk.session,
		Local: chk.local, Peers: chk.peers,
	})
	if err != nil {
		s.detach(r)
		return nil, s.refuse(ctx, connect.CodeFailedPrecondition, &refusal{reasonInvalid, fmt.Sprintf("run %s refused: %v", r.id, err)})
	}
	s.mu.Lock()
	aborted := s.run != r
	r.plane = p
	s.mu.Unlock()
	if aborted {
		p.Close()
		return nil, connect.NewError(connect.CodeAborted, fmt.Errorf("run %s was aborted while it was being prepared", r.id))
	}
	r.state = statePrepared
	cc0 := chk.spec.CC
	if cc0 == "" {
		cc0 = "kernel default"
	}
	s.logRun("run %s prepared (controller %s): %d local endpoints, %d connections to dial, %d DAG messages, %d streams, %d UDP flows, duration %v, congestion control %s",
		safetext.Terminal(r.id), peerOf(ctx), len(chk.local), len(chk.conns), chk.exec.Own(), len(chk.streams), len(chk.udp), chk.duration, safetext.Terminal(cc0))
	return connect.NewResponse(&wire.Empty{}), nil
}

// waitClosed waits (a little) for the previous run's plane to finish
// closing, so a new run can bind the same ports.
func (s *Server) waitClosed(ctx context.Context) error {
	s.mu.Lock()
	if s.run != nil {
		id := s.run.id
		s.mu.Unlock()
		return &refusal{reasonBusy, fmt.Sprintf("busy: run %s is active", id)}
	}
	closing := s.closing
	s.mu.Unlock()
	select {
	case <-closing:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Second):
		return &refusal{reasonBusy, "busy: the previous run's data plane is still closing"}
	}
}

func (s *Server) connect(ctx context.Context, _ *connect.Request[wire.Empty]) (*connect.Response[wire.ConnectResponse], error) {
	r, err := s.ownRun(ctx)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	if r.state != statePrepared {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: connect only once, after prepare", r.id))
	}
	fails := r.plane.Dial(ctx, r.conns)
	r.state = stateConnected
	s.logRun("run %s connected: %d of %d connections, %d failed", safetext.Terminal(r.id), len(r.conns)-len(fails), len(r.conns), len(fails))
	if fails == nil {
		fails = []wire.ConnFailure{}
	}
	return connect.NewResponse(&wire.ConnectResponse{Failures: fails}), nil
}

func (s *Server) start(ctx context.Context, req *connect.Request[wire.StartRequest]) (*connect.Response[wire.Empty], error) {
	r, err := s.ownRun(ctx)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	if r.state != statePrepared && r.state != stateConnected {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: start only once, after prepare", r.id))
	}
	at := time.Unix(0, req.Msg.At)
	now := time.Now()
	if ahead := at.Sub(now); ahead > maxStartAhead {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("run %s: start time is %v away on this agent's clock; at most %v", r.id, ahead.Round(time.Millisecond), maxStartAhead))
	}
	until := at.Add(r.duration)
	if !until.After(now) {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("run %s: start time %v ago leaves nothing of the %v duration", r.id, now.Sub(at).Round(time.Millisecond), r.duration))
	}
	if len(r.streams) > 0 {
		if err := r.plane.StartStreams(at, until, r.streams); err != nil {
			return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: starting streams: %v", r.id, err))
		}
	}
	if len(r.udp) > 0 {
		if err := r.plane.StartUDP(at, until, r.udp); err != nil {
			return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: starting UDP flows: %v", r.id, err))
		}
	}
	r.state = stateStarted
	go s.drive(r, at)
	s.mu.Lock() // detach reads the timer under s.mu
	r.timer = time.AfterFunc(until.Add(s.cfg.DurationGrace).Sub(now), func() { s.endByDuration(r) })
	s.mu.Unlock()
	s.logRun("run %s starts in %v for %v", safetext.Terminal(r.id), at.Sub(now).Round(time.Microsecond), r.duration)
	return connect.NewResponse(&wire.Empty{}), nil
}

// maxBatch bounds the events in one stream message.
const maxBatch = 4096

func (s *Server) events(ctx context.Context, _ *connect.Request[wire.Empty], out *connect.ServerStream[wire.EventBatch]) error {
	r, err := s.ownRun(ctx)
	if err != nil {
		return err
	}
	ok := r.state != statePreparing && r.streaming.CompareAndSwap(false, true)
	r.mu.Unlock()
	if !ok {
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: its events are already being streamed", r.id))
	}
	defer r.streaming.Store(false)
	ch := r.out
	// The headers go out now, so the client knows the stream is open
	// before the first event.
	if err := out.Send(&wire.EventBatch{Events: []wire.Event{}}); err != nil {
		return err
	}
	for {
		var ev wire.Event
		var open bool
		select {
		case ev, open = <-ch:
		case <-r.done:
			return nil
		case <-ctx.Done():
			return nil
		}
		if !open {
			return nil
		}
		batch := []wire.Event{ev}
	more:
		for len(batch) < maxBatch {
			select {
			case ev, open = <-ch:
				if !open {
					break more
				}
				batch = append(batch, ev)
			default:
				break more
			}
		}
		if err := out.Send(&wire.EventBatch{Events: batch}); err != nil {
			return err
		}
		if !open {
			return nil
		}
	}
}

func (s *Server) checkpoint(ctx context.Context, _ *connect.Request[wire.Empty]) (*connect.Response[wire.Checkpoint], error) {
	r, err := s.ownRun(ctx)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	if f := r.final.Load(); f != nil {
		cp := f.Checkpoint
		return connect.NewResponse(&cp), nil
	}
	cp := r.plane.Snapshot()
	return connect.NewResponse(&cp), nil
}

// finalOf takes the run's final counters (once) while its plane is open.
func (s *Server) finalOf(r *activeRun, ended string) *wire.Final {
	if f := r.final.Load(); f != nil {
		return f
	}
	f := &wire.Final{Checkpoint: r.plane.Snapshot(), HostBefore: r.hostBefore, Ended: ended}
	var unavail map[string]string
	f.HostAfter, unavail = s.cfg.HostCounters(context.Background(), localAddrs(r.local))
	for k, v := range r.hostUnavail {
		if unavail == nil {
			unavail = map[string]string{}
		}
		if _, ok := unavail[k]; !ok {
			unavail[k] = v
		}
	}
	if len(unavail) > 0 {
		f.HostUnavailable = unavail
	}
	r.final.Store(f)
	return f
}

func (s *Server) stop(ctx context.Context, _ *connect.Request[wire.Empty]) (*connect.Response[wire.Final], error) {
	r, err := s.ownRun(ctx)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	if r.state == statePreparing {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s is still being prepared", r.id))
	}
	f := s.finalOf(r, "")
	if !s.detach(r) {
		return nil, connect.NewError(connect.CodeAborted, fmt.Errorf("run %s was aborted", r.id))
	}
	s.closeDetached(r, f.Checkpoint, false)
	s.metrics.runs.WithLabelValues(outcomeStopped).Inc()
	var bytes, completions int64
	for _, p := range f.Pairs {
		bytes += p.Bytes
		completions += p.Completions
	}
	s.logRun("run %s stopped: %d completions, %d bytes in its counters", safetext.Terminal(r.id), completions, bytes)
	return connect.NewResponse(f), nil
}

// endByDuration closes the plane of a run that outlived its duration and
// grace without a Stop: the duration cap holds whatever the controller
// does. The run stays until Stop collects its final counters (or the
// lease aborts it).
func (s *Server) endByDuration(r *activeRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		return
	default:
	}
	if r.final.Load() != nil {
		return
	}
	s.finalOf(r, "duration")
	r.state = stateEnded
	r.closePlane()
	s.logRun("run %s reached its duration of %v: data plane closed, waiting for the controller's stop", safetext.Terminal(r.id), r.duration)
}

func (s *Server) abort(ctx context.Context, _ *connect.Request[wire.Empty]) (*connect.Response[wire.Empty], error) {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return connect.NewResponse(&wire.Empty{}), nil
	}
	if r.owner != sessionFrom(ctx) {
		// Only the controller that prepared a run may abort it.
		return nil, s.refuse(ctx, connect.CodePermissionDenied, fmt.Errorf("run %s belongs to another controller session", r.id))
	}
	closed := s.abortRunIf(r, outcomeAborted, "aborted by the controller "+peerOf(ctx))
	// Abort answers within a second: the plane normally closes at once,
	// and otherwise goes on closing after the answer.
	select {
	case <-closed:
	case <-time.After(800 * time.Millisecond):
	}
	return connect.NewResponse(&wire.Empty{}), nil
}

// abortRun aborts whatever run is active.
func (s *Server) abortRun(outcome, why string) {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r != nil {
		s.abortRunIf(r, outcome, why)
	}
}

// abortRunIf aborts r if it is still the active run, without waiting for
// its current operation; the channel closes when its plane has closed.
func (s *Server) abortRunIf(r *activeRun, outcome, why string) <-chan struct{} {
	if !s.detach(r) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.closing
	}
	s.mu.Lock()
	p := r.plane
	s.mu.Unlock()
	var cp wire.Checkpoint
	if f := r.final.Load(); f != nil {
		cp = f.Checkpoint
	} else if p != nil {
		cp = p.Snapshot()
	}
	closed := s.closeDetached(r, cp, true)
	s.metrics.runs.WithLabelValues(outcome).Inc()
	s.logRun("run %s aborted: %s", safetext.Terminal(r.id), why)
	return closed
}

// detach makes r no longer the active run; false if it already was not.
func (s *Server) detach(r *activeRun) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != r {
		return false
	}
	s.run = nil
	close(r.done)
	if r.timer != nil {
		r.timer.Stop()
	}
	s.metrics.active.Set(0)
	return true
}

// closeDetached closes a detached run's plane (in the background if
// async) and keeps its counters for /metrics; the returned channel closes
// when the plane has closed, and the next Prepare waits for it.
func (s *Server) closeDetached(r *activeRun, cp wire.Checkpoint, async bool) <-chan struct{} {
	closed := make(chan struct{})
	s.mu.Lock()
	s.closing = closed
	s.last = &lastRun{id: r.id, cp: cp, connByID: r.connByID}
	s.mu.Unlock()
	do := func() {
		r.closePlane()
		close(closed)
	}
	if async {
		go do()
	} else {
		do()
	}
	return closed
}

func localAddrs(eps []wire.Endpoint) []netip.Addr {
	as := make([]netip.Addr, len(eps))
	for i, e := range eps {
		as[i] = e.Addr.Addr()
	}
	return as
}

func osHostname() (string, error) { return os.Hostname() }
