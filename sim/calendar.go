package sim

import (
	"math/bits"
	"slices"
)

// calendarQueue is the scheduler's priority queue: a calendar of buckets
// 256 ps wide over the next 2.1 µs, with a binary heap for what lies
// beyond. Nearly every event of a packet fabric is a frame time or a
// link delay ahead, so it is written once, into its bucket, and read once,
// when its bucket comes due and is sorted. In the radix heap the scheduler
// had before, an event moved four to seven times (one per base-16 digit of
// its distance) before it ran, which was a fifth of all instructions.
//
// Times only grow (an event is never scheduled before now), so every
// pending time is at least base, the start of the current bucket. The
// current bucket's entries wait in cur, sorted by (time, insertion
// number); a bucket ahead is a list linked through its events' slots, in
// no order; an entry at or after base+horizon waits in far and comes into
// its bucket once the calendar reaches it.
type calendarQueue struct {
	n    int
	base Time    // start of the current bucket: a multiple of width
	cur  []entry // the current bucket, in order; cur[head:] are pending
	head int
	near int                  // entries in the buckets ahead
	top  [calSize]uint32      // bucket → its first slot (index + 1; 0: empty)
	used [calSize / 64]uint64 // bit b: bucket b is not empty
	// slots are the pending events' handlers (the Scheduler's table,
	// indexed by an entry's key) and link the buckets: a bucket's entries
	// sit in their own slots, so loading a bucket brings the handlers it
	// is about to run into the cache.
	slots []slot
	// far holds the entries at or after base + horizon (timers, mostly).
	// A binary heap: a radix heap there would have to start again
	// whenever an entry came in below the least time it had looked at.
	far entryHeap
	// late holds entries of the current bucket that came after cur was
	// sorted and go before most of it (insertCur).
	late entryHeap
	// keys and tmp are load's scratch, spill drain's.
	keys  []uint64
	tmp   []entry
	spill []entry
}

const (
	widthBits = 8
	width     = Time(1) << widthBits // one bucket: 256 ps
	calBits   = 13
	calSize   = 1 << calBits // 8,192 buckets
	calMask   = calSize - 1
	horizon   = width * calSize // 2.1 µs: a link delay and a frame time
	// sortSmall is the largest bucket sortKeys sorts by insertion (and
	// sortEntries, for rebase and renumber).
	sortSmall = 16
)

func (q *calendarQueue) len() int { return q.n }

// push adds e. An entry before base (scheduled after Run stopped at a
// limit earlier than the next event, which it had already looked at)
// makes the queue start again from e's time.
func (q *calendarQueue) push(e entry) {
	if e.at < q.base {
		q.rebase(e.at)
	}
	q.place(e)
	q.n++
}

// place puts e (at ≥ base) in cur, its bucket or far.
func (q *calendarQueue) place(e entry) {
	switch d := e.at - q.base; {
	case d < width:
		q.insertCur(e)
	case d < horizon:
		q.toBucket(e)
	default:
		q.far.push(e)
	}
}

// insertCur puts e in its place in the current bucket. A new event
// usually goes last (the latest insertion number, at or after the rest)
// or a few places from the end; one that would go further forward waits
// in late instead, so that a bucket crowded with later times does not
// make each insertion cost its length.
func (q *calendarQueue) insertCur(e entry) {
	c := q.cur
	i := len(c)
	for i > q.head && e.before(&c[i-1]) {
		if i--; len(c)-i > insertScan {
			q.late.push(e)
			return
		}
	}
	c = append(c, entry{})
	copy(c[i+1:], c[i:])
	c[i] = e
	q.cur = c
}

// insertScan is how far from the end of the current bucket an entry is
// inserted in place.
const insertScan = 8

// toBucket links e into its bucket (ahead of the current one), through
// e's slot.
func (q *calendarQueue) toBucket(e entry) {
	i := uint32(e.key & slotMask)
	q.link(&q.slots[i], i+1, e)
}

// link puts e, whose slot sl is number i (index + 1), at the head of its
// bucket's list.
func (q *calendarQueue) link(sl *slot, i uint32, e entry) {
	b := uint32(e.at>>widthBits) & calMask
	sl.e, sl.next = e, q.top[b]
	q.top[b] = i
	q.used[b>>6] |= 1 << (b & 63)
	q.near++
}

// next takes the next entry out if it is due by end (end < 0: whenever):
// peek and pop in one, for the run loop. It reports false when the queue
// is empty or the next entry is after end (which stays; it is returned,
// or the zero entry when its bucket starts after end and was not loaded).
func (q *calendarQueue) next(end Time) (entry, bool) {
	if len(q.late.h) == 0 {
		if q.head == len(q.cur) {
			if q.n == 0 {
				return entry{}, false
			}
			if !q.advance(end) {
				return entry{}, false
			}
		}
		e := q.cur[q.head]
		if end >= 0 && e.at > end {
			return e, false
		}
		q.head++
		q.n--
		return e, true
	}
	var e entry
	late := q.head == len(q.cur) || q.late.h[0].before(&q.cur[q.head])
	if late {
		e = q.late.h[0]
	} else {
		e = q.cur[q.head]
	}
	if end >= 0 && e.at > end {
		return e, false
	}
	if late {
		q.late.pop()
	} else {
		q.head++
	}
	q.n--
	return e, true
}

// advance makes the next non-empty bucket current (cur and late are used
// up and the queue is not empty): the next one ahead, or with none ahead
// the one far's least time falls in; then it brings in the far entries
// the calendar now reaches. A bucket that starts after end (end ≥ 0) is
// left where it is (false): the calendar stays, so that an entry pushed
// before that bucket (a partitioned run's frames, taken in at the end of
// a window) needs no rebase.
func (q *calendarQueue) advance(end Time) bool {
	var b uint32
	var start Time
	if q.near > 0 {
		c := uint32(q.base>>widthBits) & calMask
		b = q.nextUsed(c)
		start = q.base + Time((b-c)&calMask)<<widthBits
	} else {
		start = q.far.h[0].at &^ (width - 1)
	}
	if end >= 0 && start > end {
		return false
	}
	q.cur, q.head = q.cur[:0], 0
	q.base = start
	if q.near > 0 {
		q.load(b)
	}
	for len(q.far.h) > 0 && q.far.h[0].at-q.base < horizon {
		e := q.far.h[0]
		q.far.pop()
		q.place(e)
	}
	return true
}

// nextUsed is the first non-empty bucket after c, going round (c itself is
// empty: its entries are in cur).
func (q *calendarQueue) nextUsed(c uint32) uint32 {
	w := c >> 6
	m := q.used[w] &^ (2<<(c&63) - 1) // the buckets after c in its word
	for range len(q.used) {
		if m != 0 {
			break
		}
		w = (w + 1) % uint32(len(q.used))
		m = q.used[w]
	}
	return w<<6 | uint32(bits.TrailingZeros64(m))
}

// load moves bucket b's entries into cur (empty), in order.
func (q *calendarQueue) load(b uint32) {
	c := q.cur
	q.used[b>>6] &^= 1 << (b & 63)
	if sl := &q.slots[q.top[b]-1]; sl.next == 0 {
		// One event: the usual bucket of a sparse fabric, which needs no
		// sorting.
		q.top[b] = 0
		q.near--
		q.cur = append(c, sl.e)
		return
	}
	// The bucket is sorted as integers, which sort several times faster
	// than entries through a comparison: each entry's key, made as the
	// list is walked, is its time within the bucket (widthBits), its
	// insertion number (64 − slotBits) and its index in tmp (idxBits), a
	// uint64 exactly. Insertion numbers are unique (Reserve hands each out
	// once), so the index never decides an order. The entries wait in tmp
	// and go to cur in the keys' order.
	ks, tmp := q.keys[:0], q.tmp[:0]
	for i := q.top[b]; i != 0; i = q.slots[i-1].next {
		e := q.slots[i-1].e
		ks = append(ks, uint64(e.at-q.base)<<(64-widthBits)|e.key>>slotBits<<idxBits|uint64(len(tmp)))
		tmp = append(tmp, e)
	}
	q.top[b] = 0
	q.near -= len(tmp)
	if len(tmp) > 1<<idxBits {
		// Too many to number in a key (never in practice): sorted as
		// entries.
		c = append(c, tmp...)
		sortEntries(c)
		q.cur, q.keys, q.tmp = c, ks, tmp
		return
	}
	if len(ks) > 4 {
		// The list is newest first: reversed, ties in time are in order
		// already, the insertion sort's best case.
		slices.Reverse(ks)
	}
	sortKeys(ks)
	for _, k := range ks {
		c = append(c, tmp[k&(1<<idxBits-1)])
	}
	q.cur, q.keys, q.tmp = c, ks, tmp
}

// sortKeys sorts a bucket's keys: the usual two to four by a sorting
// network (compare-exchanges the compiler makes branch-free: the order of
// a bucket's entries is a coin toss to the branch predictor), a few more
// by insertion, many (a dense fabric's ties) by slices.Sort.
func sortKeys(ks []uint64) {
	cx := func(i, j int) { ks[i], ks[j] = min(ks[i], ks[j]), max(ks[i], ks[j]) }
	switch len(ks) {
	case 0, 1:
	case 2:
		cx(0, 1)
	case 3:
		cx(0, 1)
		cx(1, 2)
		cx(0, 1)
	case 4:
		cx(0, 1)
		cx(2, 3)
		cx(0, 2)
		cx(1, 3)
		cx(1, 2)
	default:
		if len(ks) > sortSmall {
			slices.Sort(ks)
			return
		}
		for i := 1; i < len(ks); i++ {
			k := ks[i]
			j := i
			for j > 0 && k < ks[j-1] {
				ks[j] = ks[j-1]
				j--
			}
			ks[j] = k
		}
	}
}

// idxBits is how many bits of a bucket sort key number the entries.
const idxBits = 64 - widthBits - (64 - slotBits)

// sortEntries sorts by (time, insertion number).
func sortEntries(c []entry) {
	if len(c) > sortSmall {
		slices.SortFunc(c, func(a, b entry) int {
			switch {
			case a.before(&b):
				return -1
			case b.before(&a):
				return 1
			}
			return 0
		})
		return
	}
	for i := 1; i < len(c); i++ {
		e := c[i]
		j := i
		for j > 0 && e.before(&c[j-1]) {
			c[j] = c[j-1]
			j--
		}
		c[j] = e
	}
}

// drain takes every entry out, in no order, into a slice of the queue's
// own that stays valid until the next drain (or push before base, which
// drains); base stays.
func (q *calendarQueue) drain() []entry {
	all := append(append(q.spill[:0], q.cur[q.head:]...), q.late.h...)
	q.cur, q.head, q.late.h = q.cur[:0], 0, q.late.h[:0]
	for w, m := range q.used {
		for ; m != 0; m &= m - 1 {
			b := uint32(w<<6 | bits.TrailingZeros64(m))
			for i := q.top[b]; i != 0; i = q.slots[i-1].next {
				all = append(all, q.slots[i-1].e)
			}
			q.top[b] = 0
		}
		q.used[w] = 0
	}
	q.near = 0
	all = append(all, q.far.h...)
	q.far.h = q.far.h[:0]
	q.n = 0
	q.spill = all
	return all
}

// rebase puts every entry back relative to t < base.
func (q *calendarQueue) rebase(t Time) {
	all := q.drain()
	q.base = t &^ (width - 1)
	for _, e := range all {
		if e.at-q.base < width {
			q.cur = append(q.cur, e)
		} else {
			q.place(e)
		}
	}
	sortEntries(q.cur)
	q.n = len(all)
}

// entryHeap is a binary min-heap of entries by (time, insertion number).
type entryHeap struct{ h []entry }

func (q *entryHeap) push(e entry) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *entryHeap) pop() {
	h := q.h
	n := len(h) - 1
	e := h[n]
	q.h = h[:n]
	h = q.h
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].before(&h[c]) {
			c++
		}
		if !h[c].before(&e) {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = e
	}
}

// peek is the time of the next entry (false: none), without moving the
// calendar on: a part of a partitioned run asks before the frames from
// the other parts come in, which may be due before the bucket it would
// move to (next, which does move it, puts such an entry back by rebase).
// The current bucket's entries come before any bucket ahead, and those
// before far's.
func (q *calendarQueue) peek() (Time, bool) {
	if q.n == 0 {
		return 0, false
	}
	t, ok := Time(0), false
	if q.head < len(q.cur) {
		t, ok = q.cur[q.head].at, true
	}
	if len(q.late.h) > 0 && (!ok || q.late.h[0].at < t) {
		t, ok = q.late.h[0].at, true
	}
	if ok {
		return t, true
	}
	if q.near == 0 {
		return q.far.h[0].at, true
	}
	b := q.nextUsed(uint32(q.base>>widthBits) & calMask)
	t = q.slots[q.top[b]-1].e.at
	for i := q.slots[q.top[b]-1].next; i != 0; i = q.slots[i-1].next {
		t = min(t, q.slots[i-1].e.at)
	}
	return t, true
}
