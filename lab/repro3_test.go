package lab

import (
	"context"
	"testing"

	"fabriclab/flow"
	"fabriclab/scenario"
	"fabriclab/units"
	"fabriclab/workload"
)

// DESIGN.md reproduction 3: 5 clients (hosts 0–4 on leaf0) stream to 5
// servers on other leaves, any to any, under static destination routing
// (d-mod-k over 8 spines). With servers 8 and 16 (both ≡ 0 mod 8) every
// client's flows to those two share leaf0→spine0.
//
//   - The max-min analysis says only those flows halve (0.1 vs 0.2 of the
//     link rate) and the rest run at full rate.
//   - The lossless packet simulation shows what was measured: PFC pauses
//     every client feeding the congested uplink, so every flow slows.
//   - Swapping server 16 for 12 (≡ 4 mod 8) removes the shared uplink and
//     every flow runs at full rate in both views.
func TestReproduction3StaticRoutesAndCongestionSpreading(t *testing.T) {
	flowsTo := func(servers []int) []workload.FlowSpec {
		var fs []workload.FlowSpec
		for c := 0; c < 5; c++ {
			for _, sv := range servers {
				fs = append(fs, workload.FlowSpec{Src: c, Dst: sv, Bytes: 2e6})
			}
		}
		return fs
	}
	type view struct{ minShared, maxShared, minOther, maxOther float64 }
	measure := func(servers []int) (analysis, packets view) {
		s := leafSpine(24, 8, 8)
		s.Topology.HostLink.Rate, s.Topology.FabricLink.Rate = 100*units.Gbps, 100*units.Gbps
		s.Switch.Forwarding = "d-mod-k"
		s.Sim.RecordFlows = true
		s.Workload = scenario.Workload{Kind: "flows"}
		j := job(s, 0)
		j.FlowList = flowsTo(servers)
		sm, err := Build(j)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := flow.RootFlows(sm.DAG, sm)
		if err != nil {
			t.Fatal(err)
		}
		rep := flow.Analyze(sm.Topo.Net, fl, flow.Options{Efficiency: 4096.0 / 4178})
		r, err := Run(context.Background(), j, nil)
		if err != nil || !r.Complete || r.Drops != 0 {
			t.Fatalf("packet run: %v complete=%v drops=%d", err, r.Complete, r.Drops)
		}
		nic := 100e9 / 8 * 4096 / 4178 / 1e9 // GB/s of payload at line rate
		upd := func(v *view, shared bool, x float64) {
			x /= nic
			if shared {
				v.minShared, v.maxShared = min(v.minShared, x), max(v.maxShared, x)
			} else {
				v.minOther, v.maxOther = min(v.minOther, x), max(v.maxOther, x)
			}
		}
		analysis = view{1e9, 0, 1e9, 0}
		packets = view{1e9, 0, 1e9, 0}
		for _, f := range rep.Flows {
			upd(&analysis, f.Dst%8 == 0, f.GBps)
		}
		for _, f := range r.Records {
			upd(&packets, f.Dst%8 == 0, float64(f.Bytes)/f.FCTS/1e9)
		}
		return
	}
	a, p := measure([]int{8, 9, 10, 11, 16})
	t.Logf("shared uplink  analysis: shared %.3f–%.3f other %.3f–%.3f of the link; packets: shared %.3f–%.3f other %.3f–%.3f",
		a.minShared, a.maxShared, a.minOther, a.maxOther, p.minShared, p.maxShared, p.minOther, p.maxOther)
	// Analysis: exactly half for the colliding flows, full (1/5 of a NIC
	// sending five flows) for the rest.
	if !near(a.maxShared, 0.1, 0.01) || !near(a.minShared, 0.1, 0.01) || !near(a.minOther, 0.2, 0.01) {
		t.Errorf("analysis: shared %.3f–%.3f, others from %.3f; want 0.1 and 0.2", a.minShared, a.maxShared, a.minOther)
	}
	// Packets with PFC: the flows that share nothing slow down too.
	if p.maxOther > 0.9*0.2 {
		t.Errorf("packet simulation: non-colliding flows up to %.3f of the link, want all reduced below 0.18", p.maxOther)
	}
	a, p = measure([]int{8, 9, 10, 11, 12})
	t.Logf("no shared link analysis: %.3f–%.3f; packets: %.3f–%.3f", min(a.minShared, a.minOther), max(a.maxShared, a.maxOther),
		min(p.minShared, p.minOther), max(p.maxShared, p.maxOther))
	if !near(min(a.minShared, a.minOther), 0.2, 0.01) || min(p.minShared, p.minOther) < 0.9*0.2 {
		t.Errorf("after the swap not every flow runs at full rate: analysis from %.3f, packets from %.3f",
			min(a.minShared, a.minOther), min(p.minShared, p.minOther))
	}
}

func near(x, want, tol float64) bool { return x >= want-tol && x <= want+tol }

// Explain mode on reproduction 3: the flows through the shared uplink are
// culprits (they queue at leaf0→spine0, which pushes back with PFC), the
// other flows of the same clients are victims (their NICs are paused), and
// the pause tree's root is leaf0.
func TestExplainReproduction3(t *testing.T) {
	s := leafSpine(24, 8, 8)
	s.Topology.HostLink.Rate, s.Topology.FabricLink.Rate = 100*units.Gbps, 100*units.Gbps
	s.Switch.Forwarding = "d-mod-k"
	s.Sim.Explain = true
	s.Sim.ExplainSlowdown = 1.5
	s.Workload = scenario.Workload{Kind: "flows"}
	j := job(s, 0)
	for c := 0; c < 5; c++ {
		for _, sv := range []int{8, 9, 10, 11, 16} {
			j.FlowList = append(j.FlowList, workload.FlowSpec{Src: c, Dst: sv, Bytes: 2e6})
		}
	}
	r, err := Run(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := r.Explain
	if x == nil {
		t.Fatal("no explanation")
	}
	t.Logf("slow %d: victims %d culprits %d contending %d sender-limited %d; roots %v", x.SlowFlows, x.Victims, x.Culprits, x.Contending, x.SenderLimited, x.Roots)
	for _, f := range x.Flows[:min(4, len(x.Flows))] {
		t.Logf("  flow %d %d→%d %.2f× %s %+v", f.ID, f.Src, f.Dst, f.Slowdown, f.Role, f.Links)
	}
	for _, e := range x.PauseTree {
		t.Logf("  %s paused %s: %d frames, %.1f us", e.From, e.To, e.Pauses, e.PausedS*1e6)
	}
	if len(x.Roots) != 1 || x.Roots[0] != "leaf0" {
		t.Errorf("pause roots %v, want [leaf0]", x.Roots)
	}
	for _, f := range x.Flows {
		colliding := f.Dst%8 == 0
		if colliding && f.Role != "culprit" || !colliding && f.Role != "victim" {
			t.Errorf("flow %d→%d: role %s", f.Src, f.Dst, f.Role)
		}
	}
	if x.Culprits == 0 || x.Victims == 0 {
		t.Errorf("culprits %d victims %d", x.Culprits, x.Victims)
	}
}
