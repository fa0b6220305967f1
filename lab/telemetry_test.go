package lab

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// telemetryCases are runs that exercise every series: a fat-tree
// permutation (ECMP collisions queue, DCQCN marks), a PFC incast (pauses)
// and a lossy one (drops).
func telemetryCases(t *testing.T) map[string]scenario.Job {
	t.Helper()
	// The permutation ends at 1.6 ms: a time limit that lets it sample
	// its 768 ports every 2 µs.
	f, err := scenario.LoadSets("../examples/fattree-permutation.yaml", []string{"sim.time_limit=2500us"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]scenario.Job{"fattree-permutation": f.Jobs()[0]}
	pfc := leafSpine(32, 8, 4)
	pfc.Transport.DCQCN.Preset = "default"
	pfc.Workload = scenario.Workload{Kind: "incast", Senders: 31, Target: 0}
	pfc.Sim.TimeLimit = 10 * units.Millisecond
	cases["incast-pfc"] = job(pfc, 256*units.KiB)
	lossy := *pfc
	lossy.Switch.PFC.Enabled = false
	lossy.Switch.Buffer = 2 * units.MiB
	cases["incast-lossy"] = job(&lossy, 256*units.KiB)
	return cases
}

// withTelemetry is job with sim.telemetry on at interval, keeping ports.
func withTelemetry(j scenario.Job, interval units.Duration, ports int) scenario.Job {
	s := *j.Spec
	s.Sim.Telemetry = scenario.Telemetry{Interval: interval, Ports: scenario.Pick{Top: ports}}
	j.Spec = &s
	return j
}

// runSim builds and runs j to the end.
func runSim(t *testing.T, j scenario.Job) (*Sim, metrics.SizeResult) {
	t.Helper()
	s, err := Build(j)
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background(), nil)
	r := s.Result()
	if !r.Complete || !r.Conservation.OK {
		t.Fatalf("run incomplete (%v) or unbalanced (%+v)", r.Complete, r.Conservation)
	}
	return s, r
}

// The samples agree with the ports' own counters: a port's sampled
// utilization integrates to the bytes it sent to within one interval's
// worth (the run's last partial interval is not sampled) plus a frame in
// flight; no sampled queue exceeds the port's recorded maximum; the
// interval counts never exceed the totals; the kept ports are the busiest.
func TestTelemetryConsistentWithCounters(t *testing.T) {
	const interval = 5 * units.Microsecond
	for name, j := range telemetryCases(t) {
		t.Run(name, func(t *testing.T) {
			s, r := runSim(t, withTelemetry(j, interval, scenario.MaxTelemetryPorts))
			tel := r.Telemetry
			if tel == nil || len(tel.Ports) == 0 {
				t.Fatal("no telemetry")
			}
			if tel.IntervalS != interval.Seconds() {
				t.Errorf("interval %v s, want %v", tel.IntervalS, interval.Seconds())
			}
			// One per whole interval, and the closing one at the end.
			if whole := int(s.Sched.Now() / interval); tel.Samples != whole+1 || tel.EndS != s.Sched.Now().Seconds() {
				t.Errorf("%d samples, the last at %v s, in a run of %v, want %d", tel.Samples, tel.EndS, s.Sched.Now(), whole+1)
			}
			lastSpan := tel.EndS - float64(tel.Samples-1)*interval.Seconds()
			byName := map[[2]string]*fabric.Port{}
			for _, pt := range s.Topo.Net.Ports {
				node, peer := fabric.PortName(pt)
				byName[[2]string{node, peer}] = pt
			}
			frame := float64(s.Job.Spec.NIC.MTU) + 256 // the largest frame, with headers
			var paused, frames, marks, drops int64
			for i, ps := range tel.Ports {
				pt := byName[[2]string{ps.Node, ps.Peer}]
				if pt == nil {
					t.Fatalf("series %s→%s names no port", ps.Node, ps.Peer)
				}
				for _, n := range []int{len(ps.QueueBytes), len(ps.UtilPct), len(ps.Paused), len(ps.PauseFrames), len(ps.ECNMarks), len(ps.Drops)} {
					if n != tel.Samples {
						t.Fatalf("%s→%s: a series of %d samples, want %d", ps.Node, ps.Peer, n, tel.Samples)
					}
				}
				if ps.TxBytes != pt.TxBytes() || (i > 0 && ps.TxBytes > tel.Ports[i-1].TxBytes) {
					t.Errorf("%s→%s: tx %d (port %d), not in order", ps.Node, ps.Peer, ps.TxBytes, pt.TxBytes())
				}
				// The priorities the transport uses hold every queued byte.
				for k := range ps.QueueBytes {
					var b int64
					for _, q := range ps.Priorities {
						b += q.QueueBytes[k]
					}
					if b != ps.QueueBytes[k] {
						t.Fatalf("%s→%s sample %d: priorities hold %d bytes, the port %d", ps.Node, ps.Peer, k, b, ps.QueueBytes[k])
					}
				}
				capacity := float64(pt.Rate) / 8 * interval.Seconds()
				var sent float64
				for k := range ps.UtilPct {
					u := ps.UtilPct[k]
					if u < 0 || u > 100 {
						t.Fatalf("%s→%s: utilization %v%% at sample %d", ps.Node, ps.Peer, u, k)
					}
					if k == len(ps.UtilPct)-1 {
						sent += u / 100 * float64(pt.Rate) / 8 * lastSpan
					} else {
						sent += u / 100 * capacity
					}
					if ps.QueueBytes[k] > pt.MaxQueueBytes() || ps.QueueBytes[k] < 0 {
						t.Errorf("%s→%s: %d bytes queued at sample %d, above its max %d", ps.Node, ps.Peer, ps.QueueBytes[k], k, pt.MaxQueueBytes())
					}
					paused += int64(ps.Paused[k])
					frames += ps.PauseFrames[k]
					marks += ps.ECNMarks[k]
					drops += ps.Drops[k]
				}
				rounding := float64(tel.Samples) * 0.005 / 100 * capacity
				// To the end of the run: within the frame that may still pass
				// the line rate's share of the last sample.
				if diff := float64(pt.TxBytes()) - sent; diff < -rounding || diff > 2*frame+rounding {
					t.Errorf("%s→%s: utilization integrates to %.0f bytes, the port sent %d (one interval is %.0f)",
						ps.Node, ps.Peer, sent, pt.TxBytes(), capacity)
				}
				if sum(ps.PauseFrames) > pt.C.PFCPausesRecv || sum(ps.ECNMarks) > pt.C.ECNMarks || sum(ps.Drops) > pt.C.Drops {
					t.Errorf("%s→%s: interval counts above the totals", ps.Node, ps.Peer)
				}
			}
			last := tel.Ports[len(tel.Ports)-1].TxBytes
			kept := 0
			for _, pt := range s.Topo.Net.Ports {
				if pt.TxBytes() > last {
					kept++
				}
			}
			if kept > len(tel.Ports) {
				t.Errorf("%d ports sent more than the least kept one (%d bytes), only %d kept", kept, last, len(tel.Ports))
			}
			// What each case is for shows in the samples (drops count at the
			// ingress port, which may not be among the busiest: all ports).
			var allDrops int64
			for _, d := range s.tel.drops {
				allDrops += int64(d)
			}
			t.Logf("%d samples, %d ports kept of %d; paused %d, pause frames %d, marks %d, drops %d (all ports %d)",
				tel.Samples, len(tel.Ports), len(s.Topo.Net.Ports), paused, frames, marks, drops, allDrops)
			switch name {
			case "incast-pfc":
				if paused == 0 || frames == 0 {
					t.Error("a PFC incast sampled no pause")
				}
			case "incast-lossy":
				if allDrops == 0 || allDrops > r.Drops {
					t.Errorf("a lossy incast sampled %d drops of %d", allDrops, r.Drops)
				}
			case "fattree-permutation":
				if marks == 0 {
					t.Error("the permutation sampled no ECN mark")
				}
			}
		})
	}
}

func sum(xs []int64) (n int64) {
	for _, x := range xs {
		n += x
	}
	return n
}

// Telemetry off schedules nothing; on, it changes nothing but adds the
// telemetry and its sampling events (one per sample: sim_events differs
// by exactly that).
func TestTelemetryChangesNothing(t *testing.T) {
	for name, j := range telemetryCases(t) {
		t.Run(name, func(t *testing.T) {
			j.Spec.Sim.PortCounters = true
			j.Spec.Sim.RecordFlows = true
			s, off := runSim(t, j)
			if s.tel != nil || off.Telemetry != nil {
				t.Fatal("telemetry recorded while off")
			}
			_, on := runSim(t, withTelemetry(j, 2*units.Microsecond, 8))
			if on.Telemetry == nil {
				t.Fatal("no telemetry")
			}
			if got := on.Events - off.Events; got != uint64(on.Telemetry.Samples-1) {
				t.Errorf("%d more events with telemetry, want one per sample but the closing one (%d)", got, on.Telemetry.Samples-1)
			}
			on.Telemetry, on.Events, on.WallS, off.WallS = nil, off.Events, 0, 0
			a, _ := json.Marshal(off)
			b, _ := json.Marshal(on)
			if string(a) != string(b) {
				t.Error("telemetry changed the results")
			}
		})
	}
}

// sim.telemetry is validated: its own keys and the forms of its picks.
func TestTelemetryValidation(t *testing.T) {
	base := `name: t
topology: {kind: fat-tree, k: 4, host_link: {rate: 100Gbps, delay: 1us}, fabric_link: {rate: 100Gbps, delay: 1us}}
workload: {kind: permutation, sizes: {list: [64KiB]}}
`
	for _, c := range []struct{ sim, want string }{
		{"{telemetry: {ports: 65}}", "sim.telemetry.ports: must be between 0 (off) and 64"},
		{"{telemetry: {ports: 8, interval: 500ns}}", "sim.telemetry.interval: must be at least 1us"},
		{"{telemetry: {interval: 1us}}", ""}, // ports 0: off, whatever the interval (a sweep may turn it off)
		{"{engine: flow, telemetry: {ports: 8}}", "sim.engine: flow: sim.telemetry samples the packet engine's ports"},
		// A long run is decimated, never refused.
		{"{telemetry: {ports: 8}}", ""},
		{"{telemetry: {ports: top 8}}", ""},
		{"{telemetry: {ports: [edge0-0->agg0-1, host3->edge0-1]}}", ""},
		{"{telemetry: {ports: [leaf0]}}", "sim.telemetry.ports[0]: needs a port as node->peer"},
		{"{telemetry: {ports: top eight}}", `sim.telemetry.ports: needs a number, "top N" or a list`},
		{"{telemetry: {ports: -1}}", "sim.telemetry.ports: must be between 0 (off) and 64"},
		{"{telemetry: {flows: 65}}", "sim.telemetry.flows: must be between 0 (none) and 64"},
		{"{telemetry: {flows: [3, x]}}", `sim.telemetry.flows[1]: needs a flow ID (a whole number, the id of sim.record_flows' records), got "x"`},
		{"{telemetry: {flows: top 4, what: [queue, rate]}}", ""},
		{"{telemetry: {ports: 4, what: [depth]}}", `sim.telemetry.what[0]: must be one of queue, util, pause, ecn, drops, rate, delivered, got "depth"`},
		{"{telemetry: {ports: [leaf0->spine9]}}", `t.yaml:4:27: sim.telemetry.ports[0]: the fabric has no port "leaf0->spine9" (a port is an egress port of switch node toward peer, or host node's NIC toward its switch, e.g. agg0-0->core0)`},
		{"{telemetry: {ports: [host3->edge0-0, host3→edge0-0]}}", "sim.telemetry.ports[1]: names the same port as sim.telemetry.ports[0]"},
		{"{telemetry: {flows: [7, 7]}}", "sim.telemetry.flows[1]: names the same flow as sim.telemetry.flows[0]"},
		{"{telemetry: {ports: 2147483648}}", "2147483648 is too large"},
		{"{telemetry: {ports: [" + strings.Repeat("x", 3000) + "]}}", `(3000 characters)`},
	} {
		_, err := scenario.Parse("t.yaml", []byte(base+"sim: "+c.sim+"\n"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("sim %s: %v", c.sim, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("sim %s: error %v, want %q", c.sim, err, c.want)
		}
	}
}

// BenchmarkTelemetry is the cost of sim.telemetry on the fat-tree
// permutation (BenchmarkFatTreePermutation): off, and on at 10 µs keeping
// 8 ports (every one of the 768 ports sampled every interval).
func BenchmarkTelemetry(b *testing.B) {
	f, err := scenario.LoadSets("../examples/fattree-permutation.yaml", []string{"sim.time_limit=10ms"})
	if err != nil {
		b.Fatal(err)
	}
	j := f.Jobs()[0]
	b.Run("off", func(b *testing.B) { benchJob(b, j) })
	b.Run("on-10us", func(b *testing.B) { benchJob(b, withTelemetry(j, 10*units.Microsecond, 8)) })
}

// The memory estimate covers what telemetry holds at its peak: the
// sampler's arrays as they grew and the series Result makes of them
// (telemetryBytes, which takes the run to last its time limit, or as long
// as the bound of samples allows).
func TestMemoryEstimateCoversTelemetry(t *testing.T) {
	j := withTelemetry(telemetryCases(t)["incast-pfc"], units.Microsecond, scenario.MaxTelemetryPorts)
	spec := *j.Spec
	spec.Sim.TimeLimit = 200 * units.Microsecond // the run ends at 168 µs
	j.Spec = &spec
	s, r := runSim(t, j)
	tel := s.tel
	held := 8*(cap(tel.queue)+cap(tel.sent)) + cap(tel.paused) + 4*(cap(tel.frames)+cap(tel.marks)+cap(tel.drops)+cap(tel.qprio))
	for _, ps := range r.Telemetry.Ports {
		held += 8*(len(ps.QueueBytes)+len(ps.UtilPct)+len(ps.PauseFrames)+len(ps.ECNMarks)+len(ps.Drops)) + len(ps.Paused)
		for _, q := range ps.Priorities {
			held += 8 * len(q.QueueBytes)
		}
	}
	est := telemetryBytes(j.Spec, int64(len(s.Topo.Net.Ports)))
	t.Logf("%d samples of %d ports: %d bytes held, %d estimated", r.Telemetry.Samples, len(tel.ports), held, est)
	if est < int64(held) || est > 4*int64(held) {
		t.Errorf("telemetry estimate %d bytes against %d held", est, held)
	}
	if off := telemetryBytes(&scenario.Scenario{}, 100); off != 0 {
		t.Errorf("telemetry off: %d bytes estimated", off)
	}
}
