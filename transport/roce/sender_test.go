package roce

// Tests of the pure Sender, named after the claim they check. Expected
// values are exact and worked out by hand in the comments, with MTU =
// 1000 B and 250 B of overhead (a full packet is 1250 B on the wire: 1 µs at
// 10 Gb/s).

import (
	"reflect"
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

const line100 = 100 * units.Gbps

func senderConfig() *Config {
	return &Config{MTU: 1000, Overhead: 250, AckEvery: 1, RTO: 100 * us}
}

// sendAll calls Next at now while the sender can send.
func sendAll(s *Sender, now sim.Time) []Data {
	var out []Data
	for s.CanSend() {
		out = append(out, s.Next(now))
	}
	return out
}

func wantPSNs(t *testing.T, step string, s *Sender, una, nxt, end int64) {
	t.Helper()
	if a, b, c := s.PSNs(); a != una || b != nxt || c != end {
		t.Fatalf("%s: una, nxt, end = %d, %d, %d; want %d, %d, %d", step, a, b, c, una, nxt, end)
	}
}

// A message is ⌈bytes/MTU⌉ packets of MTU payload, the last one carrying
// the rest and the end mark; an empty message is one empty packet. PSNs run
// on across messages.
func TestSenderSegmentsMessagesIntoMTUPackets(t *testing.T) {
	s := NewSender(senderConfig(), line100)
	s.Post(7, 2500)
	s.Post(8, 0)
	s.Post(9, 1000)
	got := sendAll(s, 0)
	want := []Data{
		{PSN: 0, Msg: 7, Payload: 1000, Wire: 1250},
		{PSN: 1, Msg: 7, Payload: 1000, Wire: 1250},
		{PSN: 2, Msg: 7, Payload: 500, Wire: 750, Last: true},
		{PSN: 3, Msg: 8, Payload: 0, Wire: 250, Last: true},
		{PSN: 4, Msg: 9, Payload: 1000, Wire: 1250, Last: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("packets\n got %+v\nwant %+v", got, want)
	}
	wantPSNs(t, "all sent", s, 0, 5, 5)
}

// A message posted once the previous one is fully sent, but before it is
// acknowledged, starts with a packet of its own (its id, its end mark).
func TestSenderMessagePostedBehindAnUnackedOneGetsItsOwnPackets(t *testing.T) {
	s := NewSender(senderConfig(), line100)
	s.Post(1, 3000)
	if n := len(sendAll(s, 0)); n != 3 {
		t.Fatalf("%d packets", n)
	}
	s.Post(2, 100)
	if d := s.Next(1); d != (Data{PSN: 3, Msg: 2, Payload: 100, Wire: 350, Last: true}) {
		t.Fatalf("got %+v", d)
	}
	if !s.OnAck(2, 3) || s.OnAck(3, 3) || s.OnAck(3, 2) {
		t.Fatal("OnAck progress: want true, then false for a repeated and an older ACK")
	}
	s.Post(3, 1000)
	if d := s.Next(4); d != (Data{PSN: 4, Msg: 3, Payload: 1000, Wire: 1250, Last: true}) {
		t.Fatalf("after the ACK: got %+v", d)
	}
}

// Go-back-N: 10 packets out, an ACK for 2, then a NACK for 3 (OnAck(3) then
// Rewind(3)): PSNs 3…9 are sent again, marked as retransmissions, then 10
// is new. A rewind below una starts at una; an ACK beyond nxt (after a
// rewind) pulls nxt up with it.
func TestSenderGoBackN(t *testing.T) {
	s := NewSender(senderConfig(), line100)
	s.Post(1, 20_000) // PSNs 0…19
	for range 10 {
		s.Next(0)
	}
	s.OnAck(1, 2)
	wantPSNs(t, "ACK 2", s, 2, 10, 20)
	s.OnAck(2, 3)
	s.Rewind(3)
	wantPSNs(t, "NACK 3", s, 3, 3, 20)
	for psn := int64(3); psn <= 10; psn++ {
		d := s.Next(3)
		if d.PSN != psn || d.Retransmit != (psn < 10) {
			t.Fatalf("PSN %d: got %+v", psn, d)
		}
	}
	s.Rewind(1)
	wantPSNs(t, "rewind below una", s, 3, 3, 20)
	s.OnAck(4, 8)
	wantPSNs(t, "ACK beyond nxt", s, 8, 8, 20)
	if d := s.Next(4); d.PSN != 8 || !d.Retransmit {
		t.Fatalf("after the ACK: %+v", d)
	}
}

// MaxInflight = 3000 B = 3 packets of 1000 B: the sender stops with 3
// unacknowledged and goes on as ACKs come.
func TestSenderMaxInflightCapsUnackedPackets(t *testing.T) {
	cfg := senderConfig()
	cfg.MaxInflight = 3000
	s := NewSender(cfg, line100)
	s.Post(1, 10_000)
	if n := len(sendAll(s, 0)); n != 3 {
		t.Fatalf("first flight %d packets", n)
	}
	s.OnAck(1, 1)
	if got := sendAll(s, 1); len(got) != 1 || got[0].PSN != 3 {
		t.Fatalf("after ACK 1: %+v", got)
	}
}

// The retransmission timer: armed at now + RTO by each packet sent, pushed
// to now + RTO by an ACK of new data, expired at its deadline (go back to
// una, re-arm), disarmed by the ACK of everything. RTO = 100 µs.
func TestSenderRetransmissionTimeout(t *testing.T) {
	s := NewSender(senderConfig(), line100)
	s.Post(1, 5000) // PSNs 0…4
	if d := s.RTODeadline(); d != sim.Never {
		t.Fatalf("armed before sending: %v", d)
	}
	s.Next(10 * us)
	s.Next(20 * us)
	if d := s.RTODeadline(); d != 120*us {
		t.Fatalf("deadline %v, want 120µs", d)
	}
	s.OnAck(50*us, 1)
	if d := s.RTODeadline(); d != 150*us {
		t.Fatalf("after ACK: deadline %v, want 150µs", d)
	}
	if s.OnRTO(149 * us) {
		t.Fatal("expired early")
	}
	if !s.OnRTO(150 * us) {
		t.Fatal("did not expire at its deadline")
	}
	wantPSNs(t, "timeout", s, 1, 1, 5)
	if d := s.RTODeadline(); d != 250*us {
		t.Fatalf("re-armed at %v, want 250µs", d)
	}
	if got := sendAll(s, 160*us); len(got) != 4 || !got[0].Retransmit || got[1].Retransmit {
		t.Fatalf("after the timeout: %+v", got)
	}
	s.OnAck(170*us, 5)
	if d := s.RTODeadline(); d != sim.Never || s.OnRTO(300*us) || s.Unacked() {
		t.Fatalf("everything acknowledged: deadline %v", d)
	}
	cfg := senderConfig()
	cfg.RTO = 0
	off := NewSender(cfg, line100)
	off.Post(1, 1)
	off.Next(0)
	if off.RTODeadline() != sim.Never || off.OnRTO(units.Second) {
		t.Fatal("RTO 0 armed a timer")
	}
}

// Pacing follows the reaction point's rate. With RateOnFirstCNP = 10 Gb/s
// a CNP at 0 cuts the rate to 10 Gb/s (target: line rate), so a 1250 B packet
// sent at 0 holds the next one until 1 µs. The increase timer (50 µs,
// RateDeadline) then raises the rate to (100 + 10)/2 = 55 Gb/s (fast
// recovery); Repace shortens the wait to 10000 bit / 55 Gb/s = 181.818…
// ns, rounded up to 181819 ps. Without a CNP a QP sends back to back.
func TestSenderPacesAtTheDCQCNRate(t *testing.T) {
	cfg := senderConfig()
	cfg.DCQCN = DCQCNParams{Enabled: true, RateOnFirstCNP: 10 * units.Gbps, MinRate: units.Gbps,
		IncreaseInterval: 50 * us, Threshold: 5, AIRate: 5 * units.Gbps, HAIRate: 10 * units.Gbps, AlphaG: 1, InitialAlpha: 1}
	s := NewSender(cfg, line100)
	s.Post(1, 10_000)
	s.Next(0)
	if s.SendAt() != 0 || s.RateDeadline() != NoDeadline {
		t.Fatalf("unlimited QP: SendAt %v, rate deadline %v", s.SendAt(), s.RateDeadline())
	}
	s.OnCNP(0)
	if s.Rate() != 10*units.Gbps || s.RateDeadline() != 50*us {
		t.Fatalf("after CNP: rate %v, deadline %v", s.Rate(), s.RateDeadline())
	}
	if s.Repace() {
		t.Fatal("a rate cut moved the send time")
	}
	s.Next(0)
	if s.SendAt() != units.Microsecond {
		t.Fatalf("SendAt %v, want 1µs", s.SendAt())
	}
	s.OnRateTimer(50 * us)
	if s.Rate() != 55*units.Gbps || s.RateDeadline() != 100*us {
		t.Fatalf("after the increase timer: rate %v, deadline %v", s.Rate(), s.RateDeadline())
	}
	if !s.Repace() || s.SendAt() != 181_819 || s.Repace() {
		t.Fatalf("repaced SendAt %v, want 181819 ps (once)", s.SendAt())
	}
	cfg.DCQCN.Enabled = false
	off := NewSender(cfg, line100)
	off.OnCNP(0)
	if off.Rate() != line100 || off.RateDeadline() != NoDeadline {
		t.Fatal("a CNP acted with DCQCN disabled")
	}
}
