package dataplane

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The TCP framing. A connection opens with a hello (client → server) and a
// helloOK (server → client); after that the client sends frames, each a
// fixed header then Len payload bytes, and the server answers every
// complete frame with a header-only ack in the same order.
//
//	hello   (32 B): magic "FLDT" u32 | version u16 | 0 u16 | session u64 | conn u32 | from u32 | to u32 | 0 u32
//	header  (20 B): kind u8 | 0 0 0 | id u64 | len u64
//
// For write and msg frames len is the payload that follows; for acks it is
// the payload length being acknowledged and nothing follows. All integers
// are big-endian.
const (
	helloLen  = 32
	headerLen = 20
	tcpMagic  = 0x464c4454 // "FLDT"
	version   = 1
	// maxFrameLen refuses absurd lengths before they become a long read.
	maxFrameLen = 1 << 40
)

// kind is a frame's first byte.
type kind uint8

const (
	kindWrite   kind = 1 // one stream write, id = the connection's write sequence
	kindMsg     kind = 2 // one posted message, id = its message id
	kindAckW    kind = 3 // ack of a write
	kindAckM    kind = 4 // ack of a message
	kindHelloOK kind = 5 // the server took the hello, id = the conn id
)

// Which kinds each side may receive: a frame of any other kind is a
// protocol error that closes the connection.
const (
	serverAccepts = 1<<kindWrite | 1<<kindMsg
	clientAccepts = 1<<kindAckW | 1<<kindAckM
)

func (k kind) String() string {
	switch k {
	case kindWrite:
		return "write"
	case kindMsg:
		return "msg"
	case kindAckW:
		return "write-ack"
	case kindAckM:
		return "msg-ack"
	case kindHelloOK:
		return "hello-ok"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// ackOf is the ack kind answering a data kind.
func ackOf(k kind) kind {
	if k == kindMsg {
		return kindAckM
	}
	return kindAckW
}

// header is one decoded frame header.
type header struct {
	Kind kind
	ID   uint64
	Len  int64
}

// payload is how many bytes follow the header on the wire.
func (h header) payload() int64 {
	if h.Kind == kindWrite || h.Kind == kindMsg {
		return h.Len
	}
	return 0
}

func putHeader(b []byte, h header) {
	_ = b[headerLen-1]
	b[0], b[1], b[2], b[3] = byte(h.Kind), 0, 0, 0
	binary.BigEndian.PutUint64(b[4:], h.ID)
	binary.BigEndian.PutUint64(b[12:], uint64(h.Len))
}

func parseHeader(b []byte) (header, error) {
	if b[1]|b[2]|b[3] != 0 {
		return header{}, errors.New("frame header with reserved bytes set (stream out of step)")
	}
	n := binary.BigEndian.Uint64(b[12:])
	if n > maxFrameLen {
		return header{}, fmt.Errorf("frame length %d above %d", n, int64(maxFrameLen))
	}
	return header{Kind: kind(b[0]), ID: binary.BigEndian.Uint64(b[4:]), Len: int64(n)}, nil
}

// hello is the first thing a client writes: who it is and which run.
type hello struct {
	Session        uint64
	Conn, From, To uint32
}

func putHello(b []byte, h hello) {
	_ = b[helloLen-1]
	binary.BigEndian.PutUint32(b[0:], tcpMagic)
	binary.BigEndian.PutUint16(b[4:], version)
	binary.BigEndian.PutUint16(b[6:], 0)
	binary.BigEndian.PutUint64(b[8:], h.Session)
	binary.BigEndian.PutUint32(b[16:], h.Conn)
	binary.BigEndian.PutUint32(b[20:], h.From)
	binary.BigEndian.PutUint32(b[24:], h.To)
	binary.BigEndian.PutUint32(b[28:], 0)
}

func parseHello(b []byte) (hello, error) {
	if binary.BigEndian.Uint32(b[0:]) != tcpMagic {
		return hello{}, errors.New("not a fabriclab data connection (bad magic)")
	}
	if v := binary.BigEndian.Uint16(b[4:]); v != version {
		return hello{}, fmt.Errorf("data protocol version %d, want %d", v, version)
	}
	return hello{
		Session: binary.BigEndian.Uint64(b[8:]),
		Conn:    binary.BigEndian.Uint32(b[16:]),
		From:    binary.BigEndian.Uint32(b[20:]),
		To:      binary.BigEndian.Uint32(b[24:]),
	}, nil
}

// decoder splits a byte stream into frames without buffering payload: it
// keeps only a partial header, so a reader can hand it whatever one Read
// returned (many small frames, or a slice of one huge payload) and reuse
// its buffer. It is pure: no I/O, no clock.
type decoder struct {
	accept uint32 // bit per kind this side may receive
	hdr    [headerLen]byte
	have   int // header bytes buffered
	cur    header
	left   int64 // payload bytes of cur still to come
	inBody bool
}

// step is what one call to next consumed.
type step struct {
	n       int    // bytes of p consumed
	payload int    // of those, payload bytes
	done    bool   // frame completed
	frame   header // the completed frame, when done
}

// next consumes a prefix of p: part of a header, or part of a payload. At
// most one frame completes per call; callers loop until p is used up.
func (d *decoder) next(p []byte) (step, error) {
	if d.inBody {
		m := min(int64(len(p)), d.left)
		d.left -= m
		s := step{n: int(m), payload: int(m)}
		if d.left == 0 {
			d.inBody = false
			s.done, s.frame = true, d.cur
		}
		return s, nil
	}
	k := copy(d.hdr[d.have:], p)
	d.have += k
	if d.have < headerLen {
		return step{n: k}, nil
	}
	d.have = 0
	h, err := parseHeader(d.hdr[:])
	if err != nil {
		return step{}, err
	}
	if h.Kind >= 32 || d.accept&(1<<h.Kind) == 0 {
		return step{}, fmt.Errorf("unexpected %s frame", h.Kind)
	}
	d.cur, d.left = h, h.payload()
	if d.left == 0 {
		return step{n: k, done: true, frame: h}, nil
	}
	d.inBody = true
	return step{n: k}, nil
}
