package lab

import (
	"testing"

	"fabriclab/fabric"
	"fabriclab/scenario"
	"fabriclab/units"
)

// qpAll2All is a 32 × 400G all-to-all over 8 spines with qps QPs per
// pair, under nic.entropy and switch.forwarding.
func qpAll2All(qps int, entropy, forwarding string) scenario.Job {
	s := leafSpine(32, 8, 8)
	s.Topology.HostLink.Rate, s.Topology.FabricLink.Rate = 400*units.Gbps, 400*units.Gbps
	s.NIC.Entropy = entropy
	s.Switch.Forwarding = forwarding
	s.Workload = scenario.Workload{Kind: "alltoall", QPs: qps}
	return job(s, 16*units.MiB)
}

// QP-aware entropy (issue 19): with 8 QPs per pair on 8 uplinks, the
// leaf's own hash sends a pair's 8 QPs up 8 different uplinks, and no
// uplink carries more than its share of a NIC's QPs.
func TestQPAwareSpreadsEveryNICsQPs(t *testing.T) {
	s, err := Build(qpAll2All(8, "qp-aware", "ecmp"))
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ src, dst int32 }
	perPair := map[pair]map[*fabric.Port]int{}
	perNIC := map[int32]map[*fabric.Port]int{}
	ports := map[int32]map[int32]bool{}
	for _, c := range s.Plan.Conns {
		sw := s.Topo.Net.HostPorts[c.Src].Peer.Owner.(*fabric.Switch)
		if len(sw.Next[c.Dst]) == 1 {
			continue // same leaf: one way down
		}
		up := sw.HashPick(c.Src, c.Dst, c.SQP, c.DQP)
		k := pair{c.Src, c.Dst}
		if perPair[k] == nil {
			perPair[k] = map[*fabric.Port]int{}
		}
		if perNIC[c.Src] == nil {
			perNIC[c.Src], ports[c.Src] = map[*fabric.Port]int{}, map[int32]bool{}
		}
		perPair[k][up]++
		perNIC[c.Src][up]++
		if ports[c.Src][c.SQP] {
			t.Fatalf("host %d uses UDP source port %d twice", c.Src, c.SQP)
		}
		ports[c.Src][c.SQP] = true
	}
	for k, m := range perPair {
		if len(m) != 8 {
			t.Fatalf("pair %v: 8 QPs on %d uplinks, want 8", k, len(m))
		}
	}
	for h, m := range perNIC {
		n := 0
		for _, c := range m {
			n += c
		}
		for up, c := range m {
			if c > (n+7)/8 {
				t.Errorf("host %d: %d of its %d QPs on uplink %s, more than its share", h, c, n, up.Owner.Name())
			}
		}
	}
}

// QP-aware all-to-all with one QP per pair runs within 5% of adaptive
// routing's CCT, where the plain hash loses 10%.
func TestQPAwareMatchesAdaptive(t *testing.T) {
	hash := run(t, qpAll2All(1, "hash", "ecmp").Spec, 16*units.MiB)
	aware := run(t, qpAll2All(1, "qp-aware", "ecmp").Spec, 16*units.MiB)
	adaptive := run(t, qpAll2All(1, "hash", "adaptive").Spec, 16*units.MiB)
	t.Logf("CCT: hash %.1f µs, qp-aware %.1f µs, adaptive %.1f µs", hash.CCTS*1e6, aware.CCTS*1e6, adaptive.CCTS*1e6)
	if aware.CCTS > 1.05*adaptive.CCTS {
		t.Errorf("qp-aware %.1f µs is more than 5%% above adaptive's %.1f µs", aware.CCTS*1e6, adaptive.CCTS*1e6)
	}
	if hash.CCTS < 1.05*aware.CCTS {
		t.Errorf("the hash (%.1f µs) is no slower than qp-aware (%.1f µs): the case shows nothing", hash.CCTS*1e6, aware.CCTS*1e6)
	}
}
