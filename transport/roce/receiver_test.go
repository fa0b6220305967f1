package roce

// Tests of the pure Receiver: sequences of data packets and the exact
// replies and completions they draw.

import (
	"reflect"
	"testing"

	"fabriclab/sim"
)

type step struct {
	at   sim.Time
	d    Data
	want Reply
	done []int32
}

func play(t *testing.T, r *Receiver, steps []step) {
	t.Helper()
	var done []int32
	for i, s := range steps {
		var rp Reply
		rp, done = r.OnData(s.at, &s.d, done[:0])
		if rp != s.want || !reflect.DeepEqual(append([]int32(nil), done...), s.done) {
			t.Fatalf("step %d (PSN %d): reply %+v done %v; want %+v done %v", i, s.d.PSN, rp, done, s.want, s.done)
		}
	}
}

func pkt(psn int64, msg int32, last bool) Data {
	return Data{PSN: psn, Msg: msg, Payload: 1000, Last: last}
}

// In order with AckEvery = 2: an ACK every second packet and at a message
// end, for the next PSN expected; the end completes the message.
func TestReceiverAcksEveryNthPacketAndEveryMessageEnd(t *testing.T) {
	r := NewReceiver(&Config{AckEvery: 2})
	play(t, r, []step{
		{d: pkt(0, 5, false), want: Reply{Payload: 1000}},
		{d: pkt(1, 5, false), want: Reply{Control: SendAck, PSN: 2, Payload: 1000}},
		{d: pkt(2, 5, true), want: Reply{Control: SendAck, PSN: 3, Payload: 1000}, done: []int32{5}},
		{d: pkt(3, 6, false), want: Reply{Payload: 1000}},
		{d: pkt(4, 6, true), want: Reply{Control: SendAck, PSN: 5, Payload: 1000}, done: []int32{6}},
	})
}

// Go-back-N receiver: a packet beyond expected is dropped and counted; the
// first of a gap draws a NACK for expected, the next ones nothing; the
// missing packet is accepted and resets that, so a new gap draws a new NACK.
// A duplicate is re-acknowledged and delivers nothing.
func TestReceiverNacksOncePerGap(t *testing.T) {
	r := NewReceiver(&Config{AckEvery: 1})
	play(t, r, []step{
		{d: pkt(0, 1, false), want: Reply{Control: SendAck, PSN: 1, Payload: 1000}},
		{d: pkt(2, 1, false), want: Reply{OutOfOrder: true, Control: SendNack, PSN: 1}},
		{d: pkt(3, 1, true), want: Reply{OutOfOrder: true}},
		{d: pkt(1, 1, false), want: Reply{Control: SendAck, PSN: 2, Payload: 1000}},
		{d: pkt(3, 1, true), want: Reply{OutOfOrder: true, Control: SendNack, PSN: 2}},
		{d: pkt(0, 1, false), want: Reply{Control: SendAck, PSN: 2}},
		{d: pkt(2, 1, false), want: Reply{Control: SendAck, PSN: 3, Payload: 1000}},
		{d: pkt(3, 1, true), want: Reply{Control: SendAck, PSN: 4, Payload: 1000}, done: []int32{1}},
	})
	if r.Expected() != 4 || r.Held() != 0 {
		t.Fatalf("expected %d held %d", r.Expected(), r.Held())
	}
}

// CNP pacing (CNPInterval 50 µs): a CE mark draws a CNP unless one went out
// less than 50 µs before; duplicates count, unmarked packets do not. Without
// DCQCN no CNP at all.
func TestReceiverPacesCNPsByTheMinimumInterval(t *testing.T) {
	cfg := &Config{AckEvery: 1, DCQCN: DCQCNParams{Enabled: true, CNPInterval: 50 * us}}
	ce := func(psn int64) Data { d := pkt(psn, 1, false); d.CE = true; return d }
	play(t, NewReceiver(cfg), []step{
		{at: 0, d: ce(0), want: Reply{CNP: true, Control: SendAck, PSN: 1, Payload: 1000}},
		{at: 10 * us, d: ce(1), want: Reply{Control: SendAck, PSN: 2, Payload: 1000}},
		{at: 50 * us, d: ce(2), want: Reply{CNP: true, Control: SendAck, PSN: 3, Payload: 1000}},
		{at: 200 * us, d: pkt(3, 1, false), want: Reply{Control: SendAck, PSN: 4, Payload: 1000}},
		{at: 201 * us, d: ce(0), want: Reply{CNP: true, Control: SendAck, PSN: 4}},
	})
	cfg.DCQCN.Enabled = false
	play(t, NewReceiver(cfg), []step{
		{at: 0, d: ce(0), want: Reply{Control: SendAck, PSN: 1, Payload: 1000}},
	})
}

// CNP on the ACK (CNPOnAck): a notification sends no frame; it rides on
// this packet's ACK, or with AckEvery = 3 on the QP's next one.
func TestReceiverCarriesCNPsOnAcks(t *testing.T) {
	cfg := &Config{AckEvery: 3, CNPOnAck: true, DCQCN: DCQCNParams{Enabled: true, CNPInterval: 50 * us}}
	ce := func(psn int64, last bool) Data { d := pkt(psn, 1, last); d.CE = true; return d }
	play(t, NewReceiver(cfg), []step{
		{at: 0, d: ce(0, false), want: Reply{Payload: 1000}},                                                       // noted, no ACK yet
		{at: 1 * us, d: pkt(1, 1, false), want: Reply{Payload: 1000}},                                              //
		{at: 2 * us, d: pkt(2, 1, false), want: Reply{ControlCNP: true, Control: SendAck, PSN: 3, Payload: 1000}},  // the third: its ACK carries it
		{at: 3 * us, d: ce(3, true), want: Reply{Control: SendAck, PSN: 4, Payload: 1000}, done: []int32{1}},       // paced: no notification
		{at: 60 * us, d: ce(5, false), want: Reply{ControlCNP: true, Control: SendNack, PSN: 4, OutOfOrder: true}}, // on the NACK
	})
}

// Out-of-order acceptance. Message A is PSNs 0…2, B is 3…4; they arrive
// 1, 3, 4, 0, 2. Packets beyond expected are held (no ACK, no NACK) and
// their payload counted; PSN 0 moves expected over the held 1 to 2 and is
// acknowledged; PSN 2 moves it over 3 and 4 to 5, completing A then B in
// PSN order, with one ACK. A held packet or one below expected again is a
// duplicate: an ACK, nothing delivered.
func TestReceiverAcceptsOutOfOrderWithAReorderBuffer(t *testing.T) {
	r := NewReceiver(&Config{AckEvery: 4, AcceptOutOfOrder: true})
	held := func(psn int64, msg int32, last bool) step {
		return step{d: pkt(psn, msg, last), want: Reply{OutOfOrder: true, Payload: 1000}}
	}
	play(t, r, []step{
		held(1, 'A', false),
		held(3, 'B', false),
		{d: pkt(3, 'B', false), want: Reply{Control: SendAck, PSN: 0}},
		held(4, 'B', true),
	})
	if r.Held() != 3 {
		t.Fatalf("held %d, want 3", r.Held())
	}
	play(t, r, []step{
		{d: pkt(0, 'A', false), want: Reply{Payload: 1000}}, // 1 of AckEvery 4
		{d: pkt(2, 'A', true), want: Reply{Control: SendAck, PSN: 5, Payload: 1000}, done: []int32{'A', 'B'}},
		{d: pkt(4, 'B', true), want: Reply{Control: SendAck, PSN: 5}},
	})
	if r.Held() != 0 || r.Expected() != 5 {
		t.Fatalf("held %d expected %d", r.Held(), r.Expected())
	}
}

// The reorder buffer grows when a packet lands beyond its reach (1024 PSNs
// after the first growth) and keeps what it held.
func TestReceiverReorderBufferGrows(t *testing.T) {
	r := NewReceiver(&Config{AckEvery: 1, AcceptOutOfOrder: true})
	var done []int32
	for _, psn := range []int64{5, 1500, 7, 40_000} {
		d := pkt(psn, 1, false)
		_, done = r.OnData(0, &d, done[:0])
	}
	if r.Held() != 4 {
		t.Fatalf("held %d", r.Held())
	}
	for _, psn := range []int64{5, 1500, 7, 40_000} {
		if !r.held.has(0, psn) || r.held.has(0, psn+1) {
			t.Fatalf("PSN %d lost in the growth", psn)
		}
	}
}
