package agent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/hosts/wire"
)

var testToken = []byte("0123456789abcdef-test-token")

// logBuf collects an agent's log lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testAgent is a running agent for one test.
type testAgent struct {
	*Server
	addr string
	log  *logBuf
}

// startAgent runs an agent on a free loopback port until the test ends.
// Unless the test sets them, the data plane is a fake and failed
// handshakes wait only a little.
func startAgent(t *testing.T, cfg Config) *testAgent {
	t.Helper()
	lb := &logBuf{}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Token == nil {
		cfg.Token = testToken
	}
	if cfg.AuthFailureDelay == 0 {
		cfg.AuthFailureDelay = 20 * time.Millisecond
	}
	cfg.Logf = lb.logf
	if cfg.AvailableCC == nil {
		cfg.AvailableCC = func() ([]string, error) { return []string{"reno", "cubic"}, nil }
	}
	if cfg.HostCounters == nil {
		cfg.HostCounters = func(context.Context, []netip.Addr) (wire.HostCounters, map[string]string) {
			return wire.HostCounters{"Tcp.RetransSegs": 7}, map[string]string{"ethtool -S lo": "no counters"}
		}
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testAgent{Server: s, addr: s.Addr().String(), log: lb}
}

func dialAgent(t *testing.T, addr string, token []byte) *Client {
	t.Helper()
	c, err := Dial(context.Background(), ClientConfig{Address: addr, Token: token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// freePort is a loopback port nobody listens on (TCP and UDP) right now.
func freePort(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		ap := netip.MustParseAddrPort(ln.Addr().String())
		ln.Close()
		u, err := net.ListenPacket("udp", ap.String())
		if err == nil {
			u.Close()
			return ap
		}
	}
	t.Fatal("no free port")
	return netip.AddrPort{}
}

// fakePlane records what the agent asks of it.
type fakePlane struct {
	mu        sync.Mutex
	spec      PlaneSpec
	dialed    []wire.Conn
	streams   []wire.Stream
	udp       []wire.UDPFlow
	posts     []posted
	closed    bool
	closeWait time.Duration // Close takes this long
	events    chan wire.Event
	closeOnce sync.Once
}

func (f *fakePlane) Dial(_ context.Context, conns []wire.Conn) []wire.ConnFailure {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dialed = append(f.dialed, conns...)
	return nil
}
func (f *fakePlane) StartStreams(_, _ time.Time, s []wire.Stream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams = append(f.streams, s...)
	return nil
}
func (f *fakePlane) StartUDP(_, _ time.Time, u []wire.UDPFlow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.udp = append(f.udp, u...)
	return nil
}

// posted is one message the agent posted on a fake plane.
type posted struct {
	conn       int
	msg, bytes int64
}

// Post starts the message and has it acknowledged at once.
func (f *fakePlane) Post(conn int, msg, bytes int64) error {
	f.mu.Lock()
	f.posts = append(f.posts, posted{conn, msg, bytes})
	f.mu.Unlock()
	now := time.Now().UnixNano()
	f.events <- wire.Event{Kind: wire.EventStarted, Msg: msg, Conn: conn, Bytes: bytes, T: now}
	f.events <- wire.Event{Kind: wire.EventAcked, Msg: msg, Conn: conn, Bytes: bytes, T: now}
	return nil
}

func (f *fakePlane) postedMsgs() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ms []int64
	for _, p := range f.posts {
		ms = append(ms, p.msg)
	}
	return ms
}
func (f *fakePlane) Events() <-chan wire.Event { return f.events }
func (f *fakePlane) Snapshot() wire.Checkpoint {
	return wire.Checkpoint{T: time.Now().UnixNano(), Pairs: []wire.PairCount{{Client: 0, Server: 1, Side: wire.SideSender, Completions: 3, Bytes: 3000}},
		Conns: []wire.ConnStats{{Conn: 0, From: 0, To: 1, Side: wire.SideSender, TCP: &wire.TCPInfo{Retrans: 2}}}}
}
func (f *fakePlane) Close() error {
	f.closeOnce.Do(func() {
		time.Sleep(f.closeWait)
		f.mu.Lock()
		f.closed = true
		f.mu.Unlock()
		close(f.events)
	})
	return nil
}
func (f *fakePlane) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// fakePlanes is a NewPlane that hands out fake planes and keeps them.
type fakePlanes struct {
	mu        sync.Mutex
	planes    []*fakePlane
	closeWait time.Duration
}

func (fp *fakePlanes) new(ps PlaneSpec) (Plane, error) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	p := &fakePlane{spec: ps, events: make(chan wire.Event, 64), closeWait: fp.closeWait}
	fp.planes = append(fp.planes, p)
	return p, nil
}

func (fp *fakePlanes) last() *fakePlane {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if len(fp.planes) == 0 {
		return nil
	}
	return fp.planes[len(fp.planes)-1]
}

// loopSpec is a small valid run: endpoint 0 local (127.0.0.1:p0), 1 a
// peer (127.0.0.1:p1), connection 0 from 0 to 1 with a stream.
func loopSpec(t *testing.T, run string) wire.RunSpec {
	return wire.RunSpec{
		Run: run, Duration: int64(2 * time.Second),
		Endpoints: []wire.Endpoint{{ID: 0, Addr: freePort(t, "127.0.0.1")}, {ID: 1, Addr: freePort(t, "127.0.0.1")}},
		Local:     []int{0},
		Conns:     []wire.Conn{{ID: 0, From: 0, To: 1}},
		Streams:   []wire.Stream{{Conn: 0, Size: 4096, Depth: 2}},
	}
}

var loopAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
