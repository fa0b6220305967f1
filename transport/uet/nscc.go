package uet

import "fabriclab/sim"

// NSCCParams are the knobs of NSCC, UET's sender-based congestion
// control: a window driven by ECN marks and by the queuing delay an ACK
// measured against the base RTT. See the README's "Ultra Ethernet
// transport" for defaults.
type NSCCParams struct {
	// TargetDelay is the queuing delay (RTT − base RTT) NSCC aims at.
	TargetDelay sim.Time
	// IncreaseGain scales the proportional increase below the target:
	// per ACK of b bytes, cwnd += IncreaseGain·b·(target − delay)/target.
	IncreaseGain float64
	// FairIncrease is the additive increase in MTUs per round trip above
	// the target without marks.
	FairIncrease float64
	// DecreaseGain scales the multiplicative decrease with marks above
	// the target: per ACK of b bytes, cwnd −= DecreaseGain·b·(delay −
	// target)/delay.
	DecreaseGain float64
	// MaxWindow is the window's ceiling in bandwidth-delay products.
	MaxWindow float64
}

// nscc is one connection's NSCC window, a pure state machine: OnAck for
// each packet acknowledged (its bytes, RTT sample and ECN echo), OnTrim
// for a packet a switch trimmed. The quadrants:
//
//	no mark, delay < target:  cwnd += IncreaseGain·b·(target − delay)/target
//	no mark, delay ≥ target:  cwnd += FairIncrease·MTU·b/cwnd
//	mark,    delay < target:  unchanged (a passing mark, not our queue)
//	mark,    delay ≥ target:  cwnd −= DecreaseGain·b·(delay − target)/delay
//	trimmed:                  cwnd −= MTU
//	timeout:                  cwnd ← cwnd/2
//
// cwnd stays within [MTU, MaxWindow·BDP]; it starts at one BDP (line rate
// from the first packet, as UET does), or the ceiling if that is lower.
type nscc struct {
	p        *NSCCParams
	cwnd     float64
	min, max float64
	mtu      float64
	baseRTT  sim.Time
}

func (c *nscc) init(p *NSCCParams, bdp, mtu float64, baseRTT sim.Time) {
	*c = nscc{p: p, min: mtu, max: max(p.MaxWindow*bdp, mtu), mtu: mtu, baseRTT: baseRTT}
	c.cwnd = min(max(bdp, c.min), c.max)
}

// window is the bytes that may be in flight.
func (c *nscc) window() float64 { return c.cwnd }

// OnAck hears b bytes acknowledged, with round trip rtt and the ECN echo.
func (c *nscc) OnAck(b float64, rtt sim.Time, ce bool) {
	delay := max(rtt-c.baseRTT, 0)
	target := c.p.TargetDelay
	switch {
	case !ce && delay < target:
		c.cwnd += c.p.IncreaseGain * b * float64(target-delay) / float64(target)
	case !ce:
		c.cwnd += c.p.FairIncrease * c.mtu * b / c.cwnd
	case delay >= target && delay > 0:
		c.cwnd -= c.p.DecreaseGain * b * float64(delay-target) / float64(delay)
	}
	c.cwnd = min(max(c.cwnd, c.min), c.max)
}

// OnTrim hears that a packet was trimmed (a switch had no room for it).
func (c *nscc) OnTrim() { c.cwnd = max(c.cwnd-c.mtu, c.min) }

// OnTimeout hears that nothing came back for an RTO: the window halves.
func (c *nscc) OnTimeout() { c.cwnd = max(c.cwnd/2, c.min) }
