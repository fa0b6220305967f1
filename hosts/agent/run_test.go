package agent

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fabriclab/hosts/wire"
)

// watcher listens on a target address (TCP and UDP) and counts what
// arrives: the proof that a refused run sent nothing.
type watcher struct {
	addr      netip.AddrPort
	conns, dg atomic.Int64
}

func watch(t *testing.T, addr netip.AddrPort) *watcher {
	t.Helper()
	w := &watcher{addr: addr}
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); pc.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.conns.Add(1)
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			w.dg.Add(1)
		}
	}()
	return w
}

// TestRefusalsSendNothing drives the real data plane: each refused run
// gets its one-line reason, and its target sees no connection and no
// datagram, even when the controller goes on to connect and start.
func TestRefusalsSendNothing(t *testing.T) {
	a := startAgent(t, Config{
		Allow:   []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		DataIPs: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
		MaxRate: 1e9, MaxDuration: 5 * time.Second,
		NewPlane: newDataplane,
	})
	c := dialAgent(t, a.addr, testToken)
	local := freePort(t, "127.0.0.1")
	inside := watch(t, freePort(t, "127.0.0.1"))  // allowed
	outside := watch(t, freePort(t, "127.0.0.3")) // loopback too, but outside --allow
	spec := func() wire.RunSpec {
		return wire.RunSpec{
			Run: "r1", Duration: int64(time.Second),
			Endpoints: []wire.Endpoint{{ID: 0, Addr: local}, {ID: 1, Addr: inside.addr}, {ID: 2, Addr: outside.addr}},
			Local:     []int{0},
		}
	}
	pre := "agent " + a.addr + ": "
	for _, tc := range []struct {
		name   string
		change func(*wire.RunSpec)
		msg    string
	}{
		{"tcp outside allow", func(s *wire.RunSpec) {
			s.Conns = []wire.Conn{{ID: 0, From: 0, To: 2}}
			s.Streams = []wire.Stream{{Conn: 0, Size: 1000, Depth: 1}}
		}, "run r1 refused: connection 0 targets endpoint 2 at 127.0.0.3, outside this agent's --allow (127.0.0.1/32)"},
		{"udp outside allow", func(s *wire.RunSpec) {
			s.UDP = []wire.UDPFlow{{ID: 0, From: 0, To: 2, Rate: 1e6, Size: 100}}
		}, "run r1 refused: UDP flow 0 targets endpoint 2 at 127.0.0.3, outside this agent's --allow (127.0.0.1/32)"},
		{"not in the run", func(s *wire.RunSpec) {
			s.Conns = []wire.Conn{{ID: 0, From: 0, To: 7}}
		}, "run r1 refused: connection 0 targets endpoint 7, which is not in the run's endpoint list"},
		{"rate above the cap", func(s *wire.RunSpec) {
			s.UDP = []wire.UDPFlow{{ID: 0, From: 0, To: 1, Rate: 2e9, Size: 100}}
		}, "run r1 refused: UDP flow 0's rate 2Gbps is above this agent's --max-rate 1Gbps"},
		{"NIC rate above the cap", func(s *wire.RunSpec) {
			s.NICRate = 100e9
			s.UDP = []wire.UDPFlow{{ID: 0, From: 0, To: 1, Rate: 1e6, Size: 100}}
		}, "run r1 refused: the run's NIC rate 100Gbps is above this agent's --max-rate 1Gbps"},
		{"duration above the cap", func(s *wire.RunSpec) {
			s.Duration = int64(time.Minute)
			s.UDP = []wire.UDPFlow{{ID: 0, From: 0, To: 1, Rate: 1e6, Size: 100}}
		}, "run r1 refused: duration 1m0s is above this agent's --max-duration 5s"},
		{"local endpoint off the data IPs", func(s *wire.RunSpec) {
			s.Endpoints[0].Addr = freePort(t, "127.0.0.2")
			s.UDP = []wire.UDPFlow{{ID: 0, From: 0, To: 1, Rate: 1e6, Size: 100}}
		}, "run r1 refused: local endpoint 0's address 127.0.0.2 is not one of this agent's --data-ip (127.0.0.1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			tc.change(&s)
			err := c.Prepare(context.Background(), s)
			if err == nil || err.Error() != pre+tc.msg {
				t.Fatalf("Prepare: %v\nwant %q", err, pre+tc.msg)
			}
			if !strings.Contains(a.log.String(), tc.msg) {
				t.Errorf("refusal not logged:\n%s", a.log)
			}
			// The controller carries on regardless: nothing to connect or start.
			if _, err := c.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "no run is prepared") {
				t.Errorf("Connect after a refusal: %v", err)
			}
			if err := c.Start(context.Background(), time.Now().UnixNano()); err == nil {
				t.Error("Start after a refusal succeeded")
			}
			// Nothing was built: the local endpoint's port is still free.
			ln, err := net.Listen("tcp", s.Endpoints[0].Addr.String())
			if err != nil {
				t.Errorf("the refused run bound its endpoint: %v", err)
			} else {
				ln.Close()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	for _, w := range []*watcher{inside, outside} {
		if n, d := w.conns.Load(), w.dg.Load(); n != 0 || d != 0 {
			t.Errorf("target %v saw %d connections and %d datagrams from refused runs", w.addr, n, d)
		}
	}
}

func TestBusy(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new})
	c1 := dialAgent(t, a.addr, testToken)
	c2 := dialAgent(t, a.addr, testToken)
	if err := c1.Prepare(context.Background(), loopSpec(t, "r1")); err != nil {
		t.Fatal(err)
	}
	want := "agent " + a.addr + ": busy: run r1 is active"
	for _, c := range []*Client{c1, c2} {
		if err := c.Prepare(context.Background(), loopSpec(t, "r2")); err == nil || err.Error() != want {
			t.Errorf("second Prepare: %v, want %q", err, want)
		}
	}
	// Another session cannot drive the run.
	if _, err := c2.Checkpoint(context.Background()); err == nil || !strings.HasSuffix(err.Error(), "run r1 belongs to another controller session") {
		t.Errorf("Checkpoint from another session: %v", err)
	}
	// Nor abort it: the run goes on for its owner.
	if err := c2.Abort(context.Background()); err == nil || !strings.HasSuffix(err.Error(), "run r1 belongs to another controller session") {
		t.Errorf("Abort from another session: %v", err)
	}
	if _, err := c1.Checkpoint(context.Background()); err != nil {
		t.Errorf("the owner lost its run to another session's Abort: %v", err)
	}
	if in, _ := c2.Info(context.Background()); in.Run != "r1" {
		t.Errorf("Info.Run = %q", in.Run)
	}
	if _, err := c1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Prepare(context.Background(), loopSpec(t, "r2")); err != nil {
		t.Errorf("Prepare after Stop: %v", err)
	}
}

// TestStages runs a run through every stage on a fake plane.
func TestStages(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new})
	c := dialAgent(t, a.addr, testToken)
	ctx := context.Background()
	spec := loopSpec(t, "r1")
	spec.UDP = []wire.UDPFlow{{ID: 3, From: 0, To: 1, Rate: 1e6, Size: 100}}
	// The agent's share of a DAG: 1 and 2 at once; 3 once 1 is
	// acknowledged; 4 once message 99 (between other agents) is relayed;
	// marker 5 after 3 and 4.
	spec.DAG = []wire.DAGMsg{
		{Msg: 1, Conn: 0, Bytes: 10}, {Msg: 2, Conn: 0, Bytes: 20},
		{Msg: 3, Conn: 0, Bytes: 30, Deps: []int64{1}},
		{Msg: 4, Conn: 0, Bytes: 40, Deps: []int64{99}},
		{Msg: 5, Conn: -1, Deps: []int64{3, 4}},
	}
	bad := spec
	bad.DAG = []wire.DAGMsg{{Msg: 3, Conn: 5, Bytes: 10}}
	if err := c.Prepare(ctx, bad); err == nil || !strings.Contains(err.Error(), "DAG message 3 is on connection 5, which this agent does not dial") {
		t.Errorf("a DAG message on another agent's connection: %v", err)
	}
	if err := c.Prepare(ctx, spec); err != nil {
		t.Fatal(err)
	}
	p := fp.last()
	if len(p.spec.Local) != 1 || len(p.spec.Peers) != 2 || p.spec.Session == 0 || !p.spec.Allowed(spec.Endpoints[1].Addr.Addr()) || p.spec.MaxRate != DefaultMaxRate {
		t.Errorf("plane spec %+v", p.spec)
	}
	if err := c.Notify(ctx, []int64{99}); err == nil || !strings.Contains(err.Error(), "notify only after start") {
		t.Errorf("Notify before Start: %v", err)
	}
	if f, err := c.Connect(ctx); err != nil || len(f) != 0 || len(p.dialed) != 1 {
		t.Fatalf("Connect = %v, %v; dialed %v", f, err, p.dialed)
	}
	if _, err := c.Connect(ctx); err == nil {
		t.Error("a second Connect succeeded")
	}
	if err := c.Start(ctx, time.Now().Add(2*time.Minute).UnixNano()); err == nil || !regexp.MustCompile(`start time is (2m0|1m59\.9)`).MatchString(err.Error()) {
		t.Errorf("Start far ahead: %v", err)
	}
	evs, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events(ctx); err == nil || !strings.Contains(err.Error(), "already being streamed") {
		t.Errorf("a second Events: %v", err)
	}
	if err := c.Start(ctx, time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	if len(p.streams) != 1 || len(p.udp) != 1 {
		t.Errorf("started streams %v, udp %v", p.streams, p.udp)
	}
	next := func() wire.Event {
		t.Helper()
		select {
		case ev := <-evs:
			return ev
		case <-time.After(2 * time.Second):
			t.Fatal("no event")
		}
		return wire.Event{}
	}
	for _, want := range []int64{1, 2, 3} {
		if ev := next(); ev.Msg != want || ev.Kind != wire.EventStarted {
			t.Errorf("event %+v, want message %d started", ev, want)
		}
	}
	if got := p.postedMsgs(); !reflect.DeepEqual(got, []int64{1, 2, 3}) {
		t.Errorf("posted %v before the relay, want [1 2 3]", got)
	}
	if err := c.Notify(ctx, []int64{99}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Msg != 4 || ev.Kind != wire.EventStarted {
		t.Errorf("event %+v, want message 4 started", ev)
	}
	if ev := next(); ev.Msg != 5 || ev.Kind != wire.EventDelivered || ev.Conn != -1 {
		t.Errorf("event %+v, want marker 5 delivered", ev)
	}
	if ev := next(); ev.Kind != wire.EventDone || ev.Cut != 0 {
		t.Errorf("event %+v, want done", ev)
	}
	cp, err := c.Checkpoint(ctx)
	if err != nil || len(cp.Pairs) != 1 || cp.Pairs[0].Bytes != 3000 {
		t.Errorf("Checkpoint = %+v, %v", cp, err)
	}
	f, err := c.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pairs[0].Bytes != 3000 || f.HostBefore["Tcp.RetransSegs"] != 7 || f.HostAfter["Tcp.RetransSegs"] != 7 || f.HostUnavailable["ethtool -S lo"] == "" || f.Ended != "" {
		t.Errorf("Final = %+v", f)
	}
	if !p.isClosed() {
		t.Error("Stop left the plane open")
	}
	// The event stream ends with the run.
	select {
	case _, ok := <-evs:
		if ok {
			t.Error("an event after Stop")
		}
	case <-time.After(2 * time.Second):
		t.Error("the events channel stayed open after Stop")
	}
	if _, err := c.Checkpoint(ctx); err == nil {
		t.Error("Checkpoint after Stop succeeded")
	}
	log := a.log.String()
	for _, want := range []string{"run r1 prepared (controller 127.0.0.1:", "run r1 connected: 1 of 1 connections", "run r1 starts in", "run r1 stopped: 3 completions, 3000 bytes"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestLeaseExpiryAborts(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new, Lease: 200 * time.Millisecond})
	c := dialAgent(t, a.addr, testToken)
	if err := c.Prepare(context.Background(), loopSpec(t, "r1")); err != nil {
		t.Fatal(err)
	}
	// Requests within the lease keep the run.
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		if _, err := c.Clock(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if fp.last().isClosed() {
		t.Fatal("the run was aborted while the controller kept calling")
	}
	// Silence: the agent aborts by itself.
	waitFor(t, 2*time.Second, "the lease to abort the run", fp.last().isClosed)
	if _, err := c.Checkpoint(context.Background()); err == nil || !strings.Contains(err.Error(), "no run is prepared") {
		t.Errorf("Checkpoint after the lease expired: %v", err)
	}
	if !strings.Contains(a.log.String(), "run r1 aborted: the controller sent nothing for 200ms (lease)") {
		t.Errorf("log:\n%s", a.log)
	}
}

func TestAbortIsFast(t *testing.T) {
	fp := &fakePlanes{closeWait: 1500 * time.Millisecond} // a plane slow to close
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new})
	c := dialAgent(t, a.addr, testToken)
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Prepare(ctx, loopSpec(t, "r1")); err != nil {
		t.Fatal(err)
	}
	fp.mu.Lock()
	fp.closeWait = 0 // only r1's plane is slow
	fp.mu.Unlock()
	cancel() // Ctrl-C: the controller's context is gone, Abort still goes out
	t0 := time.Now()
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("Abort took %v", d)
	}
	// The next run waits for the slow plane to finish closing, then runs.
	if err := c.Prepare(context.Background(), loopSpec(t, "r2")); err != nil {
		t.Fatalf("Prepare after Abort: %v", err)
	}
	if !fp.planes[0].isClosed() {
		t.Error("the next run was prepared before the aborted one's plane closed")
	}
	if err := c.Abort(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Abort(context.Background()); err != nil {
		t.Errorf("Abort with no run: %v", err)
	}
	if !strings.Contains(a.log.String(), "run r1 aborted: aborted by the controller 127.0.0.1:") {
		t.Errorf("log:\n%s", a.log)
	}
}

func TestDisconnectAborts(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new})
	c := dialAgent(t, a.addr, testToken)
	if err := c.Prepare(context.Background(), loopSpec(t, "r1")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitFor(t, 2*time.Second, "the closed connection to abort the run", fp.last().isClosed)
	if !strings.Contains(a.log.String(), "run r1 aborted: the controller's connection closed") {
		t.Errorf("log:\n%s", a.log)
	}
}

// TestDurationCap: a run nobody stops ends at its duration (plus grace);
// Stop then returns the counters it had.
func TestDurationCap(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: loopAllow, NewPlane: fp.new, DurationGrace: 50 * time.Millisecond})
	c := dialAgent(t, a.addr, testToken)
	spec := loopSpec(t, "r1")
	spec.Duration = int64(100 * time.Millisecond)
	ctx := context.Background()
	if err := c.Prepare(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !fp.last().isClosed() && time.Now().Before(deadline) {
		c.Clock(ctx) // keep the lease
		time.Sleep(10 * time.Millisecond)
	}
	if !fp.last().isClosed() {
		t.Fatal("the plane outlived the run's duration")
	}
	if err := c.Notify(ctx, []int64{1}); err == nil {
		t.Error("Notify after the duration succeeded")
	}
	if cp, err := c.Checkpoint(ctx); err != nil || len(cp.Pairs) != 1 {
		t.Errorf("Checkpoint after the duration: %+v, %v", cp, err)
	}
	f, err := c.Stop(ctx)
	if err != nil || f.Ended != "duration" || f.Pairs[0].Bytes != 3000 {
		t.Errorf("Stop = %+v, %v", f, err)
	}
	if !strings.Contains(a.log.String(), "run r1 reached its duration of 100ms") {
		t.Errorf("log:\n%s", a.log)
	}
}

func TestMetrics(t *testing.T) {
	fp := &fakePlanes{}
	a := startAgent(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, NewPlane: fp.new, MetricsListen: "127.0.0.1:0"})
	Dial(context.Background(), ClientConfig{Address: a.addr, Token: []byte("wrong-wrong-wrong-wrong")})
	c := dialAgent(t, a.addr, testToken)
	bad := loopSpec(t, "r0")
	bad.Endpoints[1].Addr = freePort(t, "127.0.0.3")
	c.Prepare(context.Background(), bad)
	if err := c.Prepare(context.Background(), loopSpec(t, "r1")); err != nil {
		t.Fatal(err)
	}
	scrape := func() string {
		res, err := http.Get("http://" + a.MetricsAddr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	body := scrape()
	for _, want := range []string{
		"fabriclab_agent_auth_failures_total 1",
		`fabriclab_agent_refusals_total{reason="allow"} 1`,
		"fabriclab_agent_run_active 1",
		`fabriclab_agent_bytes_total{client="0",run="r1",server="1",side="sender"} 3000`,
		`fabriclab_agent_completions_total{client="0",run="r1",server="1",side="sender"} 3`,
		`fabriclab_agent_retransmits_total{client="0",run="r1",server="1"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if _, err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	body = scrape()
	for _, want := range []string{
		`fabriclab_agent_runs_total{outcome="stopped"} 1`,
		"fabriclab_agent_run_active 0",
		`fabriclab_agent_bytes_total{client="0",run="r1",server="1",side="sender"} 3000`, // the last run's, still
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics after Stop lacks %q:\n%s", want, body)
		}
	}
}
