package workload

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// counted is what a built DAG holds, in Counts' terms.
func counted(d *DAG) Counts {
	c := Counts{Messages: int64(len(d.Msgs)), Copies: int64(max(len(d.Iters), 1))}
	type conn struct{ src, dst, ch int32 }
	conns := map[conn]bool{}
	for i, m := range d.Msgs {
		c.Edges += int64(d.DepCount[i])
		if d.DepCount[i] == 0 {
			c.Roots++
		}
		if m.Marker {
			c.Markers++
			continue
		}
		conns[conn{m.SrcRank, m.DstRank, m.Channel}] = true
	}
	c.Conns = int64(len(conns))
	c.PerCopy = c.Messages
	if len(d.Iters) > 1 { // the first span ends with a done marker per rank
		c.PerCopy = int64(d.Iters[0].End-d.Iters[0].Start) - int64(d.Ranks)
	}
	return c
}

// Count predicts exactly what Build makes, for the whole catalogue with
// and without chunking, QPs, iterations and warmups, and Build allocates
// the DAG's arrays at their final size.
func TestCountMatchesBuild(t *testing.T) {
	checked := 0
	for _, coll := range Collectives() {
		for _, alg := range Algorithms(coll) {
			for _, n := range testRanks {
				for _, chunk := range []int64{0, testS/int64(3*n) + 7} {
					for _, qps := range []int{1, 3} {
						for _, it := range [][2]int{{1, 0}, {3, 0}, {2, 2}} {
							s := specFor(coll, alg, n)
							s.Annotate = false
							s.ChunkSize, s.QPs, s.Iterations, s.Warmup = chunk, qps, it[0], it[1]
							name := fmt.Sprintf("%s/%s n=%d chunk=%d qps=%d iters=%d warmup=%d", coll, alg, n, chunk, qps, it[0], it[1])
							c, err := Count(s)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							d, err := Build(s)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							if want := counted(d); c != want {
								t.Fatalf("%s:\ncount %+v\nbuilt %+v", name, c, want)
							}
							if cap(d.Msgs) != len(d.Msgs) || cap(d.DepCount) != len(d.DepCount) || cap(d.Iteration) != len(d.Iteration) {
								t.Errorf("%s: capacities %d/%d/%d for %d messages", name, cap(d.Msgs), cap(d.DepCount), cap(d.Iteration), len(d.Msgs))
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d specs", checked)
}

// The defect: 64 MiB in 4 KiB chunks × 1,000 iterations went on
// allocating to 10 GB before failing on an internal name. Build now counts
// first and refuses at once, naming the scenario keys.
func TestBuildRefusesTooManyMessagesBeforeAllocating(t *testing.T) {
	for _, s := range []Spec{
		{Collective: "alltoall", Ranks: 32, Size: 64 << 20, ChunkSize: 4 << 10, Iterations: 1000},
		{Collective: "allreduce", Ranks: 32, Size: 64 << 20, ChunkSize: 4 << 10, Iterations: 1000},
		{Collective: "allreduce", Ranks: 4, Size: 1 << 40, ChunkSize: 1},
	} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		_, err := Build(s)
		runtime.ReadMemStats(&m1)
		if err == nil {
			t.Fatalf("%+v: built", s)
		}
		msg := err.Error()
		if !strings.Contains(msg, "workload.message_size") || strings.Contains(msg, "ChunkSize") || strings.Contains(msg, "MaxMessages") {
			t.Errorf("%+v: error %q", s, msg)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 10<<20 {
			t.Errorf("%+v: allocated %d MB before refusing", s, alloc>>20)
		}
		t.Log(msg)
	}
	c, err := Count(Spec{Collective: "alltoall", Ranks: 32, Size: 64 << 20, ChunkSize: 4 << 10, Iterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// 32 × 31 transfers of 2 MiB in 512 pieces and a marker, per copy, and
	// 32 done markers between copies.
	per := int64(32 * 31 * 513)
	if c.PerCopy != per || c.Messages != 1000*per+999*32 || c.Partial {
		t.Errorf("counts %+v", c)
	}
}
