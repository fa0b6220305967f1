package lab

import (
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
