package sim

import (
	"math/bits"
	"slices"
)

// radixQueue is the scheduler's priority queue: a radix heap over event
// times, in base 16. Times only grow (an event is never scheduled before
// now), so every pending time is at least last, the least time taken out
// so far. An entry at exactly last waits in zero (its key only: the time
// is last), in insertion order; any
// other sits in bucket b[l][d], l being the base-16 digit where its time
// first differs from last and d its own digit there. A lower level, then
// a lower digit, holds earlier times, so the lowest non-empty bucket
// (found from two bit masks) holds the next times. Refilling zero takes
// that bucket, makes its least time last and spreads its entries over
// lower levels: an entry moves at most 16 times over its life, in
// practice four or five (an event a microsecond ahead is 2^20 ps away),
// where base 2 moved it twenty times. zero is sorted by insertion number
// after each refill, so ties leave in insertion order, as from a heap
// ordered by (time, number).
type radixQueue struct {
	last Time
	head int // zero's next entry
	n    int
	zero []uint64 // keys of the entries at last
	b    [levels][digits][]entry
	used [levels]uint16 // bit d: b[l][d] is not empty
	lvls uint16         // bit l: used[l] is not 0
}

const (
	digitBits = 4
	digits    = 1 << digitBits
	levels    = 64 / digitBits
	// bucketCap is each bucket's first capacity, from one array: a
	// bucket first used late in a run (a time digit never crossed
	// before) does not allocate then.
	bucketCap = 16
)

// init gives every bucket its first capacity.
func (q *radixQueue) init() {
	arena := make([]entry, levels*digits*bucketCap)
	for l := range q.b {
		for d := range q.b[l] {
			i := (l*digits + d) * bucketCap
			q.b[l][d] = arena[i : i : i+bucketCap]
		}
	}
	q.zero = make([]uint64, 0, 64)
}

func (q *radixQueue) len() int { return q.n }

// push adds e. An entry before last (scheduled after Run stopped at a
// limit earlier than the next event, which it had already looked at)
// makes the queue sort itself again from e's time.
func (q *radixQueue) push(e entry) {
	if q.zero == nil {
		q.init()
	}
	if e.at < q.last {
		q.rebase(e.at)
	}
	q.place(e)
	q.n++
	if z := q.zero; e.at == q.last && len(z)-q.head > 1 && e.key < z[len(z)-2] {
		q.settle() // a reserved number (Scheduler.AtSeq) older than some due now
	}
}

// place puts e (at ≥ last) in zero or its bucket.
func (q *radixQueue) place(e entry) {
	x := uint64(e.at ^ q.last)
	if x == 0 {
		q.zero = append(q.zero, e.key)
		return
	}
	l := (bits.Len64(x) - 1) / digitBits
	d := uint64(e.at) >> (l * digitBits) & (digits - 1)
	q.b[l][d] = append(q.b[l][d], e)
	q.used[l] |= 1 << d
	q.lvls |= 1 << l
}

// rebase puts every entry back relative to t ≤ last.
func (q *radixQueue) rebase(t Time) {
	all := q.drain()
	q.last = t
	for _, e := range all {
		q.place(e)
	}
	q.n = len(all)
	q.settle()
}

// drain takes every entry out, in no order.
func (q *radixQueue) drain() []entry {
	var all []entry
	for _, k := range q.zero[q.head:] {
		all = append(all, entry{q.last, k})
	}
	q.zero, q.head = q.zero[:0], 0
	for l := range q.b {
		for d := range q.b[l] {
			all = append(all, q.b[l][d]...)
			q.b[l][d] = q.b[l][d][:0]
		}
		q.used[l] = 0
	}
	q.lvls = 0
	q.n = 0
	return all
}

// settle sorts zero by insertion number (after entries moved into it).
// Its entries share one time, so sorting their keys sorts them: plain
// integers, which sort several times faster than entries compared
// through a function (many events tie in a symmetric fabric).
func (q *radixQueue) settle() {
	if z := q.zero[q.head:]; len(z) > 1 {
		slices.Sort(z)
	}
}

// peek is the next entry (the queue must not be empty).
func (q *radixQueue) peek() entry {
	if q.head == len(q.zero) {
		q.refill()
	}
	return entry{q.last, q.zero[q.head]}
}

// pop takes the next entry out (the queue must not be empty).
func (q *radixQueue) pop() entry {
	e := q.peek()
	q.head++
	q.n--
	if q.head == len(q.zero) {
		q.zero, q.head = q.zero[:0], 0
	}
	return e
}

// refill empties the lowest non-empty bucket into zero and lower levels,
// relative to the least time in it, which becomes last.
func (q *radixQueue) refill() {
	q.zero, q.head = q.zero[:0], 0
	l := bits.TrailingZeros16(q.lvls)
	d := bits.TrailingZeros16(q.used[l])
	from := q.b[l][d]
	q.b[l][d] = from[:0]
	if q.used[l] &^= 1 << d; q.used[l] == 0 {
		q.lvls &^= 1 << l
	}
	least := from[0].at
	for _, e := range from[1:] {
		least = min(least, e.at)
	}
	q.last = least
	for _, e := range from {
		q.place(e) // to zero or a level below l: never back into from
	}
	q.settle()
}
