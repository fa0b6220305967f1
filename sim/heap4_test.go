package sim

// heap4 is the 4-ary heap the scheduler used before its calendar: the
// reference the queue is tested and benchmarked against.
type heap4 struct{ h []entry }

func (q *heap4) push(e entry) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / arity
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *heap4) pop() entry {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	q.h = h[:n]
	if n == 0 {
		return top
	}
	h = q.h
	i := 0
	for {
		c := i*arity + 1
		if c >= n {
			break
		}
		best := c
		end := min(c+arity, n)
		for j := c + 1; j < end; j++ {
			if h[j].before(&h[best]) {
				best = j
			}
		}
		if !h[best].before(&last) {
			break
		}
		h[i] = h[best]
		i = best
	}
	h[i] = last
	return top
}

const arity = 4
