package dataplane

import (
	"cmp"
	"slices"
	"time"
)

// Snapshot is the plane's counters at T. Each value is read atomically on
// its own, so a snapshot taken while data moves is consistent to within
// the frames in flight at that instant; after Close it is exact.
type Snapshot struct {
	T     time.Time
	Pairs []PairCount // per (client, server, side) that has a connection here, sorted
	UDP   []UDPStats  // per (flow, side) started or received here, sorted
	Conns []ConnStats // per (connection, side), sorted
	// EventsDropped counts events lost because nobody read Events (see
	// eventQueue); > 0 means a DAG run cannot be trusted.
	EventsDropped int64
	// Refused counts inbound connections dropped (not allowed, bad hello,
	// other session); LastRefusal says why the latest was.
	Refused     int64
	LastRefusal string
	// Stray counts datagrams that were not this run's.
	Stray int64
}

// PairCount is one (client endpoint, server endpoint) pair as one side
// sees it: the sender counts completions acked and payload bytes written,
// the receiver frames and payload bytes read. Pairs with a connection are
// listed even when nothing moved: a stalled pair shows as zeros.
type PairCount struct {
	Client, Server int
	Side           Side
	Completions    int64
	Bytes          int64
}

// UDPStats is one flow at one side. The sender fills Sent, SendErrors and
// Bytes; the receiver Received, Bytes and the sequence counts (see
// SeqCounter for their definitions).
type UDPStats struct {
	Flow, From, To int
	Side           Side
	Sent           int64
	SendErrors     int64
	// Slips counts the times the sender fell more than maxLate (5 ms)
	// behind its schedule and restarted it from now: the host could not
	// keep the rate, and Sent says what it did instead.
	Slips      int64
	LastError  string
	Done       bool // sender: the flow has ended
	Received   int64
	Bytes      int64
	Lost       int64
	Reordered  int64
	Duplicates int64
	Late       int64
	Jitter     time.Duration
}

// ConnStats is one connection at one side.
type ConnStats struct {
	ID, From, To int
	Side         Side
	Bytes        int64 // sender: payload written; receiver: payload read
	Acked        int64 // sender: payload acknowledged
	Completions  int64 // sender: acks received; receiver: frames read whole
	Outstanding  int64 // sender: frames written, not yet acked
	// MaxOutstanding is the most frames ever outstanding at once: a
	// stream's Depth, if it ever filled.
	MaxOutstanding int64
	CC             string   // sender: congestion control read back after connect
	TCP            *TCPInfo // nil when the kernel could not be asked
	Closed         bool
	Err            string // why it failed; "" if it did not
}

// Snapshot reads every counter now; cheap (a TCP_INFO getsockopt per open
// connection, no lock held on the data path).
func (p *Plane) Snapshot() Snapshot {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.clients)+len(p.servers))
	for _, c := range p.clients {
		conns = append(conns, c)
	}
	for _, c := range p.servers {
		conns = append(conns, c)
	}
	flows := make([]*udpSend, 0, len(p.flows))
	for _, f := range p.flows {
		flows = append(flows, f)
	}
	rxs := make([]*udpRecv, 0, len(p.eps))
	for _, e := range p.eps {
		rxs = append(rxs, e.rx)
	}
	p.mu.Unlock()

	s := Snapshot{T: time.Now(), EventsDropped: p.events.dropped.Load(), Refused: p.refused.Load(), Stray: p.stray.Load()}
	if r := p.lastRefusal.Load(); r != nil {
		s.LastRefusal = *r
	}
	pairs := map[PairCount]*PairCount{}
	for _, c := range conns {
		cs := c.stats()
		s.Conns = append(s.Conns, cs)
		key := PairCount{Client: c.from, Server: c.to, Side: c.side}
		pc := pairs[key]
		if pc == nil {
			pc = &PairCount{Client: c.from, Server: c.to, Side: c.side}
			pairs[key] = pc
		}
		pc.Completions += cs.Completions
		pc.Bytes += cs.Bytes
	}
	for _, pc := range pairs {
		s.Pairs = append(s.Pairs, *pc)
	}
	for _, f := range flows {
		st := UDPStats{Flow: f.flow.ID, From: f.flow.From, To: f.flow.To, Side: SideSender,
			Sent: f.sent.Load(), SendErrors: f.errs.Load(), Slips: f.slips.Load(), Bytes: f.bytes.Load(), Done: f.done.Load()}
		if e := f.lastErr.Load(); e != nil {
			st.LastError = *e
		}
		s.UDP = append(s.UDP, st)
	}
	for _, r := range rxs {
		s.UDP = append(s.UDP, r.stats()...)
	}
	slices.SortFunc(s.Conns, func(a, b ConnStats) int { return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Side, b.Side)) })
	slices.SortFunc(s.Pairs, func(a, b PairCount) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.Server, b.Server), cmp.Compare(a.Side, b.Side))
	})
	slices.SortFunc(s.UDP, func(a, b UDPStats) int { return cmp.Or(cmp.Compare(a.Flow, b.Flow), cmp.Compare(a.Side, b.Side)) })
	return s
}

func (c *conn) stats() ConnStats {
	cs := ConnStats{
		ID: c.id, From: c.from, To: c.to, Side: c.side,
		Bytes: c.bytes.Load(), Acked: c.acked.Load(), Completions: c.completions.Load(),
		Outstanding: c.out.Load(), MaxOutstanding: c.maxOut.Load(),
		CC: c.cc, Closed: c.closed.Load(), Err: c.failed(),
	}
	if !cs.Closed {
		if ti, err := readTCPInfo(c.nc); err == nil {
			cs.TCP = ti
		}
	}
	if cs.TCP == nil {
		cs.TCP = c.final.Load()
	}
	return cs
}

func (r *udpRecv) stats() []UDPStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]UDPStats, 0, len(r.flows))
	for id, f := range r.flows {
		out = append(out, UDPStats{
			Flow: int(id), From: f.from, To: f.to, Side: SideReceiver,
			Received: f.seq.Received, Bytes: f.bytes, Lost: f.seq.Lost(),
			Reordered: f.seq.Reordered, Duplicates: f.seq.Duplicates, Late: f.seq.Late,
			Jitter: f.seq.Jitter(),
		})
	}
	return out
}
