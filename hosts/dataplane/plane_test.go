package dataplane

import (
	"context"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

var lo = netip.MustParseAddr("127.0.0.1")

func onlyLoopback(a netip.Addr) bool { return a == lo }

func ep(id int) Endpoint { return Endpoint{ID: id, Addr: netip.AddrPortFrom(lo, 0)} }

// newPair is a receiving plane with endpoints 10 and 11 and a sending
// plane with endpoints 0 and 1 that has them as peers: two agents on one
// machine.
func newPair(t testing.TB, cfg Config) (snd, rcv *Plane) {
	t.Helper()
	rcv, err := New(cfg, []Endpoint{ep(10), ep(11)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rcv.Close() })
	snd, err = New(cfg, []Endpoint{ep(0), ep(1)}, peersOf(rcv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snd.Close() })
	return snd, rcv
}

func peersOf(p *Plane) []Peer {
	var peers []Peer
	for _, e := range p.Local() {
		peers = append(peers, Peer{ID: e.ID, Addr: e.Addr})
	}
	return peers
}

func dial(t testing.TB, p *Plane, conns ...Conn) {
	t.Helper()
	if errs := p.Dial(context.Background(), conns); len(errs) != 0 {
		t.Fatalf("dial: %v", errs)
	}
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", d, what)
		}
	}
}

func connStats(s Snapshot, id int, side Side) ConnStats {
	for _, c := range s.Conns {
		if c.ID == id && c.Side == side {
			return c
		}
	}
	return ConnStats{ID: -1}
}

func TestStreamsKeepDepthAndConserveBytes(t *testing.T) {
	snd, rcv := newPair(t, Config{Allowed: onlyLoopback})
	dial(t, snd, Conn{1, 0, 10}, Conn{2, 1, 11}, Conn{3, 0, 11})
	const size = 64 << 10
	depth := map[int]int{1: 4, 2: 4, 3: 1}
	start := time.Now().Add(20 * time.Millisecond)
	until := start.Add(400 * time.Millisecond)
	var streams []Stream
	for id, d := range depth {
		streams = append(streams, Stream{Conn: id, Size: size, Depth: d})
	}
	if err := snd.StartStreams(start, until, streams); err != nil {
		t.Fatal(err)
	}
	if err := snd.StartStreams(start, until, streams[:1]); err == nil || !strings.Contains(err.Error(), "already streaming") {
		t.Fatalf("second start: %v", err)
	}
	for time.Now().Before(until) {
		for _, c := range snd.Snapshot().Conns {
			if c.Outstanding > int64(depth[c.ID]) {
				t.Fatalf("conn %d: %d outstanding, depth %d", c.ID, c.Outstanding, depth[c.ID])
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "streams drained", func() bool {
		for _, c := range snd.Snapshot().Conns {
			if c.Outstanding != 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(50 * time.Millisecond) // nothing may start after until
	ss, rs := snd.Snapshot(), rcv.Snapshot()
	for id, d := range depth {
		s, r := connStats(ss, id, SideSender), connStats(rs, id, SideReceiver)
		if s.Completions == 0 || s.MaxOutstanding != int64(d) {
			t.Errorf("conn %d: %d completions, max outstanding %d (depth %d)", id, s.Completions, s.MaxOutstanding, d)
		}
		if s.Completions*size != s.Acked || s.Acked != s.Bytes {
			t.Errorf("conn %d: %d completions × %d ≠ acked %d (written %d)", id, s.Completions, size, s.Acked, s.Bytes)
		}
		if r.Bytes != s.Bytes || r.Completions != s.Completions || r.From != s.From || r.To != s.To {
			t.Errorf("conn %d: receiver %+v, sender %+v", id, r, s)
		}
		if s.Err != "" || r.Err != "" || s.TCP == nil {
			t.Errorf("conn %d: errors %q %q, tcp info %v", id, s.Err, r.Err, s.TCP)
		}
	}
	// Pairs: (0,10) ← conn 1, (1,11) ← conn 2, (0,11) ← conn 3, as both sides see them.
	want := map[[2]int]int{{0, 10}: 1, {1, 11}: 2, {0, 11}: 3}
	if len(ss.Pairs) != 3 || len(rs.Pairs) != 3 {
		t.Fatalf("pairs %+v / %+v", ss.Pairs, rs.Pairs)
	}
	for i, p := range ss.Pairs {
		c := connStats(ss, want[[2]int{p.Client, p.Server}], SideSender)
		q := rs.Pairs[i]
		if p.Side != SideSender || q.Side != SideReceiver || p.Bytes != c.Bytes || p.Completions != c.Completions ||
			q.Client != p.Client || q.Server != p.Server || q.Bytes != p.Bytes || q.Completions != p.Completions {
			t.Errorf("pair %+v / %+v, conn %+v", p, q, c)
		}
	}
}

func TestMessagesDeliveredOnceInOrder(t *testing.T) {
	snd, rcv := newPair(t, Config{Allowed: onlyLoopback})
	dial(t, snd, Conn{1, 0, 10}, Conn{2, 1, 10})
	type key struct {
		conn int
		msg  int64
	}
	sizes := map[key]int64{}
	var order = map[int][]int64{}
	for i := range 40 {
		for _, c := range []int{1, 2} {
			m := int64(c*1000 + i)
			n := int64(i*7919) % 300_000
			if i == 17 {
				n = 3<<20 + 5 // several chunks of the zero buffer
			}
			sizes[key{c, m}] = n
			order[c] = append(order[c], m)
			if err := snd.Post(c, m, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := snd.Post(9, 1, 1); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("post on conn 9: %v", err)
	}
	collect := func(p *Plane, kind EventKind) map[int][]Event {
		got := map[int][]Event{}
		timeout := time.After(10 * time.Second)
		started := map[int64]bool{}
		for n := 0; n < len(sizes); n++ {
			select {
			case ev := <-p.Events():
				if ev.Kind == EventStarted && kind == EventAcked {
					started[ev.Msg] = true // each message starts before it is acknowledged
					n--
					continue
				}
				if kind == EventAcked && !started[ev.Msg] {
					t.Fatalf("message %d acknowledged without a start event", ev.Msg)
				}
				if ev.Kind != kind {
					t.Fatalf("event %+v, want %s", ev, kind)
				}
				got[ev.Conn] = append(got[ev.Conn], ev)
			case <-timeout:
				t.Fatalf("%d %s events, want %d", n, kind, len(sizes))
			}
		}
		return got
	}
	for _, kind := range []EventKind{EventDelivered, EventAcked} {
		p := rcv
		if kind == EventAcked {
			p = snd
		}
		got := collect(p, kind)
		for c, msgs := range order {
			if len(got[c]) != len(msgs) {
				t.Fatalf("%s on conn %d: %d events, want %d", kind, c, len(got[c]), len(msgs))
			}
			for i, ev := range got[c] {
				from := c - 1 // conn 1 from endpoint 0, conn 2 from endpoint 1
				if ev.Msg != msgs[i] || ev.Bytes != sizes[key{c, ev.Msg}] || ev.From != from || ev.To != 10 || ev.T.IsZero() {
					t.Fatalf("%s #%d on conn %d: %+v, want msg %d", kind, i, c, ev, msgs[i])
				}
			}
		}
	}
	select { // once each: nothing more
	case ev := <-rcv.Events():
		t.Fatalf("extra event %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
	waitFor(t, 5*time.Second, "messages acked", func() bool {
		s := snd.Snapshot()
		return connStats(s, 1, SideSender).Completions == 40 && connStats(s, 2, SideSender).Completions == 40
	})
}

func TestDialFailuresListed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).AddrPort()
	ln.Close()
	rcv, err := New(Config{Allowed: onlyLoopback, Session: 2}, []Endpoint{ep(10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	other, err := New(Config{Allowed: onlyLoopback, Session: 1}, []Endpoint{ep(30)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	peers := append(peersOf(rcv), Peer{ID: 20, Addr: closed}, Peer{ID: 30, Addr: other.Local()[0].Addr})
	snd, err := New(Config{Allowed: onlyLoopback, Session: 1}, []Endpoint{ep(0)}, peers)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	errs := snd.Dial(context.Background(), []Conn{
		{1, 0, 20}, // closed port
		{2, 0, 99}, // unknown peer
		{3, 5, 30}, // not a local endpoint
		{4, 0, 30}, // fine
		{4, 0, 30}, // listed twice
		{5, 0, 10}, // the receiver is another session
	})
	want := []struct {
		conn int
		text string
	}{{1, "connection refused"}, {2, "peer 99 unknown"}, {3, "endpoint 5 is not local"}, {4, "listed twice"}, {5, "refused by the receiver"}}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if errs[i].Conn != w.conn || !strings.Contains(errs[i].Err, w.text) || strings.Contains(errs[i].Err, "\n") {
			t.Errorf("error %d: %v, want conn %d %q", i, errs[i], w.conn, w.text)
		}
	}
	if errs := snd.Dial(context.Background(), []Conn{{4, 0, 30}}); len(errs) != 1 || !strings.Contains(errs[0].Err, "already connected") {
		t.Fatalf("redial: %v", errs)
	}
	if r := rcv.Snapshot(); r.Refused != 1 || !strings.Contains(r.LastRefusal, "session 1, this run is 2") {
		t.Fatalf("receiver refused %d: %q", r.Refused, r.LastRefusal)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	base := runtime.NumGoroutine()
	snd, rcv := newPair(t, Config{Allowed: onlyLoopback})
	dial(t, snd, Conn{1, 0, 10}, Conn{2, 1, 11})
	now := time.Now()
	if err := snd.StartStreams(now, now.Add(time.Hour), []Stream{{Conn: 1, Size: 1 << 20, Depth: 8}}); err != nil {
		t.Fatal(err)
	}
	if err := snd.StartUDP(now, now.Add(time.Hour), []UDPFlow{{ID: 1, From: 1, To: 11, Rate: 10e6, Size: 1000}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := snd.Post(2, int64(i), 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if runtime.NumGoroutine() <= base {
		t.Fatal("no goroutines running")
	}
	t0 := time.Now()
	if err := snd.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rcv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("Close took %v", d)
	}
	for range snd.Events() { // closed: the range ends
	}
	for range rcv.Events() {
	}
	waitFor(t, 2*time.Second, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= base })
	if err := snd.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := snd.Post(2, 99, 1); err == nil || !strings.Contains(err.Error(), "plane closed") {
		t.Fatalf("post after Close: %v", err)
	}
	s := snd.Snapshot()
	if c := connStats(s, 1, SideSender); !c.Closed || c.Err != "" || c.Bytes == 0 || c.TCP == nil {
		t.Fatalf("conn 1 after Close: %+v", c)
	}
}
