package lab

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// Message workloads are deterministic under every transport: same seed,
// same events and same per-message times; another seed differs.
func TestMessagesDeterministicEveryTransport(t *testing.T) {
	for vi, kind := range []string{"homa", "dctcp", "dctcp-pool8", "roce-dcqcn"} {
		res := func(seed string) (uint64, float64, []metrics.FlowRecord) {
			f, err := scenario.LoadSets("../examples/homa-w5.yaml", []string{"topology.hosts=32", "workload.duration=3ms",
				"sim.record_flows=true", "seed=" + seed})
			if err != nil {
				t.Fatal(err)
			}
			job := f.Jobs()[vi]
			if job.Variant != kind {
				t.Fatalf("job %d is %s", vi, job.Variant)
			}
			r, err := Run(context.Background(), job, nil)
			if err != nil || !r.Complete {
				t.Fatalf("%s: %v complete %v", kind, err, r.Complete)
			}
			return r.Events, r.CCTS, r.Records
		}
		e1, c1, r1 := res("5")
		e2, c2, r2 := res("5")
		e3, _, r3 := res("6")
		if e1 != e2 || c1 != c2 || !reflect.DeepEqual(r1, r2) {
			t.Errorf("%s: two runs with seed 5 differ (%d vs %d events)", kind, e1, e2)
		}
		if e1 == e3 && reflect.DeepEqual(r1, r3) {
			t.Errorf("%s: seeds 5 and 6 gave the same run", kind)
		}
	}
}

// Every transport runs collectives too: a ring all-reduce and a direct
// all-to-all of 4 MiB on a non-blocking 8×400G fabric complete with bytes
// conserved, no drops with PFC, and at least 40% of their ideal time (a
// stall — a timeout, a lost grant — would leave them far below: at 400G a
// 4 MiB ring's steps are a few RTTs long, and window-based transports
// spend them in slow start; measured 50–76%).
func TestEveryTransportRunsCollectives(t *testing.T) {
	for _, kind := range []string{"roce", "homa", "dctcp", "tcp"} {
		for _, coll := range []string{"allreduce", "alltoall"} {
			s := leafSpine(8, 4, 2)
			s.Transport.Kind = kind
			s.NIC.MTU, s.NIC.Overhead = 1442, 78
			s.Workload = scenario.Workload{Kind: coll, Algorithm: map[string]string{"allreduce": "ring", "alltoall": "direct"}[coll], QPs: 1, Iterations: 1}
			r := run(t, s, 4*units.MiB)
			t.Logf("%-6s %-9s %.1f%% of ideal, %d drops, %d retransmits", kind, coll, r.IdealPct, r.Drops, r.Retransmits)
			if !r.Complete || r.Drops != 0 {
				t.Errorf("%s %s: complete %v, %d drops", kind, coll, r.Complete, r.Drops)
			}
			if r.IdealPct < 40 {
				t.Errorf("%s %s: %.1f%% of ideal, want ≥ 40%%", kind, coll, r.IdealPct)
			}
		}
	}
}

// RPCs: every request gets its response, and a round trip takes at least a
// request and a response alone on the idle fabric; on an idle fabric (low
// load, Homa) the median is within 20% of that.
func TestMessagesRPCRoundTrip(t *testing.T) {
	f, err := scenario.LoadSets("../examples/homa-w5.yaml", []string{"topology.hosts=32", "workload.duration=2ms",
		"workload.size_dist=w1", "workload.load=0.05", "workload.response_size=64B", "sim.record_flows=true"})
	if err != nil {
		t.Fatal(err)
	}
	job := f.Jobs()[0]
	s, err := Build(job)
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background(), nil)
	r := s.Result()
	ld := r.Load
	if !r.Complete || ld == nil || ld.RTT == nil || ld.RPCs != r.Flows/2 || ld.RTT.Count != ld.RPCs {
		t.Fatalf("complete %v, load %+v", r.Complete, ld)
	}
	var floor []float64
	for i := 0; i+1 < len(s.DAG.Msgs); i += 2 {
		req, resp := s.DAG.Msgs[i], s.DAG.Msgs[i+1]
		floor = append(floor, (s.AloneFCT(int(req.Src), int(req.Dst), req.Bytes) + s.AloneFCT(int(resp.Src), int(resp.Dst), resp.Bytes)).Seconds())
	}
	for k, i := 0, 0; i+1 < len(s.DAG.Msgs); k, i = k+1, i+2 {
		if rtt := (s.end[i+1] - s.start[i]).Seconds(); rtt < floor[k]*0.999 {
			t.Fatalf("RPC %d: RTT %.3g s below the two messages alone %.3g s", k, rtt, floor[k])
		}
	}
	med := metrics.Summarize(floor).P50
	t.Logf("%d RPCs: RTT p50 %.2f us (alone %.2f us), p99 %.2f us", ld.RPCs, ld.RTT.P50*1e6, med*1e6, ld.RTT.P99*1e6)
	if ld.RTT.P50 > 1.2*med {
		t.Errorf("median RTT %.2f us, more than 1.2× the unloaded %.2f us", ld.RTT.P50*1e6, med*1e6)
	}
}

// Homa gives up on a message after max_resends timeouts in a row: the run
// ends with an error saying so, not as a stalled simulation.
func TestHomaAbandonedMessagesAreReported(t *testing.T) {
	s := leafSpine(8, 8, 1)
	s.Topology.HostLink.Rate, s.Topology.FabricLink.Rate = 10*units.Gbps, 40*units.Gbps
	s.Switch.Buffer, s.Switch.PFC.Enabled = 64*units.KB, false
	s.Transport.Kind = "homa"
	s.Transport.Homa = scenario.Homa{MaxResends: 1, ResendTimeout: 2 * units.Microsecond, RTTBytes: 200 * units.KB}
	s.Workload = scenario.Workload{Kind: "incast", Senders: 7, Target: 0, QPs: 1, Iterations: 1}
	// In parts, each message counted once, as one part counts it: given
	// up on before it was delivered.
	var first error
	for _, parts := range []int{1, 2} {
		s.Sim.Partitions = parts
		r, err := Run(context.Background(), job(s, units.MB), nil)
		if err == nil || !strings.Contains(err.Error(), "Homa abandoned") || r.Complete {
			t.Fatalf("%d parts: err %v, complete %v", parts, err, r.Complete)
		}
		t.Logf("%d parts: %v", parts, err)
		if first == nil {
			first = err
		} else if err.Error() != first.Error() {
			t.Errorf("%d parts: %v; one part: %v", parts, err, first)
		}
	}
}
