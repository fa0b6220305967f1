package lab

import (
	"context"
	"math"
	"slices"
	"testing"

	"fabriclab/measure"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
)

// Any-to-any on the packet engine against its closed form: one client
// writing to two servers shares its NIC between them, so each pair runs at
// half the NIC rate (less the packet headers); writes that would start
// after the duration are cut and are not flows of the run; the checkpoints
// add up to what each pair completed.
func TestAnyToAnyClosedForm(t *testing.T) {
	f, err := scenario.Parse("a.yaml", []byte(`
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1, host_link: {rate: 10Gbps}, fabric_link: {rate: 40Gbps}}
transport: {kind: tcp}
workload: {kind: any-to-any, clients: 1, servers: 2, depth: 2, duration: 1ms, checkpoint: 250us, sizes: {list: [32KiB]}, placement: list, placement_hosts: [0, 2, 3]}
sim: {time_limit: 5ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), f.Jobs()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Endpoints
	if !r.Complete || !r.Conservation.OK || e == nil || e.Pairs != 2 || e.FullRateGbps != 5 {
		t.Fatalf("complete %v conservation %+v endpoints %+v", r.Complete, r.Conservation, e)
	}
	var completions int64
	for _, p := range e.PerPair {
		// Payload share of the wire: MTU over MTU plus per-packet overhead.
		if p.PctFull < 90 || p.PctFull > 100 {
			t.Errorf("pair %d→%d at %.1f%% of its full rate", p.Client, p.Server, p.PctFull)
		}
		if p.Bytes != p.Completions*32*1024 {
			t.Errorf("pair %d→%d: %d bytes for %d completions", p.Client, p.Server, p.Bytes, p.Completions)
		}
		completions += p.Completions
	}
	if math.Abs(e.Jain-1) > 0.01 || e.Spread > 1.1 {
		t.Errorf("Jain %.3f spread %.2f for two equal pairs", e.Jain, e.Spread)
	}
	if len(r.Checkpoints) != 5 || r.Checkpoints[3].TS != 0.001 {
		t.Fatalf("%d checkpoints, the 4th at %v", len(r.Checkpoints), r.Checkpoints[len(r.Checkpoints)-1].TS)
	}
	var inCheckpoints, drained int64
	for k, cp := range r.Checkpoints {
		for _, ep := range cp.Endpoints {
			if k < 4 {
				inCheckpoints += ep.Completions
			} else {
				drained += ep.Completions
			}
		}
	}
	if inCheckpoints != completions || drained > 4 || int64(r.Flows) != completions+drained {
		t.Errorf("checkpoints hold %d (+%d drained), pairs %d, flows %d", inCheckpoints, drained, completions, r.Flows)
	}
	if r.IdealS != 0.001 || math.Abs(r.IdealPct-(e.PerPair[0].PctFull+e.PerPair[1].PctFull)/2) > 1e-9 {
		t.Errorf("ideal %v s, %.2f%%", r.IdealS, r.IdealPct)
	}
}

// Checkpoint intervals are (x·dt, (x+1)·dt] on the executor's clock: a
// write completing exactly at a checkpoint belongs to the interval it
// ends, one at the duration to the last full interval (and within the
// duration), one after it to the end checkpoint.
func TestAnyToAnyCheckpointEdges(t *testing.T) {
	f, err := scenario.Parse("a.yaml", []byte(`
topology: {kind: leaf-spine, hosts: 2, hosts_per_leaf: 2, spines: 1, host_link: {rate: 10Gbps}, fabric_link: {rate: 10Gbps}}
transport: {kind: tcp}
workload: {kind: any-to-any, clients: 1, servers: 1, duration: 1ms, checkpoint: 250us, sizes: {list: [256KiB]}}
sim: {time_limit: 5ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	job := f.Jobs()[0]
	p, err := Engine{}.Plan(job, plan.Together)
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.DAG.Msgs)
	if n < 5 {
		t.Fatalf("%d messages", n)
	}
	us := units.Microsecond
	tr := &measure.Trace{Start: make([]sim.Time, n), End: make([]sim.Time, n), Cut: n - 5, Now: 1200 * us,
		Window: [2]int64{-1, -1}, Bounds: measure.TopologyBounds(p, p.Layout.(*layout).sim.Topo)}
	ends := []sim.Time{250 * us, 251 * us, 750 * us, 1000 * us, 1100 * us}
	for i := range tr.Start {
		tr.Start[i], tr.End[i] = -1, -1
	}
	for i, e := range ends {
		tr.Start[i], tr.End[i] = 0, e
	}
	tr.Delivered = len(ends)
	r := measure.Result(p, tr)
	var got []int64
	for _, cp := range r.Checkpoints {
		got = append(got, cp.Endpoints[0].Completions)
	}
	if want := []int64{1, 1, 1, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("checkpoints %v, want %v", got, want)
	}
	if pp := r.Endpoints.PerPair[0]; pp.Completions != 4 {
		t.Errorf("%d completions within the duration, want 4", pp.Completions)
	}
	if r.Flows != 5 {
		t.Errorf("%d flows, want the 5 delivered (the cut ones are not flows)", r.Flows)
	}
}
