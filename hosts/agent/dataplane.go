package agent

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"fabriclab/hosts/dataplane"
	"fabriclab/hosts/wire"
)

// The agent's real data plane: package dataplane behind the Plane
// interface, its types converted to and from wire's.

// useDataplane fills the hooks a Config leaves nil with dataplane's.
func useDataplane(c *Config) {
	if c.NewPlane == nil {
		c.NewPlane = newDataplane
	}
	if c.AvailableCC == nil {
		c.AvailableCC = dataplane.AvailableCC
	}
	if c.HostCounters == nil {
		c.HostCounters = readHostCounters
	}
}

// readHostCounters reads the host's counters with the NICs of the run's
// local addresses.
func readHostCounters(ctx context.Context, local []netip.Addr) (wire.HostCounters, map[string]string) {
	var ifaces []string
	for _, a := range local {
		if ifc, err := dataplane.InterfaceOf(a); err == nil && !slices.Contains(ifaces, ifc) {
			ifaces = append(ifaces, ifc)
		}
	}
	h := dataplane.ReadHostCounters(ctx, ifaces...)
	return h.Values, h.Unavailable
}

type realPlane struct {
	p      *dataplane.Plane
	events chan wire.Event
	stop   chan struct{} // closed by Close: convert stops waiting for a reader
	once   sync.Once
}

func newDataplane(ps PlaneSpec) (Plane, error) {
	local := make([]dataplane.Endpoint, len(ps.Local))
	for i, e := range ps.Local {
		local[i] = dataplane.Endpoint{ID: e.ID, Addr: e.Addr}
	}
	peers := make([]dataplane.Peer, len(ps.Peers))
	for i, e := range ps.Peers {
		peers[i] = dataplane.Peer{ID: e.ID, Addr: e.Addr}
	}
	p, err := dataplane.New(dataplane.Config{CC: ps.CC, Allowed: ps.Allowed, MaxRate: ps.MaxRate, Session: ps.Session}, local, peers)
	if err != nil {
		return nil, err
	}
	rp := &realPlane{p: p, events: make(chan wire.Event, 1024), stop: make(chan struct{})}
	go rp.convert()
	return rp, nil
}

// convert forwards the plane's events in wire's form until the plane
// closes, then closes its channel.
func (r *realPlane) convert() {
	defer close(r.events)
	for ev := range r.p.Events() {
		select {
		case r.events <- wire.Event{Kind: ev.Kind.String(), Msg: ev.Msg, Conn: ev.Conn, From: ev.From, To: ev.To, Bytes: ev.Bytes, T: ev.T.UnixNano()}:
		case <-r.stop:
			return
		}
	}
}

func (r *realPlane) Dial(ctx context.Context, conns []wire.Conn) []wire.ConnFailure {
	cs := make([]dataplane.Conn, len(conns))
	for i, c := range conns {
		cs[i] = dataplane.Conn{ID: c.ID, From: c.From, To: c.To}
	}
	var out []wire.ConnFailure
	for _, e := range r.p.Dial(ctx, cs) {
		out = append(out, wire.ConnFailure{Conn: e.Conn, Err: e.Err})
	}
	return out
}

func (r *realPlane) StartStreams(start, until time.Time, s []wire.Stream) error {
	ss := make([]dataplane.Stream, len(s))
	for i, x := range s {
		ss[i] = dataplane.Stream{Conn: x.Conn, Size: x.Size, Depth: x.Depth}
	}
	return r.p.StartStreams(start, until, ss)
}

func (r *realPlane) StartUDP(start, until time.Time, f []wire.UDPFlow) error {
	fs := make([]dataplane.UDPFlow, len(f))
	for i, x := range f {
		fs[i] = dataplane.UDPFlow{ID: x.ID, From: x.From, To: x.To, Rate: x.Rate, Size: x.Size}
	}
	return r.p.StartUDP(start, until, fs)
}

func (r *realPlane) Post(conn int, msg, bytes int64) error { return r.p.Post(conn, msg, bytes) }

func (r *realPlane) Events() <-chan wire.Event { return r.events }

func (r *realPlane) Close() error {
	r.once.Do(func() { close(r.stop) })
	return r.p.Close()
}

func (r *realPlane) Snapshot() wire.Checkpoint { return checkpointOf(r.p.Snapshot()) }

// checkpointOf converts a snapshot.
func checkpointOf(s dataplane.Snapshot) wire.Checkpoint {
	cp := wire.Checkpoint{
		T: s.T.UnixNano(), Pairs: make([]wire.PairCount, len(s.Pairs)),
		EventsDropped: s.EventsDropped, Refused: s.Refused, LastRefusal: s.LastRefusal, Stray: s.Stray,
	}
	for i, p := range s.Pairs {
		cp.Pairs[i] = wire.PairCount{Client: p.Client, Server: p.Server, Side: p.Side.String(), Completions: p.Completions, Bytes: p.Bytes}
	}
	for _, u := range s.UDP {
		cp.UDP = append(cp.UDP, wire.UDPStats{
			Flow: u.Flow, From: u.From, To: u.To, Side: u.Side.String(),
			Sent: u.Sent, SendErrors: u.SendErrors, LastError: u.LastError, Done: u.Done,
			Received: u.Received, Bytes: u.Bytes, Lost: u.Lost, Reordered: u.Reordered,
			Duplicates: u.Duplicates, Late: u.Late, Jitter: int64(u.Jitter),
		})
	}
	for _, c := range s.Conns {
		wc := wire.ConnStats{
			Conn: c.ID, From: c.From, To: c.To, Side: c.Side.String(),
			Bytes: c.Bytes, Acked: c.Acked, Completions: c.Completions, Outstanding: c.Outstanding,
			MaxOutstanding: c.MaxOutstanding, CC: c.CC, Closed: c.Closed, Err: c.Err,
		}
		if t := c.TCP; t != nil {
			wc.TCP = &wire.TCPInfo{
				RTT: int64(t.RTT), RTTVar: int64(t.RTTVar), Retrans: t.Retrans, BytesRetrans: t.BytesRetrans,
				Lost: t.Lost, Unacked: t.Unacked, Cwnd: t.Cwnd, DeliveredCE: t.DeliveredCE, CC: t.CC,
			}
		}
		cp.Conns = append(cp.Conns, wc)
	}
	return cp
}
