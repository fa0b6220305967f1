package lab

import "fabriclab/workload"

// A TCP receiver learns where each message ends in its connection's byte
// stream when the message is posted (tcp.Transport.Expect), as an
// application reading length-prefixed messages would. In a partitioned
// run the sender's part posts the message's bytes and sends its framing
// to the receiver's part, which takes it in at the window's end, with the
// frames: none of the message's bytes can arrive there before, since a
// frame between two parts takes at least the lookahead, a window's
// length. Only the order of the framing matters to the receiver, and one
// part posts every message of a connection, in order.

// framer is a transport that frames messages at their receivers.
type framer interface {
	frames() bool
	postSend(conn, msg int32, bytes int64) // the sender's half of post
	expect(conn, msg int32, bytes int64)   // the receiver's half
	framed(conn int32) int64               // where the receiver's stream ends
}

// crossFraming is message msg of bytes on connection conn, for the
// receiver's part to.
type crossFraming struct {
	conn, msg int32
	bytes     int64
	to        int
}

// post posts message i: whole, or, when another part runs its receiver
// and the transport frames, its sending half, with the framing sent to
// that part.
func (s *Sim) post(i int32, m *workload.Message) {
	conn := s.Plan.Conn[i]
	if s.framer != nil && !s.owns(int(m.Dst)) {
		s.framer.postSend(conn, i, m.Bytes)
		to := s.hostPart(int(m.Dst))
		s.framing = append(s.framing, crossFraming{conn: conn, msg: i, bytes: m.Bytes, to: to})
		return
	}
	s.tr.post(conn, i, int(m.Src), int(m.Dst), m.Bytes)
	s.framedHere(conn, i)
}

// takeFraming takes in, as part k, the framing the other parts sent it,
// each part's in the order it posted.
func (s *Sim) takeFraming(k int, sims []*Sim) {
	for _, o := range sims {
		for _, r := range o.framing {
			if r.to == k {
				s.framer.expect(r.conn, r.msg, r.bytes)
				s.framedHere(r.conn, r.msg)
			}
		}
	}
}

// framedHere notes, in the part of message i's receiver, where i ends in
// its connection's stream, when another part waits on its delivery: the
// segment that carries that byte is the message's last (partition_deps.go).
func (s *Sim) framedHere(conn, i int32) {
	c := s.cross
	if c == nil || c.ends == nil || !c.relevant[i] {
		return
	}
	m := &s.DAG.Msgs[i]
	_, dst, _, dqp := s.tr.tuple(conn, i, int(m.Src), int(m.Dst))
	k := holdKey{dst, dqp}
	c.ends[k] = append(c.ends[k], streamEnd{msg: i, end: s.framer.framed(conn)})
}
