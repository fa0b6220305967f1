package fluid

import (
	"math"

	"fabriclab/fabric"
	"fabriclab/sim"
)

type fabricPort = fabric.Port

// solve gives every flow of the component (compFlows, over compLinks) its
// max-min fair rate by progressive filling: all unfrozen flows' rates rise
// together; the link whose remaining capacity over the unfrozen flows'
// weights on it is least saturates first and fixes its flows at that
// level, and a flow's own ceiling (nic.max_inflight) fixes it when the
// level reaches it. Weights are a flow's share on the link (1 on a static
// path, 1/k after an even split, the ACK fraction on the reverse path).
//
// With PFC spreading (lossless, no congestion control) a link that fixes
// a flow downstream of its source congests: its queue fills, PFC pauses
// every ingress feeding it, and the pause climbs hop by hop to the
// source. Every link the fixed flow crossed before it is then paused, and
// every other unfrozen flow on a paused link — the NIC's round-robin or
// a switch queue it shares with the congested flow — is fixed at the same
// level (a victim). Victims do not pause anything themselves.
//
// Ties are broken by link index, so the result is deterministic; the heap
// gets one entry per link whose share changed per saturation, not per
// flow.
func (s *fsim) solve() {
	flows, links := s.compFlows, s.compLinks
	for _, l := range links {
		s.rem[l], s.wsum[l], s.cnt[l], s.paused[l] = max(s.capBps[l]-s.ackLoad[l], 0), 0, 0, false
	}
	for _, c := range flows {
		s.frozen[c] = false
		cn := &s.conns[c]
		for k := cn.off; k < cn.off+cn.n; k++ {
			e := &s.ents[k]
			s.wsum[e.link] += e.w
			if e.depth >= 0 {
				s.cnt[e.link]++
			}
		}
	}
	h := &s.lh
	h.e = h.e[:0]
	for _, l := range links {
		if s.cnt[l] > 0 {
			h.push(lentry{s.share(l), l})
		}
	}
	for _, c := range flows {
		if cn := &s.conns[c]; !math.IsInf(cn.ceil, 1) {
			h.push(lentry{cn.ceil, -1 - c})
		}
	}
	level := 0.0
	left := len(flows)
	for left > 0 && h.len() > 0 {
		e := h.pop()
		s.touchEp++
		s.touched = s.touched[:0]
		if e.id < 0 {
			c := -1 - e.id
			if s.frozen[c] {
				continue
			}
			level = math.Max(level, e.key)
			s.freeze(c, level)
			left--
		} else {
			l := e.id
			if s.cnt[l] == 0 || e.key != s.share(l) {
				continue // stale: the link's share changed since
			}
			level = math.Max(level, e.key)
			s.pq = s.pq[:0]
			for _, u := range s.linkUses[l] {
				if s.frozen[u.conn] || u.depth < 0 {
					continue // ACKs (a higher priority) are not held by data congestion
				}
				s.freeze(u.conn, level)
				left--
				if d := u.depth; s.spread && d > 0 && s.capBps[l] > 0 {
					cn := &s.conns[u.conn]
					for k := cn.off; k < cn.off+cn.n; k++ {
						if pe := &s.ents[k]; pe.depth >= 0 && pe.depth < d && !s.paused[pe.link] {
							s.paused[pe.link] = true
							s.pq = append(s.pq, pe.link)
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
		}
		for _, m := range s.touched {
			if s.cnt[m] > 0 {
				h.push(lentry{s.share(m), m})
			}
		}
	}
	for _, c := range flows {
		if !s.frozen[c] { // crosses no link (cannot happen: a path starts at its NIC)
			s.conns[c].nrate = level
		}
	}
}

// freeze fixes flow c at rate r and takes it off its links' shares.
func (s *fsim) freeze(c int32, r float64) {
	s.frozen[c] = true
	cn := &s.conns[c]
	cn.nrate = r
	for k := cn.off; k < cn.off+cn.n; k++ {
		e := &s.ents[k]
		l := e.link
		s.rem[l] -= e.w * r
		s.wsum[l] = max(s.wsum[l]-e.w, 0)
		if e.depth >= 0 {
			s.cnt[l]--
		}
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

// lentry is a link's share (id ≥ 0) or a flow's ceiling (id = −1 − flow).
type lentry struct {
	key float64
	id  int32
}

// linkHeap is a binary min-heap of lentry by key, ties by id.
type linkHeap struct{ e []lentry }

func (h *linkHeap) len() int { return len(h.e) }

func lless(a, b lentry) bool { return a.key < b.key || (a.key == b.key && a.id < b.id) }

func (h *linkHeap) push(x lentry) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !lless(h.e[i], h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *linkHeap) pop() lentry {
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
		if c+1 < last && lless(h.e[c+1], h.e[c]) {
			c++
		}
		if !lless(h.e[c], h.e[i]) {
			break
		}
		h.e[i], h.e[c] = h.e[c], h.e[i]
		i = c
	}
	return top
}

// finishHeap holds the active connections by (finish time, index); each
// connection knows its position (conn.heap).
type finishHeap struct{ h []int32 }

func (f *finishHeap) len() int { return len(f.h) }

func fless(cs []conn, a, b int32) bool {
	if cs[a].at != cs[b].at {
		return cs[a].at < cs[b].at
	}
	return a < b
}

func (f *finishHeap) swap(cs []conn, i, j int) {
	f.h[i], f.h[j] = f.h[j], f.h[i]
	cs[f.h[i]].heap = int32(i)
	cs[f.h[j]].heap = int32(j)
}

func (f *finishHeap) up(cs []conn, i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !fless(cs, f.h[i], f.h[p]) {
			break
		}
		f.swap(cs, i, p)
		i = p
		moved = true
	}
	return moved
}

func (f *finishHeap) down(cs []conn, i int) {
	n := len(f.h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && fless(cs, f.h[c+1], f.h[c]) {
			c++
		}
		if !fless(cs, f.h[c], f.h[i]) {
			return
		}
		f.swap(cs, i, c)
		i = c
	}
}

func (f *finishHeap) push(cs []conn, c int32) {
	f.h = append(f.h, c)
	cs[c].heap = int32(len(f.h) - 1)
	f.up(cs, len(f.h)-1)
}

// fix restores the order after the key of element i changed.
func (f *finishHeap) fix(cs []conn, i int) {
	if !f.up(cs, i) {
		f.down(cs, i)
	}
}

func (f *finishHeap) remove(cs []conn, i int) {
	last := len(f.h) - 1
	c := f.h[i]
	if i != last {
		f.swap(cs, i, last)
	}
	f.h = f.h[:last]
	cs[c].heap = -1
	if i != last {
		f.fix(cs, i)
	}
}

// rebuild re-heapifies after many keys changed.
func (f *finishHeap) rebuild(cs []conn) {
	for i := len(f.h)/2 - 1; i >= 0; i-- {
		f.down(cs, i)
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
