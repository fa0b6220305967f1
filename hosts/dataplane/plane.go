package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// zeroLen is the one payload buffer every writer of a plane shares (read
// only): large enough that a big write is a few syscalls.
const zeroLen = 1 << 20

// Plane is one agent's data plane for one run: listeners on its local
// endpoints, the connections it dialled or accepted, its UDP flows, and
// the counters of all of them.
type Plane struct {
	cfg    Config
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	zero   []byte
	events *eventQueue

	mu      sync.Mutex // everything below, not the counters
	closed  bool
	local   []Endpoint
	eps     map[int]*endpoint
	peers   map[int]Peer
	clients map[int]*conn // dialled here, by conn ID
	servers map[int]*conn // accepted here, by conn ID
	flows   map[int]*udpSend

	refused     atomic.Int64 // inbound connections refused
	lastRefusal atomic.Pointer[string]
	stray       atomic.Int64 // datagrams that were not this run's

	closeOnce sync.Once
}

// endpoint is one bound local endpoint.
type endpoint struct {
	Endpoint
	ln  *net.TCPListener
	udp *net.UDPConn
	rx  *udpRecv
}

// New checks the configuration, binds a TCP listener and a UDP socket on
// every local endpoint (port 0 = any free port, the same for both) and
// starts accepting. Nothing is sent until Dial or StartUDP.
func New(cfg Config, local []Endpoint, peers []Peer) (*Plane, error) {
	if len(local) == 0 {
		return nil, errors.New("dataplane: no local endpoint")
	}
	if err := checkEndpoints(local, peers); err != nil {
		return nil, err
	}
	if cfg.CC != "" {
		avail, err := AvailableCC()
		if err != nil {
			return nil, err
		}
		if err := checkCC(cfg.CC, avail); err != nil {
			return nil, err
		}
		if err := probeCC(cfg.CC); err != nil {
			return nil, err
		}
	}
	if cfg.MaxRate < 0 {
		return nil, fmt.Errorf("dataplane: negative rate cap %d", cfg.MaxRate)
	}
	p := &Plane{
		cfg:     cfg,
		zero:    make([]byte, zeroLen),
		events:  newEventQueue(cfg.EventQueue),
		eps:     map[int]*endpoint{},
		peers:   map[int]Peer{},
		clients: map[int]*conn{},
		servers: map[int]*conn{},
		flows:   map[int]*udpSend{},
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, pr := range peers {
		pr.Addr = netip.AddrPortFrom(pr.Addr.Addr().Unmap(), pr.Addr.Port())
		p.peers[pr.ID] = pr
	}
	for _, ep := range local {
		e, err := p.bind(ep)
		if err != nil {
			p.unbind()
			p.cancel()
			return nil, err
		}
		p.eps[ep.ID] = e
		p.local = append(p.local, e.Endpoint)
	}
	p.wg.Add(1 + 2*len(p.local))
	go func() { defer p.wg.Done(); p.events.forward(p.ctx) }()
	for _, ep := range p.local {
		e := p.eps[ep.ID]
		go p.acceptLoop(e)
		go p.udpLoop(e)
	}
	return p, nil
}

func checkEndpoints(local []Endpoint, peers []Peer) error {
	seen := map[int]bool{}
	for _, ep := range local {
		if err := checkID("endpoint", ep.ID); err != nil {
			return err
		}
		if !ep.Addr.Addr().IsValid() {
			return fmt.Errorf("dataplane: endpoint %d: no address", ep.ID)
		}
		if seen[ep.ID] {
			return fmt.Errorf("dataplane: endpoint %d listed twice", ep.ID)
		}
		seen[ep.ID] = true
	}
	seenPeer := map[int]bool{}
	for _, pr := range peers {
		if err := checkID("peer", pr.ID); err != nil {
			return err
		}
		if !pr.Addr.Addr().IsValid() || pr.Addr.Port() == 0 {
			return fmt.Errorf("dataplane: peer %d: address %s is not address:port", pr.ID, pr.Addr)
		}
		if seenPeer[pr.ID] {
			return fmt.Errorf("dataplane: peer %d listed twice", pr.ID)
		}
		seenPeer[pr.ID] = true
	}
	return nil
}

// unbind closes the sockets of a New that failed half way.
func (p *Plane) unbind() {
	for _, e := range p.eps {
		e.ln.Close()
		e.udp.Close()
	}
}

// allowed is Config.Allowed with nil meaning nothing.
func (p *Plane) allowed(a netip.Addr) bool {
	return p.cfg.Allowed != nil && p.cfg.Allowed(a.Unmap())
}

// Local is the bound endpoints, with the ports the kernel chose.
func (p *Plane) Local() []Endpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Endpoint(nil), p.local...)
}

// Events delivers EventDelivered (at the receiver, with the time the last
// byte was read), and EventStarted (at the sender, as its first byte is
// written) and EventAcked (when the receiver acknowledged its last byte)
// for every posted message. The data path never waits for the
// consumer: events queue without blocking, up to Config.EventQueue
// (default DefaultEventQueue) waiting; beyond that new events are dropped
// and counted in Snapshot.EventsDropped, and a DAG run that sees a drop
// must fail. Close closes the channel; events still queued then are
// discarded.
func (p *Plane) Events() <-chan Event { return p.events.out }

// client is a dialled connection still usable for sending.
func (p *Plane) client(id int) (*conn, error) {
	p.mu.Lock()
	c := p.clients[id]
	closed := p.closed
	p.mu.Unlock()
	switch {
	case closed:
		return nil, fmt.Errorf("dataplane: conn %d: plane closed", id)
	case c == nil:
		return nil, fmt.Errorf("dataplane: conn %d: not connected", id)
	case c.failed() != "":
		return nil, fmt.Errorf("dataplane: conn %d failed: %s", id, c.failed())
	case c.closed.Load():
		return nil, fmt.Errorf("dataplane: conn %d: closed", id)
	}
	return c, nil
}

// Post queues message msg of n bytes on a dialled connection, behind the
// messages already posted there (they go before any stream write);
// Started, Delivered (at the receiver) and Acked follow on Events. If the
// connection fails later, what was queued on it is never sent:
// ConnStats.Err says so.
func (p *Plane) Post(conn int, msg int64, n int64) error {
	if n < 0 || n > maxFrameLen {
		return fmt.Errorf("dataplane: message %d: size %d outside 0…%d", msg, n, int64(maxFrameLen))
	}
	c, err := p.client(conn)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.sched.post(msg, n)
	c.mu.Unlock()
	c.wake()
	return nil
}

// StartStreams turns streams on for [start, until): each connection keeps
// Depth writes of Size outstanding. Every stream is checked before any
// starts.
func (p *Plane) StartStreams(start, until time.Time, streams []Stream) error {
	if !until.After(start) {
		return fmt.Errorf("dataplane: streams end %s before they start %s", until.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	}
	conns := make([]*conn, len(streams))
	seen := map[int]bool{}
	for i, s := range streams {
		if s.Size < 0 || s.Size > maxFrameLen {
			return fmt.Errorf("dataplane: stream on conn %d: size %d outside 0…%d", s.Conn, s.Size, int64(maxFrameLen))
		}
		if s.Depth < 1 {
			return fmt.Errorf("dataplane: stream on conn %d: depth %d, want ≥ 1", s.Conn, s.Depth)
		}
		if seen[s.Conn] {
			return fmt.Errorf("dataplane: conn %d has two streams", s.Conn)
		}
		seen[s.Conn] = true
		c, err := p.client(s.Conn)
		if err != nil {
			return err
		}
		c.mu.Lock()
		busy := c.sched.on && time.Now().Before(c.sched.until)
		c.mu.Unlock()
		if busy {
			return fmt.Errorf("dataplane: conn %d: already streaming", s.Conn)
		}
		conns[i] = c
	}
	now := time.Now()
	for i, s := range streams {
		c := conns[i]
		c.mu.Lock()
		err := c.sched.stream(now, s.Size, s.Depth, start, until)
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("dataplane: conn %d: %w", s.Conn, err)
		}
		c.wake()
	}
	return nil
}

// Close stops everything: no new connection or datagram, every socket
// closed, every goroutine returned, Events closed. Counters stay readable
// with Snapshot. Safe to call twice.
func (p *Plane) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		var conns []*conn
		for _, c := range p.clients {
			conns = append(conns, c)
		}
		for _, c := range p.servers {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		p.cancel()
		p.unbind()
		for _, c := range conns {
			c.close()
		}
		p.wg.Wait()
		close(p.events.out)
	})
	return nil
}
