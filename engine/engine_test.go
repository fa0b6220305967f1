package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"fabriclab/engine"
	"fabriclab/measure"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// hosts is a layout without a fabric: n hosts, each its own server.
type hosts int

func (n hosts) Hosts() int              { return int(n) }
func (hosts) Server(h int) int          { return h }
func (hosts) Rail(int) int              { return 0 }
func (hosts) ScaleUp(int) (int32, bool) { return 0, false }
func (hosts) Host(id int32) (int, bool) { return int(id), false }

const rate = 100 * units.Gbps

// wire is how long a message takes on its own.
func wire(bytes int64) sim.Time {
	return units.SerializationTime(units.Size(bytes), rate) + units.Microsecond
}

// toy is an engine without a fabric or contention: a message takes its
// serialization at the NIC rate plus 1 µs, however many run at once. It
// drives a workload.Executor with its own event loop, as a fluid or a
// real-hosts engine would.
type toy struct{ fail error }

func (e toy) Plan(job scenario.Job, sel plan.Selection) (*plan.Plan, error) {
	if e.fail != nil {
		return nil, e.fail
	}
	return plan.CompileOptions(job, hosts(job.Spec.Topology.Hosts), plan.Options{Select: sel})
}

func (toy) Run(ctx context.Context, p *plan.Plan, progress engine.Progress) (*engine.Trace, error) {
	d := p.DAG
	n := len(d.Msgs)
	t := &engine.Trace{Start: make([]sim.Time, n), End: make([]sim.Time, n), Window: [2]int64{-1, -1}, Bounds: bounds{p}}
	for i := range t.Start {
		t.Start[i], t.End[i] = -1, -1
	}
	x := workload.NewExecutor(d)
	var now sim.Time
	var running []int32 // started, not delivered
	start := func(ms []int32) {
		for _, m := range ms {
			t.Start[m] = now
			if d.Msgs[m].Marker {
				t.End[m] = now
				t.Delivered++
				continue
			}
			running = append(running, m)
		}
	}
	start(x.Ready(now))
	for !x.Done() && ctx.Err() == nil {
		// The next event: the first delivery or the next release.
		next, k := sim.Time(-1), -1
		for j, m := range running {
			if end := t.Start[m] + wire(d.Msgs[m].Bytes); next < 0 || end < next {
				next, k = end, j
			}
		}
		if at, ok := x.NextRelease(); ok && (next < 0 || at < next) {
			now = at
			start(x.Ready(now))
			continue
		}
		if k < 0 {
			return t, errors.New("stalled")
		}
		now = next
		m := running[k]
		running = append(running[:k], running[k+1:]...)
		t.End[m] = now
		t.Delivered++
		t.Events++
		start(x.Delivered(m, now))
	}
	t.Now = now
	return t, nil
}

// bounds are the toy's: a message alone takes wire(bytes), the ideal is
// the busiest sender's bytes at the NIC rate.
type bounds struct{ p *plan.Plan }

func (bounds) AloneFCT(_, _ int32, bytes int64) sim.Time { return wire(bytes) }
func (b bounds) Ideal(lo, hi int32) sim.Time {
	tx := map[int32]int64{}
	var worst sim.Time
	for _, m := range b.p.DAG.Msgs[lo:hi] {
		tx[m.Src] += m.Bytes
		worst = max(worst, units.SerializationTime(units.Size(tx[m.Src]), rate))
	}
	return worst
}
func (bounds) RoutedIdeal(int32, int32) (sim.Time, bool) { return 0, false }
func (bounds) NICRate(int) units.Rate                    { return rate }

var _ measure.Bounds = bounds{}

func job(t *testing.T, src string) scenario.Job {
	t.Helper()
	f, err := scenario.Parse("toy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f.Jobs()[0]
}

// Any engine runs through RunJob: the jobs together, each alone for its
// interference factor, no conservation check without a fabric, and the
// fabric's part of the row left empty.
func TestRunJobWithAnotherEngine(t *testing.T) {
	j := job(t, `
topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: allreduce, algorithm: ring, ranks: 4, sizes: {list: [1MiB]}, iterations: 2}
jobs:
  - {name: bg, kind: permutation, ranks: 4, host_offset: 4, start: 5us, sizes: {list: [256KiB]}}
`)
	var last float64
	r, err := engine.RunJob(context.Background(), toy{}, j, func(f float64) { last = f })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.CCTS <= 0 || r.Iterations != 2 || last != 1 {
		t.Fatalf("complete %v, cct %v, %d iterations, progress %v", r.Complete, r.CCTS, r.Iterations, last)
	}
	if len(r.Jobs) != 2 {
		t.Fatalf("%d jobs", len(r.Jobs))
	}
	for _, jr := range r.Jobs {
		// No contention in the toy: together is alone.
		if jr.AloneCCTS <= 0 || jr.Interference != 1 {
			t.Errorf("job %s: alone %v, interference %v", jr.Name, jr.AloneCCTS, jr.Interference)
		}
	}
	if r.Totals != (measure.Fabric{}).Totals || r.Conservation.OK || r.Ports != nil || r.RoutedIdealS != r.IdealS {
		t.Errorf("fabric part filled without a fabric: %+v %+v", r.Totals, r.Conservation)
	}
	if r.Slowdown.Max != 1 {
		t.Errorf("slowdown %+v, want 1 without contention", r.Slowdown)
	}
}

// A plan that cannot be made is a failed row of the job's size.
func TestRunJobPlanError(t *testing.T) {
	j := job(t, `
topology: {hosts: 4, hosts_per_leaf: 2, spines: 2}
workload: {kind: incast, senders: 3, target: 0, sizes: {list: [64KiB]}}
`)
	r, err := engine.RunJob(context.Background(), toy{fail: errors.New("no hosts")}, j, nil)
	if err == nil || r.Error != "no hosts" || r.SizeBytes != 64<<10 || r.Complete {
		t.Errorf("err %v, row %+v", err, r)
	}
	r, err = engine.RunJob(context.Background(), toy{}, j, nil)
	if err != nil || !r.Complete || !strings.Contains(r.Algorithm, "n-to-1") {
		t.Errorf("err %v, complete %v, algorithm %q", err, r.Complete, r.Algorithm)
	}
}
