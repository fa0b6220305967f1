package dataplane

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// decoy listens on 127.0.0.2 — a loopback address the planes under test
// are not allowed to reach — and counts every connection and datagram
// that arrives.
type decoy struct {
	tcp, udp    netip.AddrPort
	conns, dgms atomic.Int64
}

func newDecoy(t *testing.T) *decoy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	uc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	d := &decoy{tcp: ln.Addr().(*net.TCPAddr).AddrPort(), udp: uc.LocalAddr().(*net.UDPAddr).AddrPort()}
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.conns.Add(1)
			c.Close()
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 1<<16)
		for {
			if _, _, err := uc.ReadFrom(buf); err != nil {
				return
			}
			d.dgms.Add(1)
		}
	}()
	t.Cleanup(func() { ln.Close(); uc.Close(); <-done; <-done })
	return d
}

// TestNothingSentOutsideAllowed: connections and flows to a refused
// address fail with a clear error, and the listener there sees nothing;
// one refused flow in a call stops the allowed flows of that call too, and
// so does a rate above the cap; nil Allowed allows nothing.
func TestNothingSentOutsideAllowed(t *testing.T) {
	dc := newDecoy(t)
	rcv, err := New(Config{Allowed: onlyLoopback}, []Endpoint{ep(10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	peers := append(peersOf(rcv), Peer{ID: 50, Addr: dc.tcp}, Peer{ID: 51, Addr: dc.udp})
	snd, err := New(Config{Allowed: onlyLoopback, MaxRate: 1e6}, []Endpoint{ep(0)}, peers)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	errs := snd.Dial(context.Background(), []Conn{{1, 0, 50}})
	if len(errs) != 1 || errs[0].Err != "127.0.0.2 not allowed (outside the run's hosts or --allow)" {
		t.Fatalf("dial to the decoy: %v", errs)
	}
	now := time.Now()
	until := now.Add(200 * time.Millisecond)
	good := UDPFlow{ID: 1, From: 0, To: 10, Rate: 1e5, Size: 100}
	for _, tc := range []struct {
		flows []UDPFlow
		want  string
	}{
		{[]UDPFlow{good, {ID: 2, From: 0, To: 51, Rate: 1e5, Size: 100}}, "flow 2: 127.0.0.2 not allowed"},
		{[]UDPFlow{good, {ID: 3, From: 0, To: 10, Rate: 2e6, Size: 100}}, "flow 3: rate 2000000 b/s above the cap 1000000 b/s"},
	} {
		if err := snd.StartUDP(now, until, tc.flows); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StartUDP: %v, want %q", err, tc.want)
		}
	}
	none, err := New(Config{}, []Endpoint{ep(1)}, peersOf(rcv)) // nil Allowed
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if errs := none.Dial(context.Background(), []Conn{{9, 1, 10}}); len(errs) != 1 || !strings.Contains(errs[0].Err, "127.0.0.1 not allowed") {
		t.Fatalf("nil Allowed dial: %v", errs)
	}
	if err := none.StartUDP(now, until, []UDPFlow{{ID: 9, From: 1, To: 10, Rate: 1e5, Size: 100}}); err == nil {
		t.Fatal("nil Allowed flow started")
	}
	time.Sleep(300 * time.Millisecond)
	if n, m := dc.conns.Load(), dc.dgms.Load(); n != 0 || m != 0 {
		t.Fatalf("the refused address saw %d connections and %d datagrams", n, m)
	}
	if s := rcv.Snapshot(); len(s.UDP) != 0 || len(s.Conns) != 0 || s.Refused != 0 || s.Stray != 0 {
		t.Fatalf("the allowed receiver saw traffic from refused requests: %+v", s)
	}
	if s := snd.Snapshot(); len(s.UDP) != 0 || len(s.Conns) != 0 {
		t.Fatalf("the sender has flows or conns: %+v", s)
	}
}

// TestInboundFromRefusedAddress: a receiver that may not send to the
// dialler's address closes the connection without a helloOK or an ack.
func TestInboundFromRefusedAddress(t *testing.T) {
	rcv, err := New(Config{Allowed: func(netip.Addr) bool { return false }}, []Endpoint{ep(10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	snd, err := New(Config{Allowed: onlyLoopback}, []Endpoint{ep(0)}, peersOf(rcv))
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	errs := snd.Dial(context.Background(), []Conn{{1, 0, 10}})
	if len(errs) != 1 || !strings.Contains(errs[0].Err, "refused by the receiver") {
		t.Fatalf("dial: %v", errs)
	}
	s := rcv.Snapshot()
	if s.Refused != 1 || s.LastRefusal != "connection from 127.0.0.1: not allowed" || len(s.Conns) != 0 {
		t.Fatalf("receiver: refused %d %q conns %d", s.Refused, s.LastRefusal, len(s.Conns))
	}
}
