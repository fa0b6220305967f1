package dataplane

import (
	"context"
	"sync"
	"sync/atomic"

	"fabriclab/internal/ring"
)

// DefaultEventQueue is how many events may wait for the consumer before
// new ones are dropped (about 20 MB of events).
const DefaultEventQueue = 1 << 18

// eventQueue decouples the data path from the consumer of Events. The data
// path only appends under a short mutex, never waits; one forwarder
// goroutine moves events to the channel as fast as the consumer reads.
// Beyond limit waiting events, new ones are dropped and counted (Snapshot
// .EventsDropped): a run that executes a DAG and sees a drop must fail,
// since a lost Delivered would leave its dependants waiting. A DAG posts a
// finite number of messages, so the queue only fills when the consumer has
// stopped reading.
type eventQueue struct {
	mu      sync.Mutex
	q       ring.Ring[Event]
	limit   int
	dropped atomic.Int64
	wake    chan struct{}
	out     chan Event
}

func newEventQueue(limit int) *eventQueue {
	if limit <= 0 {
		limit = DefaultEventQueue
	}
	return &eventQueue{limit: limit, wake: make(chan struct{}, 1), out: make(chan Event, 1024)}
}

// push never blocks.
func (e *eventQueue) push(ev Event) {
	e.mu.Lock()
	if e.q.Len() >= e.limit {
		e.mu.Unlock()
		e.dropped.Add(1)
		return
	}
	e.q.Push(ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// forward feeds the channel until ctx ends; events still queued then are
// discarded (the plane is closing).
func (e *eventQueue) forward(ctx context.Context) {
	for {
		e.mu.Lock()
		if e.q.Len() == 0 {
			e.mu.Unlock()
			select {
			case <-e.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		ev := e.q.Pop()
		e.mu.Unlock()
		select {
		case e.out <- ev:
		case <-ctx.Done():
			return
		}
	}
}
