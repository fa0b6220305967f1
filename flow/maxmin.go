// Package flow is fabriclab's flow-level analysis: instead of simulating
// packets it gives every flow its max-min fair rate on the links of its
// (static) path by progressive filling, names each flow's bottleneck link,
// and reports link loads and ECMP collision statistics. It answers in
// milliseconds for thousands of hosts, where the packet simulator takes
// minutes, and is what a fluid model (and InfiniBand congestion tools)
// predict: with lossless flow control (PFC) the packet simulator can be
// worse, because a paused queue slows every flow that shares it, not only
// the ones crossing the bottleneck (README, "Results and reproductions",
// reproduction 3).
package flow

import "math"

// Link is a directed link (an egress port) with its capacity in bits per
// second.
type Link struct {
	Name     string
	Capacity float64
}

// MaxMin returns the max-min fair rate (bits per second) of every flow,
// flows[f] listing the indexes of the links flow f crosses. A flow that
// crosses no link is unconstrained: its rate is +Inf (Analyze always puts
// the source NIC's link in a path, so it never sees one).
func MaxMin(links []Link, flows [][]int) []float64 {
	r, _ := Solve(links, flows)
	return r
}

// Solve is MaxMin that also returns each flow's bottleneck: the link that
// saturated when the flow's rate was fixed (−1 for a flow without links).
//
// Progressive filling: every unfixed flow's rate rises together; the link
// whose remaining capacity divided by its unfixed flows is smallest
// saturates first and fixes its flows at that share, which is taken off the
// other links they cross. A heap keyed by that share (ties broken by link
// index) makes it O(P log P) for P link crossings, and deterministic. A link
// listed twice in one path counts twice.
func Solve(links []Link, flows [][]int) (rates []float64, bottleneck []int) {
	nl := len(links)
	rates = make([]float64, len(flows))
	bottleneck = make([]int, len(flows))
	// CSR: the flows on each link.
	start := make([]int32, nl+1)
	for _, p := range flows {
		for _, l := range p {
			start[l+1]++
		}
	}
	for l := 0; l < nl; l++ {
		start[l+1] += start[l]
	}
	on := make([]int32, start[nl])
	pos := append([]int32(nil), start[:nl]...)
	for f, p := range flows {
		for _, l := range p {
			on[pos[l]] = int32(f)
			pos[l]++
		}
	}
	rem := make([]float64, nl)
	n := make([]int32, nl) // unfixed crossings
	h := &linkHeap{}
	for l := range links {
		rem[l] = links[l].Capacity
		n[l] = start[l+1] - start[l]
		if n[l] > 0 {
			h.push(entry{share(rem[l], n[l]), int32(l)})
		}
	}
	fixed := make([]bool, len(flows))
	for f, p := range flows {
		if len(p) == 0 {
			rates[f], bottleneck[f], fixed[f] = math.Inf(1), -1, true
		}
	}
	level := 0.0
	for h.len() > 0 {
		e := h.pop()
		l := int(e.link)
		if n[l] == 0 || e.share != share(rem[l], n[l]) {
			continue // stale: the link's share changed since this entry
		}
		level = math.Max(level, e.share) // rounding never lowers the level
		for _, f := range on[start[l]:start[l+1]] {
			if fixed[f] {
				continue
			}
			fixed[f] = true
			rates[f], bottleneck[f] = level, l
			for _, m := range flows[f] {
				rem[m] -= level
				n[m]--
				if m != l && n[m] > 0 {
					h.push(entry{share(rem[m], n[m]), int32(m)})
				}
			}
		}
	}
	return rates, bottleneck
}

func share(rem float64, n int32) float64 { return math.Max(rem, 0) / float64(n) }

type entry struct {
	share float64
	link  int32
}

// linkHeap is a binary min-heap of (share, link), ties by link index.
type linkHeap struct{ e []entry }

func (h *linkHeap) len() int { return len(h.e) }

func less(a, b entry) bool {
	return a.share < b.share || (a.share == b.share && a.link < b.link)
}

func (h *linkHeap) push(x entry) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(h.e[i], h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *linkHeap) pop() entry {
	top := h.e[0]
	last := len(h.e) - 1
	h.e[0] = h.e[last]
	h.e = h.e[:last]
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && less(h.e[c+1], h.e[c]) {
			c++
		}
		if !less(h.e[c], h.e[i]) {
			break
		}
		h.e[i], h.e[c] = h.e[c], h.e[i]
		i = c
	}
	return top
}
