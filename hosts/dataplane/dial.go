package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"
)

const (
	// dialTimeout bounds one connection's connect and hello when ctx has
	// no earlier deadline.
	dialTimeout = 10 * time.Second
	// dialParallel is how many connections are opened at once.
	dialParallel = 16
)

// Dial is the connect stage: it opens every connection (TCP_CONGESTION set
// before connect, TCP_NODELAY after), says hello and waits for the
// receiver to take it. It returns the connections that failed, by ID; the
// others are ready for Post and StartStreams. A connection to a peer
// Allowed refuses fails without a SYN being sent.
func (p *Plane) Dial(ctx context.Context, conns []Conn) []ConnError {
	type job struct {
		c    Conn
		from *endpoint
		to   Peer
	}
	var errs []ConnError
	var jobs []job
	seen := map[int]bool{}
	p.mu.Lock()
	for _, c := range conns {
		from, to, err := p.checkConn(c, seen)
		if err != nil {
			errs = append(errs, ConnError{Conn: c.ID, Err: err.Error()})
			continue
		}
		jobs = append(jobs, job{c, from, to})
	}
	p.mu.Unlock()

	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, dialParallel)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := p.dialOne(ctx, j.c, j.from, j.to); err != nil {
				mu.Lock()
				errs = append(errs, ConnError{Conn: j.c.ID, Err: err.Error()})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(errs, func(a, b ConnError) int { return a.Conn - b.Conn })
	return errs
}

// checkConn validates one connection request; p.mu is held.
func (p *Plane) checkConn(c Conn, seen map[int]bool) (*endpoint, Peer, error) {
	if p.closed {
		return nil, Peer{}, errors.New("plane closed")
	}
	if c.ID < 0 || c.ID > maxID {
		return nil, Peer{}, fmt.Errorf("ID outside 0…%d", maxID)
	}
	if seen[c.ID] {
		return nil, Peer{}, errors.New("listed twice")
	}
	seen[c.ID] = true
	if p.clients[c.ID] != nil {
		return nil, Peer{}, errors.New("already connected")
	}
	from := p.eps[c.From]
	if from == nil {
		return nil, Peer{}, fmt.Errorf("endpoint %d is not local", c.From)
	}
	to, ok := p.peers[c.To]
	if !ok {
		return nil, Peer{}, fmt.Errorf("peer %d unknown", c.To)
	}
	if !p.allowed(to.Addr.Addr()) {
		return nil, Peer{}, fmt.Errorf("%s not allowed (outside the run's hosts or --allow)", to.Addr.Addr())
	}
	return from, to, nil
}

// dialOne opens one connection and starts its writer and ack reader.
func (p *Plane) dialOne(ctx context.Context, c Conn, from *endpoint, to Peer) error {
	if !p.allowed(to.Addr.Addr()) { // checked again right before the SYN
		return fmt.Errorf("%s not allowed", to.Addr.Addr())
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	la := from.Addr.Addr()
	d := net.Dialer{
		LocalAddr: &net.TCPAddr{IP: la.AsSlice(), Zone: la.Zone()},
		Control:   ccControl(p.cfg.CC),
	}
	nc, err := d.DialContext(ctx, "tcp", to.Addr.String())
	if err != nil {
		return err
	}
	tc := nc.(*net.TCPConn)
	if err := p.sayHello(ctx, tc, c); err != nil {
		tc.Close()
		return err
	}
	cn := newConn(p, c.ID, c.From, c.To, SideSender, tc)
	cn.cc, _ = readCC(tc)
	p.mu.Lock()
	if p.closed || p.clients[c.ID] != nil {
		closed := p.closed
		p.mu.Unlock()
		tc.Close()
		if closed {
			return errors.New("plane closed")
		}
		return errors.New("already connected")
	}
	p.clients[c.ID] = cn
	p.wg.Add(2)
	p.mu.Unlock()
	go cn.writeLoop()
	go cn.ackLoop()
	return nil
}

// sayHello writes the hello and reads helloOK, within ctx.
func (p *Plane) sayHello(ctx context.Context, tc *net.TCPConn, c Conn) error {
	_ = tc.SetNoDelay(true)
	if dl, ok := ctx.Deadline(); ok {
		_ = tc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = tc.SetDeadline(time.Now()) })
	var b [helloLen]byte
	putHello(b[:], hello{Session: p.cfg.Session, Conn: uint32(c.ID), From: uint32(c.From), To: uint32(c.To)})
	if _, err := tc.Write(b[:]); err != nil {
		stop()
		return fmt.Errorf("hello: %w", err)
	}
	var h [headerLen]byte
	_, err := io.ReadFull(tc, h[:])
	if !stop() {
		return fmt.Errorf("hello: %w", context.Cause(ctx))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return errors.New("refused by the receiver (wrong session, endpoint or conn ID, or not allowed there)")
	}
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	hdr, err := parseHeader(h[:])
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if hdr.Kind != kindHelloOK || hdr.ID != uint64(c.ID) {
		return fmt.Errorf("hello answered with %s %d", hdr.Kind, hdr.ID)
	}
	return tc.SetDeadline(time.Time{})
}
