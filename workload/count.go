package workload

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Counts is the size of the DAG that Build makes for a Spec, known before
// it is built (see Count): what a caller needs to estimate its memory and
// to refuse a job too big for the machine before allocating it.
type Counts struct {
	// Messages is every message of the DAG, Markers those of them that are
	// zero-byte bookkeeping (see Message.Marker).
	Messages, Markers int64
	// Edges is the dependencies (the sum of DepCount).
	Edges int64
	// Roots is the messages that wait for nothing: released at the start.
	Roots int64
	// Conns is the distinct (source rank, destination rank, channel)
	// triples of the data messages, the connections they need (tracked
	// exactly up to maxTrackedPairs rank pairs, each further pair counted
	// as new: an upper bound past that).
	Conns int64
	// PerCopy is the messages of one copy of the collective (the first);
	// Copies is warmups + iterations. Every further copy adds PerCopy and
	// one done marker per rank.
	PerCopy, Copies int64
	// Partial: counting stopped once one copy passed MaxMessages (Build
	// refuses such a spec); the figures are lower bounds.
	Partial bool
}

// tooMany says why Build refuses c, naming the scenario keys that change it.
func (c Counts) tooMany() string {
	const keys = "raise workload.message_size, lower workload.qps or workload.iterations, or use fewer ranks"
	if c.Partial {
		return fmt.Sprintf("one copy alone makes more than the limit of %d messages; %s", MaxMessages, keys)
	}
	if c.Messages <= MaxMessages && c.Edges > math.MaxInt32 {
		return fmt.Sprintf("%d dependencies between its %d messages, more than the limit of %d; %s", c.Edges, c.Messages, math.MaxInt32, keys)
	}
	per := ""
	if c.Copies > 1 {
		per = fmt.Sprintf(" (%d per copy × %d copies)", c.PerCopy, c.Copies)
	}
	return fmt.Sprintf("%d messages%s, more than the limit of %d; %s", c.Messages, per, MaxMessages, keys)
}

// Count works out what Build(s) would make without making it: the
// collective's algorithm runs over one copy with every transfer tallied
// (its pieces and marker counted, not made), and the further copies are
// multiplied out. It costs one pass over the transfers of one copy (an
// all-to-all direct none), not over the messages, and allocates per rank
// and per rank pair, not per message.
func Count(s Spec) (Counts, error) {
	alg, _, err := s.check()
	if err != nil {
		return Counts{}, err
	}
	return newBuilder(s, alg, true).count(), nil
}

// maxTrackedPairs bounds the rank pairs Count remembers for Counts.Conns
// (outside all-to-all, which keeps a bit per pair).
const maxTrackedPairs = 1 << 20

// errCountStop unwinds a generator once one copy has passed MaxMessages.
var errCountStop = errors.New("workload: count stopped")

// tally is what a counting builder has seen of one copy.
type tally struct {
	transfers, pieces int64
	msgs, markers     int64
	edges, roots      int64
	tracked           []int64          // per rank: transfers it sent or received
	pairs             map[uint64]int64 // (src, dst, second block of QPs) → channels
	bits              []uint64         // all-to-all: one bit per (src, dst)
	conns             int64
	stopped           bool
}

// count runs a counting builder's generator over one copy and multiplies
// out the copies.
func (b *builder) count() Counts {
	n, t := b.n, &b.tally
	t.tracked = make([]int64, n)
	if string(b.d.Collective)+"/"+b.alg == "alltoall/direct" {
		// n(n−1) independent transfers of the per-rank block between
		// distinct pairs: no need to draw the posting order.
		tr := int64(n) * int64(n-1)
		np := pieces(b.per, b.chunk, b.qps)
		t.transfers, t.pieces, t.msgs, t.roots = tr, mulSat(tr, np), mulSat(tr, np), mulSat(tr, np)
		if np > 1 {
			t.msgs, t.markers, t.edges = addSat(t.msgs, tr), tr, mulSat(tr, np)
		}
		for r := range t.tracked {
			t.tracked[r] = 2 * int64(n-1)
		}
		t.conns = mulSat(tr, width(b.per, b.chunk, b.qps))
	} else {
		if b.d.Collective == "alltoall" {
			t.bits = make([]uint64, (n*n+63)/64)
		} else {
			t.pairs = map[uint64]int64{}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if r != errCountStop {
						panic(r)
					}
					t.stopped = true
				}
			}()
			b.generator(string(b.d.Collective), b.alg)()
		}()
	}
	copies := int64(b.copies)
	extra := copies - 1
	var zero int64 // ranks without a transfer: their done marker waits for nothing
	for _, k := range t.tracked {
		if k == 0 {
			zero++
		}
	}
	// Every further copy adds its own messages, one done marker per rank
	// (endCopy) waiting for the transfers the rank sent or received in the
	// copy before, and one dependency on every piece: its sender's done
	// marker (the gate), so that only those markers can be roots.
	c := Counts{
		PerCopy:  t.msgs,
		Copies:   copies,
		Messages: addSat(mulSat(copies, t.msgs), mulSat(extra, int64(n))),
		Markers:  addSat(mulSat(copies, t.markers), mulSat(extra, int64(n))),
		Edges:    addSat(mulSat(copies, t.edges), mulSat(extra, addSat(t.pieces, 2*t.transfers))),
		Roots:    addSat(t.roots, mulSat(extra, zero)),
		Conns:    t.conns,
		Partial:  t.stopped,
	}
	return c
}

// count1 tallies one transfer of bytes in np pieces waiting for deps
// messages.
func (b *builder) count1(src, dst int, bytes, np int64, deps int) {
	t := &b.tally
	t.transfers++
	t.pieces = addSat(t.pieces, np)
	t.msgs = addSat(t.msgs, np)
	t.edges = addSat(t.edges, mulSat(np, int64(deps)))
	if deps == 0 {
		t.roots = addSat(t.roots, np)
	}
	if np > 1 { // the marker after the pieces waits for all of them
		t.msgs++
		t.markers++
		t.edges = addSat(t.edges, np)
	}
	t.tracked[src]++
	t.tracked[dst]++
	t.addPair(b.n, src, dst, b.chanBase != 0, width(bytes, b.chunk, b.qps))
	if t.msgs > MaxMessages {
		panic(errCountStop)
	}
}

// addPair notes that src sends to dst over w channels, from channel 0 or
// (second: the second tree or ring) from the second block of QPs.
func (t *tally) addPair(n, src, dst int, second bool, w int64) {
	if t.bits != nil {
		k := src*n + dst
		if t.bits[k/64]&(1<<(k%64)) == 0 {
			t.bits[k/64] |= 1 << (k % 64)
			t.conns += w
		}
		return
	}
	k := (uint64(src)*uint64(n)+uint64(dst))<<1 | b2u(second)
	old, ok := t.pairs[k]
	switch {
	case !ok && len(t.pairs) >= maxTrackedPairs:
		t.conns += w // counted as new: an upper bound
	case w > old:
		t.conns += w - old
		t.pairs[k] = w
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// width is how many channels a transfer of bytes uses: its chunks are
// spread over min(qps, chunk) of them (see xfer).
func width(bytes, chunk, qps int64) int64 {
	bytes = max(bytes, 1)
	if chunk <= 0 || chunk > bytes {
		chunk = bytes
	}
	return min(qps, chunk)
}

// addSat and mulSat saturate at math.MaxInt64 (counts of absurd specs).
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

func mulSat(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}
