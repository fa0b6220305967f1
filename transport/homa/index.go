package homa

// The endpoint's indexes. A loaded host can have thousands of messages in
// flight (an overloaded uplink queues them all at the sender), and the
// endpoint consults them on every packet: which message sends next, when the
// next timer is due, which message a packet is for. Linear scans and Go maps
// keyed by MsgID made the per-packet cost grow with the backlog, so:
//
//   - sendQueue is a binary heap of the sendable outbound messages in SRPT
//     order, giving the head in O(1) and updates in O(log n).
//   - timerHeap holds every message whose resend timer runs, keyed by a
//     lower bound of its deadline that is corrected lazily when it reaches
//     the top (deadlines only move later, and most move on every packet).
//   - idMap is an open-addressing hash table keyed by MsgID. Go maps hash
//     MsgID (which has padding) field by field, and under the constant
//     insert/delete churn of messages their tombstones lengthen every probe
//     of a missing key; linear probing with backward-shift deletion leaves
//     none.
//
// None of them decides anything the linear versions did not: the SRPT order
// is total (fewest untransmitted bytes, then submission order), and the
// timer heap only answers "what is the earliest deadline" and "which
// messages are due"; the endpoint still handles due messages in submission
// order.

import "fabriclab/sim"

// sendQueue is a min-heap of outbound messages by (untransmitted bytes, seq).
// Each message stores its index (outMsg.si, −1 when not queued). A message's
// key changes only when it sends new bytes, and only the head sends, so a
// key only ever decreases at the root, which keeps the heap ordered.
type sendQueue []*outMsg

func sendsBefore(a, b *outMsg) bool {
	ra, rb := a.length-a.next, b.length-b.next
	return ra < rb || ra == rb && a.seq < b.seq
}

func (q *sendQueue) push(o *outMsg) {
	o.si = len(*q)
	*q = append(*q, o)
	q.up(o.si)
}

// remove takes the message at index i out of the queue.
func (q *sendQueue) remove(i int) {
	h := *q
	last := len(h) - 1
	o := h[i]
	if i != last {
		h[i] = h[last]
		h[i].si = i
	}
	h[last] = nil
	*q = h[:last]
	if i != last {
		q.down(i)
		q.up(i)
	}
	o.si = -1
}

func (q sendQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !sendsBefore(q[i], q[p]) {
			return
		}
		q[i], q[p] = q[p], q[i]
		q[i].si, q[p].si = i, p
		i = p
	}
}

func (q sendQueue) down(i int) {
	n := len(q)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && sendsBefore(q[c+1], q[c]) {
			c++
		}
		if !sendsBefore(q[c], q[i]) {
			return
		}
		q[i], q[c] = q[c], q[i]
		q[i].si, q[c].si = i, c
		i = c
	}
}

// timer is one entry of the timer heap: an outbound message (o) or an
// inbound one (m), and a time no later than its deadline.
type timer struct {
	at sim.Time
	o  *outMsg
	m  *inMsg
}

// timerHeap is a min-heap of timers by at. Each message stores its index
// (outMsg.ti, inMsg.ti, −1 when absent). Invariant: every message whose
// timer runs (an outbound one waiting, an inbound one expecting) is in the
// heap with at ≤ its deadline. Entries of messages whose timer stopped, and
// keys below the deadline, are fixed when they reach the top.
type timerHeap []timer

func (h timerHeap) setIdx(i int) {
	if t := &h[i]; t.o != nil {
		t.o.ti = i
	} else {
		t.m.ti = i
	}
}

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	i := len(*h) - 1
	h.setIdx(i)
	h.up(i)
}

// remove takes the entry at index i out of the heap.
func (h *timerHeap) remove(i int) {
	s := *h
	last := len(s) - 1
	if t := &s[i]; t.o != nil {
		t.o.ti = -1
	} else {
		t.m.ti = -1
	}
	if i != last {
		s[i] = s[last]
		s.setIdx(i)
	}
	s[last] = timer{}
	*h = s[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			return
		}
		h[i], h[p] = h[p], h[i]
		h.setIdx(i)
		h.setIdx(p)
		i = p
	}
}

func (h timerHeap) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h[c+1].at < h[c].at {
			c++
		}
		if h[i].at <= h[c].at {
			return
		}
		h[i], h[c] = h[c], h[i]
		h.setIdx(i)
		h.setIdx(c)
		i = c
	}
}

// idMap is a hash table from MsgID to V: linear probing in a power-of-two
// table at most half full, deletion by backward shift (no tombstones). It is
// never iterated, so its layout cannot influence a result.
type idMap[V any] struct {
	slots []idSlot[V]
	n     int
}

type idSlot[V any] struct {
	key  MsgID
	used bool
	val  V
}

// hash mixes the three fields of id (the finalizer of MurmurHash3).
func (id MsgID) hash() uint64 {
	c := uint64(uint32(id.Client)) << 1
	if id.Reply {
		c |= 1
	}
	h := id.RPC + c*0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// get returns the value for id and whether it is present.
func (t *idMap[V]) get(id MsgID) (V, bool) {
	if t.n > 0 {
		mask := uint64(len(t.slots) - 1)
		for i := id.hash() & mask; ; i = (i + 1) & mask {
			s := &t.slots[i]
			if !s.used {
				break
			}
			if s.key == id {
				return s.val, true
			}
		}
	}
	var zero V
	return zero, false
}

// put sets the value for id.
func (t *idMap[V]) put(id MsgID, v V) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := id.hash() & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			*s = idSlot[V]{key: id, used: true, val: v}
			t.n++
			return
		}
		if s.key == id {
			s.val = v
			return
		}
	}
}

// del removes id if present.
func (t *idMap[V]) del(id MsgID) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := id.hash() & mask
	for ; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return
		}
		if s.key == id {
			break
		}
	}
	// Backward shift: move up every later entry of the run whose home slot
	// is not in the cyclic range (i, j], so that no probe meets a hole.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if !s.used {
			break
		}
		if home := s.key.hash() & mask; (j-home)&mask >= (j-i)&mask {
			t.slots[i] = *s
			i = j
		}
	}
	t.slots[i] = idSlot[V]{}
	t.n--
}

func (t *idMap[V]) grow() {
	old := t.slots
	t.slots = make([]idSlot[V], max(16, 2*len(old)))
	t.n = 0
	for i := range old {
		if old[i].used {
			t.put(old[i].key, old[i].val)
		}
	}
}
