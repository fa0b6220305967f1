package dataplane

import (
	"fmt"
	"net/netip"
	"time"
)

// Endpoint is one local data address (a host's NIC: one rank's IP) the
// plane listens on, TCP and UDP on the same port. IDs are the run's
// endpoint IDs, the same space as Peer.ID: the hello of a connection and
// every datagram carry them, so both sides name a pair alike.
type Endpoint struct {
	ID   int
	Addr netip.AddrPort
}

// Peer is a remote endpoint a local endpoint may send to.
type Peer struct {
	ID   int
	Addr netip.AddrPort
}

// Conn is one TCP connection (one per QP) from local endpoint From to peer
// To. The ID is the run's: it travels in the hello, so the receiving plane
// reports the same connection under the same ID.
type Conn struct {
	ID   int
	From int
	To   int
}

// ConnError is one connection that could not be opened, or a request on it
// that was refused.
type ConnError struct {
	Conn int
	Err  string
}

func (e ConnError) Error() string { return fmt.Sprintf("conn %d: %s", e.Conn, e.Err) }

// Config is what one run asks of the plane.
type Config struct {
	// CC is the TCP congestion control for this run ("" = kernel default);
	// New refuses one that is not in AvailableCC or that this process may
	// not set.
	CC string
	// Allowed says which destinations this agent may send to (the run's
	// host list ∩ the agent's --allow). It is checked before any dial or
	// datagram, and on accept: the plane never writes a byte (not even an
	// ack) to an address it refuses. nil = nothing allowed. It is called
	// from many goroutines at once and must not block.
	Allowed func(netip.Addr) bool
	// MaxRate caps any paced UDP flow, in bits/s (0 = none).
	MaxRate int64
	// Session tells this run's traffic from a previous run's stragglers: it
	// travels in every hello and datagram and a mismatch is refused.
	Session uint64
	// EventQueue bounds the events waiting for the consumer of Events
	// (0 = DefaultEventQueue); see Events for the policy when it is full.
	EventQueue int
}

// Stream is the any-to-any mode of a hardware tester: from start until
// `until`, keep Depth writes of Size bytes outstanding on connection Conn.
// A write completes when the receiver has read all of it and its ack is
// back.
type Stream struct {
	Conn  int
	Size  int64
	Depth int
}

// UDPFlow is a paced UDP stream with sequence numbers from local endpoint
// From to peer To. Rate counts UDP payload bits (the datagram as the
// application writes it, without IP/UDP headers); Size is the payload of
// one datagram, at least UDPHeaderLen.
type UDPFlow struct {
	ID   int
	From int
	To   int
	Rate int64 // bits/s
	Size int   // datagram payload bytes
}

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EventDelivered: at the receiver, the message's last byte was read.
	EventDelivered EventKind = iota + 1
	// EventAcked: at the sender, the receiver acknowledged the message's
	// last byte (what releases the sender's own dependants, as a send
	// completion does on an RDMA NIC).
	EventAcked
	// EventStarted: at the sender, the message's first byte is about to be
	// written (what a message's start means on real hosts).
	EventStarted
)

func (k EventKind) String() string {
	switch k {
	case EventDelivered:
		return "delivered"
	case EventAcked:
		return "acked"
	case EventStarted:
		return "started"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one posted message seen by this plane, on either side.
type Event struct {
	Kind     EventKind
	Msg      int64
	Conn     int
	From, To int
	Bytes    int64
	T        time.Time
}

// Side says which end of a connection or flow a counter was seen at.
type Side uint8

const (
	// SideSender counts what was written (and, on TCP, acknowledged).
	SideSender Side = iota + 1
	// SideReceiver counts what was read.
	SideReceiver
)

func (s Side) String() string {
	switch s {
	case SideSender:
		return "sender"
	case SideReceiver:
		return "receiver"
	}
	return fmt.Sprintf("side(%d)", uint8(s))
}

// maxID bounds endpoint, connection and flow IDs: they travel as 32 bits.
const maxID = 1<<32 - 1

func checkID(what string, id int) error {
	if id < 0 || id > maxID {
		return fmt.Errorf("dataplane: %s ID %d outside 0…%d", what, id, maxID)
	}
	return nil
}
