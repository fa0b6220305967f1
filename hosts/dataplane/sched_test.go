package dataplane

import (
	"strings"
	"testing"
	"time"
)

func TestSchedMessagesFirstThenDepth(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var s sched
	if _, ok, wake := s.next(t0, 0); ok || !wake.IsZero() {
		t.Fatal("idle sched wants to send")
	}
	if err := s.stream(t0, 4096, 2, t0.Add(time.Second), t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok, wake := s.next(t0, 0); ok || !wake.Equal(t0.Add(time.Second)) {
		t.Fatalf("before start: ok %v wake %v", ok, wake)
	}
	s.post(7, 10)
	s.post(8, 0)
	if a, ok, _ := s.next(t0, 0); !ok || a != (action{kindMsg, 7, 10}) {
		t.Fatalf("first %+v %v, want msg 7", a, ok)
	}
	if a, ok, _ := s.next(t0, 0); !ok || a != (action{kindMsg, 8, 0}) {
		t.Fatalf("second %+v %v, want msg 8", a, ok)
	}
	t1 := t0.Add(1500 * time.Millisecond)
	for i := range 2 {
		if a, ok, _ := s.next(t1, i); !ok || a != (action{kindWrite, uint64(i), 4096}) {
			t.Fatalf("write %d: %+v %v", i, a, ok)
		}
	}
	if _, ok, wake := s.next(t1, 2); ok || !wake.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("at depth: ok %v wake %v", ok, wake)
	}
	if err := s.stream(t1, 1, 1, t1, t1.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "already streaming") {
		t.Fatalf("second stream: %v", err)
	}
	if _, ok, _ := s.next(t0.Add(2*time.Second), 0); ok || s.on {
		t.Fatal("writes after until")
	}
}

func TestInflightAcksInOrder(t *testing.T) {
	var f inflight
	f.push(action{kindWrite, 0, 100})
	f.push(action{kindMsg, 5, 7})
	f.push(action{kindWrite, 1, 100})
	if f.streams != 2 || f.len() != 3 {
		t.Fatalf("streams %d len %d", f.streams, f.len())
	}
	if _, err := f.ack(header{Kind: kindAckW, ID: 0, Len: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ack(header{Kind: kindAckW, ID: 1, Len: 100}); err == nil || !strings.Contains(err.Error(), "msg 5 (7 B) is next") {
		t.Fatalf("out-of-order ack: %v", err)
	}
	var g inflight
	if _, err := g.ack(header{Kind: kindAckM, ID: 3}); err == nil || !strings.Contains(err.Error(), "nothing outstanding") {
		t.Fatalf("stray ack: %v", err)
	}
	g.push(action{kindWrite, 0, 100})
	if _, err := g.ack(header{Kind: kindAckW, ID: 0, Len: 99}); err == nil {
		t.Fatal("short ack accepted")
	}
}
