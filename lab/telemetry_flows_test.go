package lab

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"fabriclab/engine"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// Samples merged because they reached the bound are exactly the samples
// taken without the bound, merged pairwise: queue maxima, paused in
// either, counts summed; the interval doubles each time.
func TestTelemetryDecimation(t *testing.T) {
	j := withTelemetry(telemetryCases(t)["incast-pfc"], units.Microsecond, scenario.MaxTelemetryPorts)
	j.Spec.Sim.Telemetry.Flows.List = []string{"0", "5"}
	full, _ := runSim(t, j)
	s, err := Build(j)
	if err != nil {
		t.Fatal(err)
	}
	s.tel.most = 32 // merge at 32 samples: several times over this run
	s.Run(context.Background(), nil)
	got, want := s.Result().Telemetry, full.Result().Telemetry
	if got.Decimated < 2 {
		t.Fatalf("decimated %d times in %d samples, want several", got.Decimated, want.Samples)
	}
	f := 1 << got.Decimated
	if got.IntervalS != want.IntervalS*float64(f) {
		t.Errorf("interval %v s after %d merges, want %v", got.IntervalS, got.Decimated, want.IntervalS*float64(f))
	}
	if got.Samples > s.tel.most+1 || (got.Samples-1) != (want.Samples-1)/f && (got.Samples-1) != (want.Samples-1)/f+1 {
		t.Errorf("%d samples, want about %d/%d", got.Samples, want.Samples, f)
	}
	// A flow's merged value is the mean of its full-rate samples that
	// fall in the merged one, its delivered bytes the last of them.
	for i, fl := range got.Flows {
		w := want.Flows[i]
		if fl.First != w.First/f {
			t.Fatalf("flow %d: first %d, want %d/%d", fl.ID, fl.First, w.First, f)
		}
		for k := range fl.Value {
			g := fl.First + k
			var sum float64
			var n int
			var last int64
			for j := range w.Value {
				if (w.First+j)/f == g && (w.First+j) < (got.Samples-1)*f {
					sum, n, last = sum+w.Value[j], n+1, w.Delivered[j]
				}
			}
			if n == 0 {
				continue // the closing sample: compared by the runs' own tests
			}
			if mean := sum / float64(n); math.Abs(fl.Value[k]-mean) > 1e-9*math.Abs(mean) || fl.Delivered[k] != last {
				t.Fatalf("flow %d sample %d: %v / %d, want the mean %v / the last %d", fl.ID, k, fl.Value[k], fl.Delivered[k], mean, last)
			}
		}
	}
	wp := map[string]metrics.PortSeries{}
	for _, ps := range want.Ports {
		wp[ps.Node+">"+ps.Peer] = ps
	}
	for _, ps := range got.Ports {
		w, ok := wp[ps.Node+">"+ps.Peer]
		if !ok {
			t.Fatalf("%s→%s kept only when decimated", ps.Node, ps.Peer)
		}
		// Only whole groups of f full-rate samples are compared: the merged
		// run's last sample may cover fewer.
		for k := 0; k < got.Samples-1 && (k+1)*f <= want.Samples-1; k++ {
			var q, fr, mk, dr int64
			var pa int8
			for i := k * f; i < (k+1)*f; i++ {
				q = max(q, w.QueueBytes[i])
				pa = max(pa, w.Paused[i])
				fr, mk, dr = fr+w.PauseFrames[i], mk+w.ECNMarks[i], dr+w.Drops[i]
			}
			if ps.QueueBytes[k] != q || ps.Paused[k] != pa || ps.PauseFrames[k] != fr || ps.ECNMarks[k] != mk || ps.Drops[k] != dr {
				t.Fatalf("%s→%s sample %d: queue %d paused %d frames %d marks %d drops %d, want %d %d %d %d %d",
					ps.Node, ps.Peer, k, ps.QueueBytes[k], ps.Paused[k], ps.PauseFrames[k], ps.ECNMarks[k], ps.Drops[k], q, pa, fr, mk, dr)
			}
		}
	}
}

// Named ports are kept in the order given; a name the fabric lacks is
// refused before the run, naming the key.
func TestTelemetryNamedPorts(t *testing.T) {
	j := telemetryCases(t)["incast-pfc"]
	s := *j.Spec
	s.Sim.Telemetry = scenario.Telemetry{Ports: scenario.Pick{List: []string{"leaf0->host0", "host5→leaf0"}}}
	j.Spec = &s
	_, r := runSim(t, j)
	var names []string
	for _, ps := range r.Telemetry.Ports {
		names = append(names, ps.Node+"->"+ps.Peer)
	}
	if want := []string{"leaf0->host0", "host5->leaf0"}; !slices.Equal(names, want) {
		t.Errorf("ports %v, want %v", names, want)
	}
	s.Sim.Telemetry.Ports.List = []string{"leaf0->spine99"}
	if _, err := Build(j); err == nil || !strings.Contains(err.Error(), "sim.telemetry.ports[0]: the fabric has no port leaf0->spine99") {
		t.Errorf("unknown port: %v", err)
	}
}

// A followed flow's series: from the first sample after it starts to the
// first after it ends, delivered bytes never falling and reaching the
// flow's size, the metric the transport's own (a rate within the line
// rate, a window, a grant no larger than the message).
func TestTelemetryFlowSeries(t *testing.T) {
	for _, kind := range []string{"roce", "dctcp", "homa"} {
		t.Run(kind, func(t *testing.T) {
			sp := leafSpine(16, 4, 2)
			sp.Transport.Kind = kind
			sp.Transport.DCQCN.Preset = "default"
			sp.Workload = scenario.Workload{Kind: "incast", Senders: 8, Target: 0}
			sp.Sim.TimeLimit = 20 * units.Millisecond
			sp.Sim.RecordFlows = true
			sp.Sim.Telemetry = scenario.Telemetry{Interval: 2 * units.Microsecond, Flows: scenario.Pick{List: []string{"0", "3"}}}
			j := job(sp, 256*units.KiB)
			_, r := runSim(t, j)
			fl := r.Telemetry.Flows
			if len(fl) != 2 || fl[0].ID != 0 || fl[1].ID != 3 {
				t.Fatalf("flows %+v, want ids 0 and 3", fl)
			}
			want := map[string]string{"roce": "rate_gbps", "dctcp": "cwnd_bytes", "homa": "granted_bytes"}[kind]
			iv := r.Telemetry.IntervalS
			line := float64(sp.Topology.HostLink.Rate) / 1e9
			for _, f := range fl {
				rec := r.Records[slices.IndexFunc(r.Records, func(x metrics.FlowRecord) bool { return x.ID == f.ID })]
				if f.Metric != want || f.Bytes != rec.Bytes || f.FCTS != rec.FCTS || f.Slowdown != rec.Slowdown {
					t.Errorf("flow %d: metric %q bytes %d fct %v slowdown %v, want %q %d %v %v", f.ID, f.Metric, f.Bytes, f.FCTS, f.Slowdown, want, rec.Bytes, rec.FCTS, rec.Slowdown)
				}
				// Sample k is at (k+1)·iv: the first at or after the start,
				// the last the first at or after the end.
				if first := int(rec.StartS/iv+1e-9) - 0; f.First != max(first, 0) && f.First != first-1 {
					t.Errorf("flow %d starts at %v s: first sample %d, want %d", f.ID, rec.StartS, f.First, first)
				}
				// The last sample is the first at or after its end (the
				// closing one at the run's end included).
				end := f.First + len(f.Value)
				at := func(k int) float64 { return min(float64(k+1)*iv, r.Telemetry.EndS) }
				if at(end-1) < rec.EndS-1e-12 || end > 1 && at(end-2) >= rec.EndS {
					t.Errorf("flow %d ends at %v s: samples %d..%d", f.ID, rec.EndS, f.First, end-1)
				}
				if len(f.Delivered) != len(f.Value) || f.Delivered[len(f.Delivered)-1] != f.Bytes {
					t.Fatalf("flow %d: delivered %v, want it to end at %d", f.ID, f.Delivered, f.Bytes)
				}
				for k := range f.Value {
					if k > 0 && f.Delivered[k] < f.Delivered[k-1] {
						t.Errorf("flow %d: delivered fell at sample %d", f.ID, k)
					}
					v := f.Value[k]
					switch kind {
					case "roce":
						if v <= 0 || v > line {
							t.Errorf("flow %d: rate %v Gb/s", f.ID, v)
						}
					case "dctcp":
						if v < float64(sp.NIC.MTU) {
							t.Errorf("flow %d: cwnd %v", f.ID, v)
						}
					case "homa":
						if v < 0 || v > float64(f.Bytes) {
							t.Errorf("flow %d: granted %v of %d", f.ID, v, f.Bytes)
						}
					}
				}
				if kind == "roce" && slices.Min(f.Value) >= line {
					t.Errorf("flow %d: DCQCN never cut the rate in an incast", f.ID)
				}
			}
		})
	}
}

// "top N" flows are the N slowest of the run: the same run twice, the
// second following them; its results are the run's without telemetry.
func TestTelemetryTopFlows(t *testing.T) {
	sp := leafSpine(16, 4, 2)
	sp.Transport.DCQCN.Preset = "default"
	sp.Workload = scenario.Workload{Kind: "incast", Senders: 8, Target: 0}
	sp.Sim.TimeLimit = 20 * units.Millisecond
	sp.Sim.RecordFlows = true
	j := job(sp, 256*units.KiB)
	plain, err := engine.RunJob(context.Background(), Engine{}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	tel := *sp
	tel.Sim.Telemetry = scenario.Telemetry{Flows: scenario.Pick{Top: 3}, What: []string{"rate"}}
	var last float64
	got, err := engine.RunJob(context.Background(), Engine{}, job(&tel, 256*units.KiB), func(f float64) { last = f })
	if err != nil {
		t.Fatal(err)
	}
	if got.CCTS != plain.CCTS || !slices.Equal(got.Records, plain.Records) || last != 1 {
		t.Errorf("the followed run differs from the plain one (cct %v vs %v) or its progress ended at %v", got.CCTS, plain.CCTS, last)
	}
	recs := slices.Clone(plain.Records)
	slices.SortStableFunc(recs, func(a, b metrics.FlowRecord) int {
		switch {
		case a.Slowdown > b.Slowdown:
			return -1
		case a.Slowdown < b.Slowdown:
			return 1
		}
		return 0
	})
	fl := got.Telemetry.Flows
	if len(fl) != 3 {
		t.Fatalf("%d flows, want 3", len(fl))
	}
	for i, f := range fl {
		if f.ID != recs[i].ID || f.Slowdown != recs[i].Slowdown || f.Delivered != nil || len(f.Value) == 0 {
			t.Errorf("flow %d: id %d slowdown %v delivered %v, want the %d-th slowest (id %d, %v) with rates only", i, f.ID, f.Slowdown, f.Delivered, i+1, recs[i].ID, recs[i].Slowdown)
		}
	}
	if len(got.Telemetry.Ports) != 0 {
		t.Errorf("ports kept without sim.telemetry.ports")
	}
}
