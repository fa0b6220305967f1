package fluid

import (
	"cmp"
	"math"
	"slices"

	"fabriclab/fabric"
	"fabriclab/sim"
)

type fabricPort = fabric.Port

// solve gives every flow of the component (compFlows, in connection
// order, over compLinks) its max-min fair rate by progressive filling:
// all unfrozen flows' rates rise together; the link whose remaining
// capacity over the unfrozen flows' weights on it is least saturates
// first and fixes its flows at that level, and a flow's own ceiling
// (nic.max_inflight) fixes it when the level reaches it. Weights are a
// flow's share on the link (1 on a static path, 1/k after an even split,
// the ACK fraction on the reverse path).
//
// With PFC spreading (lossless, no congestion control) a link that fixes
// a flow downstream of its source congests: its queue fills, PFC pauses
// every ingress feeding it, and the pause climbs hop by hop to the
// source. Every link the fixed flow crossed before it is then paused, and
// every other unfrozen flow on a paused link — the NIC's round-robin or
// a switch queue it shares with the congested flow — is fixed at the same
// level (a victim). Victims do not pause anything themselves.
//
// Ties are broken by link index (a ceiling before a link at the same
// level), so the result is deterministic. The links are in an indexed
// heap by share: a link's share only grows as flows on it freeze (up to
// rounding), so its key is brought up to date lazily when it reaches the
// top, and at once only when it fell; the order of saturations is that of
// the exact shares. The flows' ceilings are sorted once and merged in.
func (s *fsim) solve() {
	flows, links := s.compFlows, s.compLinks
	for _, l := range links {
		s.rem[l], s.wsum[l], s.cnt[l], s.paused[l] = max(s.capBps[l]-s.ackLoad[l], 0), 0, 0, false
	}
	eLink, eW := s.eLink, s.eW
	s.ceils = s.ceils[:0]
	for _, c := range flows {
		s.frozen[c] = false
		p := s.path[c]
		for k := p.off; k < p.off+p.n; k++ {
			l := eLink[k]
			s.wsum[l] += eW[k]
			s.cnt[l]++
		}
	}
	// A link only one flow crosses bounds that flow alone: it is a
	// ceiling of the flow (its share, rem/w, is what it would saturate
	// at), unless with PFC spreading its saturation downstream of the
	// source pauses the links before it. Such links stay out of the heap.
	for _, c := range flows {
		ce := s.ceil[c]
		p := s.path[c]
		for k := p.off; k < p.off+p.n; k++ {
			if l := eLink[k]; s.cnt[l] == 1 && (!s.spread || s.eDepth[k] == 0) {
				ce = math.Min(ce, s.share(l))
			}
		}
		if !math.IsInf(ce, 1) {
			s.ceils = append(s.ceils, ceilEnt{ce, c})
		}
	}
	// Ceilings by level, ties by flow index descending (the order of
	// their ids −1−c).
	slices.SortFunc(s.ceils, func(a, b ceilEnt) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(b.c, a.c)
	})
	h := &s.lh
	h.h = h.h[:0]
	for _, l := range links {
		if s.cnt[l] > 1 || (s.cnt[l] == 1 && s.spread && s.eDepth[s.linkUses[l][0].ent] > 0) {
			h.key[l] = s.share(l)
			h.pos[l] = int32(len(h.h))
			h.h = append(h.h, l)
		}
	}
	h.heapify()
	level := 0.0
	left := len(flows)
	ci := 0
	for left > 0 {
		// The top link, its key brought up to date (keys never exceed
		// their link's share).
		top := int32(-1)
		for len(h.h) > 0 {
			l := h.h[0]
			if s.cnt[l] == 0 {
				h.popTop()
				continue
			}
			if sh := s.share(l); sh != h.key[l] {
				h.key[l] = sh
				h.down(0)
				continue
			}
			top = l
			break
		}
		s.touchEp++
		s.touched = s.touched[:0]
		if ci < len(s.ceils) && (top < 0 || s.ceils[ci].key <= h.key[top]) {
			ce := s.ceils[ci]
			ci++
			if s.frozen[ce.c] {
				continue
			}
			level = math.Max(level, ce.key)
			s.freeze(ce.c, level)
			left--
		} else if top >= 0 {
			l := top
			h.popTop()
			level = math.Max(level, h.key[l])
			s.pq = s.pq[:0]
			for _, u := range s.linkUses[l] {
				if s.frozen[u.conn] || u.depth < 0 {
					continue // ACKs (a higher priority) are not held by data congestion
				}
				s.freeze(u.conn, level)
				left--
				if d := u.depth; s.spread && d > 0 && s.capBps[l] > 0 {
					p := s.path[u.conn]
					for k := p.off; k < p.off+p.n; k++ {
						if pl := eLink[k]; s.eDepth[k] < d && !s.paused[pl] {
							s.paused[pl] = true
							s.pq = append(s.pq, pl)
						}
					}
				}
			}
			for i := 0; i < len(s.pq); i++ {
				for _, u := range s.linkUses[s.pq[i]] {
					if !s.frozen[u.conn] && u.depth >= 0 {
						s.freeze(u.conn, level)
						left--
					}
				}
			}
		} else {
			break
		}
		for _, m := range s.touched {
			if i := h.pos[m]; s.cnt[m] > 0 && int(i) < len(h.h) && h.h[i] == m {
				if sh := s.share(m); sh < h.key[m] {
					h.key[m] = sh
					h.up(int(h.pos[m]))
				}
			}
		}
	}
	for _, c := range flows {
		if !s.frozen[c] { // crosses no link (cannot happen: a path starts at its NIC)
			s.nrate[c] = level
		}
	}
}

// freeze fixes flow c at rate r and takes it off its links' shares.
func (s *fsim) freeze(c int32, r float64) {
	s.frozen[c] = true
	s.nrate[c] = r
	p := s.path[c]
	for k := p.off; k < p.off+p.n; k++ {
		l, w := s.eLink[k], s.eW[k]
		s.rem[l] -= float64(w * r) // rounded: no fused multiply-add, the same bits on every platform
		s.wsum[l] = max(s.wsum[l]-w, 0)
		s.cnt[l]--
		if s.touch[l] != s.touchEp {
			s.touch[l] = s.touchEp
			s.touched = append(s.touched, l)
		}
	}
}

// share is what link l can still give each unit of weight on it.
func (s *fsim) share(l int32) float64 {
	w := s.wsum[l]
	if w <= 0 {
		return math.Inf(1)
	}
	return math.Max(s.rem[l], 0) / w
}

// ceilEnt is a flow's ceiling in the solver.
type ceilEnt struct {
	key float64
	c   int32
}

// linkHeap is an indexed binary min-heap of links by key, ties by index.
type linkHeap struct {
	h   []int32   // links
	pos []int32   // by link: its index in h while it is there
	key []float64 // by link
}

func (h *linkHeap) less(a, b int32) bool {
	ka, kb := h.key[a], h.key[b]
	return ka < kb || (ka == kb && a < b)
}

func (h *linkHeap) swap(i, j int) {
	h.h[i], h.h[j] = h.h[j], h.h[i]
	h.pos[h.h[i]] = int32(i)
	h.pos[h.h[j]] = int32(j)
}

func (h *linkHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.h[i], h.h[p]) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *linkHeap) down(i int) {
	n := len(h.h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(h.h[c+1], h.h[c]) {
			c++
		}
		if !h.less(h.h[c], h.h[i]) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

func (h *linkHeap) heapify() {
	for i := len(h.h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// popTop removes the top link.
func (h *linkHeap) popTop() {
	last := len(h.h) - 1
	if last > 0 {
		h.swap(0, last)
	}
	h.h = h.h[:last]
	if last > 0 {
		h.down(0)
	}
}

// fentry is an active connection in the finish heap: when its head
// message is all sent (a copy of fsim.at), and its index.
type fentry struct {
	at sim.Time
	c  int32
}

// finishHeap holds the active connections by (finish time, index), the
// keys inline; each connection knows its position (fsim.hpos).
type finishHeap struct{ h []fentry }

func (f *finishHeap) len() int { return len(f.h) }

func fless(a, b fentry) bool { return a.at < b.at || (a.at == b.at && a.c < b.c) }

func (f *finishHeap) swap(i, j int, pos []int32) {
	f.h[i], f.h[j] = f.h[j], f.h[i]
	pos[f.h[i].c] = int32(i)
	pos[f.h[j].c] = int32(j)
}

func (f *finishHeap) up(i int, pos []int32) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !fless(f.h[i], f.h[p]) {
			break
		}
		f.swap(i, p, pos)
		i = p
		moved = true
	}
	return moved
}

func (f *finishHeap) down(i int, pos []int32) {
	n := len(f.h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && fless(f.h[c+1], f.h[c]) {
			c++
		}
		if !fless(f.h[c], f.h[i]) {
			return
		}
		f.swap(i, c, pos)
		i = c
	}
}

func (f *finishHeap) push(c int32, at sim.Time, pos []int32) {
	f.h = append(f.h, fentry{at, c})
	pos[c] = int32(len(f.h) - 1)
	f.up(len(f.h)-1, pos)
}

// fix sets element i's key to at and restores the order.
func (f *finishHeap) fix(i int32, at sim.Time, pos []int32) {
	f.h[i].at = at
	if !f.up(int(i), pos) {
		f.down(int(i), pos)
	}
}

func (f *finishHeap) remove(i int32, pos []int32) {
	last := len(f.h) - 1
	c := f.h[i].c
	if int(i) != last {
		f.swap(int(i), last, pos)
	}
	f.h = f.h[:last]
	pos[c] = -1
	if int(i) != last {
		f.fix(i, f.h[i].at, pos)
	}
}

// rebuild re-heapifies after many keys changed.
func (f *finishHeap) rebuild(pos []int32) {
	for i := len(f.h)/2 - 1; i >= 0; i-- {
		f.down(i, pos)
	}
}

// arrival is a message's delivery, due at at.
type arrival struct {
	at  sim.Time
	seq uint64
	msg int32
}

// arrivalHeap is a binary min-heap of deliveries by (at, seq).
type arrivalHeap struct{ h []arrival }

func (a *arrivalHeap) len() int { return len(a.h) }

func aless(x, y arrival) bool { return x.at < y.at || (x.at == y.at && x.seq < y.seq) }

func (a *arrivalHeap) push(x arrival) {
	a.h = append(a.h, x)
	i := len(a.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !aless(a.h[i], a.h[p]) {
			break
		}
		a.h[i], a.h[p] = a.h[p], a.h[i]
		i = p
	}
}

func (a *arrivalHeap) pop() arrival {
	top := a.h[0]
	last := len(a.h) - 1
	a.h[0] = a.h[last]
	a.h = a.h[:last]
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && aless(a.h[c+1], a.h[c]) {
			c++
		}
		if !aless(a.h[c], a.h[i]) {
			break
		}
		a.h[i], a.h[c] = a.h[c], a.h[i]
		i = c
	}
	return top
}
