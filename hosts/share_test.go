package hosts

import (
	"reflect"
	"testing"

	"fabriclab/hosts/wire"
	"fabriclab/plan"
	"fabriclab/units"
	"fabriclab/workload"
)

// Hosts 0–3 on agents 0, 0, 1, 1. Each message goes to its source's
// agent (a marker to its host's) with what it waits for; only a delivery
// that neither end of it sees, and that another agent waits for, is
// relayed.
func TestShares(t *testing.T) {
	d := &workload.DAG{}
	d.Add(workload.Message{Src: 0, Dst: 2, Bytes: 10})                               // 0
	d.Add(workload.Message{Src: 2, Dst: 3, Bytes: 20, At: 5 * units.Microsecond}, 0) // 1: agent 1 received 0
	d.Add(workload.Message{Src: 1, Dst: 1, Marker: true}, 0)                         // 2: agent 0 sent 0
	d.Add(workload.Message{Src: 1, Dst: 3, Bytes: 30}, 1)                            // 3: 1 is 2→3, unseen by agent 0
	d.Add(workload.Message{Src: 3, Dst: 3, Marker: true}, 3, 2)                      // 4: 3 seen (received); marker 2 is agent 0's
	d.Finish()
	p := &plan.Plan{DAG: d, Conn: []int32{0, 1, -1, 2, -1}}
	dag, relay := shares(p, []int{0, 0, 1, 1}, 2)
	want := [][]wire.DAGMsg{
		{{Msg: 0, Conn: 0, Bytes: 10}, {Msg: 2, Conn: -1, Deps: []int64{0}}, {Msg: 3, Conn: 2, Bytes: 30, Deps: []int64{1}}},
		{{Msg: 1, Conn: 1, Bytes: 20, At: 5000, Deps: []int64{0}}, {Msg: 4, Conn: -1, Deps: []int64{2, 3}}},
	}
	if !reflect.DeepEqual(dag, want) {
		t.Errorf("shares:\n got %+v\nwant %+v", dag, want)
	}
	if w := map[int32][]int{1: {0}, 2: {1}}; !reflect.DeepEqual(relay, w) {
		t.Errorf("relay %v, want %v", relay, w)
	}
}
