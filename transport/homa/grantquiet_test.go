package homa

import (
	"testing"

	"fabriclab/units"
)

// A message that waited outside the active set for longer than
// ResendTimeout and is then granted must not time out at once: the
// receiver's timer for it starts at the grant, not at its last packet.
// With k = 1: A (60 packets) and B (100 packets) each deliver their first
// packet at 0, so A (fewer remaining) holds the grants and B's 7
// unscheduled packets (also at 0) leave it expecting nothing. At 0.99 ms
// the rest of A arrives: A completes and B is granted. B's deadline is then
// 0.99 ms + ResendTimeout, not 1 ms (its last packet + ResendTimeout),
// which would have sent a RESEND 10 µs after the grant, for bytes that
// cannot have arrived yet.
func TestGrantAfterLongWaitDoesNotTimeOutAtOnce(t *testing.T) {
	p := DefaultParams()
	p.Overcommit = 1
	e := NewEndpoint(host, p)
	A, B := units.Size(60*mtu), units.Size(100*mtu)
	e.Receive(0, data(1, 1, A, 0))
	for i := range units.Size(7) {
		e.Receive(0, data(2, 1, B, i*mtu))
	}
	drain(e, 0)
	t1 := 990 * us
	for i := units.Size(1); i < 60; i++ {
		e.Receive(t1, data(1, 1, A, i*mtu))
	}
	got := drain(e, t1)
	var sawGrantB bool
	for _, pk := range got {
		sawGrantB = sawGrantB || pk.Kind == Grant && pk.ID == id(2, 1)
	}
	if !sawGrantB {
		t.Fatalf("B not granted after A completed: %+v", got)
	}
	if d := e.NextDeadline(); d != t1+p.ResendTimeout {
		t.Fatalf("deadline %v, want the grant time %v + ResendTimeout", d, t1)
	}
	e.Advance(ms)
	if st := e.Stats(); st.Resends != 0 {
		t.Fatalf("RESEND %v after the grant", ms-t1)
	}
}

// NextPrio names the level of the packet NextPacket returns next, whatever
// it is: control, unscheduled, scheduled or retransmitted DATA.
func TestNextPrioMatchesNextPacket(t *testing.T) {
	p := DefaultParams()
	p.UnschedPrios = 2
	p.UnschedCutoffs = []units.Size{3000, 1 << 30}
	p.Overcommit = 6
	e := NewEndpoint(host, p)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.Submit(0, Message{ID: id(0, 1), Dst: 1, Length: 40 * mtu}))
	must(e.Submit(0, Message{ID: id(0, 2), Dst: 2, Length: 2000}))
	e.Receive(0, data(3, 9, 20*mtu, 0)) // this host now owes (3, 9) a GRANT
	step := func(now units.Duration) int {
		k := 0
		for {
			pr, ok := e.NextPrio()
			pk, ok2 := e.NextPacket(now)
			if ok != ok2 || ok && pr != pk.Prio {
				t.Fatalf("NextPrio %d %v, NextPacket %+v %v", pr, ok, pk, ok2)
			}
			if !ok {
				return k
			}
			k++
		}
	}
	if k := step(1); k != 1+2+7 { // the GRANT, 2000 B in 2 packets, a window of the long one
		t.Fatalf("%d packets", k)
	}
	e.Receive(2, Packet{Kind: Grant, Src: 1, Dst: host, ID: id(0, 1), Offset: 12 * mtu, GrantPrio: 3})
	e.Receive(2, Packet{Kind: Resend, Src: 1, Dst: host, ID: id(0, 1), Offset: mtu, Bytes: mtu, GrantPrio: 4})
	if k := step(3); k != 1+5 { // the retransmission, 5 newly granted packets
		t.Fatalf("%d packets after grant and resend", k)
	}
}
