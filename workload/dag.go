// Package workload compiles collectives and traffic patterns into a DAG of
// messages: each message has a source and destination host, a size, an
// optional earliest start, and the messages it waits for (a step starts when
// the data it needs has arrived, as a real collective library would).
//
// The DAG is flat (slices and a CSR successor list) so a million-flow
// all-to-all costs a few tens of bytes per message and no goroutines.
package workload

import (
	"fmt"

	"fabriclab/metrics"
	"fabriclab/sim"
)

// Message is one transfer.
type Message struct {
	Src, Dst         int32 // hosts
	SrcRank, DstRank int32
	Bytes            int64
	// Channel selects the connection: messages with the same (Src, Dst,
	// Channel) share one QP and are sent in the order they are released.
	Channel int32
	// Marker is a zero-byte bookkeeping message (Src = Dst, Bytes = 0): it
	// moves nothing and completes the moment its dependencies are done. It
	// joins many messages into one dependency (all the chunk/channel pieces
	// of one transfer, or everything a rank did in one iteration) so that
	// dependents need one edge instead of one per piece.
	Marker bool
	// External is a message another executor runs (a real-hosts agent
	// executing only its own ranks holds the messages they wait for this
	// way): this executor never releases it and hears of its delivery
	// from outside (Executor.Delivered).
	External bool
	// At is the earliest start (offset from time 0).
	At sim.Time
}

// DAG is a compiled workload.
type DAG struct {
	Collective metrics.Collective
	Algorithm  string
	Ranks      int
	// Size is S as nccl-tests defines it for the collective (for patterns:
	// bytes per flow; for a flow list: total bytes).
	Size int64
	// RankHost maps rank → host.
	RankHost []int
	// Root is the root rank of a rooted collective (broadcast, reduce,
	// gather, scatter); 0 otherwise.
	Root int
	// Blocks is how many logical data blocks the annotated payloads index
	// (see Payload); 0 when the DAG was not built by Build.
	Blocks int

	// Iters lists the copies of the collective in a Build with warmup
	// and/or several iterations, in order, each a contiguous range of
	// message indices. Nil for the single-shot constructors.
	Iters []IterSpan
	// Iteration gives each message's iteration index (warmups −W…−1, then
	// 0…I−1); nil when the DAG holds one copy (every message is iteration 0).
	Iteration []int32
	// Payloads records what data each message moves (parallel to Msgs);
	// filled only by Build with Spec.Annotate set.
	Payloads []Payload

	// Until, when positive, ends a closed-loop workload (any-to-any): a
	// message whose dependencies are all delivered at or after Until is
	// cut — it never starts, nor does anything waiting on it — and the
	// run is done when every message is delivered or cut.
	Until sim.Time

	// Pins are the paths given for messages (a flow list's path column),
	// by message index; nil when none is pinned.
	Pins map[int32]Pin

	Msgs []Message
	// DepCount[i] is how many messages i waits for.
	DepCount []int32
	// succ lists, for each message, the messages waiting on it (CSR).
	succStart []int32
	succ      []int32

	deps [][2]int32 // (from, to) edges, folded into the CSR by Finish
}

// Pin is a message's pinned path: the switches it must cross, from the
// source's to the destination's, and where it was given (File:Line).
type Pin struct {
	Path []string
	File string
	Line int
}

// Add appends a message that waits for deps and returns its index.
func (d *DAG) Add(m Message, deps ...int32) int32 {
	i := int32(len(d.Msgs))
	d.Msgs = append(d.Msgs, m)
	d.DepCount = append(d.DepCount, int32(len(deps)))
	for _, p := range deps {
		d.deps = append(d.deps, [2]int32{p, i})
	}
	return i
}

// Finish builds the successor lists; call it once after the last Add.
// A DAG without any dependency keeps no successor table at all.
func (d *DAG) Finish() {
	n := len(d.Msgs)
	if len(d.deps) == 0 {
		d.succStart, d.succ, d.deps = nil, nil, nil
		return
	}
	d.succStart = make([]int32, n+1)
	for _, e := range d.deps {
		d.succStart[e[0]+1]++
	}
	for i := 0; i < n; i++ {
		d.succStart[i+1] += d.succStart[i]
	}
	// Place each edge at its source's next free slot; pos starts as a copy
	// of the row starts and walks forward (edges keep their Add order).
	d.succ = make([]int32, len(d.deps))
	pos := make([]int32, n)
	copy(pos, d.succStart[:n])
	for _, e := range d.deps {
		d.succ[pos[e[0]]] = e[1]
		pos[e[0]]++
	}
	d.deps = nil
}

// Successors lists the messages that wait for message i.
func (d *DAG) Successors(i int32) []int32 {
	if d.succStart == nil {
		return nil
	}
	return d.succ[d.succStart[i]:d.succStart[i+1]]
}

// Placement is packed: rank r runs on host r (one rank per NIC).
func packed(ranks int) []int {
	h := make([]int, ranks)
	for i := range h {
		h[i] = i
	}
	return h
}

func (d *DAG) msg(src, dst int, bytes int64) Message {
	return Message{Src: int32(d.RankHost[src]), Dst: int32(d.RankHost[dst]),
		SrcRank: int32(src), DstRank: int32(dst), Bytes: bytes}
}

// AllToAll is the direct all-at-once algorithm: every rank sends S/n bytes
// to every other rank at time 0 (S is the whole per-rank array, as in
// nccl-tests).
//
// Each rank posts its n−1 sends in its own random order (seeded), as
// independent processes do; NICs then serve them round-robin. (Posting in
// the staggered order i+1, i+2, … would turn the all-to-all into a
// sequence of perfect permutations, which is the pairwise algorithm.)
func AllToAll(ranks int, size int64, rng *sim.RNG) (*DAG, error) {
	if ranks < 2 {
		return nil, fmt.Errorf("all-to-all needs at least 2 ranks, got %d", ranks)
	}
	d := &DAG{Collective: metrics.AllToAll, Algorithm: "direct", Ranks: ranks, Size: size, RankHost: packed(ranks)}
	per := max(size/int64(ranks), 1)
	order := make([]int, ranks-1)
	for i := 0; i < ranks; i++ {
		for k := range order {
			order[k] = (i + 1 + k) % ranks
		}
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, j := range order {
			d.Add(d.msg(i, j, per))
		}
	}
	d.Finish()
	return d, nil
}

// RingAllReduce is the ring algorithm: 2(n−1) steps (n−1 reduce-scatter,
// n−1 all-gather); at each step rank i sends one S/n chunk to rank i+1, and
// it may do so only after receiving the previous step's chunk from i−1.
func RingAllReduce(ranks int, size int64) (*DAG, error) {
	if ranks < 2 {
		return nil, fmt.Errorf("ring all-reduce needs at least 2 ranks, got %d", ranks)
	}
	d := &DAG{Collective: metrics.AllReduce, Algorithm: "ring", Ranks: ranks, Size: size, RankHost: packed(ranks)}
	chunk := max(size/int64(ranks), 1)
	prev := make([]int32, ranks) // message id of rank i's send in the previous step
	cur := make([]int32, ranks)
	for step := 0; step < 2*(ranks-1); step++ {
		for i := 0; i < ranks; i++ {
			m := d.msg(i, (i+1)%ranks, chunk)
			if step == 0 {
				cur[i] = d.Add(m)
			} else {
				cur[i] = d.Add(m, prev[(i-1+ranks)%ranks])
			}
		}
		prev, cur = cur, prev
	}
	d.Finish()
	return d, nil
}

// Derangement is a random permutation of 0…n−1 (n ≥ 2) without fixed
// points: shuffles drawn from rng until one has none.
func Derangement(n int, rng *sim.RNG) []int {
	perm := make([]int, n)
	for {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		ok := true
		for i, p := range perm {
			if p == i {
				ok = false
				break
			}
		}
		if ok {
			return perm
		}
	}
}

// Permutation sends size bytes from each of n hosts to a distinct other host
// (a random derangement drawn from rng).
func Permutation(hosts int, size int64, rng *sim.RNG) (*DAG, error) {
	if hosts < 2 {
		return nil, fmt.Errorf("a permutation needs at least 2 hosts, got %d", hosts)
	}
	d := &DAG{Collective: metrics.Permutation, Algorithm: "random", Ranks: hosts, Size: size, RankHost: packed(hosts)}
	perm := Derangement(hosts, rng)
	for i, p := range perm {
		d.Add(d.msg(i, p, size))
	}
	d.Finish()
	return d, nil
}

// Incast sends size bytes from each of senders hosts to target, all at time
// 0. Senders are the hosts after target, wrapping around.
func Incast(hosts, senders, target int, size int64) (*DAG, error) {
	if senders < 1 || senders+1 > hosts || target < 0 || target >= hosts {
		return nil, fmt.Errorf("incast of %d senders to host %d does not fit %d hosts", senders, target, hosts)
	}
	d := &DAG{Collective: metrics.Incast, Algorithm: "n-to-1", Ranks: senders + 1, Size: size, RankHost: packed(hosts)}
	for k := 1; k <= senders; k++ {
		d.Add(d.msg((target+k)%hosts, target, size))
	}
	d.Finish()
	return d, nil
}

// Flows replays an explicit flow list; S is the total bytes.
func Flows(hosts int, flows []FlowSpec) (*DAG, error) {
	d := &DAG{Collective: metrics.FlowList, Algorithm: "list", Ranks: hosts, RankHost: packed(hosts),
		Msgs: make([]Message, 0, len(flows)), DepCount: make([]int32, 0, len(flows))}
	for i, f := range flows {
		if f.Src < 0 || f.Src >= hosts || f.Dst < 0 || f.Dst >= hosts {
			return nil, fmt.Errorf("flow %d: host out of range 0..%d", i+1, hosts-1)
		}
		m := d.msg(f.Src, f.Dst, f.Bytes)
		m.At = f.Start
		m.Channel = int32(i) // each listed flow is its own connection
		k := d.Add(m)
		if len(f.Path) > 0 {
			if d.Pins == nil {
				d.Pins = map[int32]Pin{}
			}
			d.Pins[k] = Pin{Path: f.Path, Line: f.Line}
		}
		d.Size += f.Bytes
	}
	d.Finish()
	return d, nil
}

// Combine joins the DAGs of several jobs into one: the messages of parts[k]
// follow those of parts[k−1], their dependencies shifted with them, and
// every message of parts[k] may start delays[k] later than in its own DAG
// (its earliest start At is shifted; messages with dependencies follow).
// It returns the joint DAG, whose metadata (collective, ranks, size, rank
// placement, iterations) is that of parts[0], and where each part's
// messages start. The parts are not changed.
func Combine(parts []*DAG, delays []sim.Time) (*DAG, []int32) {
	d := &DAG{}
	if len(parts) > 0 {
		p := parts[0]
		d.Collective, d.Algorithm, d.Ranks, d.Size = p.Collective, p.Algorithm, p.Ranks, p.Size
		d.RankHost, d.Root, d.Blocks, d.Iters = p.RankHost, p.Root, p.Blocks, p.Iters
	}
	var msgs, edges int
	for _, p := range parts {
		msgs += len(p.Msgs)
		edges += len(p.succ)
	}
	d.Msgs = make([]Message, 0, msgs)
	d.DepCount = make([]int32, 0, msgs)
	d.deps = make([][2]int32, 0, edges)
	offsets := make([]int32, len(parts))
	for k, p := range parts {
		off := int32(len(d.Msgs))
		offsets[k] = off
		var delay sim.Time
		if k < len(delays) {
			delay = delays[k]
		}
		for k, pin := range p.Pins {
			if d.Pins == nil {
				d.Pins = map[int32]Pin{}
			}
			d.Pins[off+k] = pin
		}
		for i, m := range p.Msgs {
			m.At += delay
			d.Msgs = append(d.Msgs, m)
			d.DepCount = append(d.DepCount, p.DepCount[i])
			for _, j := range p.Successors(int32(i)) {
				d.deps = append(d.deps, [2]int32{off + int32(i), off + j})
			}
		}
	}
	d.Finish()
	return d, offsets
}
