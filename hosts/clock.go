package hosts

import (
	"errors"
	"time"
)

// ClockSample is one round trip of a clock query: the controller's clock
// when it sent the query and when the answer came back, and the agent's
// clock when it answered (all Unix ns).
type ClockSample struct {
	Sent, Agent, Received int64
}

// Offset is an agent clock's estimated offset from the controller's
// (agent − controller, ns) and the bound on its error: half the round trip
// of the sample it comes from, since the agent read its clock somewhere
// inside that round trip.
type Offset struct {
	Offset, Error int64
}

// ToController converts an agent timestamp to the controller's clock.
func (o Offset) ToController(agentT int64) int64 { return agentT - o.Offset }

// ToAgent converts a controller timestamp to the agent's clock.
func (o Offset) ToAgent(t int64) int64 { return t + o.Offset }

// EstimateOffset is NTP's estimate from the sample with the shortest round
// trip (the least queueing, so the tightest bound): the agent read its
// clock at the midpoint of the round trip, give or take half of it.
// Samples whose clock went backwards are ignored.
func EstimateOffset(samples []ClockSample) (Offset, error) {
	best := -1
	var bestRTT int64
	for i, s := range samples {
		rtt := s.Received - s.Sent
		if rtt < 0 {
			continue
		}
		if best < 0 || rtt < bestRTT {
			best, bestRTT = i, rtt
		}
	}
	if best < 0 {
		return Offset{}, errors.New("no usable clock sample (the controller's clock went backwards)")
	}
	s := samples[best]
	// Midpoint without overflow: Sent + rtt/2 (rounded half up).
	mid := s.Sent + (bestRTT+1)/2
	return Offset{Offset: s.Agent - mid, Error: (bestRTT + 1) / 2}, nil
}

// clockSamples is how many round trips an offset is estimated from.
const clockSamples = 64

// measureOffset queries clock (the agent's clock, Unix ns) clockSamples
// times and estimates the offset.
func measureOffset(clock func() (int64, error)) (Offset, error) {
	samples := make([]ClockSample, 0, clockSamples)
	for i := 0; i < clockSamples; i++ {
		sent := nowNano()
		a, err := clock()
		recv := nowNano()
		if err != nil {
			return Offset{}, err
		}
		samples = append(samples, ClockSample{Sent: sent, Agent: a, Received: recv})
	}
	return EstimateOffset(samples)
}

func nowNano() int64 { return time.Now().UnixNano() }
