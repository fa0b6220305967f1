package lab

import (
	"math"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// Two ranks of one server exchange over the scale-up link, not the fabric:
// the transfer time is the closed form at the scale-up rate and latency,
// and no fabric port carries a data packet.
func TestIntraServerTrafficUsesScaleUp(t *testing.T) {
	s := leafSpine(8, 4, 2)
	s.Topology.GPUsPerServer = 4
	s.Topology.ScaleUp = scenario.Link{Rate: 1600 * units.Gbps, Delay: 500 * units.Nanosecond}
	s.NIC.AckEvery = 1 << 20
	s.Sim.PortCounters = true
	s.Workload = scenario.Workload{Kind: "sendrecv", Ranks: 2, QPs: 1, Iterations: 1}
	const S = 8 << 20
	r := run(t, s, S)
	// Each rank sends S to the other (a 2-rank ring): in parallel, each
	// over its own scale-up link.
	ab := alphaBeta{rate: 1600 * units.Gbps, delay: 500 * units.Nanosecond}
	if want := ab.T(S); math.Abs(r.CCTS-want)/want > 0.01 {
		t.Errorf("CCT %.2f us, scale-up closed form %.2f us", r.CCTS*1e6, want*1e6)
	}
	for _, p := range r.Ports {
		if p.Tier != "host" && p.Tier != "scale-up" && p.TxPackets > 0 {
			t.Errorf("fabric port %s→%s sent %d packets", p.Node, p.Peer, p.TxPackets)
		}
	}
	// Without a scale-up domain the same transfer crosses the leaf at the
	// NIC rate.
	s.Topology.ScaleUp = scenario.Link{}
	r = run(t, s, S)
	ab = alphaBeta{rate: 400 * units.Gbps, delay: units.Microsecond}
	if want := ab.T(S); math.Abs(r.CCTS-want)/want > 0.01 {
		t.Errorf("no scale-up: CCT %.2f us, NIC closed form %.2f us", r.CCTS*1e6, want*1e6)
	}
}

// Packed keeps a 4-rank ring inside one 4-GPU server (all scale-up);
// spread puts every rank on its own server (all fabric), so the same
// all-reduce is slower at 400G NICs than on a 1.6T scale-up domain.
func TestPlacementPackedVersusSpread(t *testing.T) {
	cct := map[string]float64{}
	for _, p := range []string{"packed", "spread"} {
		s := leafSpine(16, 8, 4)
		s.Topology.GPUsPerServer = 4
		s.Topology.ScaleUp = scenario.Link{Rate: 1600 * units.Gbps, Delay: 500 * units.Nanosecond}
		s.Workload = scenario.Workload{Kind: "allreduce", Ranks: 4, Placement: p, QPs: 1, Iterations: 1}
		r := run(t, s, 16*units.MiB)
		cct[p] = r.CCTS
	}
	if !(cct["packed"] < cct["spread"]/2) {
		t.Fatalf("packed %.1f us vs spread %.1f us: scale-up should be ~4× faster", cct["packed"]*1e6, cct["spread"]*1e6)
	}
}

// On a rail-optimized fabric with a scale-up domain, the rail-aware
// (PXN-like) all-to-all keeps fabric traffic on single rails and beats the
// direct algorithm, whose cross-rail flows collide on the spines.
func TestRailAwareAllToAllBeatsDirectOnRails(t *testing.T) {
	bw := map[string]float64{}
	for _, algo := range []string{"direct", "rail-aware"} {
		s := scenario.Defaults()
		s.Name = "rail"
		s.Topology.Kind = "rail"
		s.Topology.Servers, s.Topology.GPUsPerServer = 4, 8
		s.Topology.ScaleUp = scenario.Link{Rate: 3600 * units.Gbps, Delay: 500 * units.Nanosecond}
		s.Transport.DCQCN.Preset = "off"
		s.Workload = scenario.Workload{Kind: "alltoall", Algorithm: algo, QPs: 1, Iterations: 1}
		r := run(t, s, 16*units.MiB)
		bw[algo] = r.BusBWGBps
		t.Logf("%-10s busbw %.1f GB/s, %.1f%% of ideal", algo, r.BusBWGBps, r.IdealPct)
	}
	if bw["rail-aware"] < 1.1*bw["direct"] {
		t.Fatalf("rail-aware %.1f GB/s is not well above direct %.1f GB/s", bw["rail-aware"], bw["direct"])
	}
}
