package roce

import (
	"fmt"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
	"fabriclab/units"
)

// The NIC's Idle lets its host port skip scheduling frame ends it would
// only pull nothing at (fabric.Feeder). These tests run each scenario
// twice, with Idle as it is and with Idle forced false (every end
// scheduled, as before Idle existed), and want the same run: the same
// packets pulled in the same order at the same times, the same
// deliveries, NIC and port counters and end time. Each Pull made while
// Idle said true must return nothing and change nothing of the NIC.

// abFeeder is a NIC as its port's feeder, Idle forced false or not, that
// logs what it hands out and checks Idle's promise.
type abFeeder struct {
	n         *NIC
	forceBusy bool
	t         *testing.T
	log       *[]string
	idleCalls *int
}

func (f *abFeeder) Idle() bool {
	if f.forceBusy {
		return false
	}
	*f.idleCalls++
	return f.n.Idle()
}

// nicSnap is what of a NIC a Pull could change.
type nicSnap struct {
	act, wait, slots, slotWait, burstLeft int
	burstQP                               *sendQP
	wake                                  sim.Timer
	c                                     string
}

func snap(n *NIC) nicSnap {
	return nicSnap{n.active.Len(), n.waiting.len(), n.slots, n.slotWait.Len(), n.burstLeft, n.burstQP, n.wake, fmt.Sprint(n.C)}
}

func (f *abFeeder) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	idle := f.n.Idle()
	before := snap(f.n)
	p := f.n.Pull(now, pt)
	if idle {
		if p != nil {
			f.t.Errorf("Idle NIC %d pulled a packet at %v", f.n.ID, now)
		}
		if after := snap(f.n); after != before {
			f.t.Errorf("Idle NIC %d changed in Pull at %v: %+v -> %+v", f.n.ID, now, before, after)
		}
	}
	if p != nil {
		*f.log = append(*f.log, fmt.Sprintf("%d %d %d %d %d", now, p.Src, p.Dst, p.PSN, p.Wire))
	}
	return p
}

// abOut is what a run left that the two runs must share.
type abOut struct {
	delivered map[int32]sim.Time
	order     []int32
	counters  string
	ports     []string
	now       sim.Time
	log       []string
}

// abRun builds a scenario, puts every NIC behind an abFeeder and drives
// it; it returns the outcome, the events run and how often Idle was asked.
func abRun(t *testing.T, forceBusy bool, build func() (*fabrictest.Rig, *Transport), drive func(*fabrictest.Rig)) (abOut, uint64, int) {
	r, tr := build()
	var log []string
	idleCalls := 0
	for h, n := range tr.NICs {
		if n == nil {
			continue
		}
		r.Net.SetHost(h, n, &abFeeder{n: n, forceBusy: forceBusy, t: t, log: &log, idleCalls: &idleCalls})
	}
	drive(r)
	o := abOut{delivered: r.Delivered, order: r.Order, counters: fmt.Sprintf("%+v", tr.Counters()), now: r.Sched.Now(), log: log}
	for _, pt := range r.Net.Ports {
		o.ports = append(o.ports, fmt.Sprintf("%+v", pt.Counters(r.Sched.Now())))
	}
	return o, r.Sched.Executed, idleCalls
}

// abCompare runs the scenario both ways, wants the same outcome, and
// returns how many events Idle saved.
func abCompare(t *testing.T, name string, build func() (*fabrictest.Rig, *Transport), drive func(*fabrictest.Rig)) int64 {
	t.Helper()
	a, ea, _ := abRun(t, true, build, drive)
	b, eb, ic := abRun(t, false, build, drive)
	t.Logf("%s: events %d -> %d, idle calls %d, %d delivered, end %v %s", name, ea, eb, ic, len(a.delivered), a.now, a.counters)
	if !reflect.DeepEqual(a, b) {
		if !reflect.DeepEqual(a.log, b.log) {
			for i := range min(len(a.log), len(b.log)) {
				if a.log[i] != b.log[i] {
					t.Errorf("%s: first grant diff at %d: %s vs %s", name, i, a.log[i], b.log[i])
					break
				}
			}
		}
		t.Errorf("%s: runs differ (delivered eq %v, counters eq %v, ports eq %v, now %v vs %v)", name,
			reflect.DeepEqual(a.delivered, b.delivered), a.counters == b.counters, reflect.DeepEqual(a.ports, b.ports), a.now, b.now)
	}
	return int64(ea) - int64(eb)
}

// TestIdleChangesNothing: DCQCN incast; a lossy fan-in with NACKs,
// go-back-N and RTOs (in-order and out-of-order receivers); send slots and
// bursts (nic.active_qps, nic.burst) with random starts; host ports
// paused by PFC; HPCC; host links failing and coming back. Each in one
// run and in 400 slices, with and without renumbering every 7
// insertions. (Idle reduced to "no QP in the round-robin", forgetting the
// rate limiter's waiting QPs, fails the slots cases.)
func TestIdleChangesNothing(t *testing.T) {
	var saved int64
	defer func() {
		if saved <= 0 && !t.Failed() {
			t.Errorf("Idle saved no event in any scenario: it never said true")
		}
	}()
	runAll := func(r *fabrictest.Rig) { r.Run(-1) }
	sliced := func(r *fabrictest.Rig) {
		for k := 1; k < 400; k++ {
			r.Sched.Run(sim.Time(k) * 997 * units.Nanosecond)
		}
		r.Run(-1)
	}
	for _, renum := range []uint64{0, 7} {
		for _, drv := range []struct {
			name string
			f    func(*fabrictest.Rig)
		}{{"all", runAll}, {"sliced", sliced}} {
			sfx := fmt.Sprintf("/renum%d/%s", renum, drv.name)
			withRenum := func(b func() (*fabrictest.Rig, *Transport)) func() (*fabrictest.Rig, *Transport) {
				return func() (*fabrictest.Rig, *Transport) {
					r, tr := b()
					if renum > 0 {
						r.Sched.RenumberAfter(renum)
					}
					return r, tr
				}
			}
			saved += abCompare(t, "incast"+sfx, withRenum(func() (*fabrictest.Rig, *Transport) {
				r, tr, _ := incast(t, 1<<19)
				return r, tr
			}), drv.f)
			for _, accept := range []bool{false, true} {
				saved += abCompare(t, fmt.Sprintf("loss%v%s", accept, sfx), withRenum(func() (*fabrictest.Rig, *Transport) {
					cfg := nicConfig(DCQCNParams{})
					cfg.AcceptOutOfOrder = accept
					cfg.RTO = 100 * units.Microsecond
					sw := &fabric.SwitchConfig{Buffer: 200_000, MaxPacketWire: 4178}
					r, tr := rigOn(t, 7, sw, cfg)
					for s := 1; s <= 6; s++ {
						r.SendAt(sim.Time(s)*37*units.Nanosecond, s, 0, int32(s), 1<<20)
					}
					return r, tr
				}), drv.f)
			}
			for _, c := range []struct{ slots, burst int }{{0, 1}, {1, 1}, {1, 4}, {2, 3}} {
				saved += abCompare(t, fmt.Sprintf("slots%d-%d%s", c.slots, c.burst, sfx), withRenum(func() (*fabrictest.Rig, *Transport) {
					dq, _ := Preset("tuned-final")
					cfg := nicConfig(dq)
					cfg.ActiveQPs, cfg.Burst = c.slots, c.burst
					cfg.MaxInflight = 64 << 10
					sw := pfcECN(512<<10, 504<<10)
					r, tr := rigOn(t, 6, sw, cfg)
					rng := sim.NewRNG(3, "ab")
					m := int32(0)
					for s := 0; s < 6; s++ {
						for k := 0; k < 12; k++ {
							d := rng.IntN(6)
							if d == s {
								d = (d + 1) % 6
							}
							r.SendAt(sim.Time(rng.IntN(40000))*units.Nanosecond/10, s, d, m, int64(1+rng.IntN(200_000)))
							m++
						}
					}
					return r, tr
				}), drv.f)
			}
			saved += abCompare(t, "pfc"+sfx, withRenum(func() (*fabrictest.Rig, *Transport) {
				dq, _ := Preset("tuned-final")
				cfg := nicConfig(dq)
				cfg.ActiveQPs, cfg.Burst = 1, 2
				sw := pfcECN(40<<10, 30<<10)
				r, tr := rigOn(t, 5, sw, cfg)
				for s := 1; s <= 4; s++ {
					r.Send(s, 0, int32(s), 1<<20)
					r.SendAt(sim.Time(s)*2*units.Microsecond, s, (s%4)+1, int32(10+s), 30_000)
				}
				r.Do(20*units.Microsecond, func() {
					var pr int64
					for _, pt := range r.Net.HostPorts {
						pr += pt.C.PFCPausesRecv
					}
					t.Logf("host ports paused %d times by 20us", pr)
				})
				return r, tr
			}), drv.f)
			saved += abCompare(t, "hpcc"+sfx, withRenum(func() (*fabrictest.Rig, *Transport) {
				cfg := nicConfig(DCQCNParams{})
				cfg.HPCC = *hpccParams()
				sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: 512 << 10, XON: 504 << 10, MaxPacketWire: 4178}
				sw.Lossless[3] = true
				r, tr := rigOn(t, 5, sw, cfg)
				for s := 1; s <= 4; s++ {
					r.SendAt(sim.Time(s)*300*units.Nanosecond, s, 0, int32(s), 1<<19)
					r.SendAt(sim.Time(s)*5*units.Microsecond, 0, s, int32(10+s), 20_000)
				}
				return r, tr
			}), drv.f)
			saved += abCompare(t, "fail"+sfx, withRenum(func() (*fabrictest.Rig, *Transport) {
				cfg := nicConfig(DCQCNParams{})
				cfg.RTO = 50 * units.Microsecond
				sw := &fabric.SwitchConfig{Buffer: 32 << 20, MaxPacketWire: 4178}
				r, tr := rigOn(t, 4, sw, cfg)
				r.Send(1, 0, 1, 1<<18)
				r.Send(2, 0, 2, 1<<18)
				r.SendAt(3*units.Microsecond, 1, 3, 3, 9000)
				for k, at := range []sim.Time{1200, 2150, 4000, 7777} {
					pt := r.Net.HostPorts[1+k%2]
					if k == 2 {
						pt = r.Net.HostPorts[0]
					}
					a := at * units.Nanosecond
					r.Do(a, func() { r.Net.FailLink(pt) })
					r.Do(a+3*units.Microsecond, func() { r.Net.RestoreLink(pt) })
				}
				return r, tr
			}), drv.f)
		}
	}
}

// pfcECN is a 32 MiB switch with PFC on priority 3 at xoff/xon and ECN
// marking between 20 and 200 KB.
func pfcECN(xoff, xon int64) *fabric.SwitchConfig {
	sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: xoff, XON: xon, MaxPacketWire: 4178,
		ECN: true, KMin: 20_000, KMax: 200_000, PMax: 0.2}
	sw.Lossless[3] = true
	return sw
}
