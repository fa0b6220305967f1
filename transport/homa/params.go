// Package homa is the protocol logic of Homa (Montazeri, Li, Alizadeh and
// Ousterhout, "Homa: A Receiver-Driven Low-Latency Transport Protocol Using
// Network Priorities", SIGCOMM 2018), written as a pure, deterministic state
// machine in the style of etcd's raft: an Endpoint owns no timers and does no
// I/O. The simulator (or the real-host emulation) feeds it inputs stamped with
// the current time and carries out what it asks for. See Endpoint for the
// calling convention and the protocol rules.
package homa

import (
	"fmt"
	"math"

	"fabriclab/sim"
	"fabriclab/units"
)

// Params are the knobs of Homa. Every endpoint of one simulation must use the
// same Params: the sender picks the unscheduled priority of a message from
// UnschedCutoffs, and the receiver computes grants from RTTBytes and MTU, so
// the two sides must agree (in the paper receivers piggyback the cutoffs on
// grants; a simulation can share them directly).
type Params struct {
	// MTU is the payload of one full data packet. Messages are cut into
	// packets at multiples of MTU (the last one may be shorter) and every
	// retransmission reuses the same boundaries. Default 1442 B: the payload
	// per packet of the paper's OMNeT++ simulator (HomaSimulation) on
	// 1500-byte Ethernet frames.
	MTU units.Size

	// RTTBytes is the bytes a sender may transmit blind (unscheduled) and the
	// bytes the receiver keeps granted but not yet received for each message it
	// grants to. The paper sets it to the bandwidth-delay product of the host
	// link, about 9.7 KB in its simulated 10 Gb/s network (§3.2, §5). Use
	// RTTBytesFor to derive it from a fabric. It is rounded up to whole MTU
	// packets internally so that grants stay on packet boundaries (Window).
	RTTBytes units.Size

	// Priorities is the number of switch priority levels Homa uses; level
	// Priorities−1 is the highest (fabric.Port serves the highest number
	// first). Control packets travel at the highest level. Default 8, the
	// paper's value and the fabric's NumPrio.
	Priorities int

	// UnschedPrios is how many of the highest levels carry unscheduled
	// packets; the remaining Priorities−UnschedPrios lower levels carry
	// scheduled packets. The paper splits them in proportion to the share of
	// unscheduled bytes in the workload (§3.4); WithWorkload computes it.
	// Default 1.
	UnschedPrios int

	// UnschedCutoffs has UnschedPrios ascending message sizes: a message of
	// length ≤ UnschedCutoffs[i] (and > the previous cutoff) sends its
	// unscheduled packets at level Priorities−1−i, so the shortest messages
	// get the highest level. A message longer than the last cutoff uses the
	// lowest unscheduled level. The paper picks the cutoffs so that each level
	// carries about the same unscheduled bytes (§3.4); WithWorkload computes
	// them from a size CDF. Default: empty, meaning every message uses the
	// single highest level.
	UnschedCutoffs []units.Size

	// Overcommit is the degree of overcommitment k: a receiver grants to at
	// most k messages at once (the k with the fewest remaining bytes), each at
	// a distinct scheduled level while k ≤ the number of scheduled levels. The
	// paper uses k = the number of scheduled levels (§3.5). Default: that.
	Overcommit int

	// ResendTimeout is how long a receiver waits for data it has granted (or
	// that was sent unscheduled) before it sends a RESEND, and how long a
	// sender that has sent everything it may send waits to hear from the
	// receiver before it probes. The paper does not give the simulator's
	// value; it only has to be well above the unloaded RTT (a few µs) plus
	// the queueing a granted packet may see. Default 1 ms (our choice).
	ResendTimeout units.Duration

	// MaxResends is how many consecutive timeouts without any answer a
	// message survives; at the next one it is abandoned (an Abandoned event),
	// the paper's "abort after several RESENDs" (§3.7). Default 5 (our
	// choice).
	MaxResends int

	// FIFOGrantPermille reserves this share (in thousandths) of a receiver's
	// granted bytes for the oldest message it knows of, so that a long message
	// cannot be starved forever by a stream of shorter ones. The paper notes
	// SRPT's starvation risk and suggests exactly this remedy (§3.5, §7);
	// Homa's Linux implementation ships it with 5 % (grant_fifo_fraction 50).
	// Every (1000−p)·MTU bytes granted by SRPT earn one extra MTU-sized grant
	// for the oldest incomplete message outside the active set, sent at the
	// lowest scheduled level. Default 0 (off): the paper's simulations ran
	// pure SRPT.
	FIFOGrantPermille int

	// DoneMemory is how many completed inbound messages a receiver remembers,
	// so that a probe or a late duplicate for a message already delivered gets
	// its ACK again instead of a second delivery. Default 1024 (our choice).
	DoneMemory int
}

// DefaultParams returns the paper's setting for its simulated 10 Gb/s network
// with no workload information (one unscheduled level, seven scheduled).
func DefaultParams() Params {
	return Params{
		MTU:           1442,
		RTTBytes:      9700,
		Priorities:    8,
		UnschedPrios:  1,
		Overcommit:    7,
		ResendTimeout: units.Millisecond,
		MaxResends:    5,
		DoneMemory:    1024,
	}
}

// RTTBytesFor is the bandwidth-delay product of a host link of rate r and an
// unloaded round-trip time rtt (the time from the first bit of a full data
// packet leaving the sender to the first bit of the answering grant coming
// back, serialization included), the paper's definition of RTTbytes.
func RTTBytesFor(r units.Rate, rtt units.Duration) units.Size {
	return units.Size(units.BytesIn(r, rtt))
}

// Validate reports the first parameter that cannot work, naming it.
func (p Params) Validate() error {
	switch {
	case p.MTU <= 0:
		return fmt.Errorf("homa: MTU %d must be positive", p.MTU)
	case p.RTTBytes <= 0:
		return fmt.Errorf("homa: RTTBytes %d must be positive", p.RTTBytes)
	case p.Priorities < 2:
		return fmt.Errorf("homa: Priorities %d must be at least 2 (one unscheduled, one scheduled level)", p.Priorities)
	case p.UnschedPrios < 1 || p.UnschedPrios >= p.Priorities:
		return fmt.Errorf("homa: UnschedPrios %d must be in [1, Priorities−1 = %d]", p.UnschedPrios, p.Priorities-1)
	case len(p.UnschedCutoffs) > p.UnschedPrios:
		return fmt.Errorf("homa: %d UnschedCutoffs for %d unscheduled levels", len(p.UnschedCutoffs), p.UnschedPrios)
	case p.Overcommit < 1:
		return fmt.Errorf("homa: Overcommit %d must be at least 1", p.Overcommit)
	case p.ResendTimeout <= 0:
		return fmt.Errorf("homa: ResendTimeout %v must be positive", p.ResendTimeout)
	case p.MaxResends < 0:
		return fmt.Errorf("homa: MaxResends %d must not be negative", p.MaxResends)
	case p.FIFOGrantPermille < 0 || p.FIFOGrantPermille >= 1000:
		return fmt.Errorf("homa: FIFOGrantPermille %d must be in [0, 999]", p.FIFOGrantPermille)
	case p.DoneMemory < 0:
		return fmt.Errorf("homa: DoneMemory %d must not be negative", p.DoneMemory)
	}
	for i := 1; i < len(p.UnschedCutoffs); i++ {
		if p.UnschedCutoffs[i] < p.UnschedCutoffs[i-1] {
			return fmt.Errorf("homa: UnschedCutoffs[%d] = %d is below UnschedCutoffs[%d] = %d", i, p.UnschedCutoffs[i], i-1, p.UnschedCutoffs[i-1])
		}
	}
	return nil
}

// Window is RTTBytes rounded up to whole MTU packets: the unscheduled bytes
// of a long message and the granted-but-not-received bytes a receiver keeps
// per granted message.
func (p Params) Window() units.Size {
	return (p.RTTBytes + p.MTU - 1) / p.MTU * p.MTU
}

// Unscheduled is how many leading bytes of a message of length n are sent
// without a grant: all of it up to Window.
func (p Params) Unscheduled(n units.Size) units.Size { return min(n, p.Window()) }

// UnschedPrio is the priority level of the unscheduled packets of a message
// of length n.
func (p Params) UnschedPrio(n units.Size) uint8 {
	top := p.Priorities - 1
	for i, c := range p.UnschedCutoffs {
		if n <= c {
			return uint8(top - i)
		}
	}
	return uint8(top - (p.UnschedPrios - 1))
}

// ControlPrio is the level of GRANT, RESEND, BUSY, PROBE and ACK packets:
// the highest, as in the paper.
func (p Params) ControlPrio() uint8 { return uint8(p.Priorities - 1) }

// SchedLevels is the number of scheduled priority levels (0 … SchedLevels−1).
func (p Params) SchedLevels() int { return p.Priorities - p.UnschedPrios }

// CDFPoint is one step of a message-size distribution: P is the probability
// that a message is at most Size bytes. A slice of points, ascending in both
// fields and ending at P = 1, is read as a discrete step CDF (each Size has
// probability P − the previous P), which is how the paper's simulator reads
// the W1–W5 files.
type CDFPoint struct {
	Size units.Size
	P    float64
}

func checkCDF(cdf []CDFPoint) error {
	if len(cdf) == 0 {
		return fmt.Errorf("homa: empty size CDF")
	}
	prevS, prevP := units.Size(0), 0.0
	for i, c := range cdf {
		if c.Size <= prevS && i > 0 || c.Size <= 0 {
			return fmt.Errorf("homa: CDF point %d: size %d not above the previous %d and positive", i, c.Size, prevS)
		}
		if c.P < prevP || c.P > 1 || math.IsNaN(c.P) {
			return fmt.Errorf("homa: CDF point %d: probability %v not in [%v, 1]", i, c.P, prevP)
		}
		prevS, prevP = c.Size, c.P
	}
	if prevP != 1 {
		return fmt.Errorf("homa: CDF ends at probability %v, want 1", prevP)
	}
	return nil
}

// UnschedFraction is the share of all bytes of the workload that travel
// unscheduled when RTTBytes is rtt: Σ w·min(s, rtt) / Σ w·s.
func UnschedFraction(cdf []CDFPoint, rtt units.Size) (float64, error) {
	if err := checkCDF(cdf); err != nil {
		return 0, err
	}
	var un, all float64
	prev := 0.0
	for _, c := range cdf {
		w := c.P - prev
		prev = c.P
		un += w * float64(min(c.Size, rtt))
		all += w * float64(c.Size)
	}
	return un / all, nil
}

// UnscheduledCutoffs splits the unscheduled bytes of the workload into levels
// bands of about equal bytes (the paper's rule, §3.4): cutoff i is the
// smallest size at which the cumulative unscheduled bytes Σ w·min(s, rtt)
// reach (i+1)/levels of the total. The last cutoff is the largest size.
// Cutoffs may repeat when one size carries more than a band's bytes; the
// levels in between then stay unused.
func UnscheduledCutoffs(cdf []CDFPoint, rtt units.Size, levels int) ([]units.Size, error) {
	if err := checkCDF(cdf); err != nil {
		return nil, err
	}
	if levels < 1 {
		return nil, fmt.Errorf("homa: %d unscheduled levels", levels)
	}
	cum := make([]float64, len(cdf))
	var total float64
	prev := 0.0
	for i, c := range cdf {
		total += (c.P - prev) * float64(min(c.Size, rtt))
		prev = c.P
		cum[i] = total
	}
	out := make([]units.Size, levels)
	j := 0
	for i := range levels - 1 {
		target := total * float64(i+1) / float64(levels)
		for j < len(cdf)-1 && cum[j] < target {
			j++
		}
		out[i] = cdf[j].Size
	}
	out[levels-1] = cdf[len(cdf)-1].Size
	return out, nil
}

// WithWorkload returns p with the priority split, the unscheduled cutoffs and
// the overcommitment degree derived from a message-size CDF as the paper
// does: UnschedPrios = round(Priorities × unscheduled byte share), kept in
// [1, Priorities−1]; cutoffs from UnscheduledCutoffs; Overcommit = the number
// of scheduled levels.
func (p Params) WithWorkload(cdf []CDFPoint) (Params, error) {
	f, err := UnschedFraction(cdf, p.Window())
	if err != nil {
		return p, err
	}
	u := int(math.Round(f * float64(p.Priorities)))
	u = max(1, min(u, p.Priorities-1))
	cut, err := UnscheduledCutoffs(cdf, p.Window(), u)
	if err != nil {
		return p, err
	}
	p.UnschedPrios = u
	p.UnschedCutoffs = cut
	p.Overcommit = p.Priorities - u
	return p, p.Validate()
}

// NoDeadline is what NextDeadline returns when no timer is armed.
const NoDeadline = sim.Never
