package hosts

import (
	"reflect"
	"strings"
	"testing"

	"fabriclab/hosts/wire"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
	"fabriclab/workload"
)

// Hosts 0–3 on agents 0, 0, 1, 1. Each message goes to its source's
// agent (a marker to its host's) with what it waits for. A marker another
// agent waits for becomes a shadow there when that agent sees all it waits
// for; otherwise, and for a data message neither end of which is there,
// the delivery is relayed.
func TestShares(t *testing.T) {
	d := &workload.DAG{}
	d.Add(workload.Message{Src: 0, Dst: 2, Bytes: 10})                               // 0
	d.Add(workload.Message{Src: 2, Dst: 3, Bytes: 20, At: 5 * units.Microsecond}, 0) // 1: agent 1 received 0
	d.Add(workload.Message{Src: 1, Dst: 1, Marker: true}, 0)                         // 2: agent 0 sent 0
	d.Add(workload.Message{Src: 1, Dst: 3, Bytes: 30}, 1)                            // 3: 1 is 2→3, unseen by agent 0: relayed
	d.Add(workload.Message{Src: 3, Dst: 3, Marker: true}, 3, 2)                      // 4: marker 2 is agent 0's; agent 1 saw 0: a shadow
	d.Add(workload.Message{Src: 1, Dst: 0, Bytes: 5})                                // 5: inside agent 0
	d.Add(workload.Message{Src: 0, Dst: 0, Marker: true}, 5)                         // 6: agent 1 cannot see 5: relayed
	d.Add(workload.Message{Src: 2, Dst: 3, Bytes: 7}, 6)                             // 7
	d.Finish()
	p := &plan.Plan{DAG: d, Conn: []int32{0, 1, -1, 2, -1, 3, -1, 1}}
	dag, relay := shares(p, []int{0, 0, 1, 1}, 2)
	want := [][]wire.DAGMsg{
		{{Msg: 0, Conn: 0, Bytes: 10}, {Msg: 2, Conn: -1, Deps: []int64{0}}, {Msg: 3, Conn: 2, Bytes: 30, Deps: []int64{1}},
			{Msg: 5, Conn: 3, Bytes: 5}, {Msg: 6, Conn: -1, Deps: []int64{5}}},
		{{Msg: 1, Conn: 1, Bytes: 20, At: 5000, Deps: []int64{0}}, {Msg: 2, Conn: -1, Deps: []int64{0}, Shadow: true},
			{Msg: 4, Conn: -1, Deps: []int64{2, 3}}, {Msg: 7, Conn: 1, Bytes: 7, Deps: []int64{6}}},
	}
	if !reflect.DeepEqual(dag, want) {
		t.Errorf("shares:\n got %+v\nwant %+v", dag, want)
	}
	if w := map[int32][]int{1: {0}, 6: {1}}; !reflect.DeepEqual(relay, w) {
		t.Errorf("relay %v, want %v", relay, w)
	}
}

// Every step of a built-in collective waits for what its own rank sent or
// received, or for a marker joining such pieces: with one host per agent
// nothing needs a relay, so no dependency costs a control round trip.
func TestBuiltInCollectivesNeedNoRelays(t *testing.T) {
	const topo = "topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}\ntransport: {kind: tcp}\n"
	for _, w := range []string{
		"{kind: allreduce, algorithm: ring, qps: 2, iterations: 2, warmup: 1}",
		"{kind: allreduce, algorithm: double-binary-tree, message_size: 8KiB}",
		"{kind: allreduce, algorithm: halving-doubling, qps: 2}",
		"{kind: alltoall, algorithm: pairwise, qps: 2, message_size: 8KiB, iterations: 2}",
		"{kind: alltoall, qps: 4}",
		"{kind: allgather, qps: 2, iterations: 2}",
		"{kind: reducescatter, qps: 2}",
		"{kind: broadcast, message_size: 16KiB, iterations: 2}",
		"{kind: reduce, qps: 2}",
	} {
		j := job(t, topo+"workload: "+strings.Replace(w, "}", ", sizes: {list: [256KiB]}}", 1)+"\n")
		p, err := plan.Compile(j, plan.TopologyLayout(mustTopo(t, j)))
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		hostOf := make([]int, 8)
		for h := range hostOf {
			hostOf[h] = h
		}
		dag, relay := shares(p, hostOf, 8)
		n, shadows := 0, 0
		for _, s := range dag {
			for _, m := range s {
				if m.Shadow {
					shadows++
				} else {
					n++
				}
			}
		}
		if n != len(p.DAG.Msgs) || len(relay) != 0 {
			t.Errorf("%s: %d of %d messages in the shares, %d relayed", w, n, len(p.DAG.Msgs), len(relay))
		}
		t.Logf("%s: %d messages, %d shadows", w, n, shadows)
	}
}

func mustTopo(t *testing.T, j scenario.Job) *topo.Topology {
	t.Helper()
	tp, err := topo.Build(sim.NewScheduler(), j.Seed, plan.TopoSpec(j.Spec))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
