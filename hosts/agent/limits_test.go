package agent

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/hosts/wire"
)

// Wrong guesses are checked one at a time, each holding the gate for the
// failure delay, so however many connections guess at once, at most one
// proof per delay is checked; the rest wait or are turned away unchecked.
func TestConcurrentGuessesAreSlow(t *testing.T) {
	const delay = 100 * time.Millisecond
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new, AuthFailureDelay: delay})
	var mu sync.Mutex
	checked, refused := 0, 0
	var wg sync.WaitGroup
	began := time.Now()
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Dial(context.Background(), ClientConfig{Address: a.addr, Token: []byte("wrong-token-wrong-token"), Timeout: 10 * time.Second})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && strings.Contains(err.Error(), "authentication failed: wrong token"):
				checked++
			case err != nil && strings.Contains(err.Error(), "TLS handshake failed"):
				refused++ // turned away unchecked: the per-address connection cap
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	el := time.Since(began)
	if most := int(el/delay) + 1; checked > most {
		t.Errorf("%d wrong proofs checked in %v: more than one per %v", checked, el, delay)
	}
	if checked+refused != 40 || refused == 0 {
		t.Errorf("checked %d, refused %d", checked, refused)
	}
	// A right token still gets in once the guessing stops.
	c := dialAgent(t, a.addr, testToken)
	c.Close()
}

// Failed guesses do not hold up the right token: it is checked at once.
func TestRightTokenNotQueuedBehindGuesses(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new, AuthFailureDelay: 200 * time.Millisecond})
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Dial(context.Background(), ClientConfig{Address: a.addr, Token: []byte("wrong-token-wrong-token"), Timeout: 10 * time.Second})
		}()
	}
	time.Sleep(100 * time.Millisecond) // the guesses are waiting for their answers
	began := time.Now()
	c := dialAgent(t, a.addr, testToken)
	c.Close()
	if el := time.Since(began); el > time.Second {
		t.Errorf("the right token took %v behind 10 wrong ones", el)
	}
	wg.Wait()
}

// No peer holds more than maxConnsPerIP connections, authenticated or
// not; one that never authenticates is closed after handshakeDeadline.
func TestConnectionCaps(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := 0
	for i := 0; i < maxConnsPerIP+4; i++ {
		c, err := net.Dial("tcp", a.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond)
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil && strings.Contains(err.Error(), "timeout") {
			open++ // still open: the agent waits for our TLS hello
		}
	}
	if open != maxConnsPerIP {
		t.Errorf("%d connections held open, want %d", open, maxConnsPerIP)
	}
}

// The clock echo answers a session's authenticated datagrams over UDP on
// the control address, and nothing else.
func TestClockEcho(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new})
	c := dialAgent(t, a.addr, testToken)
	defer c.Close()
	before := time.Now().UnixNano()
	got, ok := c.clockEcho()
	if !ok || got < before || got > time.Now().UnixNano() {
		t.Fatalf("clock echo: %d, %v", got, ok)
	}
	u, err := net.Dial("udp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	wrong := wire.ClockKey([]byte("not-the-token-0123"), make([]byte, wire.SessionIDLen))
	broken := wire.ClockRequest(c.clockKey, 7)
	broken[len(broken)-1] ^= 0xff // a broken MAC (setting the byte to 0 left it whole one time in 256)
	for _, dg := range [][]byte{
		[]byte("hello"),
		wire.ClockRequest(wrong, 7), // unknown session
		broken,
	} {
		u.Write(dg)
		u.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		var b [64]byte
		if n, err := u.Read(b[:]); err == nil {
			t.Errorf("the agent answered %d bytes to a datagram it cannot verify", n)
		}
	}
}
