package sim

import (
	"math/bits"
	"slices"
)

// radixQueue is the scheduler's priority queue: a radix heap over event
// times. Times only grow (an event is never scheduled before now), so an
// entry sits in bucket bits.Len(at XOR last), last being the least time
// taken out so far: bucket 0 holds the entries at exactly last, in
// insertion order, and an entry moves only to lower buckets, at most 64
// times over its life. Taking the next entry is a slice read; refilling
// bucket 0 moves the entries of the lowest non-empty bucket down and
// sorts those at the new least time by insertion number. Ties therefore
// leave in insertion order, as from a heap ordered by (time, number).
type radixQueue struct {
	last Time
	head int // bucket 0's next entry
	n    int
	b    [65][]entry
}

func (q *radixQueue) len() int { return q.n }

// push adds e. An entry before last (scheduled after Run stopped at a
// limit earlier than the next event, which it had already looked at)
// makes the queue sort itself again from e's time.
func (q *radixQueue) push(e entry) {
	if e.at < q.last {
		q.rebase(e.at)
	}
	i := bits.Len64(uint64(e.at ^ q.last))
	q.b[i] = append(q.b[i], e)
	q.n++
}

// rebase puts every entry back in the buckets relative to t ≤ last.
func (q *radixQueue) rebase(t Time) {
	all := q.drain()
	q.last = t
	for _, e := range all {
		i := bits.Len64(uint64(e.at ^ q.last))
		q.b[i] = append(q.b[i], e)
	}
	q.n = len(all)
	q.settle()
}

// drain takes every entry out, in no order.
func (q *radixQueue) drain() []entry {
	var all []entry
	all = append(all, q.b[0][q.head:]...)
	q.b[0], q.head = q.b[0][:0], 0
	for i := 1; i < len(q.b); i++ {
		all = append(all, q.b[i]...)
		q.b[i] = q.b[i][:0]
	}
	q.n = 0
	return all
}

// settle sorts bucket 0 by insertion number (after entries moved into it).
func (q *radixQueue) settle() {
	z := q.b[0][q.head:]
	if len(z) > 1 {
		slices.SortFunc(z, func(a, b entry) int {
			if a.key < b.key {
				return -1
			}
			return 1
		})
	}
}

// peek is the next entry (the queue must not be empty).
func (q *radixQueue) peek() *entry {
	if q.head == len(q.b[0]) {
		q.refill()
	}
	return &q.b[0][q.head]
}

// pop takes the next entry out (the queue must not be empty).
func (q *radixQueue) pop() entry {
	e := *q.peek()
	q.head++
	q.n--
	if q.head == len(q.b[0]) {
		q.b[0], q.head = q.b[0][:0], 0
	}
	return e
}

// refill moves the entries of the lowest non-empty bucket down, relative
// to the least time among them, which becomes last.
func (q *radixQueue) refill() {
	q.b[0], q.head = q.b[0][:0], 0
	i := 1
	for len(q.b[i]) == 0 {
		i++
	}
	from := q.b[i]
	least := from[0].at
	for _, e := range from[1:] {
		least = min(least, e.at)
	}
	q.last = least
	for _, e := range from {
		j := bits.Len64(uint64(e.at ^ least))
		q.b[j] = append(q.b[j], e)
	}
	q.b[i] = from[:0]
	q.settle()
}
