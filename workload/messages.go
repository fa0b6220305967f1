package workload

import (
	"errors"
	"fmt"

	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
)

// MaxUniformMessages bounds the messages one uniform or messages job may
// generate: scenario validation refuses a setting expected to pass it, and
// the lab passes it as the workload's limit.
const MaxUniformMessages = 2_000_000

// ErrNoMessages is the error (wrapped, with the setting) of Messages for a
// window in which no message arrives: it would run nothing.
var ErrNoMessages = errors.New("the messages workload yields no message")

// MessagesSpec is an open-loop message workload on a set of hosts: Poisson
// arrivals at Load of each host's link (wire bytes, headers included),
// sizes from Sizes, destinations by Pattern, for Duration.
type MessagesSpec struct {
	Hosts           []int // the hosts taking part; rank i is Hosts[i]
	Sizes           *SizeDist
	Load            float64
	Rate            units.Rate
	Payload, Header int64 // per packet: payload bytes and wire overhead
	Duration        sim.Time
	// Pattern: "uniform" (any other host, fresh for every message; the
	// default) or "permutation" (every host sends to one fixed other host).
	Pattern string
	// ResponseBytes > 0 makes every message a request that its receiver
	// answers, once it has arrived in full, with a response of this size
	// (an RPC); SameBytes answers each with as many bytes as it carried.
	// Load counts the requests only.
	ResponseBytes int64
	Seed          uint64
	Limit         int // most messages (0: MaxMessages)
}

// SameBytes as MessagesSpec.ResponseBytes answers every request with as
// many bytes as it carried (scenario's response_size: same).
const SameBytes = -1

// Messages compiles an open-loop message workload to a DAG of independent
// messages, each with its arrival time as its earliest start.
func Messages(s MessagesSpec) (*DAG, error) {
	n := len(s.Hosts)
	if n < 2 {
		return nil, fmt.Errorf("messages need at least 2 hosts, got %d", n)
	}
	var dest DestFunc
	switch s.Pattern {
	case "", "uniform":
		dest = UniformDest(n)
	case "permutation":
		dest = PermutationDest(Derangement(n, sim.NewRNG(s.Seed, "messages.permutation")))
	default:
		return nil, fmt.Errorf("unknown message pattern %q (uniform or permutation)", s.Pattern)
	}
	arr, err := Poisson(PoissonSpec{Hosts: n, Load: s.Load, Rate: s.Rate, Payload: s.Payload, Header: s.Header,
		Sizes: s.Sizes, Dest: dest, Duration: s.Duration, Limit: s.Limit, Seed: s.Seed})
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 {
		ps := PoissonSpec{Load: s.Load, Rate: s.Rate, Payload: s.Payload, Header: s.Header, Sizes: s.Sizes}
		return nil, fmt.Errorf("%w in workload.duration=%v at load %v (about %.2g expected); raise duration or load",
			ErrNoMessages, s.Duration, s.Load, ps.PoissonRate()*float64(n)*s.Duration.Seconds())
	}
	d := &DAG{Collective: metrics.Messages, Algorithm: "poisson", Ranks: n, Size: int64(s.Sizes.Mean() + 0.5),
		RankHost: append([]int(nil), s.Hosts...)}
	d.Msgs = make([]Message, 0, len(arr))
	for _, a := range arr {
		m := d.msg(a.Src, a.Dst, a.Bytes)
		m.At = a.Time
		req := d.Add(m)
		if s.ResponseBytes == SameBytes {
			d.Add(d.msg(a.Dst, a.Src, a.Bytes), req)
		} else if s.ResponseBytes > 0 {
			d.Add(d.msg(a.Dst, a.Src, s.ResponseBytes), req)
		}
	}
	d.Finish()
	return d, nil
}
