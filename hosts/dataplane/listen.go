package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// handshakeTimeout bounds how long an accepted connection may take to say
// hello before it is dropped.
const handshakeTimeout = 5 * time.Second

// udpReadBuffer is asked of the kernel for every UDP socket (it caps the
// request at net.core.rmem_max): bursts from paced senders land here.
const udpReadBuffer = 8 << 20

// bind opens the TCP listener and the UDP socket of one endpoint on the
// same port; with port 0 it retries until the port the kernel gave TCP is
// free for UDP too.
func (p *Plane) bind(ep Endpoint) (*endpoint, error) {
	lc := net.ListenConfig{Control: ccControl(p.cfg.CC)}
	tries := 1
	if ep.Addr.Port() == 0 {
		tries = 20
	}
	var uerr error
	for range tries {
		ln, err := lc.Listen(context.Background(), "tcp", ep.Addr.String())
		if err != nil {
			return nil, fmt.Errorf("dataplane: endpoint %d: %w", ep.ID, err)
		}
		tl := ln.(*net.TCPListener)
		bound := netip.AddrPortFrom(ep.Addr.Addr(), tl.Addr().(*net.TCPAddr).AddrPort().Port())
		uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(bound))
		if err == nil {
			_ = uc.SetReadBuffer(udpReadBuffer)
			_ = uc.SetWriteBuffer(udpReadBuffer)
			e := &endpoint{Endpoint: Endpoint{ID: ep.ID, Addr: bound}, ln: tl, udp: uc}
			e.rx = newUDPRecv(e.ID)
			return e, nil
		}
		tl.Close()
		uerr = err
	}
	return nil, fmt.Errorf("dataplane: endpoint %d: %w", ep.ID, uerr)
}

// acceptLoop takes connections on one endpoint until Close. A connection
// from an address Allowed refuses is closed before a byte is written to it
// (the kernel has answered its SYN; nothing else goes back).
func (p *Plane) acceptLoop(e *endpoint) {
	defer p.wg.Done()
	for {
		nc, err := e.ln.AcceptTCP()
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			select { // out of descriptors and the like: let it pass
			case <-time.After(10 * time.Millisecond):
			case <-p.ctx.Done():
				return
			}
			continue
		}
		remote := nc.RemoteAddr().(*net.TCPAddr).AddrPort().Addr()
		if !p.allowed(remote) {
			p.refuse(nc, fmt.Sprintf("connection from %s: not allowed", remote.Unmap()))
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			nc.Close()
			return
		}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.handshake(e, nc)
	}
}

// refuse drops an inbound connection and remembers why.
func (p *Plane) refuse(nc net.Conn, why string) {
	p.lastRefusal.Store(&why)
	p.refused.Add(1)
	nc.Close()
}

// handshake reads the hello, checks it is this run's and addressed to
// this endpoint, registers the connection and answers helloOK.
func (p *Plane) handshake(e *endpoint, nc *net.TCPConn) {
	defer p.wg.Done()
	stop := context.AfterFunc(p.ctx, func() { nc.Close() })
	defer stop()
	from := nc.RemoteAddr().String()
	_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	var b [helloLen]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		p.refuse(nc, fmt.Sprintf("connection from %s: no hello: %v", from, err))
		return
	}
	h, err := parseHello(b[:])
	switch {
	case err != nil:
		p.refuse(nc, fmt.Sprintf("connection from %s: %v", from, err))
		return
	case h.Session != p.cfg.Session:
		p.refuse(nc, fmt.Sprintf("connection from %s: session %d, this run is %d", from, h.Session, p.cfg.Session))
		return
	case int(h.To) != e.ID:
		p.refuse(nc, fmt.Sprintf("connection from %s: for endpoint %d, reached endpoint %d", from, h.To, e.ID))
		return
	}
	_ = nc.SetDeadline(time.Time{})
	_ = nc.SetNoDelay(true)
	c := newConn(p, int(h.Conn), int(h.From), int(h.To), SideReceiver, nc)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		nc.Close()
		return
	}
	if p.servers[c.id] != nil {
		p.mu.Unlock()
		p.refuse(nc, fmt.Sprintf("connection from %s: conn %d already open here", from, h.Conn))
		return
	}
	p.servers[c.id] = c
	p.wg.Add(1)
	p.mu.Unlock()
	var ok [headerLen]byte
	putHeader(ok[:], header{Kind: kindHelloOK, ID: uint64(h.Conn)})
	if _, err := nc.Write(ok[:]); err != nil {
		c.fail(err)
	}
	go c.readLoop()
}
