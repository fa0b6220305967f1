package lab

import (
	"context"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// A link that fails and comes back: what was queued for it and what the
// switches sent its way until routes converged is lost and resent, the
// failover time is within the convergence time plus a round trip, the
// run completes; a flapping link has one record per flap.
func TestLinkFlaps(t *testing.T) {
	const conv = 20 * units.Microsecond
	for _, c := range []struct {
		name   string
		fail   string
		outage int
	}{
		{"once", "{from: leaf0, to: spine0, at: 100us, until: 300us}", 1},
		{"flapping", "{from: leaf0, to: spine0, at: 100us, until: 150us, period: 200us, count: 3}", 3},
		// Back up after 1 ps, with packets still on the wire: none may
		// arrive early (the dead link's arrival events are stale).
		{"blip", "{from: leaf0, to: spine0, at: 100us, until: 100000001ps}", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := `topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 4
  spines: 2
  convergence: 20us
  failures: [` + c.fail + `]
workload: {kind: alltoall, sizes: {list: [32MiB]}}
`
			f, err := scenario.Parse("flap.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), f.Jobs()[0], nil)
			if err != nil || !r.Complete || !r.Conservation.OK {
				t.Fatalf("complete %v, err %v, conservation %+v", r.Complete, err, r.Conservation)
			}
			if len(r.Failures) != c.outage {
				t.Fatalf("%d outage records, want %d: %+v", len(r.Failures), c.outage, r.Failures)
			}
			rtt := 20 * units.Microsecond // a few link delays and frame times, generously
			for i, o := range r.Failures {
				if o.LostPackets == 0 || o.LostBytes == 0 {
					t.Errorf("outage %d lost nothing: %+v", i, o)
				}
				if c.name == "blip" {
					continue // back before routes moved: nothing more is lost to it
				}
				if o.FailoverS < 0 || o.FailoverS > (conv+rtt).Seconds() {
					t.Errorf("outage %d: failover %v s, want within convergence + a round trip (%v)", i, o.FailoverS, conv+rtt)
				}
				if o.UpS <= o.DownS || o.From != "leaf0" || o.To != "spine0" {
					t.Errorf("outage %d: %+v", i, o)
				}
			}
			t.Logf("%+v (retransmitted %d)", r.Failures, r.Retransmits)
			if r.Retransmits == 0 {
				t.Error("nothing was resent")
			}
		})
	}
}
