package workload

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"fabriclab/metrics"
	"fabriclab/sim"
)

// testS is divisible by 2·n for every n ≤ 16 and by 8 pipeline chunks per
// half, so the byte formulas hold exactly.
const testS = 1441440

var testRanks = []int{2, 3, 4, 5, 7, 8, 16}

// railPlacement puts 4 ranks on each server, rank r on rail r%4 (the last
// server may be partly filled).
func railPlacement(n int) (server, rail []int) {
	server, rail = make([]int, n), make([]int, n)
	for r := range n {
		server[r], rail[r] = r/4, r%4
	}
	return server, rail
}

func specFor(coll, alg string, n int) Spec {
	s := Spec{Collective: coll, Algorithm: alg, Ranks: n, Size: testS, Root: n / 2, Seed: 7, Annotate: true}
	if alg == "rail-aware" {
		s.RankServer, s.RankRail = railPlacement(n)
	}
	return s
}

func log2ceil(n int) int { return bits.Len(uint(n - 1)) }

// transfer is one logical transfer recovered from the payload annotations.
type transfer struct {
	src, dst int32
	bytes    int64
	lo, hi   int32
	reduce   bool
}

// transfers groups a DAG's pieces by transfer and checks the piece and
// marker invariants on the way.
func transfers(t *testing.T, d *DAG, chunk int64, qps int) []transfer {
	t.Helper()
	var out []transfer
	for i := 0; i < len(d.Msgs); {
		m, p := d.Msgs[i], d.Payloads[i]
		if m.Marker {
			if m.Bytes != 0 || m.Src != m.Dst || m.SrcRank != m.DstRank || p != (Payload{}) {
				t.Fatalf("marker %d: %+v %+v", i, m, p)
			}
			i++
			continue
		}
		if p.First != int32(i) || p.Pieces < 1 || i+int(p.Pieces) > len(d.Msgs) {
			t.Fatalf("message %d: payload %+v does not start a transfer", i, p)
		}
		tr := transfer{m.SrcRank, m.DstRank, 0, p.Lo, p.Hi, p.Reduce}
		for k := i; k < i+int(p.Pieces); k++ {
			q := d.Msgs[k]
			if d.Payloads[k] != p || q.SrcRank != m.SrcRank || q.DstRank != m.DstRank || q.Marker {
				t.Fatalf("piece %d of transfer %d differs: %+v %+v", k, i, q, d.Payloads[k])
			}
			// Two-stream algorithms (double binary tree, bidirectional ring)
			// give their second stream its own QPs: channels QPs … 2·QPs−1.
			if q.Bytes < 1 || (chunk > 0 && q.Bytes > chunk) || q.Channel < 0 || int(q.Channel) >= 2*max(qps, 1) {
				t.Fatalf("piece %d: %d B on channel %d (chunk %d, %d QPs)", k, q.Bytes, q.Channel, chunk, qps)
			}
			if int(q.Src) != d.RankHost[q.SrcRank] || int(q.Dst) != d.RankHost[q.DstRank] {
				t.Fatalf("piece %d: hosts %d→%d for ranks %d→%d", k, q.Src, q.Dst, q.SrcRank, q.DstRank)
			}
			tr.bytes += q.Bytes
		}
		next := i + int(p.Pieces)
		if p.Pieces > 1 {
			// Dependents wait for a marker right after the pieces.
			mk := d.Msgs[next]
			if !mk.Marker || mk.DstRank != m.DstRank || d.DepCount[next] != p.Pieces {
				t.Fatalf("transfer %d of %d pieces: message %d %+v (deps %d) is not its marker", i, p.Pieces, next, mk, d.DepCount[next])
			}
			for k := i; k < next; k++ {
				if s := d.Successors(int32(k)); len(s) != 1 || s[0] != int32(next) {
					t.Fatalf("piece %d: successors %v, want only the marker %d", k, s, next)
				}
			}
			next++
		}
		out = append(out, tr)
		i = next
	}
	return out
}

// wantSent is what each rank sends under the algorithm's formula.
func wantSent(t *testing.T, s Spec, d *DAG) []int64 {
	n, S := s.Ranks, s.Size
	per := S / int64(n)
	w := make([]int64, n)
	fill := func(v int64) {
		for r := range w {
			w[r] = v
		}
	}
	alg, _, _ := strings.Cut(d.Algorithm, " ") // drop a fallback's note
	switch s.Collective + "/" + alg {
	case "allreduce/ring", "allreduce/bidirectional-ring":
		fill(2 * int64(n-1) * S / int64(n))
	case "allreduce/halving-doubling":
		p := 1 << (bits.Len(uint(n)) - 1)
		fill(2 * int64(p-1) * S / int64(p))
		for c := range n - p {
			w[2*c] = S
			w[2*c+1] += S
		}
	case "allreduce/double-binary-tree":
		for _, par := range dtreeParents(n) {
			h := S / 2
			for r, p := range par {
				if p >= 0 {
					w[r] += h
					w[p] += h
				}
			}
		}
	case "allgather/ring", "allgather/recursive-doubling", "reducescatter/ring", "reducescatter/recursive-halving",
		"alltoall/direct", "alltoall/pairwise":
		fill(int64(n-1) * per)
	case "alltoall/rail-aware":
		server, rail := s.RankServer, s.RankRail
		for i := range n {
			for j := range n {
				if i == j {
					continue
				}
				w[i] += per
				if p := railProxy(server, rail, i, j); p >= 0 {
					w[p] += per
				}
			}
		}
	case "broadcast/chain":
		fill(S)
		w[(s.Root+n-1)%n] = 0
	case "broadcast/binomial-tree":
		for v := 1; v < n; v++ {
			w[(s.Root+v-(v&-v))%n] += S
		}
	case "reduce/chain", "reduce/binomial-tree":
		fill(S)
		w[s.Root] = 0
	case "gather/direct":
		fill(per)
		w[s.Root] = 0
	case "scatter/direct":
		w[s.Root] = int64(n-1) * per
	case "sendrecv/ring":
		fill(S)
	default:
		t.Fatalf("no byte formula for %s/%s", s.Collective, d.Algorithm)
	}
	return w
}

// railProxy is the rank that forwards i's block to j in the rail-aware
// all-to-all, or −1 (direct): the lowest rank of i's server on j's rail,
// else the lowest rank of j's server on i's rail.
func railProxy(server, rail []int, i, j int) int {
	if server[i] == server[j] || rail[i] == rail[j] {
		return -1
	}
	for _, c := range [][2]int{{server[i], rail[j]}, {server[j], rail[i]}} {
		for p := range server {
			if server[p] == c[0] && rail[p] == c[1] {
				return p
			}
		}
	}
	return -1
}

// wantTransfers is the number of logical transfers (8 pipeline chunks for
// the pipelined algorithms at ChunkSize 0).
func wantTransfers(s Spec, alg string, extra int) int {
	n := s.Ranks
	p := 1 << (bits.Len(uint(n)) - 1)
	logn := log2ceil(n)
	switch s.Collective + "/" + alg {
	case "allreduce/ring":
		return 2 * n * (n - 1)
	case "allreduce/bidirectional-ring":
		return 4 * n * (n - 1)
	case "allreduce/halving-doubling":
		return 2*p*bits.Len(uint(p-1)) + 2*(n-p)
	case "allreduce/double-binary-tree":
		return 2 * 2 * (n - 1) * 8
	case "allgather/ring", "reducescatter/ring", "alltoall/direct", "alltoall/pairwise":
		return n * (n - 1)
	case "allgather/recursive-doubling", "reducescatter/recursive-halving":
		return n * logn
	case "alltoall/rail-aware":
		return n*(n-1) + extra
	case "broadcast/chain", "reduce/chain":
		return (n - 1) * 8
	case "broadcast/binomial-tree", "reduce/binomial-tree", "gather/direct", "scatter/direct":
		return n - 1
	case "sendrecv/ring":
		return n
	}
	return -1
}

func pipelined(alg string) bool { return alg == "chain" || alg == "double-binary-tree" }

// The whole catalogue: every collective × algorithm × rank count × chunking
// × QP count builds, moves the right data in random valid orders, and puts
// the formula's bytes on every rank.
func TestCatalogueBuildsVerifiesAndMovesTheFormulaBytes(t *testing.T) {
	verified := 0
	for _, coll := range Collectives() {
		for _, alg := range Algorithms(coll) {
			for _, n := range testRanks {
				base := specFor(coll, alg, n)
				var plain []transfer
				for _, chunk := range []int64{0, testS/int64(3*n) + 7} {
					for _, qps := range []int{1, 3} {
						name := fmt.Sprintf("%s/%s n=%d chunk=%d qps=%d", coll, alg, n, chunk, qps)
						s := base
						s.ChunkSize, s.QPs = chunk, qps
						d, err := Build(s)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if !strings.HasPrefix(d.Algorithm, alg) || d.Ranks != n || d.Size != NCCLSize(coll, n, testS) || d.Collective != metrics.Collective(coll) {
							t.Fatalf("%s: header %s %d ranks S=%d %v", name, d.Algorithm, d.Ranks, d.Size, d.Collective)
						}
						if len(d.Iters) != 1 || d.Iters[0] != (IterSpan{0, 0, int32(len(d.Msgs))}) || d.Iteration != nil {
							t.Fatalf("%s: iterations %+v / %d", name, d.Iters, len(d.Iteration))
						}
						checkCSR(t, d)
						trs := transfers(t, d, chunk, qps)
						if chunk == 0 && qps == 1 {
							plain = trs
							extra := 0
							if alg == "rail-aware" {
								for i := range n {
									for j := range n {
										if i != j && railProxy(base.RankServer, base.RankRail, i, j) >= 0 {
											extra++
										}
									}
								}
							}
							if want := wantTransfers(s, alg, extra); len(trs) != want || len(d.Msgs) != want {
								t.Errorf("%s: %d transfers in %d messages, want %d", name, len(trs), len(d.Msgs), want)
							}
						} else if !pipelined(alg) && !slices.Equal(trs, plain) {
							t.Errorf("%s: chunking changed the transfers", name)
						}
						sent, recv := make([]int64, n), make([]int64, n)
						var total int64
						for _, m := range d.Msgs {
							sent[m.SrcRank] += m.Bytes
							recv[m.DstRank] += m.Bytes
							total += m.Bytes
						}
						if w := wantSent(t, s, d); !slices.Equal(sent, w) {
							t.Errorf("%s: ranks send %v, want %v", name, sent, w)
						}
						checkTotals(t, name, s, alg, total, recv)
						for seed := range uint64(10) {
							if err := Verify(d, RandomOrder(d, sim.NewRNG(seed, "order"))); err != nil {
								t.Fatalf("%s order %d: %v", name, seed, err)
							}
							verified++
						}
					}
				}
			}
		}
	}
	t.Logf("%d orders verified", verified)
}

// checkTotals checks the collective-wide byte totals and receive sides.
func checkTotals(t *testing.T, name string, s Spec, alg string, total int64, recv []int64) {
	t.Helper()
	n, S := s.Ranks, s.Size
	per := S / int64(n)
	var want int64 = -1
	switch s.Collective {
	case "allreduce":
		if alg != "halving-doubling" {
			want = 2 * int64(n-1) * S
		}
	case "allgather", "reducescatter":
		want = int64(n) * int64(n-1) * per
		for r, b := range recv {
			if b != int64(n-1)*per {
				t.Errorf("%s: rank %d receives %d, want %d", name, r, b, int64(n-1)*per)
			}
		}
	case "broadcast", "reduce":
		want = int64(n-1) * S
		for r, b := range recv {
			if s.Collective == "broadcast" && r != s.Root && b != S {
				t.Errorf("%s: rank %d receives %d, want %d", name, r, b, S)
			}
		}
	case "gather", "scatter":
		want = int64(n-1) * per
	case "sendrecv":
		want = int64(n) * S
	}
	if want >= 0 && total != want {
		t.Errorf("%s: %d bytes in all, want %d", name, total, want)
	}
}

func TestBuildErrors(t *testing.T) {
	ok := Spec{Collective: "allreduce", Ranks: 4, Size: 1000}
	if _, err := Build(ok); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mut  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Collective = "allshuffle" }, "unknown collective"},
		{func(s *Spec) { s.Algorithm = "tree" }, `no algorithm "tree"`},
		{func(s *Spec) { s.Ranks = 1 }, "at least 2 ranks"},
		{func(s *Spec) { s.Size = 0 }, "size 0"},
		{func(s *Spec) { s.ChunkSize = -1 }, "negative chunk"},
		{func(s *Spec) { s.QPs = -2 }, "negative QP"},
		{func(s *Spec) { s.Iterations = -1 }, "iterations"},
		{func(s *Spec) { s.Collective, s.Root = "broadcast", 4 }, "root 4"},
		{func(s *Spec) { s.RankHost = []int{0, 1, 2} }, "RankHost has 3 entries"},
		{func(s *Spec) { s.RankRail = []int{0, -1, 0, 0} }, "RankRail[1]"},
		{func(s *Spec) { s.Collective, s.Algorithm = "alltoall", "rail-aware" }, "needs RankServer and RankRail"},
		{func(s *Spec) { s.Collective, s.Ranks, s.Size = "alltoall", 8192, 1<<40 }, "messages"},
		{func(s *Spec) { s.Size, s.ChunkSize = 1<<40, 1 }, "messages"},
	} {
		s := ok
		tc.mut(&s)
		if _, err := Build(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", s, err, tc.want)
		}
	}
	if Algorithms("nope") != nil || Algorithms("allreduce")[0] != "ring" || len(Collectives()) != 9 {
		t.Errorf("catalogue: %v %v", Algorithms("allreduce"), Collectives())
	}
	for _, c := range Collectives() {
		if len(Algorithms(c)) == 0 {
			t.Errorf("%s has no algorithm", c)
		}
	}
}

// Build's defaults reproduce the single-purpose constructors.
func TestBuildMatchesLegacyConstructors(t *testing.T) {
	for _, n := range []int{2, 5, 8} {
		size := int64(n) * 4096
		a, err := Build(Spec{Collective: "alltoall", Ranks: n, Size: size, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := AllToAll(n, size, sim.NewRNG(3, "alltoall"))
		if !slices.Equal(a.Msgs, b.Msgs) || !slices.Equal(a.DepCount, b.DepCount) || a.Size != b.Size {
			t.Errorf("n=%d: direct all-to-all differs from AllToAll", n)
		}
		r, err := Build(Spec{Collective: "allreduce", Ranks: n, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := RingAllReduce(n, size)
		if len(r.Msgs) != len(l.Msgs) {
			t.Fatalf("n=%d: %d vs %d messages", n, len(r.Msgs), len(l.Msgs))
		}
		for i := range r.Msgs {
			x, y := r.Msgs[i], l.Msgs[i]
			if x.SrcRank != y.SrcRank || x.DstRank != y.DstRank || x.Bytes != y.Bytes ||
				!slices.Equal(r.Successors(int32(i)), l.Successors(int32(i))) || r.DepCount[i] != l.DepCount[i] {
				t.Fatalf("n=%d: ring message %d differs: %+v vs %+v", n, i, x, y)
			}
		}
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	for _, s := range []Spec{
		{Collective: "alltoall", Algorithm: "direct", Ranks: 7, Size: 70000, ChunkSize: 3000, QPs: 2, Seed: 9, Annotate: true},
		{Collective: "alltoall", Algorithm: "rail-aware", Ranks: 16, Size: 1600, Seed: 1, RankServer: make([]int, 16), RankRail: make([]int, 16)},
		{Collective: "allreduce", Algorithm: "double-binary-tree", Ranks: 13, Size: 1 << 20, QPs: 3, Iterations: 2, Warmup: 1},
	} {
		a, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Build(s)
		if !slices.Equal(a.Msgs, b.Msgs) || !slices.Equal(a.DepCount, b.DepCount) || !slices.Equal(a.succ, b.succ) ||
			!slices.Equal(a.succStart, b.succStart) || !slices.Equal(a.Payloads, b.Payloads) || !slices.Equal(a.Iteration, b.Iteration) {
			t.Errorf("%s/%s: two builds differ", s.Collective, s.Algorithm)
		}
	}
	x, _ := Build(Spec{Collective: "alltoall", Ranks: 8, Size: 800, Seed: 1})
	y, _ := Build(Spec{Collective: "alltoall", Ranks: 8, Size: 800, Seed: 2})
	if slices.Equal(x.Msgs, y.Msgs) {
		t.Errorf("seeds 1 and 2 post the all-to-all in the same order")
	}
}

// dropEdge rebuilds d without the dependency from → to.
func dropEdge(d *DAG, from, to int32) *DAG {
	p := preds(d)
	c := &DAG{Collective: d.Collective, Algorithm: d.Algorithm, Ranks: d.Ranks, Size: d.Size, RankHost: d.RankHost,
		Root: d.Root, Blocks: d.Blocks, Iters: d.Iters, Iteration: d.Iteration, Payloads: d.Payloads}
	for i, m := range d.Msgs {
		ps := p[i]
		if int32(i) == to {
			ps = slices.DeleteFunc(slices.Clone(ps), func(x int32) bool { return x == from })
		}
		c.Add(m, ps...)
	}
	c.Finish()
	return c
}

// A DAG missing one dependency lets a message send data it does not have
// yet, and Verify catches it in some order; orders of the intact DAG pass.
func TestVerifyCatchesAMissingDependency(t *testing.T) {
	for _, s := range []Spec{
		{Collective: "allreduce", Ranks: 4, Size: 4000, Annotate: true},
		{Collective: "allreduce", Algorithm: "halving-doubling", Ranks: 6, Size: 4000, Annotate: true},
		{Collective: "allgather", Algorithm: "recursive-doubling", Ranks: 5, Size: 5000, Annotate: true},
		{Collective: "broadcast", Ranks: 4, Size: 4000, ChunkSize: 500, QPs: 2, Annotate: true},
		{Collective: "alltoall", Algorithm: "rail-aware", Ranks: 8, Size: 8000, Annotate: true, RankServer: []int{0, 0, 0, 0, 1, 1, 1, 1}, RankRail: []int{0, 1, 2, 3, 0, 1, 2, 3}},
	} {
		d, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		// Drop the first edge whose target sends data (not a marker), and
		// separately the first piece → marker edge if there is one.
		var cuts [][2]int32
		for i := range d.Msgs {
			for _, j := range d.Successors(int32(i)) {
				if len(cuts) == 0 && !d.Msgs[j].Marker {
					cuts = append(cuts, [2]int32{int32(i), j})
				}
			}
		}
		for i := range d.Msgs {
			if ss := d.Successors(int32(i)); len(ss) > 0 && d.Msgs[ss[0]].Marker && !d.Msgs[i].Marker {
				cuts = append(cuts, [2]int32{int32(i), ss[0]})
				break
			}
		}
		for _, cut := range cuts {
			bad := dropEdge(d, cut[0], cut[1])
			checkCSR(t, bad)
			failed := 0
			for seed := range uint64(60) {
				if Verify(bad, RandomOrder(bad, sim.NewRNG(seed, "order"))) != nil {
					failed++
				}
				if err := Verify(d, RandomOrder(d, sim.NewRNG(seed, "order"))); err != nil {
					t.Fatalf("%s/%s intact: %v", s.Collective, d.Algorithm, err)
				}
			}
			if failed == 0 {
				t.Errorf("%s/%s without edge %d→%d: every order verified", s.Collective, d.Algorithm, cut[0], cut[1])
			}
		}
	}

	d, _ := Build(Spec{Collective: "allreduce", Ranks: 3, Size: 300, Annotate: true})
	order := RandomOrder(d, sim.NewRNG(1, "order"))
	slices.Reverse(order)
	if err := Verify(d, order); err == nil || !strings.Contains(err.Error(), "waits for") {
		t.Errorf("reversed order: %v", err)
	}
	if err := Verify(d, order[:3]); err == nil {
		t.Errorf("partial order accepted")
	}
	plain, _ := Build(Spec{Collective: "allreduce", Ranks: 3, Size: 300})
	if err := Verify(plain, RandomOrder(plain, sim.NewRNG(1, "order"))); err == nil {
		t.Errorf("a DAG without payloads verified")
	}
}

// Warmups and iterations run back to back: each copy is gated per rank on
// the rank's done marker of the copy before, and each verifies on its own.
func TestIterationsRunBackToBack(t *testing.T) {
	for _, s := range []Spec{
		{Collective: "allreduce", Algorithm: "double-binary-tree", Ranks: 5, Size: 50000, ChunkSize: 4000, QPs: 2},
		{Collective: "alltoall", Ranks: 4, Size: 4000},
		{Collective: "reduce", Algorithm: "binomial-tree", Ranks: 6, Size: 600, Root: 2},
	} {
		one, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		s.Iterations, s.Warmup, s.Annotate = 3, 2, true
		d, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		const copies = 5
		n := s.Ranks
		if len(d.Msgs) != copies*len(one.Msgs)+(copies-1)*n || len(d.Iters) != copies || len(d.Iteration) != len(d.Msgs) {
			t.Fatalf("%s: %d messages, %d spans, %d iteration tags (single copy %d)", s.Collective, len(d.Msgs), len(d.Iters), len(d.Iteration), len(one.Msgs))
		}
		p := preds(d)
		for k, it := range d.Iters {
			if it.Index != int32(k-2) || (k > 0 && it.Start != d.Iters[k-1].End) || (k == copies-1 && int(it.End) != len(d.Msgs)) {
				t.Fatalf("%s: span %d is %+v", s.Collective, k, it)
			}
			for i := it.Start; i < it.End; i++ {
				if d.Iteration[i] != it.Index {
					t.Fatalf("%s: message %d tagged %d in span %+v", s.Collective, i, d.Iteration[i], it)
				}
				m := d.Msgs[i]
				if k == 0 || m.Marker {
					continue
				}
				// The sender's done marker of the copy before: the n
				// markers closing that copy, in rank order.
				gate := d.Iters[k-1].End - int32(n) + m.SrcRank
				g := d.Msgs[gate]
				if !g.Marker || g.SrcRank != m.SrcRank || !slices.Contains(p[i], gate) {
					t.Fatalf("%s: message %d (rank %d, copy %d) waits for %v, not rank %d's done marker %d", s.Collective, i, m.SrcRank, k, p[i], m.SrcRank, gate)
				}
			}
		}
		for seed := range uint64(10) {
			if err := Verify(d, RandomOrder(d, sim.NewRNG(seed, "order"))); err != nil {
				t.Fatalf("%s: %v", s.Collective, err)
			}
		}
	}
}

// NCCL's trees: the examples drawn in NCCL's trees.cc, and for every n
// both trees span all ranks with at most two children each.
func TestDoubleBinaryTreeIsNCCLs(t *testing.T) {
	p := dtreeParents(12) // even: the mirror
	for _, c := range [][3]int{{0, 0, -1}, {0, 8, 0}, {0, 4, 8}, {0, 10, 8}, {0, 11, 10}, {1, 11, -1}, {1, 3, 11}, {1, 7, 3}, {1, 1, 3}} {
		if got := p[c[0]][c[1]]; got != c[2] {
			t.Errorf("n=12 tree %d: parent of %d is %d, want %d", c[0], c[1], got, c[2])
		}
	}
	p = dtreeParents(13) // odd: the shift
	for _, c := range [][3]int{{0, 12, 8}, {1, 1, -1}, {1, 9, 1}, {1, 5, 9}, {1, 0, 9}} {
		if got := p[c[0]][c[1]]; got != c[2] {
			t.Errorf("n=13 tree %d: parent of %d is %d, want %d", c[0], c[1], got, c[2])
		}
	}
	for n := 2; n <= 64; n++ {
		for tr, par := range dtreeParents(n) {
			root, kids, post := treeOrder(par)
			if len(post) != n || root < 0 {
				t.Fatalf("n=%d tree %d: reaches %d ranks from root %d", n, tr, len(post), root)
			}
			for r, k := range kids {
				if len(k) > 2 {
					t.Errorf("n=%d tree %d: rank %d has children %v", n, tr, r, k)
				}
			}
		}
	}
}

// Rail-aware all-to-all: every message between servers stays on one rail.
func TestRailAwareKeepsFabricTrafficOnRails(t *testing.T) {
	for _, n := range []int{8, 16, 30} {
		server, rail := railPlacement(n)
		d, err := Build(Spec{Collective: "alltoall", Algorithm: "rail-aware", Ranks: n, Size: int64(n) * 1000, RankServer: server, RankRail: rail})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range d.Msgs {
			if server[m.SrcRank] != server[m.DstRank] && rail[m.SrcRank] != rail[m.DstRank] {
				t.Fatalf("n=%d: message %d goes %d→%d across servers %d→%d and rails %d→%d", n, i, m.SrcRank, m.DstRank,
					server[m.SrcRank], server[m.DstRank], rail[m.SrcRank], rail[m.DstRank])
			}
		}
	}
}

func TestPlacementAndSmallSizes(t *testing.T) {
	hosts := []int{3, 3, 1, 0}
	d, err := Build(Spec{Collective: "allgather", Ranks: 4, Size: 3, RankHost: hosts})
	if err != nil {
		t.Fatal(err)
	}
	if d.Size != 4 { // one byte per block at least, as nccl-tests reports it
		t.Errorf("S=3 on 4 ranks: size %d", d.Size)
	}
	for _, m := range d.Msgs {
		if int(m.Src) != hosts[m.SrcRank] || int(m.Dst) != hosts[m.DstRank] || m.Bytes != 1 {
			t.Errorf("message %+v", m)
		}
	}
	for _, c := range Collectives() {
		for _, a := range Algorithms(c) {
			s := specFor(c, a, 5)
			s.Size, s.QPs = 3, 4
			d, err := Build(s)
			if err != nil {
				t.Fatalf("%s/%s S=3: %v", c, a, err)
			}
			if err := Verify(d, RandomOrder(d, sim.NewRNG(1, "order"))); err != nil {
				t.Errorf("%s/%s S=3: %v", c, a, err)
			}
		}
	}
}

func TestMessageStaysSmall(t *testing.T) {
	if sz := unsafe.Sizeof(Message{}); sz > 40 {
		t.Errorf("Message is %d bytes", sz)
	}
}

func BenchmarkBuildAllToAll1024(b *testing.B) {
	const n = 1024
	var msgs int
	b.ReportAllocs()
	for b.Loop() {
		d, err := Build(Spec{Collective: "alltoall", Ranks: n, Size: n << 20, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		msgs = len(d.Msgs)
	}
	b.ReportMetric(float64(msgs), "msgs/op")
	d, _ := Build(Spec{Collective: "alltoall", Ranks: n, Size: n << 20, Seed: 1})
	held := int64(cap(d.Msgs))*int64(unsafe.Sizeof(Message{})) + int64(cap(d.DepCount))*4 + int64(cap(d.succStart)+cap(d.succ))*4
	b.ReportMetric(float64(held)/float64(len(d.Msgs)), "B/msg")
}
