package dataplane

import (
	"fmt"
	"time"

	"fabriclab/internal/ring"
)

// sched decides what a connection's writer sends next: posted messages
// first, in the order they were posted, then stream writes while the
// stream is on and fewer than depth are outstanding. It is pure (the
// caller passes the time and the outstanding count) and guarded by the
// connection's mutex.
type sched struct {
	msgs         ring.Ring[posted]
	size         int64
	depth        int
	start, until time.Time
	on           bool
	seq          uint64 // next stream write's id
}

type posted struct{ id, n int64 }

// action is one frame to write.
type action struct {
	kind kind
	id   uint64
	n    int64
}

// post queues a message behind those already posted.
func (s *sched) post(msg, n int64) { s.msgs.Push(posted{msg, n}) }

// stream turns the stream on for [start, until); one at a time.
func (s *sched) stream(now time.Time, size int64, depth int, start, until time.Time) error {
	if s.on && now.Before(s.until) {
		return fmt.Errorf("already streaming until %s", s.until.Format(time.RFC3339Nano))
	}
	s.size, s.depth, s.start, s.until, s.on = size, depth, start, until, true
	return nil
}

// next returns a frame to write (ok), or else the time to look again
// (zero: only when kicked by a post, an ack or a new stream).
func (s *sched) next(now time.Time, streamsOut int) (a action, ok bool, wake time.Time) {
	if s.msgs.Len() > 0 {
		m := s.msgs.Pop()
		return action{kindMsg, uint64(m.id), m.n}, true, time.Time{}
	}
	if !s.on {
		return action{}, false, time.Time{}
	}
	if !now.Before(s.until) {
		s.on = false
		return action{}, false, time.Time{}
	}
	if now.Before(s.start) {
		return action{}, false, s.start
	}
	if streamsOut >= s.depth {
		return action{}, false, s.until
	}
	s.seq++
	return action{kindWrite, s.seq - 1, s.size}, true, time.Time{}
}

// inflight is the sender's record of frames written and not yet acked, in
// write order: the receiver acks in the order it reads, so every ack must
// match the head. It is pure and guarded by the connection's mutex.
type inflight struct {
	q       ring.Ring[action]
	streams int // stream writes among them (what Depth bounds)
}

func (f *inflight) push(a action) {
	f.q.Push(a)
	if a.kind == kindWrite {
		f.streams++
	}
}

func (f *inflight) len() int { return f.q.Len() }

// ack matches an ack to the oldest outstanding frame and removes it.
func (f *inflight) ack(h header) (action, error) {
	if f.q.Len() == 0 {
		return action{}, fmt.Errorf("%s %d with nothing outstanding", h.Kind, h.ID)
	}
	a := f.q.Pop()
	if ackOf(a.kind) != h.Kind || a.id != h.ID || a.n != h.Len {
		return action{}, fmt.Errorf("%s %d (%d B) but %s %d (%d B) is next", h.Kind, h.ID, h.Len, a.kind, a.id, a.n)
	}
	if a.kind == kindWrite {
		f.streams--
	}
	return a, nil
}
