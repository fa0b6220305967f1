package workload

import (
	"fmt"
	"math"

	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
)

// AnyToAnySpec is the any-to-any streaming test of a hardware traffic
// tester: every client keeps Depth writes of Size bytes outstanding to
// every server for Duration.
type AnyToAnySpec struct {
	Clients, Servers []int // hosts
	Size             int64
	Depth            int
	Duration         sim.Time
	// Rate is the clients' NIC rate: it bounds how many writes one pair
	// can complete in Duration (the chains are that long).
	Rate units.Rate
	// Limit bounds the messages (0: none).
	Limit int
}

// AnyToAnyMessages is how many messages AnyToAny builds for s: per pair
// and outstanding slot a chain twice as long as the writes the pair could
// complete in the duration with the client's whole NIC.
func AnyToAnyMessages(s AnyToAnySpec) float64 {
	return float64(len(s.Clients)) * float64(len(s.Servers)) * float64(max(s.Depth, 1)) * float64(anyChain(s))
}

func anyChain(s AnyToAnySpec) int64 {
	if s.Size <= 0 || s.Rate <= 0 {
		return 1
	}
	// Twice what the client's whole NIC could complete: a margin for a
	// real fabric a little faster than declared.
	writes := 2 * s.Duration.Seconds() * float64(s.Rate) / 8 / float64(s.Size)
	per := math.Ceil(writes/float64(max(s.Depth, 1))) + 1
	return int64(min(per, math.MaxInt32))
}

// AnyToAny builds the test as a closed loop: per (client, server) pair,
// Depth chains of writes on one connection, each write released by the
// delivery of the one before it in its chain; DAG.Until = Duration ends it
// (what would start after that is cut). Ranks are the clients, then the
// servers.
func AnyToAny(s AnyToAnySpec) (*DAG, error) {
	if len(s.Clients) == 0 || len(s.Servers) == 0 {
		return nil, fmt.Errorf("any-to-any needs clients and servers, got %d and %d", len(s.Clients), len(s.Servers))
	}
	if s.Size <= 0 || s.Depth < 1 || s.Duration <= 0 {
		return nil, fmt.Errorf("any-to-any needs a write size, depth ≥ 1 and a duration (got %d B, %d, %v)", s.Size, s.Depth, s.Duration)
	}
	seen := map[int]bool{}
	for _, h := range append(append([]int(nil), s.Clients...), s.Servers...) {
		if seen[h] {
			return nil, fmt.Errorf("host %d is both a client and a server, or listed twice", h)
		}
		seen[h] = true
	}
	n := AnyToAnyMessages(s)
	if s.Limit > 0 && n > float64(s.Limit) {
		return nil, fmt.Errorf("about %.0f writes (%d clients × %d servers × depth %d, each pair able to complete %d per slot in %v), more than the limit of %d; use larger writes or a shorter duration",
			n, len(s.Clients), len(s.Servers), s.Depth, anyChain(s), s.Duration, s.Limit)
	}
	ranks := len(s.Clients) + len(s.Servers)
	d := &DAG{Collective: metrics.AnyToAny, Algorithm: fmt.Sprintf("depth %d", s.Depth), Ranks: ranks, Size: s.Size,
		RankHost: append(append([]int(nil), s.Clients...), s.Servers...), Until: s.Duration}
	chain := anyChain(s)
	slots := len(s.Clients) * len(s.Servers) * s.Depth
	d.Msgs = make([]Message, 0, int(chain)*slots)
	for k := int64(0); k < chain; k++ {
		for c := range s.Clients {
			for sv := range s.Servers {
				for slot := 0; slot < s.Depth; slot++ {
					m := d.msg(c, len(s.Clients)+sv, s.Size)
					if k == 0 {
						d.Add(m)
					} else {
						d.Add(m, int32(len(d.Msgs)-slots)) // the slot's previous write
					}
				}
			}
		}
	}
	d.Finish()
	return d, nil
}
