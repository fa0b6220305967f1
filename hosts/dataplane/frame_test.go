package dataplane

import (
	"strings"
	"testing"
)

func TestHeaderAndHelloRoundTrip(t *testing.T) {
	var b [headerLen]byte
	want := header{Kind: kindMsg, ID: 1<<63 + 5, Len: maxFrameLen}
	putHeader(b[:], want)
	if got, err := parseHeader(b[:]); err != nil || got != want {
		t.Fatalf("header %+v, %v; want %+v", got, err, want)
	}
	var hb [helloLen]byte
	wh := hello{Session: 42, Conn: 7, From: 1, To: maxID}
	putHello(hb[:], wh)
	if got, err := parseHello(hb[:]); err != nil || got != wh {
		t.Fatalf("hello %+v, %v; want %+v", got, err, wh)
	}
	hb[0] = 'X'
	if _, err := parseHello(hb[:]); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("bad magic accepted: %v", err)
	}
}

// frames encodes a stream of frames as a sender would.
func frames(hs ...header) []byte {
	var out []byte
	for _, h := range hs {
		var b [headerLen]byte
		putHeader(b[:], h)
		out = append(out, b[:]...)
		out = append(out, make([]byte, h.payload())...)
	}
	return out
}

// TestDecoderAnySplit feeds the same stream cut into chunks of every size
// from 1 byte up: the frames and payload counts must not depend on how
// reads split it.
func TestDecoderAnySplit(t *testing.T) {
	hs := []header{
		{Kind: kindWrite, ID: 0, Len: 100},
		{Kind: kindMsg, ID: 9, Len: 0},
		{Kind: kindWrite, ID: 1, Len: 1},
		{Kind: kindMsg, ID: 10, Len: 3000},
	}
	stream := frames(hs...)
	for chunk := 1; chunk <= len(stream); chunk++ {
		d := decoder{accept: serverAccepts}
		var got []header
		payload := 0
		for off := 0; off < len(stream); off += chunk {
			p := stream[off:min(off+chunk, len(stream))]
			for len(p) > 0 {
				s, err := d.next(p)
				if err != nil {
					t.Fatalf("chunk %d: %v", chunk, err)
				}
				if s.n == 0 {
					t.Fatalf("chunk %d: no progress", chunk)
				}
				p = p[s.n:]
				payload += s.payload
				if s.done {
					got = append(got, s.frame)
				}
			}
		}
		if len(got) != len(hs) || payload != 3101 {
			t.Fatalf("chunk %d: %d frames, %d payload; want %d, 3101", chunk, len(got), payload, len(hs))
		}
		for i := range hs {
			if got[i] != hs[i] {
				t.Fatalf("chunk %d frame %d: %+v, want %+v", chunk, i, got[i], hs[i])
			}
		}
	}
}

func TestDecoderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		accept uint32
		b      []byte
		want   string
	}{
		{"ack at the server", serverAccepts, frames(header{Kind: kindAckW}), "unexpected write-ack"},
		{"write at the client", clientAccepts, frames(header{Kind: kindWrite}), "unexpected write"},
		{"unknown kind", serverAccepts, frames(header{Kind: 200}), "unexpected kind 200"},
		{"too long", serverAccepts, func() []byte {
			var b [headerLen]byte
			putHeader(b[:], header{Kind: kindWrite, Len: 1})
			b[4+8] = 0xff // length's top byte
			return b[:]
		}(), "above"},
		{"reserved", serverAccepts, func() []byte { b := frames(header{Kind: kindWrite}); b[2] = 1; return b }(), "reserved"},
	} {
		d := decoder{accept: tc.accept}
		_, err := d.next(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
