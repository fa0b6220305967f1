package workload

import (
	"fmt"

	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
)

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
	Seed    uint64
	Limit   int // most messages (0: MaxMessages)
}

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
	d := &DAG{Collective: metrics.Messages, Algorithm: "poisson", Ranks: n, Size: int64(s.Sizes.Mean() + 0.5),
		RankHost: append([]int(nil), s.Hosts...)}
	d.Msgs = make([]Message, 0, len(arr))
	for _, a := range arr {
		m := d.msg(a.Src, a.Dst, a.Bytes)
		m.At = a.Time
		d.Add(m)
	}
	d.Finish()
	return d, nil
}
