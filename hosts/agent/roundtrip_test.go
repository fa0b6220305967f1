package agent

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"fabriclab/hosts/wire"
)

// TestRoundTrip: two agents on 127.0.0.1 with the real data plane, one
// stream from agent A's endpoint to agent B's and a share of a DAG on A —
// two messages, the second waiting for the first's acknowledgement —
// through every stage.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, NewPlane: newDataplane, HostCounters: readHostCounters}
	a := startAgent(t, cfg)
	b := startAgent(t, cfg)
	ca := dialAgent(t, a.addr, testToken)
	cb := dialAgent(t, b.addr, testToken)
	spec := wire.RunSpec{
		Run: "rt", Duration: int64(time.Second),
		Endpoints: []wire.Endpoint{{ID: 0, Addr: freePort(t, "127.0.0.1")}, {ID: 1, Addr: freePort(t, "127.0.0.1")}},
		Conns:     []wire.Conn{{ID: 0, From: 0, To: 1}, {ID: 1, From: 0, To: 1}},
		Streams:   []wire.Stream{{Conn: 0, Size: 64 << 10, Depth: 4}},
	}
	sa, sb := spec, spec
	sa.Local, sb.Local = []int{0}, []int{1}
	sa.DAG = []wire.DAGMsg{{Msg: 10, Conn: 1, Bytes: 1 << 20}, {Msg: 11, Conn: 1, Bytes: 1000, Deps: []int64{10}}}
	if err := cb.Prepare(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := ca.Prepare(ctx, sa); err != nil {
		t.Fatal(err)
	}
	evA, err := ca.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evB, err := cb.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fails, err := ca.Connect(ctx); err != nil || len(fails) != 0 {
		t.Fatalf("Connect = %v, %v", fails, err)
	}
	at := time.Now().Add(50 * time.Millisecond).UnixNano() // one clock: both agents run here
	for _, c := range []*Client{ca, cb} {
		if err := c.Start(ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	timeout := time.After(5 * time.Second)
	var startedAt [2]int64
	for got[wire.EventStarted] < 2 || got[wire.EventDone] < 1 || got[wire.EventDelivered] < 2 {
		select {
		case ev := <-evA:
			got[ev.Kind]++
			switch {
			case ev.Kind == wire.EventDone:
				if ev.Cut != 0 {
					t.Errorf("A's done event %+v", ev)
				}
			case ev.Kind != wire.EventStarted || ev.Conn != 1 || ev.From != 0 || ev.To != 1:
				t.Errorf("A's event %+v", ev)
			default:
				startedAt[ev.Msg-10] = ev.T
			}
		case ev := <-evB:
			if ev.Kind == wire.EventDone {
				continue // B starts nothing: done at once
			}
			got[ev.Kind]++
			if ev.Kind != wire.EventDelivered || (ev.Msg == 10) != (ev.Bytes == 1<<20) || ev.T < at-int64(time.Second) {
				t.Errorf("B's event %+v", ev)
			}
		case <-timeout:
			t.Fatalf("events so far %v", got)
		}
	}
	if startedAt[1] <= startedAt[0] {
		t.Errorf("message 11 started at %d, not after message 10 (%d)", startedAt[1], startedAt[0])
	}
	time.Sleep(300 * time.Millisecond)
	cp, err := ca.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What B acknowledged by the checkpoint it has read for sure (bytes A
	// wrote may still sit in socket buffers when B stops).
	var sent int64
	for _, p := range cp.Pairs {
		if p.Client == 0 && p.Server == 1 && p.Side == wire.SideSender {
			sent = p.Completions * (64 << 10)
		}
	}
	if sent < 64<<10 {
		t.Errorf("A's checkpoint shows %d bytes sent: %+v", sent, cp.Pairs)
	}
	fb, err := cb.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fa, err := ca.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, p := range fb.Pairs {
		if p.Client == 0 && p.Server == 1 && p.Side == wire.SideReceiver {
			read = p.Bytes
		}
	}
	if read < sent {
		t.Errorf("B read %d bytes, but had acknowledged %d by the checkpoint", read, sent)
	}
	if _, ok := fa.HostAfter["Tcp.OutSegs"]; !ok {
		t.Errorf("no host counters: %v (unavailable: %v)", fa.HostAfter, fa.HostUnavailable)
	}
	if len(fa.Conns) != 2 || fa.Conns[0].TCP == nil {
		t.Errorf("A's connections %+v", fa.Conns)
	}
	// Both are ready for the next run.
	if err := ca.Prepare(ctx, sa); err != nil {
		t.Errorf("the next run on A: %v", err)
	}
}
