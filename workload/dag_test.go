package workload

import (
	"slices"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
)

// checkCSR checks that DepCount and Successors describe the same edges:
// message j appears in exactly DepCount[j] successor lists, and the two
// totals match.
func checkCSR(t *testing.T, d *DAG) {
	t.Helper()
	if len(d.DepCount) != len(d.Msgs) {
		t.Fatalf("%d dep counts for %d messages", len(d.DepCount), len(d.Msgs))
	}
	in := make([]int32, len(d.Msgs))
	var deps, succ int64
	for i := range d.Msgs {
		deps += int64(d.DepCount[i])
		for _, j := range d.Successors(int32(i)) {
			if j < 0 || int(j) >= len(d.Msgs) {
				t.Fatalf("message %d has successor %d out of range", i, j)
			}
			in[j]++
			succ++
		}
	}
	if deps != succ {
		t.Errorf("sum of dep counts %d, successor entries %d", deps, succ)
	}
	for j := range in {
		if in[j] != d.DepCount[j] {
			t.Errorf("message %d: DepCount %d but listed as successor %d times", j, d.DepCount[j], in[j])
		}
	}
}

// preds inverts the successor lists.
func preds(d *DAG) [][]int32 {
	p := make([][]int32, len(d.Msgs))
	for i := range d.Msgs {
		for _, j := range d.Successors(int32(i)) {
			p[j] = append(p[j], int32(i))
		}
	}
	return p
}

func TestAllToAllEveryOrderedPairOnceInAShuffledOrder(t *testing.T) {
	for _, n := range []int{2, 3, 8, 16} {
		const size = 1 << 20 * 48 // divisible by every n above
		d, err := AllToAll(n, size, sim.NewRNG(1, "alltoall"))
		if err != nil {
			t.Fatal(err)
		}
		if d.Collective != metrics.AllToAll || d.Ranks != n || d.Size != size {
			t.Errorf("n=%d: header %v %d ranks size %d", n, d.Collective, d.Ranks, d.Size)
		}
		if len(d.Msgs) != n*(n-1) {
			t.Fatalf("n=%d: %d messages, want %d", n, len(d.Msgs), n*(n-1))
		}
		seen := map[[2]int32]bool{}
		for k, m := range d.Msgs {
			i := int32(k / (n - 1)) // each rank posts its n−1 sends together
			if m.SrcRank != i || m.Src != i || m.Dst != m.DstRank {
				t.Fatalf("n=%d: message %d is %d→%d (hosts %d→%d), want source rank %d on host %d", n, k, m.SrcRank, m.DstRank, m.Src, m.Dst, i, i)
			}
			if m.SrcRank == m.DstRank || m.DstRank < 0 || int(m.DstRank) >= n {
				t.Fatalf("n=%d: bad pair %d→%d", n, m.SrcRank, m.DstRank)
			}
			if seen[[2]int32{m.SrcRank, m.DstRank}] {
				t.Fatalf("n=%d: pair %d→%d twice", n, m.SrcRank, m.DstRank)
			}
			seen[[2]int32{m.SrcRank, m.DstRank}] = true
			if m.Bytes != size/int64(n) || m.At != 0 || m.Channel != 0 {
				t.Errorf("n=%d: message %d: %d B at %v channel %d, want %d B at 0", n, k, m.Bytes, m.At, m.Channel, size/int64(n))
			}
			if d.DepCount[k] != 0 || len(d.Successors(int32(k))) != 0 {
				t.Errorf("n=%d: message %d has dependencies", n, k)
			}
		}
		checkCSR(t, d)
	}

	order := func(seed uint64) [][]int32 {
		const n = 8
		d, err := AllToAll(n, 8<<20, sim.NewRNG(seed, "alltoall"))
		if err != nil {
			t.Fatal(err)
		}
		o := make([][]int32, n)
		for _, m := range d.Msgs {
			o[m.SrcRank] = append(o[m.SrcRank], m.DstRank)
		}
		return o
	}
	a, same, other := order(1), order(1), order(2)
	staggered, differ := 0, 0
	for i := range a {
		if !slices.Equal(a[i], same[i]) {
			t.Errorf("seed 1 twice: rank %d posts %v then %v", i, a[i], same[i])
		}
		if !slices.Equal(a[i], other[i]) {
			differ++
		}
		st := true
		for k, j := range a[i] {
			st = st && int(j) == (i+1+k)%8
		}
		if st {
			staggered++
		}
	}
	if differ == 0 {
		t.Errorf("seeds 1 and 2 give the same send orders")
	}
	if staggered > 1 {
		t.Errorf("%d of 8 ranks post in the staggered order i+1, i+2, …", staggered)
	}

	if _, err := AllToAll(1, 100, sim.NewRNG(1, "x")); err == nil {
		t.Errorf("1-rank all-to-all accepted")
	}
}

// The ring all-reduce DAG moves data correctly: executing its messages in
// any order the dependencies allow (a seeded random topological order),
// with rank i sending chunk (i−k) mod n at step k, adding it in during the
// n−1 reduce-scatter steps and overwriting during the n−1 all-gather steps,
// every rank ends with every chunk reduced over all n ranks exactly once.
func TestRingAllReduceDAGReducesEveryChunk(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8} {
		size := int64(n) * 1000
		d, err := RingAllReduce(n, size)
		if err != nil {
			t.Fatal(err)
		}
		steps := 2 * (n - 1)
		if d.Collective != metrics.AllReduce || d.Ranks != n || d.Size != size || len(d.Msgs) != steps*n {
			t.Fatalf("n=%d: %v, %d ranks, S=%d, %d messages (want %d)", n, d.Collective, d.Ranks, d.Size, len(d.Msgs), steps*n)
		}
		checkCSR(t, d)
		p := preds(d)
		for k, m := range d.Msgs {
			step, i := k/n, k%n
			if int(m.SrcRank) != i || int(m.DstRank) != (i+1)%n || m.Bytes != size/int64(n) {
				t.Fatalf("n=%d: message %d (step %d) is %d→%d %d B, want %d→%d %d B", n, k, step, m.SrcRank, m.DstRank, m.Bytes, i, (i+1)%n, size/int64(n))
			}
			if step == 0 {
				if len(p[k]) != 0 {
					t.Errorf("n=%d: step-0 message %d waits for %v", n, k, p[k])
				}
				continue
			}
			// The previous step's message into rank i, from rank i−1.
			want := int32((step-1)*n + (i-1+n)%n)
			if len(p[k]) != 1 || p[k][0] != want {
				t.Errorf("n=%d: message %d (step %d, rank %d) waits for %v, want [%d]", n, k, step, i, p[k], want)
			}
			if d.Msgs[want].DstRank != m.SrcRank {
				t.Errorf("n=%d: dependency %d does not arrive at rank %d", n, want, i)
			}
		}

		for seed := uint64(0); seed < 20; seed++ {
			// val[r][c]: sum of 1<<contributor over what rank r holds of chunk c.
			val := make([][]int64, n)
			for r := range val {
				val[r] = make([]int64, n)
				for c := range val[r] {
					val[r][c] = 1 << r
				}
			}
			left := slices.Clone(d.DepCount)
			var ready []int32
			for k := range d.Msgs {
				if left[k] == 0 {
					ready = append(ready, int32(k))
				}
			}
			rng := sim.NewRNG(seed, "topo-order")
			done := 0
			for len(ready) > 0 {
				x := rng.IntN(len(ready))
				k := ready[x]
				ready = slices.Delete(ready, x, x+1)
				m := d.Msgs[k]
				step, src, dst := int(k)/n, int(m.SrcRank), int(m.DstRank)
				c := ((src-step)%n + n) % n
				if step < n-1 {
					val[dst][c] += val[src][c]
				} else {
					val[dst][c] = val[src][c]
				}
				done++
				for _, j := range d.Successors(k) {
					if left[j]--; left[j] == 0 {
						ready = append(ready, j)
					}
				}
			}
			if done != len(d.Msgs) {
				t.Fatalf("n=%d: only %d of %d messages ever became ready", n, done, len(d.Msgs))
			}
			all := int64(1)<<n - 1
			for r := range val {
				for c, v := range val[r] {
					if v != all {
						t.Fatalf("n=%d order %d: rank %d holds chunk %d = %b, want %b", n, seed, r, c, v, all)
					}
				}
			}
		}
	}
	if _, err := RingAllReduce(1, 100); err == nil {
		t.Errorf("1-rank ring accepted")
	}
}

func TestPermutationIsADerangement(t *testing.T) {
	for _, n := range []int{2, 3, 7, 32} {
		d, err := Permutation(n, 5000, sim.NewRNG(3, "perm"))
		if err != nil {
			t.Fatal(err)
		}
		if d.Collective != metrics.Permutation || d.Ranks != n || d.Size != 5000 || len(d.Msgs) != n {
			t.Fatalf("n=%d: %v %d ranks S=%d %d messages", n, d.Collective, d.Ranks, d.Size, len(d.Msgs))
		}
		dsts := map[int32]bool{}
		for i, m := range d.Msgs {
			if int(m.Src) != i || m.Dst == m.Src || m.Bytes != 5000 || d.DepCount[i] != 0 {
				t.Errorf("n=%d: message %d is %d→%d %d B", n, i, m.Src, m.Dst, m.Bytes)
			}
			if dsts[m.Dst] || m.Dst < 0 || int(m.Dst) >= n {
				t.Errorf("n=%d: destination %d repeated or out of range", n, m.Dst)
			}
			dsts[m.Dst] = true
		}
		checkCSR(t, d)
	}
	dst := func(seed uint64) []int32 {
		d, err := Permutation(32, 1, sim.NewRNG(seed, "perm"))
		if err != nil {
			t.Fatal(err)
		}
		var o []int32
		for _, m := range d.Msgs {
			o = append(o, m.Dst)
		}
		return o
	}
	if !slices.Equal(dst(5), dst(5)) {
		t.Errorf("same seed, different permutations")
	}
	if slices.Equal(dst(5), dst(6)) {
		t.Errorf("seeds 5 and 6 give the same permutation of 32")
	}
	if _, err := Permutation(1, 1, sim.NewRNG(1, "perm")); err == nil {
		t.Errorf("1-host permutation accepted")
	}
}

func TestIncastShapeAndErrors(t *testing.T) {
	d, err := Incast(8, 3, 6, 777)
	if err != nil {
		t.Fatal(err)
	}
	if d.Collective != metrics.Incast || d.Ranks != 4 || d.Size != 777 || len(d.RankHost) != 8 {
		t.Errorf("header: %v ranks %d S %d hosts %d", d.Collective, d.Ranks, d.Size, len(d.RankHost))
	}
	var srcs []int32
	for i, m := range d.Msgs {
		if m.Dst != 6 || m.DstRank != 6 || m.Bytes != 777 || m.At != 0 || d.DepCount[i] != 0 {
			t.Errorf("message %d: %+v", i, m)
		}
		srcs = append(srcs, m.Src)
	}
	if want := []int32{7, 0, 1}; !slices.Equal(srcs, want) {
		t.Errorf("senders %v, want %v (the hosts after the target, wrapping)", srcs, want)
	}
	checkCSR(t, d)
	if d, err := Incast(4, 3, 0, 1); err != nil || len(d.Msgs) != 3 {
		t.Errorf("3-to-1 on 4 hosts: %v", err)
	}
	for _, c := range [][3]int{{4, 4, 0}, {4, 0, 0}, {4, 1, 4}, {4, 1, -1}, {1, 1, 0}} {
		if _, err := Incast(c[0], c[1], c[2], 1); err == nil {
			t.Errorf("Incast(hosts %d, senders %d, target %d) accepted", c[0], c[1], c[2])
		}
	}
}

func TestFlowsKeepsStartAndChannel(t *testing.T) {
	specs := []FlowSpec{
		{Src: 0, Dst: 1, Bytes: 100},
		{Src: 2, Dst: 1, Bytes: 2000, Start: 10 * units.Microsecond},
		{Src: 0, Dst: 1, Bytes: 30, Start: 3 * units.Millisecond},
	}
	d, err := Flows(3, specs)
	if err != nil {
		t.Fatal(err)
	}
	if d.Collective != metrics.FlowList || d.Size != 2130 || d.Ranks != 3 || len(d.Msgs) != 3 {
		t.Fatalf("header %v S=%d ranks %d msgs %d", d.Collective, d.Size, d.Ranks, len(d.Msgs))
	}
	for i, m := range d.Msgs {
		f := specs[i]
		if int(m.Src) != f.Src || int(m.Dst) != f.Dst || m.Bytes != f.Bytes || m.At != f.Start || m.Channel != int32(i) || d.DepCount[i] != 0 {
			t.Errorf("flow %d: %+v from %+v", i, m, f)
		}
	}
	checkCSR(t, d)
	for _, bad := range []FlowSpec{{Src: 3, Dst: 0}, {Src: 0, Dst: 3}, {Src: -1, Dst: 0}, {Src: 0, Dst: -1}} {
		_, err := Flows(3, []FlowSpec{{Src: 0, Dst: 1, Bytes: 1}, bad})
		if err == nil || !strings.Contains(err.Error(), "flow 2") {
			t.Errorf("flow %+v: err %v, want an error naming flow 2", bad, err)
		}
	}
}

// Hand-built DAG: a diamond plus an independent message.
func TestSuccessorsMatchDepCount(t *testing.T) {
	d := &DAG{RankHost: []int{0, 1, 2, 3}}
	a := d.Add(d.msg(0, 1, 1))
	b := d.Add(d.msg(1, 2, 1), a)
	c := d.Add(d.msg(1, 3, 1), a)
	e := d.Add(d.msg(2, 3, 1), b, c)
	f := d.Add(d.msg(3, 0, 1))
	d.Finish()
	checkCSR(t, d)
	for _, tc := range []struct {
		i    int32
		succ []int32
		deps int32
	}{{a, []int32{b, c}, 0}, {b, []int32{e}, 1}, {c, []int32{e}, 1}, {e, nil, 2}, {f, nil, 0}} {
		if got := d.Successors(tc.i); !slices.Equal(got, tc.succ) || d.DepCount[tc.i] != tc.deps {
			t.Errorf("message %d: successors %v deps %d, want %v and %d", tc.i, got, d.DepCount[tc.i], tc.succ, tc.deps)
		}
	}
}
