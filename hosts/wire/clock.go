package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// The clock echo: a datagram exchange beside the control channel, so that
// a clock sample costs one UDP round trip (tens of microseconds) instead of
// an HTTP/2 request on TLS (a few hundred). It is authenticated by a key
// both ends derive from the token and the session id; a datagram that does
// not verify gets no answer, and an answer is no larger than its request.
//
//	request: "FLCK" ‖ id (8) ‖ nonce (8) ‖ HMAC(key, "req" ‖ nonce)[:16]
//	reply:   "FLCR" ‖ nonce (8) ‖ t (8) ‖ HMAC(key, "rep" ‖ nonce ‖ t)[:16]
const (
	ClockRequestLen = 4 + 8 + 8 + 16
	ClockReplyLen   = 4 + 8 + 8 + 16
)

// ClockKey is a session's clock-echo key.
func ClockKey(token, sid []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("fabriclab-agent-v1 clock"))
	m.Write(sid)
	return m.Sum(nil)
}

// ClockID names a session in its clock datagrams without revealing its id.
func ClockID(key []byte) [8]byte {
	var id [8]byte
	copy(id[:], mac(key, []byte("id")))
	return id
}

func mac(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// ClockRequest is the request datagram for nonce.
func ClockRequest(key []byte, nonce uint64) []byte {
	b := make([]byte, 0, ClockRequestLen)
	id := ClockID(key)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], nonce)
	b = append(b, "FLCK"...)
	b = append(b, id[:]...)
	b = append(b, n[:]...)
	return append(b, mac(key, []byte("req"), n[:])[:16]...)
}

// ClockRequestID is the session a request datagram names (ok false: not a
// clock request).
func ClockRequestID(b []byte) (id [8]byte, ok bool) {
	if len(b) != ClockRequestLen || string(b[:4]) != "FLCK" {
		return id, false
	}
	copy(id[:], b[4:12])
	return id, true
}

// VerifyClockRequest checks a request datagram against key and returns its
// nonce.
func VerifyClockRequest(key, b []byte) (nonce uint64, ok bool) {
	if len(b) != ClockRequestLen || string(b[:4]) != "FLCK" {
		return 0, false
	}
	n := b[12:20]
	if !hmac.Equal(b[20:36], mac(key, []byte("req"), n)[:16]) {
		return 0, false
	}
	return binary.BigEndian.Uint64(n), true
}

// ClockReply is the reply datagram: nonce echoed, the agent's clock t.
func ClockReply(key []byte, nonce uint64, t int64) []byte {
	var n, tb [8]byte
	binary.BigEndian.PutUint64(n[:], nonce)
	binary.BigEndian.PutUint64(tb[:], uint64(t))
	b := make([]byte, 0, ClockReplyLen)
	b = append(b, "FLCR"...)
	b = append(b, n[:]...)
	b = append(b, tb[:]...)
	return append(b, mac(key, []byte("rep"), n[:], tb[:])[:16]...)
}

// ParseClockReply checks a reply datagram for nonce and returns the
// agent's clock.
func ParseClockReply(key, b []byte, nonce uint64) (t int64, ok bool) {
	if len(b) != ClockReplyLen || string(b[:4]) != "FLCR" || binary.BigEndian.Uint64(b[4:12]) != nonce {
		return 0, false
	}
	if !hmac.Equal(b[20:36], mac(key, []byte("rep"), b[4:12], b[12:20])[:16]) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[12:20])), true
}
