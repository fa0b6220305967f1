package lab

import (
	"fabriclab/transport/roce"
	"fabriclab/transport/tcp"
	"fabriclab/transport/uet"
)

// Per-flow telemetry (sim.telemetry.flows): what a transport can say of one
// message while it is in progress. Only the messages asked for are
// followed, so the cost is a map lookup per post and nothing per packet.

// flowWatch is one followed message on a connection: where it starts in
// the connection's sequence space (PSNs for RoCE, stream bytes for TCP),
// taken as it is posted.
type flowWatch struct {
	conn   int32
	off    int64
	bytes  int64
	posted bool
}

// connProbe is how a connection transport reports a followed message.
type connProbe[C any] struct {
	metric string
	// offset is where the next message posted on c starts.
	offset func(c C) int64
	// state is the message's metric and its payload delivered in order.
	state func(c C, w *flowWatch) (float64, int64)
}

// roceProbe: DCQCN's current rate of the message's queue pair, and its
// packets the receiver has in order.
func roceProbe(t *roce.Transport, mtu int64) connProbe[roce.QP] {
	return connProbe[roce.QP]{
		metric: "rate_gbps",
		offset: func(qp roce.QP) int64 { return t.Sender(qp).End() },
		state: func(qp roce.QP, w *flowWatch) (float64, int64) {
			pk := t.Receiver(qp).Expected() - w.off
			return float64(t.Sender(qp).Rate()) / 1e9, clampBytes(pk*mtu, w.bytes)
		},
	}
}

// uetProbe: NSCC's window, and the message's packets below the
// receiver's cumulative point (what arrived in order: a lower bound on
// what arrived).
func uetProbe(t *uet.Transport, mtu int64) connProbe[uet.Conn] {
	return connProbe[uet.Conn]{
		metric: "cwnd_bytes",
		offset: func(c uet.Conn) int64 { _, _, end := t.Sender(c).PSNs(); return end },
		state: func(c uet.Conn, w *flowWatch) (float64, int64) {
			return t.Sender(c).Window(), clampBytes((t.Receiver(c).Cum()-w.off)*mtu, w.bytes)
		},
	}
}

// tcpProbe: the connection's congestion window, and the message's bytes
// of the stream received in order.
func tcpProbe(t *tcp.Transport) connProbe[tcp.Conn] {
	return connProbe[tcp.Conn]{
		metric: "cwnd_bytes",
		offset: func(c tcp.Conn) int64 { return int64(t.Sender(c).End()) },
		state: func(c tcp.Conn, w *flowWatch) (float64, int64) {
			return float64(t.Sender(c).Cwnd()), clampBytes(int64(t.Receiver(c).Received())-w.off, w.bytes)
		},
	}
}

// clampBytes is b within [0, most].
func clampBytes(b, most int64) int64 { return max(0, min(b, most)) }

func (l *connLayer[C]) watchFlows(msgs []int32) string {
	l.watched = make(map[int32]*flowWatch, len(msgs))
	for _, m := range msgs {
		l.watched[m] = &flowWatch{}
	}
	return l.probe.metric
}

// flowState: the metric and where the message starts are the sender's
// (here), what arrived the receiver's (rcv).
func (l *connLayer[C]) flowState(msg int32, rcv hostTransport) (float64, int64, bool) {
	w := l.watched[msg]
	if w == nil || !w.posted {
		return 0, 0, false
	}
	v, d := l.probe.state(l.conns[w.conn], w)
	if r := rcv.(*connLayer[C]); r != l {
		_, d = r.probe.state(r.conns[w.conn], w)
	}
	return v, d, true
}

// follow notes where a followed message starts, as it is posted.
func (l *connLayer[C]) follow(conn, msg int32, bytes int64) {
	if w := l.watched[msg]; w != nil {
		*w = flowWatch{conn: conn, off: l.probe.offset(l.conns[conn]), bytes: bytes, posted: true}
	}
}

// Homa: the bytes the receiver has granted the message and received.
func (l *homaLayer) watchFlows(msgs []int32) string {
	l.watched = make(map[int32][2]int, len(msgs))
	for _, m := range msgs {
		l.watched[m] = [2]int{-1, -1}
	}
	return "granted_bytes"
}

// flowState: both figures are the receiver's (rcv), the hosts as the
// sender's transport (here) posted the message.
func (l *homaLayer) flowState(msg int32, rcv hostTransport) (float64, int64, bool) {
	hw, ok := l.watched[msg]
	if !ok || hw[0] < 0 {
		return 0, 0, false
	}
	g, r, ok := rcv.(*homaLayer).t.Progress(hw[0], hw[1], msg)
	if !ok {
		return 0, 0, true // not heard of yet at the receiver (or complete: the caller knows)
	}
	return float64(g), r, true
}
