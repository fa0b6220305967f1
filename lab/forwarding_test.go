package lab

import (
	"context"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

func fatTree4(forwarding, ooo string) *scenario.Scenario {
	s := scenario.Defaults()
	s.Name = "lb"
	s.Topology.Kind = "fat-tree"
	s.Topology.K = 4
	s.Topology.HostLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Topology.FabricLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Transport.DCQCN.Preset = "off"
	s.Switch.Forwarding = forwarding
	s.NIC.OutOfOrder = ooo
	s.Workload = scenario.Workload{Kind: "permutation"}
	return s
}

// Per-packet spraying on a symmetric fat-tree with NICs that accept
// out-of-order packets reaches ≥ 95% of ideal on a permutation; with
// go-back-N receivers every reordering costs a NACK and a resend of the
// window, and the same run is many times slower; static ECMP sits between.
func TestSprayingNeedsOutOfOrderNIC(t *testing.T) {
	pct := map[string]float64{}
	for _, c := range []struct{ fwd, ooo string }{
		{"spray-rr", "accept"}, {"spray-rr", "go-back-n"}, {"ecmp", "accept"},
	} {
		r := run(t, fatTree4(c.fwd, c.ooo), 32*units.MB)
		if !r.Complete || r.Drops != 0 {
			t.Fatalf("%s/%s: complete=%v drops=%d", c.fwd, c.ooo, r.Complete, r.Drops)
		}
		pct[c.fwd+"/"+c.ooo] = r.IdealPct
		t.Logf("%-9s %-9s %5.1f%% of ideal  retransmits %8d  out-of-order %8d  reorder buffer max %d pkts",
			c.fwd, c.ooo, r.IdealPct, r.Retransmits, r.Totals.OutOfOrder, r.Totals.ReorderMaxPackets)
	}
	if pct["spray-rr/accept"] < 95 {
		t.Errorf("spraying with out-of-order NICs: %.1f%% of ideal, want ≥ 95%%", pct["spray-rr/accept"])
	}
	if pct["spray-rr/go-back-n"] > pct["spray-rr/accept"]/2 {
		t.Errorf("spraying with go-back-N at %.1f%% is not measurably worse than with out-of-order NICs (%.1f%%)",
			pct["spray-rr/go-back-n"], pct["spray-rr/accept"])
	}
	if pct["ecmp/accept"] >= pct["spray-rr/accept"] {
		t.Errorf("ECMP (%.1f%%) not below spraying (%.1f%%) on a permutation", pct["ecmp/accept"], pct["spray-rr/accept"])
	}
}

// Every policy delivers everything with bytes conserved, and the same seed
// gives the same result (random spraying and flowlets draw from seeded
// streams).
func TestForwardingPoliciesRunDeterministically(t *testing.T) {
	for _, fwd := range []string{"ecmp", "spray-random", "spray-rr", "flowlet", "adaptive", "adaptive-flowlet", "d-mod-k"} {
		a := run(t, fatTree4(fwd, "accept"), 1*units.MB)
		b := run(t, fatTree4(fwd, "accept"), 1*units.MB)
		if !a.Complete || a.CCTS != b.CCTS || a.Events != b.Events {
			t.Errorf("%s: complete=%v, runs differ: %v/%v", fwd, a.Complete, a.CCTS, b.CCTS)
		}
	}
}

// The receiver's reorder buffer: out-of-order packets are held, counted and
// delivered in order, and messages complete only when all their packets are
// in.
func TestReorderBufferHoldsAndReleases(t *testing.T) {
	s := fatTree4("spray-random", "accept")
	s.Sim.RecordFlows = true
	r := run(t, s, 4*units.MB)
	if r.Totals.OutOfOrder == 0 || r.Totals.ReorderMaxPackets == 0 {
		t.Fatalf("spraying produced no reordering: ooo %d, max held %d", r.Totals.OutOfOrder, r.Totals.ReorderMaxPackets)
	}
	if r.Retransmits != 0 {
		t.Fatalf("%d retransmits on a lossless fabric with out-of-order acceptance", r.Retransmits)
	}
	for _, f := range r.Records {
		if !f.Done || f.FCTS <= 0 {
			t.Fatalf("flow %d not delivered: %+v", f.ID, f)
		}
	}
}

// A link down from the start is routed around: everything arrives with no
// drops, over the remaining spine. A link that fails mid-run loses what is
// on it and what is sent its way until routes converge; the transport
// resends it and the run still delivers every byte, later than without the
// failure.
func TestLinkFailures(t *testing.T) {
	base := func() *scenario.Scenario {
		s := leafSpine(16, 8, 2)
		s.Topology.FabricLink.Rate = 1600 * units.Gbps
		s.Workload = scenario.Workload{Kind: "alltoall", QPs: 4, Iterations: 1}
		return s
	}
	clean := run(t, base(), 16*units.MiB)

	s := base()
	s.Topology.Failures = []scenario.Failure{{From: "leaf0", To: "spine1"}}
	s.Sim.PortCounters = true
	r := run(t, s, 16*units.MiB)
	if !r.Complete || r.Drops != 0 {
		t.Fatalf("failure at 0: complete=%v drops=%d", r.Complete, r.Drops)
	}
	for _, p := range r.Ports {
		if (p.Node == "leaf0" && p.Peer == "spine1" || p.Node == "spine1" && p.Peer == "leaf0") && p.TxPackets > 0 {
			t.Fatalf("the failed link carried %d packets", p.TxPackets)
		}
	}

	s = base()
	s.Topology.Failures = []scenario.Failure{{From: "leaf0", To: "spine1", At: 100 * units.Microsecond}}
	s.Topology.Convergence = 20 * units.Microsecond
	r = run(t, s, 16*units.MiB)
	if !r.Complete || r.Drops == 0 || r.Retransmits == 0 {
		t.Fatalf("mid-run failure: complete=%v drops=%d retransmits=%d", r.Complete, r.Drops, r.Retransmits)
	}
	if r.CCTS <= clean.CCTS {
		t.Fatalf("mid-run failure CCT %.1f us not above the clean run's %.1f us", r.CCTS*1e6, clean.CCTS*1e6)
	}
	t.Logf("clean %.1f us; failed at 100 us: %.1f us, %d drops, %d retransmits, %d timeouts",
		clean.CCTS*1e6, r.CCTS*1e6, r.Drops, r.Retransmits, r.Timeouts)

	s = base()
	s.Topology.Failures = []scenario.Failure{{From: "leaf0", To: "spine9"}}
	if _, err := Run(context.Background(), job(s, units.MiB), nil); err == nil {
		t.Fatal("a failure on a link that does not exist was accepted")
	}
}

// A policy per tier: spraying at the edge and aggregation tiers is all a
// fat-tree permutation needs (the way down is a single path), so it matches
// spraying everywhere.
func TestForwardingPerTier(t *testing.T) {
	all := run(t, fatTree4("spray-rr", "accept"), 8*units.MB)
	s := fatTree4("ecmp", "accept")
	s.Switch.ForwardingTiers = []scenario.TierForwarding{{Tier: "edge", Forwarding: "spray-rr"}, {Tier: "agg", Forwarding: "spray-rr"}}
	tiers := run(t, s, 8*units.MB)
	ecmp := run(t, fatTree4("ecmp", "accept"), 8*units.MB)
	if tiers.CCTS != all.CCTS || !(tiers.CCTS < ecmp.CCTS) {
		t.Fatalf("edge+agg spraying %.1f us, everywhere %.1f us, ECMP %.1f us", tiers.CCTS*1e6, all.CCTS*1e6, ecmp.CCTS*1e6)
	}
}

// d-mod-k on a fat-tree spreads over every core (the aggregation tier
// divides by the edge group size first), and adaptive routing leaves a
// failed port at once instead of pouring traffic into it until routes
// converge.
func TestDModKUsesAllCoresAndAdaptiveAvoidsFailedPorts(t *testing.T) {
	s := fatTree4("d-mod-k", "go-back-n")
	s.Workload = scenario.Workload{Kind: "permutation"}
	sm, err := Build(job(s, units.MB))
	if err != nil {
		t.Fatal(err)
	}
	cores := map[string]bool{}
	for i := range sm.DAG.Msgs {
		for _, pt := range sm.FlowPath(i) {
			if pt.Tier == "core" {
				cores[pt.Owner.Name()] = true
			}
		}
	}
	if len(cores) < 3 {
		t.Errorf("d-mod-k used %d of 4 cores", len(cores))
	}

	drops := map[string]int64{}
	for _, fwd := range []string{"ecmp", "adaptive"} {
		s := leafSpine(16, 8, 4)
		s.Switch.Forwarding = fwd
		s.NIC.OutOfOrder = "accept"
		s.Workload = scenario.Workload{Kind: "alltoall", Iterations: 1, QPs: 1}
		s.Topology.Failures = []scenario.Failure{{From: "leaf0", To: "spine1", At: 50 * units.Microsecond}}
		s.Topology.Convergence = 300 * units.Microsecond
		r := run(t, s, 16*units.MiB)
		if !r.Complete {
			t.Fatalf("%s: incomplete", fwd)
		}
		drops[fwd] = r.Drops
	}
	if drops["adaptive"] > drops["ecmp"] {
		t.Errorf("adaptive routing dropped %d packets into the failed link, ECMP %d", drops["adaptive"], drops["ecmp"])
	}
	t.Logf("drops after a failure, before convergence: ECMP %d, adaptive %d", drops["ecmp"], drops["adaptive"])
}
