// Package sim is the discrete-event engine: simulated time in int64
// picoseconds, a deterministic event scheduler and seeded random streams.
//
// Events are ordered by a calendar (calendar.go) of 16-byte entries (time,
// insertion number and slot) beside a table of slots that hold their
// handlers and link the calendar's buckets (no interface boxing, no
// allocation per event once both have grown). Ties
// break by insertion order, so a run is a pure function of its inputs.
package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"fabriclab/units"
)

// Time is simulated time in picoseconds.
type Time = units.Duration

// Handler receives events. Arg lets one object multiplex several event kinds
// (or carry a generation number to cancel stale timers) without allocating.
type Handler interface {
	OnEvent(now Time, arg uint64)
}

// An event is a slot (its handler and argument) and a queue entry that
// orders it: the time and a key whose high bits are the insertion number
// (ties break by insertion order) and whose low slotBits are the slot. The
// queue moves 16-byte entries; the handlers stay put.
type entry struct {
	at  Time
	key uint64
}

// slot is a pending event's handler and argument; while the event waits in
// a calendar bucket ahead, also its entry and the bucket's next slot
// (index + 1; 0: none). A slot not in use links the free ones by next.
type slot struct {
	h    Handler
	arg  uint64
	e    entry
	next uint32
}

const (
	slotBits = 28 // up to 2^28 pending events
	slotMask = 1<<slotBits - 1
	// maxSeq is where insertion numbers are renumbered from 1, keeping
	// their order (renumber): 2^36 events between renumberings.
	maxSeq = 1<<(64-slotBits) - 1
)

func (a *entry) before(b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

// Scheduler is the event loop. It is not safe for concurrent use: one
// simulation runs on one goroutine.
type Scheduler struct {
	now     Time
	seq     uint64
	cur     uint64 // the running event's insertion number (Current)
	q       calendarQueue
	free    uint32 // the first slot (q.slots) not in use, index + 1; they link through next
	stopped bool
	// Executed counts events run so far (for benchmarks and progress).
	Executed uint64
	// Background counts pending events that only observe the run (a
	// telemetry sample, a deadlock sweep): their handlers add one when
	// they schedule and take it back when they run, and schedule again
	// only while Foreground is not 0, so they never keep an ended or stuck
	// run alive, nor each other.
	Background int
	// StopHook, if set, is polled every StopPollEvery events; returning true
	// stops the run (used for Ctrl-C and progress callbacks).
	StopHook      func(now Time) bool
	StopPollEvery uint64
	// BeforeRenumber, when set, is called just before insertion numbers
	// are renumbered: whoever holds numbers from Reserve must schedule
	// them with AtSeq now (numbers not in the queue cannot be renumbered).
	// It must not call At or Reserve (they would renumber again).
	BeforeRenumber func()
	// seqLimit is maxSeq (a test lowers it to exercise renumber).
	seqLimit uint64
}

// NewScheduler returns an empty scheduler at time 0.
func NewScheduler() *Scheduler {
	s := &Scheduler{StopPollEvery: 1 << 16, seqLimit: maxSeq}
	s.q.slots = make([]slot, 0, 1024)
	return s
}

// Now is the current simulated time.
func (s *Scheduler) Now() Time { return s.now }

// Pending is the number of queued events.
func (s *Scheduler) Pending() int { return s.q.len() }

// Foreground is the number of queued events that are not Background.
func (s *Scheduler) Foreground() int { return s.q.len() - s.Background }

// At schedules h at absolute time t (clamped to now: the past is not
// reachable).
func (s *Scheduler) At(t Time, h Handler, arg uint64) {
	s.schedule(t, 0, h, arg)
}

// Reserve takes the next insertion number without scheduling anything:
// an event later scheduled with it (AtSeq) runs where an event scheduled
// now for the same time would have, ties and all. This lets a handler
// skip scheduling an event that will most likely have nothing to do
// (a port's end of frame with nothing queued behind it), and still
// schedule it, in its place, if that changes.
func (s *Scheduler) Reserve() uint64 {
	if s.seq++; s.seq > s.seqLimit {
		s.renumber()
	}
	return s.seq
}

// Current is the insertion number of the event running now: an event
// reserved with a higher number for now has not had its turn yet. Between
// runs it is the largest number when Run returned with every event due by
// now run (out of events, or at its end time), so that every reservation
// for now has had its turn, and the last event's number after Stop.
func (s *Scheduler) Current() uint64 { return s.cur }

// AtSeq schedules h at time t (clamped to now) in the place of insertion
// number seq, taken from Reserve since the last renumbering (which a
// BeforeRenumber hook is there to get ahead of). Reserve never hands out
// 0: AtSeq with seq 0 is At.
func (s *Scheduler) AtSeq(t Time, seq uint64, h Handler, arg uint64) {
	s.schedule(t, seq, h, arg)
}

// schedule is At (seq 0: the next insertion number, which Reserve never
// hands out) and AtSeq, in one function so that both inline into their
// callers. It takes a free slot and, for the common case of an event in a
// bucket ahead (a frame time or a link delay from now), links it there
// itself rather than through push: one call per event fewer, on the path
// every event takes.
func (s *Scheduler) schedule(t Time, seq uint64, h Handler, arg uint64) {
	if seq == 0 {
		seq = s.Reserve()
	}
	if t < s.now {
		t = s.now
	}
	i := s.free
	if i == 0 {
		i = s.newSlot()
	}
	q := &s.q
	sl := &q.slots[i-1]
	s.free = sl.next
	sl.h, sl.arg = h, arg
	e := entry{at: t, key: seq<<slotBits | uint64(i-1)}
	if d := t - q.base; d >= width && d < horizon {
		q.link(sl, i, e)
		q.n++
		return
	}
	q.push(e) // e and next are the calendar's to set
}

// newSlot appends a slot and returns its index + 1, as a free slot.
func (s *Scheduler) newSlot() uint32 {
	if len(s.q.slots) > slotMask {
		panic("sim: more than 2^28 events pending")
	}
	s.q.slots = append(s.q.slots, slot{})
	return uint32(len(s.q.slots))
}

// renumber gives the pending events insertion numbers 1, 2, … in their
// order, and the next event the number after them. Reserved numbers are
// scheduled first (BeforeRenumber), so every number still in use is in the
// queue; the running event's number is then below all of them.
func (s *Scheduler) renumber() {
	if s.BeforeRenumber != nil {
		s.BeforeRenumber()
	}
	all := s.q.drain()
	sortEntries(all)
	for k := range all {
		all[k].key = uint64(k+1)<<slotBits | all[k].key&slotMask
		s.q.push(all[k])
	}
	s.seq = uint64(len(all)) + 1
	s.cur = 0
}

// RenumberAfter makes the scheduler renumber its insertion numbers every
// n insertions instead of every 2^36, so that tests can reach it.
func (s *Scheduler) RenumberAfter(n uint64) { s.seqLimit = max(n, 1) }

// After schedules h at now+d.
func (s *Scheduler) After(d Time, h Handler, arg uint64) { s.At(s.now+d, h, arg) }

// Stop makes Run return after the current event.
func (s *Scheduler) Stop() { s.stopped = true }

// Stopped reports whether Stop was called or the hook stopped the run.
func (s *Scheduler) Stopped() bool { return s.stopped }

// Run executes events in time order until the queue is empty, the next event
// is after end (end < 0 means no limit), or Stop is called. It returns the
// time of the last executed event (or end, when it stopped at the limit).
func (s *Scheduler) Run(end Time) Time {
	s.stopped = false
	poll := s.StopPollEvery
	if poll == 0 {
		poll = 1 << 16
	}
	// The hook is polled when Executed reaches a multiple of poll: the
	// next one is worked out once, not with a division per event.
	nextPoll := (s.Executed/poll + 1) * poll
	for !s.stopped {
		top, ok := s.q.next(end)
		if !ok {
			if s.q.len() > 0 { // the next event is after end
				s.now = end
				s.cur = math.MaxUint64 // every event due by now has run
				return s.now
			}
			break
		}
		i := uint32(top.key & slotMask)
		ev := &s.q.slots[i]
		h, arg := ev.h, ev.arg
		ev.h = nil // the handler may be collected
		ev.next, s.free = s.free, i+1
		s.now = top.at
		s.cur = top.key >> slotBits
		h.OnEvent(top.at, arg)
		s.Executed++
		if s.Executed == nextPoll {
			nextPoll += poll
			if s.StopHook != nil && s.StopHook(s.now) {
				s.stopped = true
			}
		}
	}
	if !s.stopped {
		s.cur = math.MaxUint64 // every event due by now has run
	}
	return s.now
}

// RNG is a seeded random stream. Each consumer (ECMP hash seeds, RED
// marking, workload placement) takes its own named stream so that adding
// randomness in one place does not shift the numbers drawn in another.
type RNG struct{ *rand.Rand }

// NewRNG derives a stream from the scenario seed and a stream name.
func NewRNG(seed uint64, stream string) *RNG {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return &RNG{rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// NextAt is the time of the next pending event (false: none).
func (s *Scheduler) NextAt() (Time, bool) { return s.q.peek() }
