package sim

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
)

type recorder struct {
	s   *Scheduler
	got []uint64
}

func (r *recorder) OnEvent(now Time, arg uint64) { r.got = append(r.got, arg) }

func TestEventsRunInTimeOrderTiesByInsertion(t *testing.T) {
	s := NewScheduler()
	r := &recorder{s: s}
	s.At(30, r, 3)
	s.At(10, r, 1)
	s.At(20, r, 20)
	s.At(20, r, 21)
	s.At(20, r, 22)
	s.At(10, r, 2)
	s.Run(-1)
	want := []uint64{1, 2, 20, 21, 22, 3}
	if len(r.got) != len(want) {
		t.Fatalf("got %v want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("got %v want %v", r.got, want)
		}
	}
	if s.Now() != 30 {
		t.Fatalf("now = %d", s.Now())
	}
}

func TestRunStopsAtEndTime(t *testing.T) {
	s := NewScheduler()
	r := &recorder{s: s}
	s.At(5, r, 1)
	s.At(15, r, 2)
	end := s.Run(10)
	if end != 10 || len(r.got) != 1 || s.Pending() != 1 {
		t.Fatalf("end=%d got=%v pending=%d", end, r.got, s.Pending())
	}
	s.Run(-1)
	if len(r.got) != 2 {
		t.Fatalf("resume: %v", r.got)
	}
}

type stopper struct{ s *Scheduler }

func (st stopper) OnEvent(now Time, arg uint64) {
	if arg == 2 {
		st.s.Stop()
	}
}

func TestStopAndHook(t *testing.T) {
	s := NewScheduler()
	for i := 0; i < 5; i++ {
		s.At(Time(i), stopper{s}, uint64(i))
	}
	s.Run(-1)
	if s.Executed != 3 || !s.Stopped() {
		t.Fatalf("executed %d", s.Executed)
	}
	s2 := NewScheduler()
	r := &recorder{s: s2}
	for i := 0; i < 100; i++ {
		s2.At(Time(i), r, uint64(i))
	}
	s2.StopPollEvery = 10
	s2.StopHook = func(now Time) bool { return now >= 30 }
	s2.Run(-1)
	if len(r.got) != 40 {
		t.Fatalf("hook stopped after %d events", len(r.got))
	}
}

// A random mix of insertions must pop in (time, seq) order: checks the 4-ary
// heap against the definition.
func TestHeapOrderRandom(t *testing.T) {
	s := NewScheduler()
	rng := NewRNG(7, "heap")
	type ev struct {
		at  Time
		arg uint64
	}
	var order []ev
	rec := &orderRec{}
	for i := 0; i < 5000; i++ {
		at := Time(rng.IntN(1000))
		s.At(at, rec, uint64(i))
		order = append(order, ev{at, uint64(i)})
	}
	s.Run(-1)
	last := ev{-1, 0}
	for _, a := range rec.got {
		e := order[a]
		if e.at < last.at || (e.at == last.at && e.arg < last.arg) {
			t.Fatalf("out of order: %v after %v", e, last)
		}
		last = e
	}
	if len(rec.got) != 5000 {
		t.Fatal("lost events")
	}
}

type orderRec struct{ got []uint64 }

func (o *orderRec) OnEvent(now Time, arg uint64) { o.got = append(o.got, arg) }

func TestRNGStreamsAreSeededAndIndependent(t *testing.T) {
	a, b := NewRNG(1, "x"), NewRNG(1, "x")
	c := NewRNG(1, "y")
	d := NewRNG(2, "x")
	va, vb, vc, vd := a.Uint64(), b.Uint64(), c.Uint64(), d.Uint64()
	if va != vb {
		t.Fatal("same seed and stream differ")
	}
	if va == vc || va == vd {
		t.Fatal("streams not independent")
	}
}

// chain reschedules itself: a steady-state event load for benchmarks.
type chain struct {
	s *Scheduler
	n int
}

func (c *chain) OnEvent(now Time, arg uint64) {
	c.n--
	if c.n > 0 {
		c.s.After(Time(1000+arg%977), c, arg*6364136223846793005+1)
	}
}

func TestSchedulerSteadyStateDoesNotAllocate(t *testing.T) {
	s := NewScheduler()
	cs := make([]*chain, 256)
	for i := range cs {
		cs[i] = &chain{s: s, n: 1 << 30}
		s.At(Time(i), cs[i], uint64(i))
	}
	s.Run(1e6) // warm up
	// The slots and the calendar's scratch have grown to the most ever
	// pending: nothing more is allocated, per event or per run.
	allocs := testing.AllocsPerRun(10, func() { s.Run(s.Now() + 1e6) })
	if allocs != 0 {
		t.Fatalf("%v allocs per run of ~250k events", allocs)
	}
}

// BenchmarkScheduler reports events/s with 1024 pending events.
func BenchmarkScheduler(b *testing.B) {
	s := NewScheduler()
	for i := 0; i < 1024; i++ {
		s.At(Time(i), &chain{s: s, n: 1 << 62}, uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := s.Executed
	for s.Executed-start < uint64(b.N) {
		s.Run(s.Now() + 1e6)
	}
	b.ReportMetric(float64(s.Executed-start)/b.Elapsed().Seconds(), "events/s")
}

// spawner schedules, from every event, more at pseudo-random times with
// many ties, recording the order events run in.
type spawner struct {
	s    *Scheduler
	got  []uint64
	next uint64
	left int
}

func (p *spawner) OnEvent(now Time, arg uint64) {
	p.got = append(p.got, arg)
	for k := 0; k < 2 && p.left > 0; k++ {
		p.left--
		p.next = p.next*6364136223846793005 + 1442695040888963407
		p.s.At(now+97*Time(p.next>>60), p, p.next>>32) // 16 distinct delays over six calendar buckets: ties
	}
}

// Renumbering the insertion numbers when they run out keeps the order:
// the same events, ties and all, run in the same order with a limit that
// forces a renumbering every few events as without one.
func TestRenumberKeepsOrder(t *testing.T) {
	run := func(limit uint64) []uint64 {
		s := NewScheduler()
		if limit > 0 {
			s.seqLimit = limit
		}
		p := &spawner{s: s, left: 10000}
		for i := 0; i < 50; i++ {
			s.At(Time(i%7), p, uint64(i))
		}
		s.Run(-1)
		return p.got
	}
	want, got := run(0), run(100)
	if len(want) != 10050 || len(got) != len(want) {
		t.Fatalf("%d and %d events run, want 10050", len(want), len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d differs after renumbering: %d, want %d", i, got[i], want[i])
		}
	}
}

// The calendar gives the events in exactly the 4-ary heap's order (time,
// then insertion), whatever the mix of times, ties, pushes between pops
// and pushes before the least time taken (after a Run stopped at a
// limit). Times are drawn around the calendar's bucket width and horizon
// too, so entries cross from far into the buckets and the calendar goes
// round.
func TestCalendarMatchesHeap(t *testing.T) {
	var r calendarQueue
	var h heap4
	// Every pending entry has a slot of its own (the calendar links its
	// buckets through them), taken when it is pushed, given back when it
	// is popped.
	var spare []uint32
	key := func(seq uint64) uint64 {
		var i uint32
		if n := len(spare); n > 0 {
			i, spare = spare[n-1], spare[:n-1]
		} else {
			i = uint32(len(r.slots))
			r.slots = append(r.slots, slot{})
		}
		return seq<<slotBits | uint64(i)
	}
	x := uint64(1)
	rnd := func(n uint64) uint64 {
		x = x*6364136223846793005 + 1442695040888963407
		return (x >> 11) % n // 53 bits: far times reach 2^40 ps
	}
	var seq uint64
	var reserved []uint64
	now := Time(0)
	// lookAhead is a Run stopped at a limit just before the next entry:
	// the calendar has moved to its bucket, and takes nothing out.
	lookAhead := func() {
		if top := h.h[0].at; top > 0 {
			r.next(top - 1)
		}
	}
	pop := func(step int) {
		var a entry
		switch top := h.h[0].at; rnd(3) {
		case 0:
			var ok bool
			if a, ok = r.next(top); !ok {
				t.Fatalf("step %d: next(%d) takes nothing", step, top)
			}
		case 1:
			// The run loop's way: due by an end at or after it (after
			// asking with an end before it, which takes nothing out).
			if top > 0 {
				if e, ok := r.next(top - 1); ok || e != (entry{}) && e.at != top {
					t.Fatalf("step %d: next(%d) gives %+v, %v; the next is at %d", step, top-1, e, ok, top)
				}
			}
			var ok bool
			if a, ok = r.next(top + Time(rnd(3))); !ok {
				t.Fatalf("step %d: next(%d) takes nothing", step, top)
			}
		default:
			var ok bool
			if a, ok = r.next(-1); !ok {
				t.Fatalf("step %d: next(-1) takes nothing", step)
			}
		}
		b := h.pop()
		if a != b {
			t.Fatalf("step %d: queue gives %+v, heap %+v", step, a, b)
		}
		spare = append(spare, uint32(a.key&slotMask))
		now = a.at
	}
	push := func(at Time) {
		seq++
		e := entry{at: at, key: key(seq)}
		r.push(e)
		h.push(e)
	}
	for step := 0; step < 300000; step++ {
		switch k := rnd(10); {
		case k < 5 || len(h.h) == 0:
			// Mostly near now, many ties, some far away, some at a
			// bucket's edge or the calendar's horizon.
			d := Time(rnd(8))
			switch rnd(8) {
			case 0:
				d = Time(rnd(1 << 40))
			case 1:
				d = width*Time(rnd(4)) + Time(rnd(3)) - 1
			case 2:
				d = horizon + Time(rnd(3*uint64(width))) - width
			case 3:
				d = Time(rnd(uint64(3 * horizon)))
			}
			push(now + max(d, 0))
		case k == 5 && len(h.h) > 0:
			// Run stopped at a limit: the queue has looked ahead.
			lookAhead()
			push(now + Time(rnd(3)))
		case k == 6:
			// A number reserved now, scheduled later (Scheduler.AtSeq).
			seq++
			reserved = append(reserved, seq)
		case k == 8 && rnd(50) == 0:
			// A burst into one bucket ahead, numbers out of order: the
			// calendar sorts a large bucket as integers.
			at := now + width*Time(1+rnd(3))
			n := 20 + rnd(200)
			if n%7 == 0 {
				n++ // j·7 mod n takes every value once
			}
			first := seq + 1
			seq += n
			for j := range n {
				e := entry{at: at + Time(rnd(uint64(width))), key: key(first + (j*7)%n)}
				r.push(e)
				h.push(e)
			}
		case k == 9 && rnd(100) == 0:
			// The queue runs dry but for one far entry, is looked
			// ahead into (Run stopped at a limit) and then gets an entry
			// before it: the calendar jumps to far's time, then starts
			// again from the earlier one.
			for len(h.h) > 0 {
				pop(step)
			}
			push(now + 5*horizon + Time(rnd(1000)))
			lookAhead()
			push(now + Time(rnd(3)))
		case k == 7 && len(reserved) > 0:
			i := int(rnd(uint64(len(reserved))))
			e := entry{at: now + Time(rnd(3)), key: key(reserved[i])}
			reserved = slices.Delete(reserved, i, i+1)
			r.push(e)
			h.push(e)
		default:
			pop(step)
		}
		if r.len() != len(h.h) {
			t.Fatalf("step %d: %d entries, heap %d", step, r.len(), len(h.h))
		}
	}
	for len(h.h) > 0 {
		if a, _ := r.next(-1); a != h.pop() {
			t.Fatalf("draining: queue gives %+v", a)
		}
	}
}

// BenchmarkQueues compares the calendar with the 4-ary heap on the
// chain's load (1024 pending events, delays of 1000–1976 ps). One
// iteration is 1,024 holds (a pop and a push), so that scripts/bench's
// few iterations measure the queues and not their warm-up.
func BenchmarkQueues(b *testing.B) {
	const holds = 1024
	load := func(b *testing.B, push func(entry), pop func() entry) {
		var seq uint64
		x := uint64(1)
		for i := 0; i < 1024; i++ {
			seq++
			push(entry{at: Time(i), key: seq<<slotBits | uint64(i)})
		}
		b.ResetTimer()
		for range b.N * holds {
			e := pop()
			x = x*6364136223846793005 + 1
			seq++
			push(entry{at: e.at + Time(1000+x>>54), key: seq<<slotBits | e.key&slotMask})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*holds), "ns/hold")
	}
	b.Run("calendar", func(b *testing.B) {
		q := calendarQueue{slots: make([]slot, 1024)}
		load(b, q.push, func() entry { e, _ := q.next(-1); return e })
	})
	b.Run("heap4", func(b *testing.B) {
		var q heap4
		load(b, q.push, q.pop)
	})
}

// An event scheduled late with a reserved number runs where it would have
// run had it been scheduled when the number was taken: after the events
// at its time inserted before, before those inserted after.
func TestReservedNumberKeepsItsPlace(t *testing.T) {
	s := NewScheduler()
	r := &recorder{s: s}
	s.At(10, r, 1)
	seq := s.Reserve() // for an event at 10: between 1 and 3
	s.At(10, r, 3)
	s.At(5, handlerFunc(func(Time) { s.AtSeq(10, seq, r, 2) }), 0)
	s.Run(-1)
	if !slices.Equal(r.got, []uint64{1, 2, 3}) {
		t.Errorf("order %v, want 1 2 3", r.got)
	}
}

// The same when the reserved time is already now: an event due now that
// runs before the reserved one schedules it, behind events due now with
// later numbers (the queue's list of entries due now sorts it into place), and sees
// Current below the reserved number.
func TestReservedNumberDueNow(t *testing.T) {
	s := NewScheduler()
	r := &recorder{s: s}
	var seq, cur uint64
	s.At(10, handlerFunc(func(Time) { cur = s.Current(); s.AtSeq(10, seq, r, 2) }), 0)
	seq = s.Reserve()
	s.At(10, r, 3)
	s.At(10, r, 4)
	s.Run(-1)
	if cur >= seq {
		t.Errorf("running event %d, reserved %d: Current must be below it", cur, seq)
	}
	if !slices.Equal(r.got, []uint64{2, 3, 4}) {
		t.Errorf("order %v, want 2 3 4", r.got)
	}
}

// Renumbering schedules reserved numbers first (BeforeRenumber) and keeps
// their place.
func TestRenumberSchedulesReservations(t *testing.T) {
	s := NewScheduler()
	r := &recorder{s: s}
	s.RenumberAfter(3)
	s.At(10, r, 1)
	seq := s.Reserve()
	held := true
	s.BeforeRenumber = func() {
		if held {
			held = false
			s.AtSeq(10, seq, r, 2)
		}
	}
	s.At(10, r, 3)
	s.At(10, r, 4) // the fourth number: renumbers
	s.Run(-1)
	if held || !slices.Equal(r.got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("held %v, order %v, want 1 2 3 4", held, r.got)
	}
}

// refEvent is a pending event of the reference model below.
type refEvent struct {
	at  Time
	seq uint64
	id  uint64
}

// refChain is a handler for TestSchedulerMatchesReference: each event it
// runs schedules more, the way a fabric's do (now, within a bucket, a
// frame or a link delay ahead, a timer far off; some through a reserved
// number scheduled later), and records itself in the model too.
type refChain struct {
	s       *Scheduler
	rnd     func(uint64) uint64
	got     []refEvent
	pending []refEvent // the reference: ordered by (at, seq) by hand
	held    []refEvent // reserved numbers not scheduled yet
	heldSeq []uint64   // the scheduler's numbers for them
	seq     uint64     // the model's last insertion number
	nextID  uint64
	budget  int
	check   func() // the calendar's invariants, every few events
}

func (c *refChain) delay() Time {
	switch c.rnd(6) {
	case 0:
		return 0
	case 1:
		return Time(c.rnd(uint64(width)))
	case 2, 3:
		return width + Time(c.rnd(uint64(horizon-width)))
	case 4:
		return horizon - 1 + Time(c.rnd(3)) // at the horizon's edge
	}
	return Time(c.rnd(100_000_000)) // up to 100 µs: beyond the horizon
}

func (c *refChain) add(at Time) {
	if c.budget == 0 {
		return
	}
	c.budget--
	c.nextID++
	switch c.rnd(12) {
	case 0, 1, 2, 3:
		at = (at + 999) / 1000 * 1000 // on a 1 ns grid: ties with events of other times
	case 4:
		// Where the calendar's horizon ends, one side or the other.
		if edge := c.s.q.base + horizon - 1 + Time(c.rnd(3)); edge >= c.s.Now() {
			at = edge
		}
	}
	if c.rnd(5) == 0 {
		// Reserve now, schedule when a later event runs (or never runs
		// out: every reservation is scheduled by the end). The model
		// numbers its events itself, so that a scheduler that numbered
		// them wrongly would disagree with it.
		seq := c.s.Reserve()
		c.seq++
		c.held = append(c.held, refEvent{at, c.seq, c.nextID})
		c.heldSeq = append(c.heldSeq, seq)
		return
	}
	c.s.At(at, c, c.nextID)
	c.seq++
	c.pending = append(c.pending, refEvent{at, c.seq, c.nextID})
}

// release schedules a held reservation: in its place, at its time, or
// now if that is past (AtSeq clamps, and so does the model).
func (c *refChain) release(now Time) {
	if len(c.held) == 0 {
		return
	}
	h, seq := c.held[0], c.heldSeq[0]
	c.held, c.heldSeq = c.held[1:], c.heldSeq[1:]
	h.at = max(h.at, now)
	c.s.AtSeq(h.at, seq, c, h.id)
	c.pending = append(c.pending, h)
}

func (c *refChain) OnEvent(now Time, id uint64) {
	// The model's next event must be this one.
	best := 0
	for i, e := range c.pending {
		b := c.pending[best]
		if e.at < b.at || e.at == b.at && e.seq < b.seq {
			best = i
		}
	}
	want := c.pending[best]
	c.pending = slices.Delete(c.pending, best, best+1)
	c.got = append(c.got, refEvent{now, 0, id})
	if want.id != id || want.at != now {
		panic("out of order")
	}
	for range c.rnd(3) {
		c.add(now + c.delay())
	}
	if c.rnd(2) == 0 {
		c.release(now)
	}
	if c.check != nil && len(c.got)%61 == 0 {
		c.check()
	}
}

// check walks the calendar and reports the first entry out of its place:
// a bucket's entry must be in the bucket its time names and within the
// horizon (at or after the current bucket's end), far's at or beyond it,
// cur's and late's within the current bucket; the counts must add up.
func (q *calendarQueue) check() string {
	n := 0
	for b := range uint32(calSize) {
		used := q.used[b>>6]&(1<<(b&63)) != 0
		if used != (q.top[b] != 0) {
			return fmt.Sprintf("bucket %d: used bit %v, list %d", b, used, q.top[b])
		}
		for i := q.top[b]; i != 0; i = q.slots[i-1].next {
			e := q.slots[i-1].e
			if uint32(e.at>>widthBits)&calMask != b || e.at < q.base+width || e.at >= q.base+horizon {
				return fmt.Sprintf("entry at %d in bucket %d (base %d)", e.at, b, q.base)
			}
			n++
		}
	}
	if n != q.near {
		return fmt.Sprintf("near %d, buckets hold %d", q.near, n)
	}
	for _, e := range q.far.h {
		if e.at < q.base+horizon {
			return fmt.Sprintf("far entry at %d within the horizon (base %d)", e.at, q.base)
		}
	}
	for _, e := range append(slices.Clone(q.cur[q.head:]), q.late.h...) {
		if e.at < q.base || e.at >= q.base+width {
			return fmt.Sprintf("current entry at %d outside [%d, %d)", e.at, q.base, q.base+width)
		}
	}
	if total := n + len(q.far.h) + len(q.cur) - q.head + len(q.late.h); total != q.n {
		return fmt.Sprintf("n %d, entries %d", q.n, total)
	}
	return ""
}

// The scheduler as a whole (At and AtSeq link most events into their
// buckets themselves, without push) against a plain model: the next event
// is the least (time, insertion number), through runs stopped at limits
// and events scheduled between runs; and the calendar's own invariants
// (check) hold all along. Once with insertion numbers renumbered every
// few thousand, reservations held across the renumbering.
func TestSchedulerMatchesReference(t *testing.T) {
	for _, renumberEvery := range []uint64{0, 4999} {
		x := uint64(3)
		s := NewScheduler()
		c := &refChain{s: s, budget: 60_000, rnd: func(n uint64) uint64 {
			x = x*6364136223846793005 + 1442695040888963407
			return (x >> 11) % n
		}}
		renumbered := 0
		if renumberEvery > 0 {
			s.RenumberAfter(renumberEvery)
			s.BeforeRenumber = func() {
				// Every number in use must be in the queue: schedule the
				// held ones, then number the model's events 1, 2, … in
				// their order, as the scheduler is about to.
				for len(c.held) > 0 {
					c.release(s.Now())
				}
				slices.SortFunc(c.pending, func(a, b refEvent) int {
					if a.at != b.at {
						return cmp.Compare(a.at, b.at)
					}
					return cmp.Compare(a.seq, b.seq)
				})
				for k := range c.pending {
					c.pending[k].seq = uint64(k + 1)
				}
				c.seq = uint64(len(c.pending))
				renumbered++
			}
		}
		c.check = func() {
			if msg := s.q.check(); msg != "" {
				panic(msg)
			}
			// NextAt (a partitioned run's look ahead) is the model's
			// least pending time, and leaves the calendar as it was.
			got, ok := s.NextAt()
			if ok != (len(c.pending) > 0) {
				panic(fmt.Sprintf("NextAt says %v with %d pending", ok, len(c.pending)))
			}
			if ok {
				least := c.pending[0].at
				for _, e := range c.pending {
					least = min(least, e.at)
				}
				if got != least {
					panic(fmt.Sprintf("NextAt %d, the least pending at %d", got, least))
				}
			}
			if msg := s.q.check(); msg != "" {
				panic("after NextAt: " + msg)
			}
		}
		for range 200 {
			c.add(c.delay())
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("renumbering every %d: after %d events: %v", renumberEvery, len(c.got), r)
				}
			}()
			for len(c.pending) > 0 || len(c.held) > 0 {
				// A run to a limit just short of, at, or past the next event.
				end := s.Now() + Time(c.rnd(uint64(3*horizon)))
				s.Run(end)
				c.check()
				if len(c.pending) == 0 {
					c.release(s.Now())
				}
				// Between runs: new events from outside, some before the
				// calendar's base (it looked ahead to the next event).
				for range c.rnd(3) {
					c.add(s.Now() + c.delay())
				}
				c.check()
			}
		}()
		s.Run(-1)
		if len(c.got) < 50_000 {
			t.Fatalf("only %d events ran", len(c.got))
		}
		if s.Pending() != 0 {
			t.Fatalf("%d events left", s.Pending())
		}
		if renumberEvery > 0 && renumbered < 10 {
			t.Fatalf("renumbered only %d times", renumbered)
		}
	}
}

// NextAt is the earliest pending event's time wherever it waits: the
// current bucket, a bucket ahead, the far heap; false when none is left.
func TestNextAtIsTheEarliestPendingEvent(t *testing.T) {
	s := NewScheduler()
	if _, ok := s.NextAt(); ok {
		t.Fatal("an empty scheduler has a next event")
	}
	r := &recorder{s: s}
	for _, at := range []Time{5_000_000, 700, 3_000_000, 701} {
		s.At(at, r, uint64(at))
	}
	for _, step := range []struct {
		end, next Time
	}{{0, 700}, {700, 701}, {701, 3_000_000}, {3_000_000, 5_000_000}} {
		s.Run(step.end)
		if got, ok := s.NextAt(); !ok || got != step.next {
			t.Fatalf("after Run(%d): next at %d (%v), want %d", step.end, got, ok, step.next)
		}
	}
	s.Run(-1)
	if _, ok := s.NextAt(); ok || len(r.got) != 4 {
		t.Errorf("after the last event: %d run, next pending %v", len(r.got), ok)
	}
}

// A run that stops at an end before the next bucket leaves the calendar
// where it was: an entry pushed after that end but before the bucket (a
// partitioned run's frames, taken in at the window's end) goes in without
// a rebase, and everything still runs in order.
func TestRunToAnEndLeavesTheCalendarBeforeTheNextBucket(t *testing.T) {
	s := NewScheduler()
	r := &recorder{}
	s.At(1000, r, 1)
	s.At(8000, r, 3) // 31 buckets on
	if s.Run(999) != 999 || len(r.got) != 0 {
		t.Fatalf("ran %v by 999", r.got)
	}
	s.Run(1500)
	base := s.q.base
	s.At(1600, r, 2) // after the end, before the next bucket
	if s.q.base != base || base > 1500 {
		t.Errorf("the calendar moved from %d to %d (a rebase, or past the end)", base, s.q.base)
	}
	s.Run(-1)
	if want := []uint64{1, 2, 3}; !slices.Equal(r.got, want) {
		t.Errorf("ran %v, want %v", r.got, want)
	}
}

// sortKeys sorts every size the way slices.Sort does: the networks for
// two to four keys on every array of values 0–3 (every order, ties
// included), insertion and slices.Sort beyond on random ones.
func TestSortKeys(t *testing.T) {
	for n := 2; n <= 4; n++ {
		for code := 0; code < 1<<(2*n); code++ {
			ks := make([]uint64, n)
			for i := range ks {
				ks[i] = uint64(code >> (2 * i) & 3)
			}
			want := slices.Clone(ks)
			slices.Sort(want)
			if sortKeys(ks); !slices.Equal(ks, want) {
				t.Fatalf("%d keys: %v, want %v", n, ks, want)
			}
		}
	}
	x := uint64(7)
	for n := 0; n <= 40; n++ {
		for round := 0; round < 200; round++ {
			ks := make([]uint64, n)
			for i := range ks {
				x = x*6364136223846793005 + 1442695040888963407
				ks[i] = x >> 61 // eight values: many ties
				if round%2 == 1 {
					ks[i] = x
				}
			}
			want := slices.Clone(ks)
			slices.Sort(want)
			sortKeys(ks)
			if !slices.Equal(ks, want) {
				t.Fatalf("%d keys: %v, want %v", n, ks, want)
			}
		}
	}
}
