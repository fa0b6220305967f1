package dataplane

import "time"

// SeqWindow is how far behind the highest sequence number a datagram may
// arrive and still be told apart as reordered or duplicate.
const SeqWindow = 1 << 16

// Verdict is what SeqCounter made of one datagram.
type Verdict uint8

const (
	InOrder   Verdict = iota + 1 // the next expected, or ahead of it (skipped ones count as lost until they come)
	Reordered                    // behind the highest seen, not seen before: fills a gap
	Duplicate                    // seen before
	Late                         // more than SeqWindow behind: cannot tell reordered from duplicate
)

// SeqCounter counts one UDP flow at its receiver from sequence numbers
// (the sender numbers datagrams 0, 1, 2, …) and send timestamps. It is a
// pure state machine: Receive is fed each datagram in arrival order.
//
//   - Lost is expected − unique, expected being highest seq + 1: a gap
//     counts as lost until it is filled, and a datagram lost after the last
//     one received is not known here (the sender's Sent count tells it).
//     Late arrivals are not unique, so they stay counted as lost.
//   - Reordered: arrived after a higher seq, first time seen.
//   - Duplicates: seq already seen (within SeqWindow).
//   - Jitter: RFC 3550 §6.4.1 interarrival jitter, J += (|D| − J)/16 with
//     D the change in one-way transit between consecutive arrivals (not
//     duplicates or late ones); clock offset between hosts cancels in D.
type SeqCounter struct {
	next       uint64 // highest seq seen + 1: the expected count
	seen       [SeqWindow / 64]uint64
	Received   int64 // every datagram, duplicates included
	Unique     int64
	Reordered  int64
	Duplicates int64
	Late       int64

	haveTransit bool
	lastTransit int64 // ns, arrival − send
	jitter16    int64 // ns × 16, as RFC 3550 A.8 keeps it
}

func (s *SeqCounter) bit(seq uint64) (word *uint64, mask uint64) {
	i := seq % SeqWindow
	return &s.seen[i/64], 1 << (i % 64)
}

// Receive counts one datagram with sequence seq sent at sentNs and
// arrived at arrivedNs (Unix ns on each host's clock).
func (s *SeqCounter) Receive(seq uint64, sentNs, arrivedNs int64) Verdict {
	s.Received++
	var v Verdict
	switch {
	case seq >= s.next:
		if seq-s.next >= SeqWindow {
			clear(s.seen[:])
		} else {
			for q := s.next; q < seq; q++ { // forget what these slots held a window ago
				w, m := s.bit(q)
				*w &^= m
			}
		}
		w, m := s.bit(seq)
		*w |= m
		s.next = seq + 1
		s.Unique++
		v = InOrder
	case s.next-seq > SeqWindow:
		s.Late++
		return Late
	default:
		w, m := s.bit(seq)
		if *w&m != 0 {
			s.Duplicates++
			return Duplicate
		}
		*w |= m
		s.Unique++
		s.Reordered++
		v = Reordered
	}
	transit := arrivedNs - sentNs
	if s.haveTransit {
		d := transit - s.lastTransit
		if d < 0 {
			d = -d
		}
		s.jitter16 += d - ((s.jitter16 + 8) >> 4)
	}
	s.lastTransit, s.haveTransit = transit, true
	return v
}

// Expected is how many datagrams the sender must have sent: highest seq + 1.
func (s *SeqCounter) Expected() int64 { return int64(s.next) }

// Lost is expected − unique (see SeqCounter).
func (s *SeqCounter) Lost() int64 { return int64(s.next) - s.Unique }

// Jitter is the current RFC 3550 interarrival jitter estimate.
func (s *SeqCounter) Jitter() time.Duration { return time.Duration(s.jitter16 >> 4) }
