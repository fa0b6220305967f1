package fluid

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"fabriclab/lab"
	"fabriclab/scenario"
	"fabriclab/units"
)

// xcase is one cross-validation case: a scenario both engines run, and
// the CCT error the fluid model is allowed against the packet engine.
type xcase struct {
	name string
	spec *scenario.Scenario
	size units.Size
	tol  float64 // |fluid − packet| / packet
	why  string  // what the looser bound is for ("" = within 5%)
}

// xfabric is the cross-validation fabric: 16 hosts on a leaf-spine of 4
// leaves at 100G, 1 µs links, no DCQCN; spines 4 (non-blocking) or 2
// (2:1 oversubscribed).
func xfabric(spines int) *scenario.Scenario {
	s := scenario.Defaults()
	s.Name = "xval"
	s.Topology.Hosts = 16
	s.Topology.HostsPerLeaf = 4
	s.Topology.Spines = spines
	s.Topology.HostLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Topology.FabricLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Transport.DCQCN.Preset = "off"
	return s
}

// lossyWindowed turns PFC off; a 512 KiB in-flight cap per QP and a deep
// buffer keep the fabric loss-free (lab's closed-form fabric).
func lossyWindowed(s *scenario.Scenario) *scenario.Scenario {
	s.Switch.PFC.Enabled = false
	s.NIC.MaxInflight = 512 * units.KiB
	s.NIC.AckEvery = 16
	s.Switch.Buffer = units.GiB
	return s
}

func with(s *scenario.Scenario, f func(s *scenario.Scenario)) *scenario.Scenario {
	f(s)
	return s
}

func xcases() []xcase {
	var cs []xcase
	coll := func(kind, alg string, ranks int) func(s *scenario.Scenario) {
		return func(s *scenario.Scenario) {
			s.Workload = scenario.Workload{Kind: kind, Algorithm: alg, Ranks: ranks, QPs: 1, Iterations: 1}
		}
	}
	for _, ca := range []struct{ kind, alg string }{
		{"allreduce", "ring"}, {"allreduce", "bidirectional-ring"}, {"allreduce", "halving-doubling"},
		{"allreduce", "double-binary-tree"}, {"allgather", "ring"}, {"allgather", "recursive-doubling"},
		{"reducescatter", "ring"}, {"reducescatter", "recursive-halving"},
		{"alltoall", "direct"}, {"alltoall", "pairwise"},
		{"broadcast", "chain"}, {"broadcast", "binomial-tree"}, {"reduce", "chain"}, {"reduce", "binomial-tree"},
		{"gather", "direct"}, {"scatter", "direct"}, {"sendrecv", "ring"},
	} {
		c := xcase{name: ca.kind + "/" + ca.alg + " pfc ecmp",
			spec: with(xfabric(4), coll(ca.kind, ca.alg, 16)), size: 8 * units.MiB, tol: 0.05}
		if ca.alg == "recursive-halving" {
			// Two steps' flows collide on ECMP uplinks: PFC spreading, which
			// the fluid model applies from the first byte and the packet
			// engine only once an ingress queue reaches XOFF.
			c.tol, c.why = 0.15, "PFC spreading"
		}
		cs = append(cs, c)
		cs = append(cs, xcase{name: ca.kind + "/" + ca.alg + " lossy",
			spec: with(lossyWindowed(xfabric(4)), coll(ca.kind, ca.alg, 16)), size: 8 * units.MiB, tol: 0.05})
	}
	for _, fwd := range []string{"ecmp", "adaptive", "d-mod-k", "spray-rr"} {
		fwd := fwd
		for _, sp := range []int{4, 2} {
			sp := sp
			for _, pfc := range []bool{true, false} {
				pfc := pfc
				base := func() *scenario.Scenario {
					s := xfabric(sp)
					if !pfc {
						s = lossyWindowed(s)
					}
					s.Switch.Forwarding = fwd
					if fwd == "adaptive" || fwd == "spray-rr" {
						s.NIC.OutOfOrder = "accept"
					}
					return s
				}
				tag := fmt.Sprintf("%s %d:1 pfc=%v", fwd, 4/sp, pfc)
				cs = append(cs, xcase{name: "alltoall " + tag, spec: with(base(), coll("alltoall", "direct", 16)), size: 8 * units.MiB, tol: 0.05})
				c := xcase{name: "permutation " + tag, spec: with(base(), func(s *scenario.Scenario) {
					s.Workload = scenario.Workload{Kind: "permutation", QPs: 1, Iterations: 1}
				}), size: 2 * units.MiB, tol: 0.05}
				if fwd == "adaptive" || fwd == "spray-rr" {
					// Per-packet choices balance a 2 MiB flow's packets over the
					// spines less evenly than the fluid's exact even split.
					c.tol, c.why = 0.16, "per-packet load balancing"
				}
				cs = append(cs, c)
				cs = append(cs, xcase{name: "allreduce/ring " + tag, spec: with(base(), coll("allreduce", "ring", 16)), size: 8 * units.MiB, tol: 0.05})
			}
		}
	}
	cs = append(cs, xcase{name: "incast 15:1 pfc", spec: with(xfabric(4), func(s *scenario.Scenario) {
		s.Workload = scenario.Workload{Kind: "incast", Senders: 15, Target: 0, QPs: 1, Iterations: 1}
	}), size: 1 * units.MiB, tol: 0.05})
	cs = append(cs, xcase{name: "incast 15:1 lossy", spec: with(lossyWindowed(xfabric(4)), func(s *scenario.Scenario) {
		s.Workload = scenario.Workload{Kind: "incast", Senders: 15, Target: 0, QPs: 1, Iterations: 1}
	}), size: 1 * units.MiB, tol: 0.05})
	for _, p := range []string{"default", "tuned-final"} {
		p := p
		cs = append(cs, xcase{name: "alltoall dcqcn " + p, spec: with(xfabric(4), func(s *scenario.Scenario) {
			s.Transport.DCQCN.Preset = p
			coll("alltoall", "direct", 16)(s)
		}), size: 16 * units.MiB, tol: 0.05})
		if p == "default" {
			// DCQCN's cut and slow climb back are not modeled: the fluid
			// model is what converged congestion control would reach.
			cs[len(cs)-1].tol, cs[len(cs)-1].why = 0.40, "DCQCN transient"
		}
	}
	return cs
}

func bound(c xcase) string {
	if c.why == "" {
		return fmt.Sprintf("±%.0f%%", 100*c.tol)
	}
	return fmt.Sprintf("±%.0f%% (%s)", 100*c.tol, c.why)
}

// TestCrossValidation runs every case on the packet engine (lab.Run) and
// on the flow engine and compares their CCTs; -v prints the table (the
// README's).
func TestCrossValidation(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "| case | packet CCT (µs) | fluid CCT (µs) | error | bound |\n|---|---:|---:|---:|---|\n")
	for _, c := range xcases() {
		job := scenario.Job{Scenario: c.spec.Name, Variant: "v", Size: c.size, Seed: 1, Spec: c.spec}
		p, err := lab.Run(context.Background(), job, nil)
		if err != nil {
			t.Fatalf("%s: packet: %v", c.name, err)
		}
		f, err := Run(context.Background(), job, nil)
		if err != nil {
			t.Fatalf("%s: fluid: %v", c.name, err)
		}
		e := (f.CCTS - p.CCTS) / p.CCTS
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %+.1f%% | %s |\n", c.name, p.CCTS*1e6, f.CCTS*1e6, 100*e, bound(c))
		if math.Abs(e) > c.tol {
			t.Errorf("%s: fluid %.1f us vs packet %.1f us: error %+.1f%% beyond %.0f%%", c.name, f.CCTS*1e6, p.CCTS*1e6, 100*e, 100*c.tol)
		}
	}
	t.Log("\n" + b.String())
}
