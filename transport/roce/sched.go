package roce

// qpHeap orders rate-limited QPs by the time they may send next (SendAt) (ties by QP
// index, so the order is deterministic).
type qpHeap struct{ h []*sendQP }

func (h *qpHeap) len() int     { return len(h.h) }
func (h *qpHeap) min() *sendQP { return h.h[0] }
func (h *qpHeap) less(i, j int) bool {
	a, b := h.h[i], h.h[j]
	if a.SendAt() != b.SendAt() {
		return a.SendAt() < b.SendAt()
	}
	return a.idx < b.idx
}

func (h *qpHeap) swap(i, j int) {
	h.h[i], h.h[j] = h.h[j], h.h[i]
	h.h[i].heapIdx = i + 1
	h.h[j].heapIdx = j + 1
}

func (h *qpHeap) push(q *sendQP) {
	h.h = append(h.h, q)
	i := len(h.h) - 1
	q.heapIdx = i + 1
	h.up(i)
}

// up restores the order after the key of element i decreased.
func (h *qpHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *qpHeap) pop() *sendQP {
	top := h.h[0]
	last := len(h.h) - 1
	h.swap(0, last)
	h.h[last] = nil
	h.h = h.h[:last]
	top.heapIdx = 0
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h.h) {
			break
		}
		m := l
		if r := l + 1; r < len(h.h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return top
}
