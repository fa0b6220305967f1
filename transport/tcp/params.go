// Package tcp is the window logic of a TCP-like byte-stream transport with
// DCTCP congestion control (Alizadeh et al., "Data Center TCP (DCTCP)",
// SIGCOMM 2010) and, as a mode, plain TCP that halves its window on an ECN
// echo or a loss. Like transport/roce's DCQCN and transport/homa, it is a
// pure, deterministic state machine in the style of etcd's raft: a Sender
// and a Receiver own no timers and do no I/O; the caller feeds them packets
// and the time and carries out what they ask for.
//
// One connection is one byte stream. Messages submitted to it are sent one
// after the other, so a short message queued behind a long one waits for all
// of it (head-of-line blocking) and a loss stalls every later message until
// it is repaired: that is the behaviour the sender-driven baseline must show
// beside Homa.
package tcp

import (
	"fmt"

	"fabriclab/sim"
	"fabriclab/units"
)

// Mode selects the reaction to ECN echoes.
type Mode uint8

const (
	// DCTCP cuts cwnd by α/2 once per window of data when an ECN echo is
	// seen, α being the running fraction of marked bytes (§3.1 of the paper).
	DCTCP Mode = iota
	// Reno is plain TCP with ECN (RFC 3168): cwnd halves once per window on
	// an ECN echo, as on a loss.
	Reno
)

func (m Mode) String() string {
	switch m {
	case DCTCP:
		return "dctcp"
	case Reno:
		return "reno"
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// Params are the knobs of one connection.
type Params struct {
	Mode Mode

	// MSS is the payload of a full segment. Default 1460 B (1500-byte
	// Ethernet MTU less 40 B of IP and TCP headers, the paper's testbed).
	MSS units.Size

	// InitCwnd is the initial congestion window in segments. Default 10
	// (RFC 6928, Linux's default).
	InitCwnd int

	// MinCwnd is the floor of cwnd after an ECN or fast-retransmit cut, in
	// segments. Default 2 (RFC 5681's floor for ssthresh; Linux DCTCP keeps
	// at least 2 too).
	MinCwnd int

	// G is DCTCP's gain g in α ← (1−g)·α + g·F. Default 1/16, the paper's
	// value (§3.4 bounds g and uses 1/16 throughout).
	G float64

	// InitAlpha is α before any window has been observed. The paper does not
	// fix it; default 1 (Linux's dctcp_alpha_on_init = 1024/1024), so the
	// first cut of a new connection is a halving, as plain TCP's.
	InitAlpha float64

	// DupAckThreshold is how many duplicate ACKs trigger fast retransmit.
	// Default 3 (RFC 5681).
	DupAckThreshold int

	// MinRTO, InitRTO and MaxRTO bound the retransmission timeout (RFC 6298
	// computes RTO = SRTT + 4·RTTVAR and doubles it on every expiry). The
	// DCTCP paper's testbed used the default 200 ms minimum but points to the
	// 10 ms and lower minima data centers use against incast; default MinRTO
	// 10 ms, InitRTO 10 ms (RFC 6298's 1 s would stall every first-packet
	// loss of a short simulation for a second), MaxRTO 1 s.
	MinRTO, InitRTO, MaxRTO units.Duration

	// NoECN makes the connection not ECN-capable (plain loss-based TCP, as
	// without RFC 3168 negotiation): ECN echoes are ignored and only losses
	// cut the window. The fabric marks every data packet alike, so this is
	// how a drop-tail TCP baseline runs on a marking fabric. Default false.
	NoECN bool
}

// DefaultParams returns DCTCP with the values documented on Params.
func DefaultParams() Params {
	return Params{
		Mode:            DCTCP,
		MSS:             1460,
		InitCwnd:        10,
		MinCwnd:         2,
		G:               1.0 / 16,
		InitAlpha:       1,
		DupAckThreshold: 3,
		MinRTO:          10 * units.Millisecond,
		InitRTO:         10 * units.Millisecond,
		MaxRTO:          units.Second,
	}
}

// Validate reports the first parameter that cannot work, naming it.
func (p Params) Validate() error {
	switch {
	case p.Mode != DCTCP && p.Mode != Reno:
		return fmt.Errorf("tcp: unknown mode %d", p.Mode)
	case p.MSS <= 0:
		return fmt.Errorf("tcp: MSS %d must be positive", p.MSS)
	case p.InitCwnd < 1:
		return fmt.Errorf("tcp: InitCwnd %d must be at least 1 segment", p.InitCwnd)
	case p.MinCwnd < 1:
		return fmt.Errorf("tcp: MinCwnd %d must be at least 1 segment", p.MinCwnd)
	case !(p.G > 0 && p.G <= 1):
		return fmt.Errorf("tcp: G %v must be in (0, 1]", p.G)
	case !(p.InitAlpha >= 0 && p.InitAlpha <= 1):
		return fmt.Errorf("tcp: InitAlpha %v must be in [0, 1]", p.InitAlpha)
	case p.DupAckThreshold < 1:
		return fmt.Errorf("tcp: DupAckThreshold %d must be at least 1", p.DupAckThreshold)
	case p.MinRTO <= 0 || p.InitRTO <= 0 || p.MaxRTO < p.MinRTO:
		return fmt.Errorf("tcp: RTO bounds min %v, init %v, max %v: need 0 < min ≤ max, init > 0", p.MinRTO, p.InitRTO, p.MaxRTO)
	}
	return nil
}

// NoDeadline is what NextDeadline returns when no timer is armed.
const NoDeadline = sim.Never

// Segment is a data packet: the header fields the network must carry.
type Segment struct {
	Seq units.Size // stream offset of the first payload byte
	Len units.Size // payload bytes
	// SentAt is the sender's clock when it was sent; the receiver echoes it
	// (the TCP timestamp option), which gives RTT samples even for
	// retransmitted segments.
	SentAt sim.Time
	// CE is the ECN congestion-experienced mark; switches set it.
	CE bool
	// Retransmit marks a segment sent again (for counters only).
	Retransmit bool
	// Msg is the id (as submitted) of the message holding the segment's
	// first byte (for per-message diagnostics; the receiver does not need it).
	Msg uint64
}

// Ack is an acknowledgement: the header fields the network must carry.
type Ack struct {
	Ack  units.Size // cumulative: every byte below was received
	ECE  bool       // ECN echo (DCTCP: CE of the segments this ACK covers)
	Echo sim.Time   // SentAt of the segment that triggered this ACK
}
