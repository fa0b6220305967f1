package workload

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"fabriclab/sim"
)

// Verify executes an annotated DAG symbolically in the given order and
// checks that the collective means what it says.
//
// Each rank holds, for each logical block, the set of ranks whose
// contribution its copy contains. A transfer carries the sender's blocks as
// they are when its first piece runs (every later piece must see the same
// data: the sender may not change a block it is still sending) and lands
// when its last piece does: stored over the receiver's copy, or reduced
// into it (a contribution arriving twice is an error). Sending a block one
// does not hold is an error. Each copy (warmup or iteration) runs on its
// own state. At the end every copy must hold the collective's result:
// all-reduce, every rank every block with all n contributions; all-gather,
// every rank block b from rank b; reduce-scatter, rank i block i complete;
// all-to-all, rank j block i·n+j from rank i; broadcast, every rank every
// block from the root; reduce, the root every block complete; gather, the
// root block b from rank b; scatter, rank i block i from the root;
// send/recv, rank i+1 block i from rank i.
//
// order must list every message once, after all the messages it waits for
// (RandomOrder draws such orders).
func Verify(d *DAG, order []int32) error {
	if d.Payloads == nil || len(d.Payloads) != len(d.Msgs) {
		return fmt.Errorf("verify: the DAG has no payloads (build it with Annotate)")
	}
	if d.Blocks < 1 {
		return fmt.Errorf("verify: the DAG has no blocks")
	}
	if err := checkOrder(d, order); err != nil {
		return err
	}
	n, B := d.Ranks, d.Blocks
	W := (n + 63) / 64
	copies := max(len(d.Iters), 1)
	copyOf := make([]int32, len(d.Msgs))
	for k, it := range d.Iters {
		for i := it.Start; i < it.End; i++ {
			copyOf[i] = int32(k)
		}
	}
	if int64(copies)*int64(n)*int64(B)*int64(W) > 1<<27 {
		return fmt.Errorf("verify: %d copies × %d ranks × %d blocks is too large to verify", copies, n, B)
	}
	v := &verifier{d: d, n: n, B: B, W: W, st: make([]uint64, copies*n*B*W)}
	for k := range copies {
		if err := v.initial(k); err != nil {
			return err
		}
	}

	// Transfers in flight: the sender's blocks as the first piece saw them.
	type flight struct {
		got  int32
		snap []uint64
	}
	inflight := map[int32]*flight{}
	var one []uint64
	for _, i := range order {
		m, p := d.Msgs[i], d.Payloads[i]
		if m.Marker {
			continue
		}
		if p.Pieces < 1 || p.First < 0 || p.First > i {
			return fmt.Errorf("verify: message %d (%d→%d) has no valid payload %+v", i, m.SrcRank, m.DstRank, p)
		}
		k := int(copyOf[i])
		blocks := v.blocks(p)
		if blocks == nil {
			return fmt.Errorf("verify: message %d: block range %d…%d out of 0…%d", i, p.Lo, p.Hi, B-1)
		}
		f := inflight[p.First]
		if f == nil {
			f = &flight{}
			if p.Pieces == 1 {
				one = one[:0]
				f.snap = one
			}
			for _, blk := range blocks {
				s := v.at(k, int(m.SrcRank), blk)
				if !p.Reduce && empty(s) {
					return fmt.Errorf("verify: copy %d message %d: rank %d sends block %d it does not hold", k, i, m.SrcRank, blk)
				}
				f.snap = append(f.snap, s...)
			}
			if p.Pieces == 1 {
				one = f.snap
			} else {
				inflight[p.First] = f
			}
		} else {
			for x, blk := range blocks {
				if s := v.at(k, int(m.SrcRank), blk); !slices.Equal(s, f.snap[x*W:(x+1)*W]) {
					return fmt.Errorf("verify: copy %d message %d: rank %d's block %d changed while transfer %d was being sent (%s, then %s)",
						k, i, m.SrcRank, blk, p.First, setString(f.snap[x*W:(x+1)*W]), setString(s))
				}
			}
		}
		if f.got++; f.got < p.Pieces {
			continue
		}
		delete(inflight, p.First)
		for x, blk := range blocks {
			src := f.snap[x*W : (x+1)*W]
			dst := v.at(k, int(m.DstRank), blk)
			if !p.Reduce {
				copy(dst, src)
				continue
			}
			for w := range dst {
				if dst[w]&src[w] != 0 {
					both := make([]uint64, W)
					for w := range both {
						both[w] = dst[w] & src[w]
					}
					return fmt.Errorf("verify: copy %d message %d: rank %d reduces block %d from rank %d twice over contributions %s",
						k, i, m.DstRank, blk, m.SrcRank, setString(both))
				}
				dst[w] |= src[w]
			}
		}
	}
	if len(inflight) > 0 {
		return fmt.Errorf("verify: %d transfers never completed", len(inflight))
	}
	for k := range copies {
		if err := v.final(k); err != nil {
			return err
		}
	}
	return nil
}

// checkOrder checks that order lists every message once, each after the
// messages it waits for.
func checkOrder(d *DAG, order []int32) error {
	if len(order) != len(d.Msgs) {
		return fmt.Errorf("verify: order has %d messages, the DAG %d", len(order), len(d.Msgs))
	}
	seen := make([]bool, len(d.Msgs))
	for _, i := range order {
		if i < 0 || int(i) >= len(d.Msgs) || seen[i] {
			return fmt.Errorf("verify: message %d out of range or twice in the order", i)
		}
		seen[i] = true
		for _, j := range d.Successors(i) {
			if seen[j] {
				return fmt.Errorf("verify: message %d runs before message %d it waits for", j, i)
			}
		}
	}
	return nil
}

type verifier struct {
	d        *DAG
	n, B, W  int
	st       []uint64 // [copy][rank][block][word]
	blockBuf []int
}

func (v *verifier) at(k, r, blk int) []uint64 {
	o := ((k*v.n+r)*v.B + blk) * v.W
	return v.st[o : o+v.W]
}

// blocks expands a payload's range (nil when out of range).
func (v *verifier) blocks(p Payload) []int {
	lo, hi := int(p.Lo), int(p.Hi)
	if lo < 0 || lo >= v.B || hi < 0 || hi > v.B {
		return nil
	}
	v.blockBuf = v.blockBuf[:0]
	if hi > lo {
		for b := lo; b < hi; b++ {
			v.blockBuf = append(v.blockBuf, b)
		}
		return v.blockBuf
	}
	for b := lo; b < v.B; b++ {
		v.blockBuf = append(v.blockBuf, b)
	}
	for b := 0; b < hi; b++ {
		v.blockBuf = append(v.blockBuf, b)
	}
	return v.blockBuf
}

func set(s []uint64, r int) { s[r/64] |= 1 << (r % 64) }

func empty(s []uint64) bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

func setString(s []uint64) string {
	var parts []string
	for w, x := range s {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			parts = append(parts, fmt.Sprint(w*64+b))
			x &^= 1 << b
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (v *verifier) initial(k int) error {
	d, n, B := v.d, v.n, v.B
	switch d.Collective {
	case "allreduce", "reducescatter", "reduce":
		for r := range n {
			for b := range B {
				set(v.at(k, r, b), r)
			}
		}
	case "allgather", "gather", "sendrecv":
		for r := range n {
			set(v.at(k, r, r), r)
		}
	case "alltoall":
		for i := range n {
			for j := range n {
				set(v.at(k, i, i*n+j), i)
			}
		}
	case "broadcast", "scatter":
		for b := range B {
			set(v.at(k, d.Root, b), d.Root)
		}
	default:
		return fmt.Errorf("verify: no meaning known for collective %q", d.Collective)
	}
	return nil
}

// final checks copy k's result.
func (v *verifier) final(k int) error {
	d, n, B, W := v.d, v.n, v.B, v.W
	all := make([]uint64, W)
	for r := range n {
		set(all, r)
	}
	single := make([]uint64, W)
	want := func(r, b, from int) error { // from −1: every rank
		var w []uint64
		if from < 0 {
			w = all
		} else {
			clear(single)
			set(single, from)
			w = single
		}
		if got := v.at(k, r, b); !slices.Equal(got, w) {
			return fmt.Errorf("verify: %s copy %d: rank %d ends with block %d holding %s, want %s",
				d.Collective, k, r, b, setString(got), setString(w))
		}
		return nil
	}
	var err error
	for r := 0; r < n && err == nil; r++ {
		for b := 0; b < B && err == nil; b++ {
			switch d.Collective {
			case "allreduce":
				err = want(r, b, -1)
			case "reducescatter":
				if b == r {
					err = want(r, b, -1)
				}
			case "allgather":
				err = want(r, b, b)
			case "alltoall":
				if b%n == r {
					err = want(r, b, b/n)
				}
			case "broadcast":
				err = want(r, b, d.Root)
			case "reduce":
				if r == d.Root {
					err = want(r, b, -1)
				}
			case "gather":
				if r == d.Root {
					err = want(r, b, b)
				}
			case "scatter":
				if b == r {
					err = want(r, b, d.Root)
				}
			case "sendrecv":
				if b == mod(r-1, n) {
					err = want(r, b, b)
				}
			}
		}
	}
	return err
}

// RandomOrder draws a random execution order consistent with the
// dependencies (Kahn's algorithm choosing uniformly among ready messages).
// A DAG with a cycle yields a shorter order.
func RandomOrder(d *DAG, rng *sim.RNG) []int32 {
	left := slices.Clone(d.DepCount)
	var ready []int32
	for i, c := range left {
		if c == 0 {
			ready = append(ready, int32(i))
		}
	}
	order := make([]int32, 0, len(d.Msgs))
	for len(ready) > 0 {
		x := rng.IntN(len(ready))
		i := ready[x]
		ready[x] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		order = append(order, i)
		for _, j := range d.Successors(i) {
			if left[j]--; left[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	return order
}
