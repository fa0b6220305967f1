package agent

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/rankexec"
	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
	"fabriclab/sim"
	"fabriclab/units"
)

// The agent runs the workload's executor for its own ranks (package
// rankexec): from the start time it posts the messages its share
// releases, and releases what waits on a delivery the moment it sees it —
// a message one of its endpoints received, one of its own the receiver
// acknowledged (as an RDMA send completion would), or one the controller
// relayed (Notify: a message between two other agents' endpoints, or
// another agent's marker). The controller hears started, delivered and
// done events, as the trace and the relays need; acknowledgements stay
// here.

// drive is the run's executor loop, from Start until the run is detached
// or its plane closes. Only it reads the plane's events.
func (s *Server) drive(r *activeRun, at time.Time) {
	x := r.exec
	in := r.plane.Events()
	simAt := func(t time.Time) sim.Time { return sim.Time(t.Sub(at).Nanoseconds()) * units.Nanosecond }
	emit := func(ev wire.Event) bool {
		select {
		case r.out <- ev:
			return true
		case <-r.done:
			return false
		}
	}
	failed := false
	post := func(rs []rankexec.Release, t time.Time) {
		for _, rel := range rs {
			if rel.Marker {
				if !rel.Shadow { // a shadow is reported by its owner
					emit(wire.Event{Kind: wire.EventDelivered, Msg: rel.Msg, Conn: -1, T: t.UnixNano()})
				}
				continue
			}
			if failed {
				continue
			}
			if err := r.plane.Post(rel.Conn, rel.Msg, rel.Bytes); err != nil {
				failed = true
				msg := fmt.Sprintf("message %d on connection %d: %v", rel.Msg, rel.Conn, err)
				s.logRun("run %s: %s", safetext.Terminal(r.id), msg)
				emit(wire.Event{Kind: wire.EventFailed, Msg: rel.Msg, Conn: rel.Conn, Err: msg, T: time.Now().UnixNano()})
			}
		}
	}
	wake := time.NewTimer(time.Until(at))
	defer wake.Stop()
	select {
	case <-wake.C:
	case <-r.done:
		return
	}
	now := time.Now()
	post(x.Ready(simAt(now)), now)
	var untilC <-chan time.Time
	if r.spec.Until > 0 {
		ut := time.NewTimer(time.Until(at.Add(time.Duration(r.spec.Until))))
		defer ut.Stop()
		untilC = ut.C
	}
	done := false
	checkDone := func(t time.Time) {
		if !done && x.Done(simAt(t)) {
			done = true
			emit(wire.Event{Kind: wire.EventDone, Cut: int64(x.Cut()), T: t.UnixNano()})
		}
	}
	checkDone(now)
	for {
		if next, ok := x.NextRelease(); ok {
			wake.Reset(time.Until(at.Add(time.Duration(next / units.Nanosecond))))
		}
		select {
		case ev, open := <-in:
			if !open {
				return
			}
			t := time.Unix(0, ev.T)
			switch ev.Kind {
			case wire.EventAcked:
				post(x.Delivered(ev.Msg, simAt(t)), t)
			case wire.EventDelivered:
				if !emit(ev) {
					return
				}
				post(x.Delivered(ev.Msg, simAt(t)), t)
			case wire.EventStarted:
				if !emit(ev) {
					return
				}
			}
			checkDone(t)
		case msgs := <-r.notify:
			now := time.Now()
			for _, m := range msgs {
				if x.IsExternal(m) { // a relay tells of others' messages only
					post(x.Delivered(m, simAt(now)), now)
				}
			}
			checkDone(now)
		case <-wake.C:
			now := time.Now()
			post(x.Ready(simAt(now)), now)
			checkDone(now)
		case <-untilC:
			checkDone(time.Now())
		case <-r.done:
			return
		}
	}
}

// maxNotify bounds the deliveries of one Notify (the controller sends at
// most notifyBatch).
const maxNotify = 1 << 16

// notify hands the controller's relayed deliveries to the run's executor;
// ids that are not messages the share waits on from others are ignored.
func (s *Server) notify(ctx context.Context, req *connect.Request[wire.NotifyRequest]) (*connect.Response[wire.Empty], error) {
	r, err := s.ownRun(ctx)
	if err != nil {
		return nil, err
	}
	state := r.state
	r.mu.Unlock()
	if state != stateStarted {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("run %s: notify only after start, before the duration ends", r.id))
	}
	if len(req.Msg.Msgs) == 0 {
		return connect.NewResponse(&wire.Empty{}), nil
	}
	if len(req.Msg.Msgs) > maxNotify {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("run %s: %d deliveries in one notify, at most %d", r.id, len(req.Msg.Msgs), maxNotify))
	}
	select {
	case r.notify <- req.Msg.Msgs:
	case <-r.done:
		return nil, connect.NewError(connect.CodeAborted, fmt.Errorf("run %s has ended", r.id))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return connect.NewResponse(&wire.Empty{}), nil
}
