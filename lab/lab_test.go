package lab

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// leafSpine is a test fabric: hosts/perLeaf leaves, spines spines.
func leafSpine(hosts, perLeaf, spines int) *scenario.Scenario {
	s := scenario.Defaults()
	s.Name = "test"
	s.Topology.Hosts = hosts
	s.Topology.HostsPerLeaf = perLeaf
	s.Topology.Spines = spines
	s.Transport.DCQCN.Preset = "off"
	return s
}

func job(s *scenario.Scenario, size units.Size) scenario.Job {
	return scenario.Job{Scenario: s.Name, Variant: "v", Size: size, Seed: s.Seed, Spec: s}
}

func run(t *testing.T, s *scenario.Scenario, size units.Size) metrics.SizeResult {
	t.Helper()
	r, err := Run(context.Background(), job(s, size), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Conservation.OK {
		t.Fatalf("conservation violated: %+v", r.Conservation)
	}
	return r
}

// One flow alone: FCT = serialization of every packet (payload + overhead)
// at line rate, plus store-and-forward of the last packet at each later hop,
// plus propagation on each of the 4 links (host→leaf→spine→leaf→host).
func TestOneFlowAloneMatchesClosedForm(t *testing.T) {
	for _, tc := range []struct {
		size  units.Size
		rate  units.Rate
		delay units.Duration
	}{
		{1 * units.MB, 400 * units.Gbps, units.Microsecond},
		{64 * units.KiB, 100 * units.Gbps, 500 * units.Nanosecond},
		{100, 400 * units.Gbps, units.Microsecond},
		{32 * units.MiB, 400 * units.Gbps, 2 * units.Microsecond},
	} {
		s := leafSpine(2, 1, 1)
		s.Topology.HostLink = scenario.Link{Rate: tc.rate, Delay: tc.delay}
		s.Topology.FabricLink = scenario.Link{Rate: tc.rate, Delay: tc.delay}
		s.Workload = scenario.Workload{Kind: "incast", Senders: 1, Target: 0}
		s.Sim.RecordFlows = true
		r := run(t, s, tc.size)
		mtu, ovh := int64(4096), int64(82)
		n := (int64(tc.size) + mtu - 1) / mtu
		last := int64(tc.size) - (n-1)*mtu + ovh
		bitTime := 1 / float64(tc.rate)
		want := float64(int64(tc.size)+n*ovh)*8*bitTime + 3*float64(last)*8*bitTime + 4*tc.delay.Seconds()
		got := r.Records[0].FCTS
		if math.Abs(got-want)/want > 0.01 {
			t.Errorf("%v at %v: FCT %.9f s, closed form %.9f s", tc.size, tc.rate, got, want)
		}
		if math.Abs(r.Records[0].Slowdown-1) > 0.01 {
			t.Errorf("slowdown %v", r.Records[0].Slowdown)
		}
		if r.Drops != 0 || r.PFCPauses != 0 || r.ECNMarks != 0 {
			t.Errorf("idle path saw drops/pauses/marks: %+v", r)
		}
	}
}

// Collectives on a non-blocking fabric with PFC and no DCQCN reach ≥ 90% of
// ideal at large sizes and busbw never exceeds the NIC rate. The fabric is
// non-blocking without relying on ECMP luck: each leaf has one uplink as
// fast as its hosts together (multi-spine ECMP collisions are shown
// elsewhere).
func TestCollectivesReachIdealOnNonBlockingFabric(t *testing.T) {
	for _, tc := range []struct {
		kind string
		size units.Size
	}{
		{"allreduce", 64 * units.MB},
		{"alltoall", 64 * units.MB},
	} {
		s := leafSpine(16, 4, 1)
		s.Topology.FabricLink.Rate = 1600 * units.Gbps
		s.Workload = scenario.Workload{Kind: tc.kind}
		r := run(t, s, tc.size)
		if !r.Complete {
			t.Fatalf("%s incomplete", tc.kind)
		}
		t.Logf("%s %v: cct %.6fs ideal %.6fs %.1f%% busbw %.2f GB/s pauses %d", tc.kind, tc.size, r.CCTS, r.IdealS, r.IdealPct, r.BusBWGBps, r.PFCPauses)
		if r.IdealPct < 90 {
			t.Errorf("%s reaches %.1f%% of ideal, want ≥ 90%%", tc.kind, r.IdealPct)
		}
		if r.BusBWGBps > 50 {
			t.Errorf("%s busbw %.2f GB/s exceeds the 400G NIC", tc.kind, r.BusBWGBps)
		}
		if r.Drops != 0 {
			t.Errorf("drops with PFC: %d", r.Drops)
		}
	}
}

// PFC with auto headroom drops nothing under a 31-to-1 incast; without PFC
// the same incast drops, and go-back-N still delivers every byte.
func TestIncastPFCVersusLossy(t *testing.T) {
	s := leafSpine(32, 8, 4)
	s.Workload = scenario.Workload{Kind: "incast", Senders: 31, Target: 0}
	r := run(t, s, 512*units.KiB)
	if !r.Complete || r.Drops != 0 || r.PFCPauses == 0 {
		t.Fatalf("PFC incast: complete=%v drops=%d pauses=%d", r.Complete, r.Drops, r.PFCPauses)
	}
	s.Switch.PFC.Enabled = false
	s.Switch.Buffer = 2 * units.MiB
	r = run(t, s, 512*units.KiB)
	if r.Drops == 0 {
		t.Fatalf("lossy incast dropped nothing")
	}
	if !r.Complete || r.Retransmits == 0 {
		t.Fatalf("lossy incast: complete=%v retransmits=%d", r.Complete, r.Retransmits)
	}
	t.Logf("lossy incast: drops %d retransmits %d timeouts %d cct %.6fs", r.Drops, r.Retransmits, r.Timeouts, r.CCTS)
}

// The same scenario and seed give byte-identical results.
func TestDeterministic(t *testing.T) {
	s := leafSpine(16, 4, 4)
	s.Transport.DCQCN.Preset = "default"
	s.Workload = scenario.Workload{Kind: "alltoall"}
	s.Sim.RecordFlows = true
	s.Sim.PortCounters = true
	enc := func() string {
		r := run(t, s, 4*units.MB)
		r.WallS = 0
		b, _ := json.Marshal(r)
		return string(b)
	}
	a, b := enc(), enc()
	if a != b {
		t.Fatal("two runs of the same scenario differ")
	}
}

// The per-flow views: the rank×rank bandwidth matrix of a ring all-reduce
// has traffic only from i to i+1, each close to the NIC rate; the sorted-FCT
// curve is sorted and ends at the worst FCT.
func TestRankMatrixAndFCTCurve(t *testing.T) {
	s := leafSpine(8, 8, 1)
	s.Workload = scenario.Workload{Kind: "allreduce", QPs: 1, Iterations: 1}
	r := run(t, s, 16*units.MiB)
	if len(r.RankBWGBps) != 8 {
		t.Fatalf("matrix has %d rows", len(r.RankBWGBps))
	}
	for i, row := range r.RankBWGBps {
		for j, bw := range row {
			if j == (i+1)%8 {
				if bw < 40 || bw > 50 {
					t.Errorf("ring %d→%d at %.1f GB/s", i, j, bw)
				}
			} else if bw != 0 {
				t.Errorf("no traffic expected %d→%d, got %.1f GB/s", i, j, bw)
			}
		}
	}
	c := r.FCTCurveS
	if len(c) == 0 || c[len(c)-1] != r.FCT.Max || c[0] > c[len(c)-1] {
		t.Fatalf("curve %v, max %v", c, r.FCT.Max)
	}
}
