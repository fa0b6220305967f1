package fabrictest

import (
	"fmt"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// A NIC's Idle lets its host port skip scheduling the frame ends it would
// only pull nothing at (fabric.Feeder). idleAB runs a scenario twice, with
// every NIC's Idle as it is and with Idle forced false (every end
// scheduled, as if Idle did not exist), and wants the same run: the same
// packets pulled in the same order at the same times, the same deliveries,
// transport and port counters and end time. Each Pull made while Idle said
// true must return nothing and leave the NIC's fields, and what IdleCase's
// State shows of the state they point to, as they were.

// Host is a NIC as the fabric sees it.
type Host interface {
	fabric.Node
	fabric.Feeder
}

// IdleCase is one scenario of idleAB.
type IdleCase struct {
	Name string
	// Build makes the rig with its transport attached and the messages
	// scheduled; it returns the NICs by host (nil: no NIC there), and the
	// transport's counters as text.
	Build func() (r *Rig, hosts []Host, counters func() string)
	// Drive runs the rig (nil: Run(-1)).
	Drive func(*Rig)
	// Renumber, if not 0, makes the scheduler renumber its insertion
	// numbers every Renumber insertions (IdleMatrix sets it).
	Renumber uint64
	// State, if set, is what of host h's NIC a Pull could change beyond
	// the NIC's own fields (which are compared anyway): its connections'
	// or endpoint's state, which the NIC holds by pointer.
	State func(h int) string
}

// IdleMatrix runs every case through idleAB four ways: in one run and in
// 400 slices (idleSliced), each without and with renumbering every 7
// insertions from the end of Build on (it sets each case's Drive and
// Renumber); it fails t if Idle saved no event in any of them (it never
// said true).
func IdleMatrix(t *testing.T, cases []IdleCase) {
	t.Helper()
	var saved int64
	for _, renum := range []uint64{0, 7} {
		for _, drive := range []struct {
			name string
			f    func(*Rig)
		}{{"all", nil}, {"sliced", idleSliced}} {
			for _, c := range cases {
				c.Name = fmt.Sprintf("%s/renum%d/%s", c.Name, renum, drive.name)
				c.Renumber, c.Drive = renum, drive.f
				saved += idleAB(t, c)
			}
		}
	}
	if saved <= 0 && !t.Failed() {
		t.Errorf("Idle saved no event in any scenario: it never said true")
	}
}

// idleSliced drives a rig in 400 slices of 997 ns, then to the end: runs
// that stop and start again between a reserved frame end and its time.
func idleSliced(r *Rig) {
	for k := 1; k < 400; k++ {
		r.Sched.Run(sim.Time(k) * 997 * units.Nanosecond)
	}
	r.Run(-1)
}

// idleAB runs c both ways, reports any difference on t, and returns how
// many events Idle saved.
func idleAB(t *testing.T, c IdleCase) int64 {
	t.Helper()
	a, ea, _ := idleRun(t, c, true)
	b, eb, calls := idleRun(t, c, false)
	t.Logf("%s: events %d -> %d, idle calls %d, %d delivered, end %v, %s", c.Name, ea, eb, calls, len(a.delivered), a.now, a.counters)
	if !reflect.DeepEqual(a, b) {
		for i := range min(len(a.log), len(b.log)) {
			if a.log[i] != b.log[i] {
				t.Errorf("%s: pull %d differs: %s vs %s", c.Name, i, a.log[i], b.log[i])
				break
			}
		}
		t.Errorf("%s: runs differ (pulls %d vs %d, delivered eq %v, counters eq %v, ports eq %v, end %v vs %v)", c.Name,
			len(a.log), len(b.log), reflect.DeepEqual(a.delivered, b.delivered), a.counters == b.counters,
			reflect.DeepEqual(a.ports, b.ports), a.now, b.now)
	}
	return int64(ea) - int64(eb)
}

// idleOutcome is what a run left that the two runs must share.
type idleOutcome struct {
	delivered map[int32]sim.Time
	order     []int32
	counters  string
	ports     []string
	now       sim.Time
	log       []string
}

func idleRun(t *testing.T, c IdleCase, forceBusy bool) (idleOutcome, uint64, int) {
	r, hosts, counters := c.Build()
	if c.Renumber > 0 {
		r.Sched.RenumberAfter(c.Renumber)
	}
	var log []string
	calls := 0
	for h, n := range hosts {
		if n != nil {
			var state func() string
			if c.State != nil {
				state = func() string { return c.State(h) }
			}
			r.Net.SetHost(h, n, &idleFeeder{f: n, state: state, forceBusy: forceBusy, t: t, log: &log, calls: &calls})
		}
	}
	if c.Drive != nil {
		c.Drive(r)
	} else {
		r.Run(-1)
	}
	o := idleOutcome{delivered: r.Delivered, order: r.Order, counters: counters(), now: r.Sched.Now(), log: log}
	for _, pt := range r.Net.Ports {
		o.ports = append(o.ports, fmt.Sprintf("%+v", pt.Counters(r.Sched.Now())))
	}
	return o, r.Sched.Executed, calls
}

// idleFeeder is a NIC as its port's feeder, Idle forced false or not,
// that logs what it hands out and checks Idle's promise.
type idleFeeder struct {
	f         Host
	state     func() string // nil: the NIC's own fields only
	forceBusy bool
	t         *testing.T
	log       *[]string
	calls     *int
}

func (w *idleFeeder) Idle() bool {
	if w.forceBusy {
		return false
	}
	*w.calls++
	return w.f.Idle()
}

func (w *idleFeeder) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	idle := w.f.Idle()
	var before string
	if idle {
		before = w.snapshot()
	}
	p := w.f.Pull(now, pt)
	if idle {
		if p != nil {
			w.t.Errorf("an idle NIC pulled a packet at %v: %d→%d", now, p.Src, p.Dst)
		}
		if after := w.snapshot(); after != before {
			w.t.Errorf("an idle NIC changed in Pull at %v:\n%s\n->\n%s", now, before, after)
		}
	}
	if p != nil {
		*w.log = append(*w.log, fmt.Sprintf("%d %d %d %d %d %d", now, p.Src, p.Dst, p.SrcQP, p.PSN, p.Wire))
	}
	return p
}

// snapshot is the NIC's fields (pointers as addresses) and, with state,
// what they point to that a Pull could change.
func (w *idleFeeder) snapshot() string {
	s := fmt.Sprintf("%+v", reflect.ValueOf(w.f).Elem().Interface())
	if w.state != nil {
		s += "\n" + w.state()
	}
	return s
}
