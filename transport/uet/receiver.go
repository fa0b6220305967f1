package uet

import (
	"math/bits"
	"sort"
)

func trailing(b uint64) int { return bits.TrailingZeros64(b) }

// Receiver is the receiving half of one UET connection, a pure state
// machine: OnData for each data packet (whole or trimmed) returns the
// ACK or NACK to send and the messages it completed.
//
// Packets are taken in any order (reliable unordered delivery): the
// receiver keeps the cumulative point cum (every PSN below arrived) and
// the set of PSNs above it that arrived; a duplicate changes nothing but
// is acknowledged again. A message is complete when all its packets have
// arrived, whatever came before it. Every whole packet draws an ACK (cum,
// its PSN, the bitmap of the 64 PSNs after cum, its ECN mark and entropy,
// its send time); a trimmed one a NACK naming its PSN.
type Receiver struct {
	cum  int64
	got  psnSet // PSNs above cum that arrived
	msgs []rmsg // messages with packets outstanding, by first PSN
	head int
	// Pending is what the sender said it still had to send, in the
	// newest packet (highest PSN) that arrived (RCCC's demand).
	Pending int64
	maxSeen int64 // one past the highest PSN that arrived
}

type rmsg struct {
	first, packets int64
	got            int64
	id             int32
}

// Reply is what the receiver sends back for one data packet.
type Reply struct {
	Nack bool // the packet was trimmed: resend PSN
	Ack
	// New: the packet was not a duplicate; Payload the bytes it delivered.
	New     bool
	Payload int32
}

// OnData takes data packet d (trimmed: its payload was cut off) and
// appends the ids of the messages it completed to done.
func (r *Receiver) OnData(d *Data, trimmed bool, done []int32) (Reply, []int32) {
	rp := Reply{}
	rp.PSN, rp.Entropy = d.PSN, d.Entropy
	if trimmed {
		rp.Nack = true
		rp.Cum = r.cum
		return rp, done
	}
	if d.PSN >= r.cum && !r.got.has(d.PSN) {
		rp.New, rp.Payload = true, d.Payload
		r.got.add(d.PSN)
		if d.PSN+1 >= r.maxSeen {
			// The newest packet says what is left (an older one arriving
			// late, sprayed, would say more than there is).
			r.maxSeen, r.Pending = d.PSN+1, d.Pending
		}
		if m := r.msg(d); m != nil {
			m.got++
			if m.got == m.packets {
				done = append(done, m.id)
			}
		}
		if d.PSN == r.cum {
			r.cum = r.got.firstMissing(r.cum)
			r.got.drop(r.cum)
		}
		r.compact()
	}
	rp.Cum = r.cum
	rp.Bits = r.got.bitsFrom(r.cum + 1)
	return rp, done
}

// msg finds or records the message of d.
func (r *Receiver) msg(d *Data) *rmsg {
	ms := r.msgs[r.head:]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].first >= d.MsgFirst })
	if i < len(ms) && ms[i].first == d.MsgFirst {
		return &ms[i]
	}
	// A message seen for the first time: insert it in order.
	r.msgs = append(r.msgs, rmsg{})
	ms = r.msgs[r.head:]
	copy(ms[i+1:], ms[i:])
	ms[i] = rmsg{first: d.MsgFirst, packets: d.MsgPackets, id: d.Msg}
	return &ms[i]
}

// compact drops the complete messages at the front.
func (r *Receiver) compact() {
	for r.head < len(r.msgs) && r.msgs[r.head].got == r.msgs[r.head].packets {
		r.head++
	}
	if r.head == len(r.msgs) {
		r.msgs, r.head = r.msgs[:0], 0
	} else if r.head > 64 && r.head > len(r.msgs)/2 {
		n := copy(r.msgs, r.msgs[r.head:])
		r.msgs, r.head = r.msgs[:n], 0
	}
}

// Cum is the cumulative point: every PSN below it arrived.
func (r *Receiver) Cum() int64 { return r.cum }

// Complete reports whether every message that arrived in part is whole.
func (r *Receiver) Complete() bool { return r.head == len(r.msgs) }
