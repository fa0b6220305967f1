package plan

import (
	"testing"

	"fabriclab/flow"
	"fabriclab/scenario"
	"fabriclab/units"
)

// hostsLayout is a layout without a fabric: n hosts, each its own server.
type hostsLayout int

func (n hostsLayout) Hosts() int              { return int(n) }
func (hostsLayout) Server(h int) int          { return h }
func (hostsLayout) Rail(int) int              { return 0 }
func (hostsLayout) ScaleUp(int) (int32, bool) { return 0, false }
func (hostsLayout) Host(id int32) (int, bool) { return int(id), false }

func firstJob(t *testing.T, src string) scenario.Job {
	t.Helper()
	f, err := scenario.Parse("plan.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f.Jobs()[0]
}

// One connection per (source, destination, channel) in the order of first
// use, numbered at both ends as queue pairs are: SQP counts the
// connections leaving the source, DQP those arriving at the destination.
func TestCompileNumbersConnections(t *testing.T) {
	j := firstJob(t, `
topology: {hosts: 4, hosts_per_leaf: 2, spines: 2}
workload: {kind: alltoall, ranks: 4, qps: 2, sizes: {list: [64KiB]}}
`)
	p, err := Compile(j, hostsLayout(4))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts) != 1 || p.Parts[0].Lo != 0 || int(p.Parts[0].Hi) != len(p.DAG.Msgs) {
		t.Fatalf("parts %+v", p.Parts)
	}
	from, to := map[int32]int32{}, map[int32]int32{}
	seen := map[[3]int32]int32{}
	for i, m := range p.DAG.Msgs {
		c := p.Conn[i]
		if m.Marker {
			if c != -1 {
				t.Fatalf("marker %d on connection %d", i, c)
			}
			continue
		}
		k := [3]int32{m.Src, m.Dst, m.Channel}
		if prev, ok := seen[k]; ok {
			if prev != c {
				t.Fatalf("message %d: connection %d, its pair's is %d", i, c, prev)
			}
			continue
		}
		if int(c) != len(seen) {
			t.Fatalf("message %d opens connection %d, want %d", i, c, len(seen))
		}
		seen[k] = c
		cn := p.Conns[c]
		if cn.Src != m.Src || cn.Dst != m.Dst || cn.SQP != from[m.Src] || cn.DQP != to[m.Dst] {
			t.Fatalf("connection %d = %+v, want %d→%d numbered %d, %d", c, cn, m.Src, m.Dst, from[m.Src], to[m.Dst])
		}
		from[m.Src]++
		to[m.Dst]++
		if s, d, sq, dq := p.Tuple(i); s != cn.Src || d != cn.Dst || sq != cn.SQP || dq != cn.DQP {
			t.Fatalf("Tuple(%d) = %d %d %d %d", i, s, d, sq, dq)
		}
	}
	if len(p.Conns) != 4*3*2 {
		t.Errorf("%d connections, want 24", len(p.Conns))
	}
}

// TCP's pool policy spreads a pair's messages over pool_size connections
// round-robin; Homa has none: every message is its own 5-tuple.
func TestCompilePoolAndPerMessage(t *testing.T) {
	j := firstJob(t, `
topology: {hosts: 2, hosts_per_leaf: 2, spines: 1}
transport: {kind: dctcp, tcp: {connections: pool, pool_size: 3}}
workload: {kind: alltoall, ranks: 2, message_size: 4KiB, sizes: {list: [64KiB]}}
`)
	p, err := Compile(j, hostsLayout(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Conns) != 6 || p.PerMessage {
		t.Fatalf("%d connections, per message %v; want 6, false", len(p.Conns), p.PerMessage)
	}
	k := map[int32]int32{} // per source: messages so far
	for i, m := range p.DAG.Msgs {
		if m.Marker {
			continue
		}
		if c := p.Conns[p.Conn[i]]; c.Src != m.Src || c.SQP != k[m.Src]%3 {
			t.Fatalf("message %d (%d of its pair) on %+v", i, k[m.Src], c)
		}
		k[m.Src]++
	}
	j.Spec.Transport.Kind = "homa"
	if p, err = Compile(j, hostsLayout(2)); err != nil {
		t.Fatal(err)
	}
	if !p.PerMessage {
		t.Fatal("homa is not per message")
	}
	for i, m := range p.DAG.Msgs {
		if s, d, sq, dq := p.Tuple(i); !m.Marker && (s != m.Src || d != m.Dst || sq != int32(i) || dq != 0) {
			t.Fatalf("homa Tuple(%d) = %d %d %d %d", i, s, d, sq, dq)
		}
	}
}

// Jobs together start at their start and never share a connection; a job
// alone starts at 0.
func TestCompileTogetherAndAlone(t *testing.T) {
	j := firstJob(t, `
topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: permutation, ranks: 4, sizes: {list: [64KiB]}}
jobs:
  - {name: bg, kind: permutation, ranks: 4, host_offset: 4, start: 5us, sizes: {list: [32KiB]}}
`)
	p, err := Compile(j, hostsLayout(8))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts) != 2 || p.Parts[1].Name != "bg" || p.Parts[1].Start != 5*units.Microsecond || p.Parts[1].Lo != 4 {
		t.Fatalf("parts %+v", p.Parts)
	}
	for i := p.Parts[1].Lo; i < p.Parts[1].Hi; i++ {
		if p.DAG.Msgs[i].At != 5*units.Microsecond {
			t.Fatalf("message %d of bg may start at %v", i, p.DAG.Msgs[i].At)
		}
		if p.Conn[i] < 4 {
			t.Fatalf("bg's message %d on the main job's connection %d", i, p.Conn[i])
		}
	}
	a, err := CompileOptions(j, hostsLayout(8), Options{Select: Alone(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Parts) != 1 || a.Parts[0].Index != 1 || a.Parts[0].Start != 0 || a.DAG.Msgs[0].At != 0 || a.DAG.Size != 32<<10 {
		t.Fatalf("alone: parts %+v, size %d", a.Parts, a.DAG.Size)
	}
}

// Static paths: a link down from the start is routed around before the
// plan's tuples are hashed.
func TestStaticRoutesAroundFailures(t *testing.T) {
	j := firstJob(t, `
topology:
  hosts: 4
  hosts_per_leaf: 2
  spines: 2
  failures: [{from: leaf0, to: spine0}]
workload: {kind: alltoall, ranks: 4, sizes: {list: [64KiB]}}
`)
	p, tp, err := Static(j)
	if err != nil {
		t.Fatal(err)
	}
	crossed := 0
	for i := range p.DAG.Msgs {
		src, dst, sqp, dqp := p.Tuple(i)
		path, err := flow.StaticPath(tp.Net, src, dst, sqp, dqp)
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range path {
			if pt.Dead() {
				t.Fatalf("message %d crosses the failed link", i)
			}
		}
		if len(path) > 2 {
			crossed++
		}
	}
	if crossed == 0 {
		t.Error("no message crosses the spines: the test proves nothing")
	}
}
