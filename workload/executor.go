package workload

import "fabriclab/sim"

// Executor is a DAG's dependency logic as a state machine, without a clock
// or any I/O: which messages may start, what a delivery releases, when
// every message is done. Every engine drives one: it starts the messages
// the executor releases (posting them on a simulated transport, starting a
// fluid flow, telling a host's agent), tells it each delivery, and keeps
// its own time.
//
// A message is released once every message it waits for is delivered. It
// starts then, or at its earliest start (Message.At) when that is later:
// such a message waits. A marker (Message.Marker) moves nothing: it is
// delivered the moment it starts, and what that releases follows it in the
// same list. Lists are in the order a depth-first walk of the dependencies
// reaches the messages (a delivery's successors in order, each marker's
// own successors before the next), the order a collective library would
// post them in.
//
// An External message is never released: it is delivered only when the
// engine says so (Delivered), and what waits on it follows as usual.
//
// By default the executor holds the waiting messages itself: NextRelease
// says when the first may start and Ready(then) returns it. An engine with
// a timer of its own per message sets OwnTimers instead.
type Executor struct {
	// OwnTimers, set before the first Ready, makes the engine keep the
	// waiting messages: Ready, Delivered and Start then return every
	// released message in release order, the waiting ones too (their
	// Message.At is later than now), and the engine calls Start(m, at)
	// for each when its time comes. (The packet engine schedules one
	// simulator event per waiting message, so that the order of its
	// events does not depend on how many start at the same time.)
	OwnTimers bool
	// OnCut, if set, hears each message cut (DAG.Until), as it is cut: a
	// partitioned run counts the cuts of the messages a part sends.
	OnCut func(m int32)

	dag *DAG
	// remaining is, per message, how many of its dependencies are not
	// delivered yet; −1 once it is delivered itself.
	remaining []int32
	done      int
	cut       int  // messages cut by the DAG's Until (never released)
	rooted    bool // the roots were released (first Ready)
	out       []int32
	waiting   waitQueue
	seq       uint64
}

// NewExecutor executes d, which Finish has completed. Nothing is released
// before the first Ready.
func NewExecutor(d *DAG) *Executor {
	return &Executor{dag: d, remaining: append([]int32(nil), d.DepCount...)}
}

// reuse starts a new result list in the buffer of the last one.
func (e *Executor) reuse() { e.out = e.out[:0] }

// result returns the list, keeping its buffer for the next one unless it
// is large (the first Ready's list of every root can be most of the DAG:
// it is the caller's to drop).
func (e *Executor) result() []int32 {
	out := e.out
	if cap(out) > 1<<12 {
		e.out = nil
	}
	return out
}

// Ready returns the messages that start at now: on the first call the
// DAG's roots (the messages without dependencies, in index order); then
// the waiting messages whose earliest start has come, earliest first
// (ties in release order). Markers among them are delivered at once, and
// what they release follows them. Messages released with a later earliest
// start wait (see NextRelease), or, with OwnTimers, are in the list too.
// The list is valid until the next call.
func (e *Executor) Ready(now sim.Time) []int32 {
	e.reuse()
	if !e.rooted {
		e.rooted = true
		roots := 0
		for _, c := range e.dag.DepCount {
			if c == 0 {
				roots++
			}
		}
		if cap(e.out) < roots {
			e.out = make([]int32, 0, roots)
		}
		msgs := e.dag.Msgs
		for i, c := range e.dag.DepCount {
			if c != 0 || msgs[i].External {
				continue
			}
			if m := &msgs[i]; !m.Marker && (m.At <= now || e.OwnTimers) {
				e.out = append(e.out, int32(i)) // what release does, without the call
				continue
			}
			e.release(int32(i), now)
		}
	}
	for len(e.waiting) > 0 && e.waiting[0].at <= now {
		e.start(e.waiting.pop().msg, now)
	}
	return e.result()
}

// NextRelease is the earliest start of the waiting messages; ok is false
// when none waits (always, with OwnTimers).
func (e *Executor) NextRelease() (at sim.Time, ok bool) {
	if len(e.waiting) == 0 {
		return 0, false
	}
	return e.waiting[0].at, true
}

// Delivered records that message m arrived at now and returns the
// messages this releases (as Ready lists them). A message delivered before
// is ignored (nil).
func (e *Executor) Delivered(m int32, now sim.Time) []int32 {
	if e.remaining[m] < 0 {
		return nil
	}
	e.reuse()
	e.deliver(m, now)
	return e.result()
}

// Start starts waiting message m at now (with OwnTimers: when its earliest
// start has come) and returns it, followed, for a marker, by what its
// delivery releases. m must be waiting (released, not started).
func (e *Executor) Start(m int32, now sim.Time) []int32 {
	e.reuse()
	e.start(m, now)
	return e.result()
}

// Done reports whether every message was delivered or cut (DAG.Until).
func (e *Executor) Done() bool { return e.done+e.cut == len(e.remaining) }

// Cut is how many messages were cut: released at or after the DAG's
// Until, they never start, nor does anything that waits on them.
func (e *Executor) Cut() int { return e.cut }

// IsCut reports whether message m was cut.
func (e *Executor) IsCut(m int32) bool { return e.remaining[m] == cutMark }

// cutMark marks a cut message in remaining (delivered ones are −1).
const cutMark = -2

// Completed is how many messages were delivered so far (markers
// included).
func (e *Executor) Completed() int { return e.done }

// release handles message m whose dependencies are all delivered: it
// starts now, or waits for its earliest start.
func (e *Executor) release(m int32, now sim.Time) {
	msg := &e.dag.Msgs[m]
	switch {
	case msg.External:
		// Someone else's: its delivery comes through Delivered.
	case msg.At <= now:
		e.out = append(e.out, m)
		if msg.Marker {
			e.deliver(m, now)
		}
	case e.OwnTimers:
		e.out = append(e.out, m)
	default:
		e.seq++
		e.waiting.push(waiter{at: msg.At, seq: e.seq, msg: m})
	}
}

// start lists waiting message m as starting now and delivers it at once
// if it is a marker.
func (e *Executor) start(m int32, now sim.Time) {
	e.out = append(e.out, m)
	if e.dag.Msgs[m].Marker {
		e.deliver(m, now)
	}
}

func (e *Executor) deliver(m int32, now sim.Time) {
	e.remaining[m] = -1
	e.done++
	for _, j := range e.dag.Successors(m) {
		if e.remaining[j] < 0 {
			continue // cut (a dependency of j was cut before)
		}
		e.remaining[j]--
		if e.remaining[j] == 0 {
			if u := e.dag.Until; u > 0 && now >= u {
				e.cutFrom(j)
				continue
			}
			e.release(j, now)
		}
	}
}

// cutFrom cuts message m and everything that waits on it, directly or not:
// none of them can ever be released.
func (e *Executor) cutFrom(m int32) {
	stack := []int32{m}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.remaining[j] < 0 {
			continue
		}
		e.remaining[j] = cutMark
		e.cut++
		if e.OnCut != nil {
			e.OnCut(j)
		}
		stack = append(stack, e.dag.Successors(j)...)
	}
}

// waiter is a released message waiting for its earliest start.
type waiter struct {
	at  sim.Time
	seq uint64 // release order, for ties
	msg int32
}

// waitQueue is a binary min-heap of waiters by (at, seq).
type waitQueue []waiter

func (q waitQueue) less(a, b int) bool {
	if q[a].at != q[b].at {
		return q[a].at < q[b].at
	}
	return q[a].seq < q[b].seq
}

func (q *waitQueue) push(w waiter) {
	*q = append(*q, w)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *waitQueue) pop() waiter {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
