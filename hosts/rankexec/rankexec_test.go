package rankexec

import (
	"reflect"
	"strings"
	"testing"

	"fabriclab/hosts/wire"
	"fabriclab/sim"
	"fabriclab/units"
)

func ids(rs []Release) []int64 {
	out := []int64{}
	for _, r := range rs {
		out = append(out, r.Msg)
	}
	return out
}

func want(t *testing.T, what string, got []Release, ws ...int64) {
	t.Helper()
	if ws == nil {
		ws = []int64{}
	}
	if g := ids(got); !reflect.DeepEqual(g, ws) {
		t.Errorf("%s released %v, want %v", what, g, ws)
	}
}

// One rank of a ring: its step-k send (ids 10, 11, 12) waits for the
// step-(k−1) chunk it received (ids 20, 21 — sent by its neighbour, so
// external here). A marker (13) joins its sends; a late send (14) waits
// for its earliest start.
func TestRingRankReleasesOnReceives(t *testing.T) {
	x, err := New([]wire.DAGMsg{
		{Msg: 10, Conn: 3, Bytes: 100},
		{Msg: 11, Conn: 3, Bytes: 100, Deps: []int64{20}},
		{Msg: 12, Conn: 3, Bytes: 100, Deps: []int64{21}},
		{Msg: 13, Conn: -1, Deps: []int64{10, 11, 12}},
		{Msg: 14, Conn: 4, Bytes: 7, At: 5000, Deps: []int64{13}},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.Own() != 5 || !x.Knows(20) || !x.Knows(21) || x.Knows(22) {
		t.Fatalf("own %d, knows 20/21/22: %v %v %v", x.Own(), x.Knows(20), x.Knows(21), x.Knows(22))
	}
	r := x.Ready(0)
	if !reflect.DeepEqual(r, []Release{{Msg: 10, Conn: 3, Bytes: 100}}) {
		t.Fatalf("Ready(0) = %+v", r)
	}
	want(t, "an unknown message", x.Delivered(99, 1))
	want(t, "an own message not yet released", x.Delivered(12, 1))
	want(t, "the first receive", x.Delivered(20, 2), 11)
	want(t, "a duplicate", x.Delivered(20, 3))
	want(t, "own 10 acknowledged", x.Delivered(10, 4))
	want(t, "own 11 acknowledged", x.Delivered(11, 5))
	want(t, "the second receive", x.Delivered(21, 6), 12)
	if x.Done(7) {
		t.Fatal("done with 12, 13 and 14 outstanding")
	}
	// 12 acknowledged: the marker completes at once; 14 waits until 5 µs.
	r = x.Delivered(12, 7)
	if !reflect.DeepEqual(r, []Release{{Msg: 13, Conn: -1, Marker: true}}) {
		t.Fatalf("Delivered(12) = %+v", r)
	}
	if at, ok := x.NextRelease(); !ok || at != 5000*units.Nanosecond {
		t.Fatalf("NextRelease = %v %v, want 5µs", at, ok)
	}
	want(t, "Ready before the earliest start", x.Ready(4000*units.Nanosecond))
	want(t, "Ready at the earliest start", x.Ready(5000*units.Nanosecond), 14)
	want(t, "14 acknowledged", x.Delivered(14, 6000*units.Nanosecond))
	if !x.Done(6000*units.Nanosecond) || x.Cut() != 0 {
		t.Fatalf("done %v cut %d at the end", x.Done(6000*units.Nanosecond), x.Cut())
	}
}

// A closed-loop chain (any-to-any): each write waits for the one depth
// before it; releases at or after Until are cut, and the share is done
// once what was released is delivered.
func TestChainCutAtUntil(t *testing.T) {
	var msgs []wire.DAGMsg
	for i := int64(0); i < 6; i++ {
		m := wire.DAGMsg{Msg: i, Conn: 0, Bytes: 10}
		if i >= 2 {
			m.Deps = []int64{i - 2}
		}
		msgs = append(msgs, m)
	}
	until := int64(1000)
	x, err := New(msgs, until)
	if err != nil {
		t.Fatal(err)
	}
	ns := func(n int64) sim.Time { return sim.Time(n) * units.Nanosecond }
	want(t, "Ready", x.Ready(0), 0, 1)
	want(t, "0 before until", x.Delivered(0, ns(500)), 2)
	want(t, "1 at until: 3 is cut", x.Delivered(1, ns(1000)))
	if x.Done(ns(1000)) {
		t.Fatal("done with 2 outstanding")
	}
	want(t, "2 after until: 4 is cut", x.Delivered(2, ns(1100)))
	if !x.Done(ns(1100)) || x.Cut() != 3 {
		t.Fatalf("done %v, cut %d (want 3, 4, 5)", x.Done(ns(1100)), x.Cut())
	}
}

func TestNewRefusesMalformedShares(t *testing.T) {
	for _, c := range []struct {
		msgs []wire.DAGMsg
		err  string
	}{
		{[]wire.DAGMsg{{Msg: -1, Conn: 0, Bytes: 1}}, "outside"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1}, {Msg: 1, Conn: 0, Bytes: 1}}, "listed twice"},
		{[]wire.DAGMsg{{Msg: 1, Conn: -1, Bytes: 5}}, "marker"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0}}, "at least one"},
		{[]wire.DAGMsg{{Msg: 1, Conn: -2}}, "connection -2"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1, At: -1}}, "negative"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1, Deps: []int64{1}}}, "itself"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1, Deps: []int64{7, 7}}}, "twice"},
		{[]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1, Deps: []int64{2}}, {Msg: 2, Conn: 0, Bytes: 1}}, "comes after it"},
	} {
		if _, err := New(c.msgs, 0); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.msgs, err, c.err)
		}
	}
	if _, err := New(nil, -1); err == nil {
		t.Error("a negative until was accepted")
	}
}

// A shadow (another agent's marker this one can see through) is run here
// but counted nowhere: not in Own, Done or Cut, and its release says so.
func TestShadowMarker(t *testing.T) {
	x, err := New([]wire.DAGMsg{
		{Msg: 5, Conn: -1, Deps: []int64{1, 2}, Shadow: true}, // the receiver's join of two pieces
		{Msg: 6, Conn: 0, Bytes: 9, Deps: []int64{5}},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.Own() != 1 || !x.IsExternal(1) || x.IsExternal(5) || x.IsExternal(6) {
		t.Fatalf("own %d; external 1/5/6: %v %v %v", x.Own(), x.IsExternal(1), x.IsExternal(5), x.IsExternal(6))
	}
	want(t, "Ready", x.Ready(0))
	want(t, "piece 1 acknowledged", x.Delivered(1, 1))
	r := x.Delivered(2, 2)
	if !reflect.DeepEqual(r, []Release{{Msg: 5, Conn: -1, Marker: true, Shadow: true}, {Msg: 6, Conn: 0, Bytes: 9}}) {
		t.Fatalf("piece 2 acknowledged: %+v", r)
	}
	if x.Done(3) {
		t.Fatal("done before 6 was delivered")
	}
	want(t, "6", x.Delivered(6, 4))
	if !x.Done(4) || x.Cut() != 0 {
		t.Fatalf("done %v cut %d", x.Done(4), x.Cut())
	}
	if _, err := New([]wire.DAGMsg{{Msg: 1, Conn: 0, Bytes: 1, Shadow: true}}, 0); err == nil {
		t.Error("a data message accepted as a shadow")
	}
}

// A message released before Until but waiting for a later earliest start
// still runs: the share is not done while it waits.
func TestDoneWaitsForLateStarts(t *testing.T) {
	x, err := New([]wire.DAGMsg{{Msg: 0, Conn: 0, Bytes: 1, At: 2000}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ns := func(n int64) sim.Time { return sim.Time(n) * units.Nanosecond }
	want(t, "Ready(0)", x.Ready(0))
	if x.Done(ns(1500)) {
		t.Fatal("done at 1.5 µs with message 0 waiting for 2 µs")
	}
	want(t, "Ready(2µs)", x.Ready(ns(2000)), 0)
	want(t, "delivered", x.Delivered(0, ns(2500)))
	if !x.Done(ns(2500)) || x.Cut() != 0 {
		t.Fatalf("done %v cut %d", x.Done(ns(2500)), x.Cut())
	}
}
