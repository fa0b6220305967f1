package wire

import (
	"encoding/hex"
	"testing"
)

func TestClockEcho(t *testing.T) {
	key := ClockKey([]byte("0123456789abcdef"), make([]byte, SessionIDLen))
	req := ClockRequest(key, 42)
	if len(req) != ClockRequestLen {
		t.Fatalf("request %d bytes", len(req))
	}
	id, ok := ClockRequestID(req)
	if !ok || id != ClockID(key) {
		t.Fatalf("id %x ok %v", id, ok)
	}
	if n, ok := VerifyClockRequest(key, req); !ok || n != 42 {
		t.Fatalf("verify: %d %v", n, ok)
	}
	other := ClockKey([]byte("0123456789abcdeX"), make([]byte, SessionIDLen))
	if _, ok := VerifyClockRequest(other, req); ok {
		t.Error("a request verified under another token")
	}
	bad := append([]byte(nil), req...)
	bad[15] ^= 1 // the nonce
	if _, ok := VerifyClockRequest(key, bad); ok {
		t.Error("a changed nonce verified")
	}
	rep := ClockReply(key, 42, 1_700_000_000_123_456_789)
	if len(rep) > len(req) {
		t.Error("the reply is larger than the request (amplification)")
	}
	if tt, ok := ParseClockReply(key, rep, 42); !ok || tt != 1_700_000_000_123_456_789 {
		t.Fatalf("reply: %d %v", tt, ok)
	}
	if _, ok := ParseClockReply(key, rep, 43); ok {
		t.Error("a reply to another nonce was taken")
	}
	if _, ok := ParseClockReply(other, rep, 42); ok {
		t.Error("a reply under another key was taken")
	}
	// Exact bytes for a fixed key: the layout is the protocol.
	if got := hex.EncodeToString(req[:20]); got != "464c434b"+hex.EncodeToString(id[:])+"000000000000002a" {
		t.Errorf("request header %s", got)
	}
}
