package sim

import "math"

// Never is a deadline that never comes (what "no timer" returns).
const Never Time = math.MaxInt64

// Timer keeps one scheduled event for a deadline that moves, without ever
// cancelling events (the scheduler cannot): Arm schedules a new event only
// when the deadline moves before the pending one — a later deadline is
// picked up when the pending event fires and its owner re-arms — and Fired
// tells the pending event from the superseded ones still in the queue. The
// zero value has nothing pending.
type Timer struct {
	at  Time
	set bool
}

// Arm makes sure h hears arg at d or earlier (a past d means now). Never
// arms nothing.
func (t *Timer) Arm(s *Scheduler, d Time, h Handler, arg uint64) {
	if d == Never {
		return
	}
	d = max(d, s.Now())
	if t.set && d >= t.at {
		return
	}
	t.at, t.set = d, true
	s.At(d, h, arg)
}

// Pending reports whether an event is scheduled.
func (t *Timer) Pending() bool { return t.set }

// Fired reports whether an event at now is the pending one, and then
// clears it; the owner handles it and re-arms for its next deadline. A
// superseded event returns false.
func (t *Timer) Fired(now Time) bool {
	if !t.set || now != t.at {
		return false
	}
	t.set = false
	return true
}
