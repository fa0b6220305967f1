package dataplane

import (
	"testing"
	"time"
)

func TestSeqCounterExact(t *testing.T) {
	var s SeqCounter
	type in struct {
		seq  uint64
		want Verdict
	}
	// 0 1 2 then 4 (3 missing), 3 late but new, 3 again, 7 (5 6 missing), 5, 0 again.
	for i, x := range []in{{0, InOrder}, {1, InOrder}, {2, InOrder}, {4, InOrder}, {3, Reordered},
		{3, Duplicate}, {7, InOrder}, {5, Reordered}, {0, Duplicate}} {
		if v := s.Receive(x.seq, 0, 0); v != x.want {
			t.Fatalf("#%d seq %d: verdict %d, want %d", i, x.seq, v, x.want)
		}
	}
	if s.Received != 9 || s.Unique != 7 || s.Reordered != 2 || s.Duplicates != 2 || s.Late != 0 || s.Expected() != 8 || s.Lost() != 1 {
		t.Fatalf("received %d unique %d reord %d dup %d late %d expected %d lost %d; want 9 7 2 2 0 8 1 (seq 6)",
			s.Received, s.Unique, s.Reordered, s.Duplicates, s.Late, s.Expected(), s.Lost())
	}
}

func TestSeqCounterWindow(t *testing.T) {
	var s SeqCounter
	s.Receive(0, 0, 0)
	s.Receive(SeqWindow+5, 0, 0) // a jump past the window: 1 … W+4 lost for now
	if s.Lost() != SeqWindow+4 {
		t.Fatalf("lost %d, want %d", s.Lost(), SeqWindow+4)
	}
	// The window is now [6, W+5].
	for _, seq := range []uint64{4, 5} {
		if v := s.Receive(seq, 0, 0); v != Late {
			t.Fatalf("seq %d: %d, want Late", seq, v)
		}
	}
	if v := s.Receive(6, 0, 0); v != Reordered { // exactly W behind: still in the window
		t.Fatalf("seq 6: %d, want Reordered", v)
	}
	if v := s.Receive(6, 0, 0); v != Duplicate {
		t.Fatalf("seq 6 again: %d, want Duplicate", v)
	}
	// Seq W+6 shares its slot with seq 6, seen above; moving on to W+7
	// must clear it, or W+6 would pass for a duplicate.
	if v := s.Receive(SeqWindow+7, 0, 0); v != InOrder {
		t.Fatal(v)
	}
	if v := s.Receive(SeqWindow+6, 0, 0); v != Reordered {
		t.Fatalf("seq W+6: %d, want Reordered (stale slot cleared)", v)
	}
	if s.Received != 8 || s.Late != 2 || s.Duplicates != 1 || s.Reordered != 2 || s.Unique != 5 || s.Lost() != SeqWindow+8-5 {
		t.Fatalf("received %d late %d dup %d reord %d unique %d lost %d", s.Received, s.Late, s.Duplicates, s.Reordered, s.Unique, s.Lost())
	}
}

func TestSeqCounterJitter(t *testing.T) {
	var s SeqCounter
	const off = 5_000_000_000 // a clock offset between hosts cancels out
	s.Receive(0, 0, off+1000)
	if s.Jitter() != 0 {
		t.Fatal("jitter from one datagram")
	}
	s.Receive(1, 10_000, off+11_000) // same transit: D = 0
	if s.Jitter() != 0 {
		t.Fatalf("jitter %v for constant transit", s.Jitter())
	}
	s.Receive(2, 20_000, off+22_600) // transit +1600 ns: J16 = 1600 → J = 100 ns
	if s.Jitter() != 100*time.Nanosecond {
		t.Fatalf("jitter %v, want 100ns", s.Jitter())
	}
	s.Receive(3, 30_000, off+31_000) // D = −1600: J16 = 1600 + 1600 − 100 = 3100 → 193 ns
	if s.Jitter() != 193*time.Nanosecond {
		t.Fatalf("jitter %v, want 193ns", s.Jitter())
	}
	s.Receive(3, 40_000, off+99_000) // a duplicate does not move it
	if s.Jitter() != 193*time.Nanosecond {
		t.Fatalf("jitter %v after a duplicate", s.Jitter())
	}
}
