package workload

// The collective catalogue. Build compiles a Spec into a message DAG in
// which every message waits exactly for the data it needs. n is the rank
// count and S the size as nccl-tests defines it for the collective (the
// buffer for all-reduce, broadcast, reduce and send/recv; the whole
// n × per-rank array for all-gather, reduce-scatter, all-to-all, gather and
// scatter, whose per-rank block is ⌊S/n⌋, so DAG.Size = n·⌊S/n⌋).
// "Per rank" is what one rank sends.
//
// all-reduce
//   - ring (default): 2(n−1) steps; at step k rank i sends one S/n
//     segment to i+1 (reduced into the receiver's copy for k < n−1, stored
//     after) once it has the step k−1 segment from i−1. 2(n−1)/n·S per rank.
//   - bidirectional-ring: two rings at once, each on half the buffer: ring 0
//     sends i→i+1, ring 1 sends i→i−1, each 2(n−1) steps of S/(2n). Every
//     NIC sends in both directions; 2(n−1)/n·S per rank.
//   - halving-doubling (Rabenseifner): with p = 2^⌊log2 n⌋ and r = n−p, the
//     even ranks 0, 2, …, 2r−2 first send their whole buffer S to the next
//     (odd) rank, which reduces it. The p core ranks then run log2 p
//     recursive-halving steps (distance p/2 … 1: send the half of the
//     current range the partner keeps, reduce) and log2 p recursive-doubling
//     steps (distance 1 … p/2: send everything held, store); each step
//     waits for every earlier receive. Finally each odd partner returns S
//     to its even rank. 2(p−1)/p·S per core rank (+S for the r partners); S
//     for the r extra ranks. A power-of-two n has no pre/post step.
//   - double-binary-tree (NCCL): tree 0 is NCCL's btree rooted at 0, tree 1
//     its mirror (n even) or its shift by one (n odd); each carries half the
//     buffer, pipelined in chunks of ChunkSize (0: 8 chunks per tree). Up the
//     tree a rank sends chunk c to its parent (reduce) once it has chunk c
//     from all its children; the root, once it has chunk c from all its
//     children, sends it down, and a rank
//     forwards chunk c to its children (store) once it has it from its
//     parent. Per rank per tree S/2·(1 + children), root: S/2·children;
//     about 2S at most, 2(n−1)·S in total.
//
// all-gather (block i = rank i's S/n contribution)
//   - ring (default): n−1 steps; at step k rank i sends block (i−k) mod n to
//     i+1 once it has received it. (n−1)/n·S per rank.
//   - recursive-doubling: n a power of two: log2 n steps, at step s rank i
//     swaps the 2^s blocks it holds with rank i XOR 2^s. Any other n uses
//     Bruck's algorithm: ⌈log2 n⌉ steps, at step s rank i sends blocks
//     i … i+c−1 (c = min(2^s, n−2^s), indices mod n) to rank i−2^s. Each
//     step waits for all earlier receives. (n−1)/n·S per rank either way.
//
// reduce-scatter (rank i ends with block i reduced over all ranks)
//   - ring (default): n−1 steps; at step k rank i sends its partial block
//     (i−k−1) mod n to i+1 (reduce). (n−1)/n·S per rank.
//   - recursive-halving: n a power of two: log2 n steps at distance n/2 … 1,
//     rank i sends the half of its current block range that rank i XOR d
//     keeps (reduce). Any other n runs Bruck's all-gather transposed: steps
//     s = ⌈log2 n⌉−1 … 0, rank i sends partial blocks i+2^s … i+2^s+c−1
//     (mod n) to rank i+2^s. (n−1)/n·S per rank either way.
//
// all-to-all (block i·n+j goes from rank i to rank j)
//   - direct (default): every rank posts its n−1 sends of S/n at time 0, in
//     its own random order (sim.NewRNG(Seed, "alltoall"); each iteration
//     draws anew). (n−1)/n·S per rank.
//   - pairwise: n−1 steps; at step k rank i sends to (i+k) mod n once its
//     step k−1 send was delivered and its step k−1 receive (from i−k+1)
//     arrived. (n−1)/n·S per rank.
//   - rail-aware (PXN-like, needs RankServer and RankRail): a block for a
//     rank on another server and another rail first goes over the scale-up
//     domain to the lowest rank of the sender's server on the
//     destination's rail, which forwards it over the fabric; same-server
//     and same-rail blocks go direct. If the sender's server has no rank on
//     that rail, the block crosses the fabric on the sender's rail to the
//     rank of the destination's server on that rail, which hands it on
//     (direct if neither exists). Every fabric message then stays on one
//     rail. Posting order as direct; the second hop waits for the first.
//     Per rank: (n−1)/n·S plus the blocks it forwards.
//
// broadcast / reduce (rooted; relative rank v = (rank − Root) mod n)
//   - chain (default): a pipeline root → v=1 → … → n−1 (reduce: n−1 → … →
//     root, reducing), in chunks of ChunkSize (0: 8 chunks); a rank forwards
//     chunk c once it has received it. S per rank (but the last/first).
//   - binomial-tree: the whole buffer; broadcast: v receives from
//     v − lowbit(v), then sends to v + 2^j for every 2^j < lowbit(v) (the
//     root: every 2^j < n), all posted together, farthest first; reduce is
//     the mirror image (a rank sends its partial sum to its parent once it
//     has all its children's). S per child (broadcast) / S (reduce).
//
// gather / scatter / send-recv
//   - gather direct: every rank sends its S/n block to the root at time 0.
//   - scatter direct: the root sends block i (S/n) to each rank i, posted in
//     the order root+1, root+2, …
//   - sendrecv ring: every rank i sends S to (i+1) mod n at time 0.
//
// Every logical transfer (one arrow above) is split into chunks of
// ChunkSize bytes, the last one shorter (pipelined algorithms already use
// chunk-sized transfers), each chunk over min(QPs, bytes) channels (Channel
// 0…QPs−1, bytes as even as possible). A transfer of more than one piece ends with a zero-byte
// Marker message at the receiver that waits for every piece; dependents wait
// for the marker. A transfer never carries less than one byte.
//
// With Warmup W and Iterations I the collective is built W+I times back to
// back (Iters, Iteration): every message rank r sends in copy k waits for
// rank r's "done" marker of copy k−1, which waits for every transfer r sent
// or received in copy k−1, as consecutive launches on one stream.

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"fabriclab/metrics"
	"fabriclab/sim"
)

// Spec describes one collective to compile.
type Spec struct {
	// Collective is one of Collectives().
	Collective string
	// Algorithm is one of Algorithms(Collective); "" picks the default.
	Algorithm string
	Ranks     int
	// Size is S as nccl-tests defines it for the collective (see above).
	Size int64
	// Root is the root rank of broadcast, reduce, gather and scatter.
	Root int
	// RankHost places ranks on hosts (NICs); nil is packed: rank r on host r.
	RankHost []int
	// RankServer maps rank → server (scale-up domain); nil: every rank is
	// its own server.
	RankServer []int
	// RankRail maps rank → rail (NIC index within its server); nil: 0.
	RankRail []int
	// ChunkSize bounds every message (0: no split); for the pipelined
	// algorithms (chain, double binary tree) it is the pipeline chunk.
	ChunkSize int64
	// QPs spreads every chunk over this many channels per rank pair (0 = 1).
	QPs int
	// Seed drives the only randomness (all-to-all post order).
	Seed uint64
	// Annotate records each message's data movement in DAG.Payloads, for
	// Verify.
	Annotate bool
	// Iterations (0 = 1) measured copies, after Warmup unmeasured ones.
	Iterations int
	Warmup     int
	// Counts is what Count(s) returned, when the caller has it: Build then
	// does not count again (it allocates the DAG's arrays from it).
	Counts *Counts
}

// IterSpan is one copy of the collective in the DAG: its messages are
// Msgs[Start:End].
type IterSpan struct {
	// Index is −W … −1 for the warmups, then 0 … I−1.
	Index      int32
	Start, End int32
}

// Payload is what one message moves, for Verify: the logical blocks
// Lo … Hi−1 of the collective (when Hi ≤ Lo the range wraps around:
// Lo … Blocks−1, 0 … Hi−1), reduced into the receiver's copy or stored over
// it. A transfer split into several pieces carries the same payload in each
// piece; First is the index of its first piece and Pieces how many there
// are (consecutive messages). Markers carry the zero Payload.
type Payload struct {
	Lo, Hi int32
	First  int32
	Pieces int32
	Reduce bool
}

// MaxMessages bounds one DAG (indices are int32; memory ≈ 50 B each).
const MaxMessages = 1 << 25

const (
	maxRanks  = 1 << 20
	maxSize   = 1 << 50
	maxCopies = 1 << 16
	// defaultPipeline is the chunk count of a pipelined algorithm when
	// ChunkSize is 0.
	defaultPipeline = 8
)

var catalogue = []struct {
	name string
	algs []string
}{
	{"allreduce", []string{"ring", "bidirectional-ring", "halving-doubling", "double-binary-tree"}},
	{"allgather", []string{"ring", "recursive-doubling"}},
	{"reducescatter", []string{"ring", "recursive-halving"}},
	{"alltoall", []string{"direct", "pairwise", "rail-aware"}},
	{"broadcast", []string{"chain", "binomial-tree"}},
	{"reduce", []string{"chain", "binomial-tree"}},
	{"gather", []string{"direct"}},
	{"scatter", []string{"direct"}},
	{"sendrecv", []string{"ring"}},
}

// Collectives lists the collectives Build knows.
func Collectives() []string {
	out := make([]string, len(catalogue))
	for i, c := range catalogue {
		out[i] = c.name
	}
	return out
}

// Algorithms lists a collective's algorithms, the default first; nil for an
// unknown collective.
func Algorithms(collective string) []string {
	for _, c := range catalogue {
		if c.name == collective {
			return slices.Clone(c.algs)
		}
	}
	return nil
}

// BlockCollective reports whether S is n per-rank blocks, each rank
// passing one (nccl-tests rounds S down to a multiple of n and counts a
// rank's elements): all-gather, reduce-scatter, all-to-all, gather,
// scatter.
func BlockCollective(c string) bool {
	switch c {
	case "allgather", "reducescatter", "alltoall", "gather", "scatter":
		return true
	}
	return false
}

func rooted(c string) bool {
	switch c {
	case "broadcast", "reduce", "gather", "scatter":
		return true
	}
	return false
}

// NCCLSize is the size nccl-tests reports for a requested size: the
// per-rank block collectives move n·⌊S/n⌋ bytes (at least one byte per
// block); the others move S.
func NCCLSize(collective string, ranks int, size int64) int64 {
	if BlockCollective(collective) && ranks > 0 {
		return max(size/int64(ranks), 1) * int64(ranks)
	}
	return size
}

// Build compiles a collective into a message DAG. It first counts what it
// will make (or takes s.Counts), refuses more than MaxMessages messages
// before allocating anything, and allocates the DAG's arrays at once.
func Build(s Spec) (*DAG, error) {
	alg, what, err := s.check()
	if err != nil {
		return nil, err
	}
	var c Counts
	if s.Counts != nil {
		c = *s.Counts
	} else {
		c = newBuilder(s, alg, true).count()
	}
	if c.Partial || c.Messages > MaxMessages || c.Edges > math.MaxInt32 {
		return nil, fmt.Errorf("%s on %d ranks: %s", what, s.Ranks, c.tooMany())
	}
	b := newBuilder(s, alg, false)
	d, n := b.d, b.n
	d.Msgs = make([]Message, 0, c.Messages)
	d.DepCount = make([]int32, 0, c.Messages)
	d.deps = make([][2]int32, 0, c.Edges)
	if s.Annotate {
		d.Payloads = make([]Payload, 0, c.Messages)
	}
	gen := b.generator(s.Collective, alg)
	copies := b.copies
	d.Iters = make([]IterSpan, 0, copies)
	if copies > 1 {
		d.Iteration = make([]int32, 0, c.Messages)
		b.gate = make([]int32, n)
		for i := range b.gate {
			b.gate[i] = -1
		}
		b.track = make([][]int32, n)
	}
	for k := 0; k < copies; k++ {
		start := len(d.Msgs)
		gen()
		if b.err == nil && k < copies-1 {
			b.endCopy()
		}
		if b.err != nil {
			return nil, fmt.Errorf("%s on %d ranks: %w", what, n, b.err)
		}
		idx := int32(k - s.Warmup)
		if copies > 1 {
			for range len(d.Msgs) - start {
				d.Iteration = append(d.Iteration, idx)
			}
		}
		d.Iters = append(d.Iters, IterSpan{Index: idx, Start: int32(start), End: int32(len(d.Msgs))})
	}
	d.Finish()
	return d, nil
}

// check validates s and returns its algorithm and a name for errors.
func (s *Spec) check() (alg, what string, err error) {
	algs := Algorithms(s.Collective)
	if algs == nil {
		return "", "", fmt.Errorf("unknown collective %q (known: %s)", s.Collective, strings.Join(Collectives(), ", "))
	}
	alg = s.Algorithm
	if alg == "" {
		alg = algs[0]
	}
	if !slices.Contains(algs, alg) {
		return "", "", fmt.Errorf("%s has no algorithm %q (known: %s)", s.Collective, alg, strings.Join(algs, ", "))
	}
	n := s.Ranks
	what = s.Collective + "/" + alg
	switch {
	case n < 2:
		return "", "", fmt.Errorf("%s needs at least 2 ranks, got %d", what, n)
	case n > maxRanks:
		return "", "", fmt.Errorf("%s: %d ranks is more than %d", what, n, maxRanks)
	case s.Size < 1 || s.Size > maxSize:
		return "", "", fmt.Errorf("%s: size %d out of range 1..%d", what, s.Size, int64(maxSize))
	case s.ChunkSize < 0:
		return "", "", fmt.Errorf("%s: negative chunk size %d", what, s.ChunkSize)
	case s.QPs < 0:
		return "", "", fmt.Errorf("%s: negative QP count %d", what, s.QPs)
	case s.Iterations < 0 || s.Warmup < 0 || s.Iterations+s.Warmup > maxCopies:
		return "", "", fmt.Errorf("%s: %d iterations + %d warmups out of range", what, s.Iterations, s.Warmup)
	}
	if rooted(s.Collective) && (s.Root < 0 || s.Root >= n) {
		return "", "", fmt.Errorf("%s: root %d out of range 0..%d", what, s.Root, n-1)
	}
	for _, m := range []struct {
		name string
		v    []int
	}{{"RankHost", s.RankHost}, {"RankServer", s.RankServer}, {"RankRail", s.RankRail}} {
		if m.v != nil {
			if err := checkMap(m.name, m.v, n); err != nil {
				return "", "", fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	if alg == "rail-aware" && (s.RankServer == nil || s.RankRail == nil) {
		return "", "", fmt.Errorf("%s needs RankServer and RankRail (the rank placement on servers and rails)", what)
	}
	if s.Collective == "alltoall" {
		// Refuse before spending time on it: n(n−1) transfers.
		per := max(s.Size/int64(n), 1)
		if est := int64(n) * int64(n-1) * pieces(per, s.ChunkSize, int64(max(s.QPs, 1))); est > MaxMessages {
			return "", "", fmt.Errorf("%s on %d ranks needs %d messages, more than the limit of %d (raise workload.message_size, lower workload.qps or use fewer ranks)",
				what, n, est, MaxMessages)
		}
	}
	return alg, what, nil
}

// newBuilder makes the builder of a checked spec: a DAG with the
// collective's header and no message yet. A counting builder only tallies
// (see count).
func newBuilder(s Spec, alg string, counting bool) *builder {
	n := s.Ranks
	root := 0
	if rooted(s.Collective) {
		root = s.Root
	}
	hosts := packed(n)
	if s.RankHost != nil {
		hosts = slices.Clone(s.RankHost)
	}
	d := &DAG{Collective: metrics.Collective(s.Collective), Algorithm: alg, Ranks: n,
		Size: NCCLSize(s.Collective, n, s.Size), RankHost: hosts, Root: root}
	b := &builder{d: d, n: n, size: s.Size, per: max(s.Size/int64(n), 1), root: root,
		chunk: s.ChunkSize, qps: int64(max(s.QPs, 1)), ann: s.Annotate && !counting,
		server: s.RankServer, rail: s.RankRail, alg: alg, copies: s.Warmup + max(s.Iterations, 1),
		counting: counting}
	if s.Collective == "alltoall" {
		b.rng = sim.NewRNG(s.Seed, "alltoall")
	}
	return b
}

func checkMap(name string, v []int, n int) error {
	if len(v) != n {
		return fmt.Errorf("%s has %d entries for %d ranks", name, len(v), n)
	}
	for r, x := range v {
		if x < 0 {
			return fmt.Errorf("%s[%d] = %d is negative", name, r, x)
		}
	}
	return nil
}

// pieces is how many messages a transfer of bytes becomes.
func pieces(bytes, chunk, qps int64) int64 {
	bytes = max(bytes, 1)
	if chunk <= 0 || chunk > bytes {
		chunk = bytes
	}
	full := bytes / chunk
	p := full * min(qps, chunk)
	if r := bytes % chunk; r > 0 {
		p += min(qps, r)
	}
	return p
}

// off is where part i of total split into parts near-equal parts begins
// (overflow-free for any total ≤ maxSize).
func off(total int64, parts, i int) int64 {
	q, r := total/int64(parts), total%int64(parts)
	return q*int64(i) + r*int64(i)/int64(parts)
}

// seg is the size of part i of total split into parts.
func seg(total int64, parts, i int) int64 { return off(total, parts, i+1) - off(total, parts, i) }

func mod(a, n int) int { return ((a % n) + n) % n }

func lowbit(v int) int { return v & -v }

// builder appends transfers to a DAG.
type builder struct {
	d         *DAG
	n         int
	size, per int64 // S and the per-rank block
	root      int
	chunk     int64
	qps       int64
	ann       bool
	server    []int
	rail      []int
	rng       *sim.RNG

	// chanBase offsets the channels of the transfers being emitted, so that
	// independent streams of one algorithm between the same ranks (the two
	// trees of the double binary tree, the two rings of the bidirectional
	// ring) use their own QPs, as NCCL's channels do, instead of queueing
	// behind each other on one.
	chanBase int32

	gate  []int32   // per rank: the previous copy's done marker (nil: one copy)
	track [][]int32 // per rank: transfers sent or received in this copy
	dl    []int32   // scratch dependency list
	err   error

	alg    string
	copies int // warmups + iterations
	// counting: xfer only tallies what it would add (see count).
	counting bool
	tally    tally
}

// put appends one message with its payload (when annotating).
func (b *builder) put(m Message, p Payload, deps []int32) int32 {
	d := b.d
	i := int32(len(d.Msgs))
	d.Msgs = append(d.Msgs, m)
	d.DepCount = append(d.DepCount, int32(len(deps)))
	for _, x := range deps {
		d.deps = append(d.deps, [2]int32{x, i})
	}
	if b.ann {
		d.Payloads = append(d.Payloads, p)
	}
	return i
}

func (b *builder) marker(rank int, deps []int32) int32 {
	h := int32(b.d.RankHost[rank])
	return b.put(Message{Src: h, Dst: h, SrcRank: int32(rank), DstRank: int32(rank), Marker: true}, Payload{}, deps)
}

// xfer adds one logical transfer of bytes from rank src to rank dst carrying
// blocks lo…hi−1 (Payload's convention), released when every message in deps
// is done, and returns the message its dependents wait for: the single
// piece, or the marker after the pieces.
func (b *builder) xfer(src, dst int, bytes int64, lo, hi int, reduce bool, deps ...int32) int32 {
	if b.err != nil {
		return 0
	}
	d := b.d
	bytes = max(bytes, 1)
	np := pieces(bytes, b.chunk, b.qps)
	if b.counting {
		b.count1(src, dst, bytes, np, len(deps))
		return 0 // a message id: the generators only look at its sign
	}
	if int64(len(d.Msgs))+np+1 > MaxMessages {
		b.err = fmt.Errorf("more than %d messages (raise workload.message_size or lower workload.qps)", MaxMessages)
		return 0
	}
	if b.gate != nil && b.gate[src] >= 0 {
		b.dl = append(append(b.dl[:0], deps...), b.gate[src])
		deps = b.dl
	}
	first := int32(len(d.Msgs))
	p := Payload{Lo: int32(lo), Hi: int32(hi), First: first, Pieces: int32(np), Reduce: reduce}
	m := d.msg(src, dst, bytes)
	m.Channel = b.chanBase
	if np == 1 {
		b.put(m, p, deps)
	} else {
		chunk := b.chunk
		if chunk <= 0 || chunk > bytes {
			chunk = bytes
		}
		for o := int64(0); o < bytes; o += chunk {
			cb := min(chunk, bytes-o)
			q := min(b.qps, cb)
			for k := int64(0); k < q; k++ {
				m.Bytes = cb / q
				if k < cb%q {
					m.Bytes++
				}
				m.Channel = b.chanBase + int32(k)
				b.put(m, p, deps)
			}
		}
	}
	id := first
	if np > 1 {
		ids := make([]int32, np)
		for k := range ids {
			ids[k] = first + int32(k)
		}
		id = b.marker(dst, ids)
	}
	if b.track != nil {
		b.track[src] = append(b.track[src], id)
		b.track[dst] = append(b.track[dst], id)
	}
	return id
}

// endCopy closes one copy of the collective: rank r's done marker waits
// for every transfer r sent or received, and gates r's sends in the next.
func (b *builder) endCopy() {
	for r := range b.n {
		b.gate[r] = b.marker(r, b.track[r])
		b.track[r] = b.track[r][:0]
	}
}

// dep turns an optional message id (−1: none) into a dependency list.
func dep(id int32) []int32 {
	if id < 0 {
		return nil
	}
	return []int32{id}
}

func (b *builder) generator(c, alg string) func() {
	d, n := b.d, b.n
	switch c + "/" + alg {
	case "allreduce/ring":
		d.Blocks = n
		return func() { b.ringAllReduce(identity(n), b.size, 0) }
	case "allreduce/bidirectional-ring":
		d.Blocks = 2 * n
		rev := make([]int, n)
		for j := range rev {
			rev[j] = mod(-j, n)
		}
		return func() {
			b.ringAllReduce(identity(n), seg(b.size, 2, 0), 0)
			b.chanBase = int32(b.qps)
			b.ringAllReduce(rev, seg(b.size, 2, 1), n)
			b.chanBase = 0
		}
	case "allreduce/halving-doubling":
		d.Blocks = 1 << (bits.Len(uint(n)) - 1)
		if n&(n-1) != 0 {
			d.Algorithm = fmt.Sprintf("halving-doubling (%d ranks: %d fold into partners first)", n, n-d.Blocks)
		}
		return b.halvingDoubling
	case "allreduce/double-binary-tree":
		h0 := seg(b.size, 2, 0)
		chunk := b.chunk
		if chunk <= 0 {
			chunk = max((h0+defaultPipeline-1)/defaultPipeline, 1)
		}
		C := int(max((h0+chunk-1)/chunk, 1))
		d.Blocks = 2 * C
		return func() { b.doubleBinaryTree(C) }
	case "allgather/ring":
		d.Blocks = n
		return func() { b.ringBlocks(false) }
	case "reducescatter/ring":
		d.Blocks = n
		return func() { b.ringBlocks(true) }
	case "allgather/recursive-doubling":
		d.Blocks = n
		if n&(n-1) == 0 {
			return b.recursiveDoubling
		}
		d.Algorithm = fmt.Sprintf("recursive-doubling (Bruck: %d ranks is not a power of two)", n)
		return b.bruck
	case "reducescatter/recursive-halving":
		d.Blocks = n
		if n&(n-1) == 0 {
			return b.recursiveHalving
		}
		d.Algorithm = fmt.Sprintf("recursive-halving (transposed Bruck: %d ranks is not a power of two)", n)
		return b.reverseBruck
	case "alltoall/direct":
		d.Blocks = n * n
		return b.allToAllDirect
	case "alltoall/pairwise":
		d.Blocks = n * n
		return b.allToAllPairwise
	case "alltoall/rail-aware":
		d.Blocks = n * n
		return b.allToAllRail
	case "broadcast/chain", "reduce/chain":
		C := defaultPipeline
		if b.chunk > 0 {
			C = int((b.size + b.chunk - 1) / b.chunk)
		}
		C = int(min(int64(C), b.size))
		d.Blocks = C
		return func() { b.chain(C, c == "reduce") }
	case "broadcast/binomial-tree":
		d.Blocks = 1
		return b.binomialBroadcast
	case "reduce/binomial-tree":
		d.Blocks = 1
		return b.binomialReduce
	case "gather/direct":
		d.Blocks = n
		return func() {
			for k := 1; k < n; k++ {
				r := (b.root + k) % n
				b.xfer(r, b.root, b.per, r, r+1, false)
			}
		}
	case "scatter/direct":
		d.Blocks = n
		return func() {
			for k := 1; k < n; k++ {
				r := (b.root + k) % n
				b.xfer(b.root, r, b.per, r, r+1, false)
			}
		}
	case "sendrecv/ring":
		d.Blocks = n
		return func() {
			for r := range n {
				b.xfer(r, (r+1)%n, b.size, r, r+1, false)
			}
		}
	}
	panic("workload: catalogue entry without a generator: " + c + "/" + alg)
}

func identity(n int) []int {
	return packed(n)
}

func minusOnes(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// ringAllReduce runs the ring algorithm over the ranks in ring order
// (position j sends to position j+1) on total bytes split into n segments,
// which are blocks blk0 … blk0+n−1.
func (b *builder) ringAllReduce(order []int, total int64, blk0 int) {
	n := len(order)
	recv, next := minusOnes(n), minusOnes(n) // by position: last step's transfer in
	for step := 0; step < 2*(n-1); step++ {
		reduce := step < n-1
		for j := range n {
			s := mod(j-step-1, n) // reduce-scatter: position j ends with segment j
			if !reduce {
				s = mod(j-(step-(n-1)), n)
			}
			to := (j + 1) % n
			next[to] = b.xfer(order[j], order[to], seg(total, n, s), blk0+s, blk0+s+1, reduce, dep(recv[j])...)
		}
		recv, next = next, recv
	}
}

// ringBlocks is the ring all-gather (store) or reduce-scatter (reduce).
func (b *builder) ringBlocks(reduce bool) {
	n := b.n
	recv, next := minusOnes(n), minusOnes(n)
	for step := 0; step < n-1; step++ {
		for i := range n {
			blk := mod(i-step, n)
			if reduce {
				blk = mod(i-step-1, n)
			}
			next[(i+1)%n] = b.xfer(i, (i+1)%n, b.per, blk, blk+1, reduce, dep(recv[i])...)
		}
		recv, next = next, recv
	}
}

// exchange runs one step in which every member c sends to member to(c)
// what send(c) says, each send waiting for all of c's earlier receives
// (in[c]), and then records the receives.
func (b *builder) exchange(members []int, in [][]int32, to func(c int) int, send func(c int) (bytes int64, lo, hi int, reduce bool), sent []int32) {
	for c := range members {
		bytes, lo, hi, red := send(c)
		sent[c] = b.xfer(members[c], members[to(c)], bytes, lo, hi, red, in[c]...)
	}
	for c := range members {
		p := to(c)
		in[p] = append(in[p], sent[c])
	}
}

// halving-doubling: see the package comment.
func (b *builder) halvingDoubling() {
	n, S := b.n, b.size
	p := 1 << (bits.Len(uint(n)) - 1)
	rem := n - p
	core := make([]int, p)
	for c := range core {
		if c < rem {
			core[c] = 2*c + 1
		} else {
			core[c] = c + rem
		}
	}
	in := make([][]int32, p)
	for c := range rem {
		in[c] = append(in[c], b.xfer(2*c, 2*c+1, S, 0, p, true))
	}
	bytes := func(lo, hi int) int64 { return off(S, p, hi) - off(S, p, lo) }
	lo, hi := make([]int, p), make([]int, p)
	for c := range hi {
		hi[c] = p
	}
	sent := make([]int32, p)
	for dist := p / 2; dist >= 1; dist /= 2 {
		b.exchange(core, in, func(c int) int { return c ^ dist }, func(c int) (int64, int, int, bool) {
			mid := (lo[c] + hi[c]) / 2
			if c&dist == 0 { // keeps the lower half
				return bytes(mid, hi[c]), mid, hi[c], true
			}
			return bytes(lo[c], mid), lo[c], mid, true
		}, sent)
		for c := range p {
			if mid := (lo[c] + hi[c]) / 2; c&dist == 0 {
				hi[c] = mid
			} else {
				lo[c] = mid
			}
		}
	}
	for dist := 1; dist < p; dist *= 2 {
		b.exchange(core, in, func(c int) int { return c ^ dist }, func(c int) (int64, int, int, bool) {
			return bytes(lo[c], hi[c]), lo[c], hi[c], false
		}, sent)
		for c := range p {
			if c&dist == 0 {
				l, h := lo[c], hi[c^dist]
				lo[c], hi[c], lo[c^dist], hi[c^dist] = l, h, l, h
			}
		}
	}
	for c := range rem {
		b.xfer(2*c+1, 2*c, S, 0, p, false, in[c]...)
	}
}

// recursiveDoubling is the power-of-two all-gather.
func (b *builder) recursiveDoubling() {
	n := b.n
	in, sent := make([][]int32, n), make([]int32, n)
	ranks := identity(n)
	for dist := 1; dist < n; dist *= 2 {
		b.exchange(ranks, in, func(r int) int { return r ^ dist }, func(r int) (int64, int, int, bool) {
			lo := r &^ (dist - 1)
			return b.per * int64(dist), lo, lo + dist, false
		}, sent)
	}
}

// recursiveHalving is the power-of-two reduce-scatter.
func (b *builder) recursiveHalving() {
	n := b.n
	in, sent := make([][]int32, n), make([]int32, n)
	ranks := identity(n)
	lo, hi := make([]int, n), make([]int, n)
	for r := range hi {
		hi[r] = n
	}
	for dist := n / 2; dist >= 1; dist /= 2 {
		b.exchange(ranks, in, func(r int) int { return r ^ dist }, func(r int) (int64, int, int, bool) {
			mid := (lo[r] + hi[r]) / 2
			if r&dist == 0 {
				return b.per * int64(hi[r]-mid), mid, hi[r], true
			}
			return b.per * int64(mid-lo[r]), lo[r], mid, true
		}, sent)
		for r := range n {
			if mid := (lo[r] + hi[r]) / 2; r&dist == 0 {
				hi[r] = mid
			} else {
				lo[r] = mid
			}
		}
	}
}

// wrapRange is blocks lo … lo+cnt−1 mod n in Payload's convention.
func wrapRange(lo, cnt, n int) (int, int) {
	hi := lo + cnt
	if hi > n {
		hi -= n
	}
	return lo, hi
}

// bruck is the all-gather for any n.
func (b *builder) bruck() {
	n := b.n
	in, sent := make([][]int32, n), make([]int32, n)
	ranks := identity(n)
	for dist := 1; dist < n; dist *= 2 {
		cnt := min(dist, n-dist)
		b.exchange(ranks, in, func(r int) int { return mod(r-dist, n) }, func(r int) (int64, int, int, bool) {
			lo, hi := wrapRange(r, cnt, n)
			return b.per * int64(cnt), lo, hi, false
		}, sent)
	}
}

// reverseBruck is the reduce-scatter for any n (Bruck's all-gather
// transposed).
func (b *builder) reverseBruck() {
	n := b.n
	in, sent := make([][]int32, n), make([]int32, n)
	ranks := identity(n)
	var dists []int
	for dist := 1; dist < n; dist *= 2 {
		dists = append(dists, dist)
	}
	for k := len(dists) - 1; k >= 0; k-- {
		dist := dists[k]
		cnt := min(dist, n-dist)
		b.exchange(ranks, in, func(r int) int { return (r + dist) % n }, func(r int) (int64, int, int, bool) {
			lo, hi := wrapRange((r+dist)%n, cnt, n)
			return b.per * int64(cnt), lo, hi, true
		}, sent)
	}
}

// btreeParent is NCCL's binary tree (ncclGetBtree) seen from the child:
// rank 0 is the root; a rank's parent clears its lowest set bit and sets
// the next one, or only clears it when that falls outside.
func btreeParent(n, r int) int {
	if r == 0 {
		return -1
	}
	bit := lowbit(r)
	up := (r ^ bit) | (bit << 1)
	if up >= n {
		up = r ^ bit
	}
	return up
}

// dtreeParents are NCCL's two trees (ncclGetDtree): the btree, and its
// mirror (n even) or its shift by one rank (n odd).
func dtreeParents(n int) [2][]int {
	var p [2][]int
	p[0], p[1] = make([]int, n), make([]int, n)
	for r := range n {
		p[0][r] = btreeParent(n, r)
		if n%2 == 1 {
			u := btreeParent(n, mod(r-1, n))
			p[1][r] = -1
			if u >= 0 {
				p[1][r] = (u + 1) % n
			}
		} else {
			u := btreeParent(n, n-1-r)
			p[1][r] = -1
			if u >= 0 {
				p[1][r] = n - 1 - u
			}
		}
	}
	return p
}

// treeOrder returns a tree's root, children lists and a post-order (every
// rank after its children).
func treeOrder(parent []int) (root int, kids [][]int, post []int) {
	n := len(parent)
	kids = make([][]int, n)
	root = -1
	for r, p := range parent {
		if p < 0 {
			root = r
		} else {
			kids[p] = append(kids[p], r)
		}
	}
	// Iterative DFS: pre-order reversed with children pushed in order gives
	// a valid post-order.
	stack := []int{root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		post = append(post, v)
		stack = append(stack, kids[v]...)
	}
	slices.Reverse(post)
	return root, kids, post
}

// doubleBinaryTree: see the package comment; C chunks per tree.
func (b *builder) doubleBinaryTree(C int) {
	n := b.n
	parents := dtreeParents(n)
	up := make([]int32, n)   // chunk c's transfer from a rank to its parent
	down := make([]int32, n) // chunk c's transfer into a rank from its parent
	var ids []int32
	for c := range C {
		for t := range 2 {
			b.chanBase = int32(t) * int32(b.qps)
			root, kids, post := treeOrder(parents[t])
			bytes := seg(seg(b.size, 2, t), C, c)
			blk := t*C + c
			fromKids := func(v int) []int32 {
				ids = ids[:0]
				for _, k := range kids[v] {
					ids = append(ids, up[k])
				}
				return ids
			}
			for _, v := range post {
				if v != root {
					up[v] = b.xfer(v, parents[t][v], bytes, blk, blk+1, true, fromKids(v)...)
				}
			}
			for k := len(post) - 1; k >= 0; k-- { // pre-order
				v := post[k]
				ds := dep(down[v])
				if v == root {
					ds = slices.Clone(fromKids(v))
				}
				for _, ch := range kids[v] {
					down[ch] = b.xfer(v, ch, bytes, blk, blk+1, false, ds...)
				}
			}
		}
	}
	b.chanBase = 0
}

// allToAllDirect posts every rank's n−1 sends at once in a seeded random
// order (the same order AllToAll draws).
func (b *builder) allToAllDirect() {
	n := b.n
	order := make([]int, n-1)
	for i := range n {
		postOrder(order, i, n, b.rng)
		for _, j := range order {
			blk := i*n + j
			b.xfer(i, j, b.per, blk, blk+1, false)
		}
	}
}

// postOrder fills order with rank i's destinations i+1, i+2, … shuffled.
func postOrder(order []int, i, n int, rng *sim.RNG) {
	for k := range order {
		order[k] = (i + 1 + k) % n
	}
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
}

func (b *builder) allToAllPairwise() {
	n := b.n
	sent, recv := minusOnes(n), minusOnes(n)
	nsent, nrecv := make([]int32, n), make([]int32, n)
	var ds []int32
	for k := 1; k < n; k++ {
		for i := range n {
			j := (i + k) % n
			ds = ds[:0]
			if sent[i] >= 0 {
				ds = append(ds, sent[i], recv[i])
			}
			blk := i*n + j
			id := b.xfer(i, j, b.per, blk, blk+1, false, ds...)
			nsent[i], nrecv[j] = id, id
		}
		sent, nsent = nsent, sent
		recv, nrecv = nrecv, recv
	}
}

func (b *builder) allToAllRail() {
	n := b.n
	type key struct{ server, rail int }
	proxy := make(map[key]int)
	for r := n - 1; r >= 0; r-- {
		proxy[key{b.server[r], b.rail[r]}] = r // the lowest rank wins
	}
	type hop struct {
		from, to, blk int
		first         int32
	}
	var second []hop
	later := func(h hop) {
		if b.counting {
			// Counting: the order of the hops does not change the counts,
			// so tally the second hop now instead of holding n² of them.
			b.xfer(h.from, h.to, b.per, h.blk, h.blk+1, false, h.first)
			return
		}
		second = append(second, h)
	}
	order := make([]int, n-1)
	for i := range n {
		postOrder(order, i, n, b.rng)
		for _, j := range order {
			blk := i*n + j
			if b.server[i] != b.server[j] && b.rail[i] != b.rail[j] {
				// PXN: hand the block to the rank of i's server on j's rail;
				// failing that, send it on i's rail to the rank of j's
				// server on that rail, which hands it to j.
				if p, ok := proxy[key{b.server[i], b.rail[j]}]; ok {
					later(hop{p, j, blk, b.xfer(i, p, b.per, blk, blk+1, false)})
					continue
				}
				if q, ok := proxy[key{b.server[j], b.rail[i]}]; ok {
					later(hop{q, j, blk, b.xfer(i, q, b.per, blk, blk+1, false)})
					continue
				}
			}
			b.xfer(i, j, b.per, blk, blk+1, false)
		}
	}
	for _, h := range second {
		b.xfer(h.from, h.to, b.per, h.blk, h.blk+1, false, h.first)
	}
}

// chain is the pipelined chain broadcast (root first) or reduce (root last)
// in C chunks.
func (b *builder) chain(C int, reduce bool) {
	n := b.n
	rank := func(v int) int { return (b.root + v) % n }
	in := minusOnes(n) // by relative rank: chunk c's transfer in
	for c := range C {
		bytes := seg(b.size, C, c)
		if !reduce {
			for v := 0; v < n-1; v++ {
				in[v+1] = b.xfer(rank(v), rank(v+1), bytes, c, c+1, false, dep(in[v])...)
			}
			continue
		}
		in[n-1] = -1
		for v := n - 1; v >= 1; v-- {
			in[v-1] = b.xfer(rank(v), rank(v-1), bytes, c, c+1, true, dep(in[v])...)
		}
	}
}

func (b *builder) binomialBroadcast() {
	n := b.n
	rank := func(v int) int { return (b.root + v) % n }
	in := minusOnes(n)
	top := 1 << bits.Len(uint(n-1)) // the smallest power of two ≥ n
	for v := range n {
		m := top
		if v > 0 {
			m = lowbit(v)
		}
		for m >>= 1; m >= 1; m >>= 1 {
			if v+m < n {
				in[v+m] = b.xfer(rank(v), rank(v+m), b.size, 0, 1, false, dep(in[v])...)
			}
		}
	}
}

func (b *builder) binomialReduce() {
	n := b.n
	rank := func(v int) int { return (b.root + v) % n }
	in := make([][]int32, n)
	for v := n - 1; v >= 1; v-- {
		p := v - lowbit(v)
		in[p] = append(in[p], b.xfer(rank(v), rank(p), b.size, 0, 1, true, in[v]...))
	}
}
