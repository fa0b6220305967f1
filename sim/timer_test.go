package sim

import "testing"

type timerOwner struct {
	t     Timer
	s     *Scheduler
	fired []Time
}

func (o *timerOwner) OnEvent(now Time, _ uint64) {
	if o.t.Fired(now) {
		o.fired = append(o.fired, now)
	}
}

func TestTimerKeepsOnePendingDeadline(t *testing.T) {
	s := NewScheduler()
	o := &timerOwner{s: s}
	o.t.Arm(s, 100, o, 0)
	o.t.Arm(s, 200, o, 0)   // later: ignored (picked up when 100 fires)
	o.t.Arm(s, 50, o, 0)    // earlier: supersedes 100
	o.t.Arm(s, Never, o, 0) // nothing
	s.Run(-1)
	if len(o.fired) != 1 || o.fired[0] != 50 {
		t.Fatalf("fired %v, want [50] (100 superseded)", o.fired)
	}
	// A deadline in the past fires now, not never.
	s2 := NewScheduler()
	o2 := &timerOwner{s: s2}
	s2.At(30, handlerFunc(func(now Time) { o2.t.Arm(s2, 10, o2, 0) }), 0)
	s2.Run(-1)
	if len(o2.fired) != 1 || o2.fired[0] != 30 {
		t.Fatalf("past deadline fired %v, want [30]", o2.fired)
	}
}

type handlerFunc func(now Time)

func (f handlerFunc) OnEvent(now Time, _ uint64) { f(now) }
