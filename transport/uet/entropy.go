package uet

// LB is how a sender chooses each packet's entropy value (the UDP source
// port the switches' ECMP hashes), so how it spreads packets over paths.
type LB uint8

const (
	// Spray cycles through Entropies values, one per packet (oblivious
	// spraying).
	Spray LB = iota
	// REPS recycles entropies: a value acknowledged without an ECN mark
	// goes back in a FIFO and the next packet reuses it; with the FIFO
	// empty the sender explores the next value of the cycle.
	REPS
	// Single keeps one entropy per connection, as a RoCE QP has.
	Single
)

// entropies chooses the entropy of each packet of one connection. It is
// a pure state machine: Next for a packet sent, Good for an entropy that
// came back clean.
type entropies struct {
	lb   LB
	n    uint32 // values in the cycle
	base uint32 // this connection's first value
	next uint32 // position in the cycle
	// fifo holds clean entropies for REPS (a ring of at most n).
	fifo       []uint32
	head, size int
}

func (e *entropies) init(lb LB, n int, base uint32) {
	*e = entropies{lb: lb, n: uint32(max(n, 1)), base: base}
}

// Next is the entropy of the next packet.
func (e *entropies) Next() uint32 {
	switch e.lb {
	case Single:
		return e.base
	case REPS:
		if e.size > 0 {
			v := e.fifo[e.head]
			e.head = (e.head + 1) % len(e.fifo)
			e.size--
			return v
		}
	}
	v := e.base + e.next
	e.next = (e.next + 1) % e.n
	return v
}

// Good hears that a packet sent with entropy v was acknowledged without
// congestion (REPS reuses v).
func (e *entropies) Good(v uint32) {
	if e.lb != REPS {
		return
	}
	if e.fifo == nil {
		e.fifo = make([]uint32, e.n)
	}
	if e.size == len(e.fifo) {
		return // full: the oldest clean values are enough
	}
	e.fifo[(e.head+e.size)%len(e.fifo)] = v
	e.size++
}
