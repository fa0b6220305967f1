package roce

import (
	"fmt"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
	"fabriclab/units"
)

// idleCase is a scenario of (rig, transport) for fabrictest.IdleMatrix;
// its State is each send QP's state (the NIC holds them by pointer).
func idleCase(name string, build func() (*fabrictest.Rig, *Transport)) fabrictest.IdleCase {
	var cur *Transport
	state := func(h int) string {
		var b strings.Builder
		for _, q := range cur.NICs[h].send {
			fmt.Fprintf(&b, "%+v\n", *q)
		}
		return b.String()
	}
	return fabrictest.IdleCase{Name: name, State: state, Build: func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
		r, tr := build()
		cur = tr
		hosts := make([]fabrictest.Host, len(tr.NICs))
		for h, n := range tr.NICs {
			if n != nil { // a typed nil would not be a nil Host
				hosts[h] = n
			}
		}
		return r, hosts, func() string { return fmt.Sprintf("%+v", tr.Counters()) }
	}}
}

// TestIdleChangesNothing: DCQCN incast; a lossy fan-in with NACKs,
// go-back-N and RTOs (in-order and out-of-order receivers); send slots and
// bursts (nic.active_qps, nic.burst) with random starts; host ports
// paused by PFC; HPCC; host links failing and coming back
// (fabrictest.IdleMatrix). Idle reduced to "no QP in the round-robin",
// forgetting the rate limiter's waiting QPs, fails the slots cases.
func TestIdleChangesNothing(t *testing.T) {
	var cases []fabrictest.IdleCase
	cases = append(cases, idleCase("incast", func() (*fabrictest.Rig, *Transport) {
		r, tr, _ := incast(t, 1<<19)
		return r, tr
	}))
	for _, accept := range []bool{false, true} {
		cases = append(cases, idleCase(fmt.Sprintf("loss%v", accept), func() (*fabrictest.Rig, *Transport) {
			cfg := nicConfig(DCQCNParams{})
			cfg.AcceptOutOfOrder = accept
			cfg.RTO = 100 * units.Microsecond
			sw := &fabric.SwitchConfig{Buffer: 200_000, MaxPacketWire: 4178}
			r, tr := rigOn(t, 7, sw, cfg)
			for s := 1; s <= 6; s++ {
				r.SendAt(sim.Time(s)*37*units.Nanosecond, s, 0, int32(s), 1<<20)
			}
			return r, tr
		}))
	}
	for _, c := range []struct{ slots, burst int }{{0, 1}, {1, 1}, {1, 4}, {2, 3}} {
		cases = append(cases, idleCase(fmt.Sprintf("slots%d-%d", c.slots, c.burst), func() (*fabrictest.Rig, *Transport) {
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
		}))
	}
	cases = append(cases, idleCase("pfc", func() (*fabrictest.Rig, *Transport) {
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
	}))
	cases = append(cases, idleCase("hpcc", func() (*fabrictest.Rig, *Transport) {
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
	}))
	cases = append(cases, idleCase("fail", func() (*fabrictest.Rig, *Transport) {
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
	}))
	fabrictest.IdleMatrix(t, cases)
}

// pfcECN is a 32 MiB switch with PFC on priority 3 at xoff/xon and ECN
// marking between 20 and 200 KB.
func pfcECN(xoff, xon int64) *fabric.SwitchConfig {
	sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: xoff, XON: xon, MaxPacketWire: 4178,
		ECN: true, KMin: 20_000, KMax: 200_000, PMax: 0.2}
	sw.Lossless[3] = true
	return sw
}
