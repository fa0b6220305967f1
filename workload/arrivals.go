package workload

import (
	"container/heap"
	"fmt"
	"math"

	"fabriclab/sim"
	"fabriclab/units"
)

// Arrival is one message of an open-loop workload: it is offered at Time
// whether or not the network has finished the earlier ones.
type Arrival struct {
	Time     sim.Time
	Src, Dst int
	Bytes    int64
}

// DestFunc picks the destination of a message from src. It may draw from
// rng (the source host's own stream) and must return another host in
// [0, hosts).
type DestFunc func(src int, rng *sim.RNG) int

// UniformDest picks a uniformly random host other than the source.
func UniformDest(hosts int) DestFunc {
	return func(src int, rng *sim.RNG) int {
		j := rng.IntN(hosts - 1)
		if j >= src {
			j++
		}
		return j
	}
}

// PermutationDest sends every message of host i to perm[i] (a fixed
// pattern: permutation traffic, or incast when many map to one).
func PermutationDest(perm []int) DestFunc {
	p := append([]int(nil), perm...)
	return func(src int, _ *sim.RNG) int {
		if src >= len(p) {
			return -1 // Poisson reports it
		}
		return p[src]
	}
}

// PoissonSpec describes open-loop traffic: each host independently offers
// messages with exponential gaps so that, counting packet headers, it loads
// its own link at Load.
type PoissonSpec struct {
	Hosts int
	// Load is the offered wire load as a fraction of Rate (above 1 is
	// allowed, for overload experiments).
	Load float64
	Rate units.Rate
	// Payload is the most message bytes one packet carries (MTU minus
	// headers); Header is the per-packet wire overhead added to each of
	// them (e.g. Ethernet+IP+transport headers, preamble and IFG).
	Payload, Header int64
	Sizes           *SizeDist
	// Dest picks destinations; nil means UniformDest(Hosts).
	Dest DestFunc
	// Duration ends arrivals: messages start in [0, Duration). Count ends
	// them after that many messages in all. At least one must be set; with
	// both, whichever comes first.
	Duration sim.Time
	Count    int
	// Limit refuses specs that would make more messages than this (0:
	// MaxMessages), so a typo in Duration fails fast instead of filling
	// memory.
	Limit int
	Seed  uint64
}

// MeanWireBytes is the mean bytes a message puts on the wire: its payload
// plus one header per packet.
func MeanWireBytes(d *SizeDist, payload, header int64) float64 {
	return d.Mean() + float64(header)*d.MeanPackets(payload)
}

// PoissonRate is λ, the messages per second each host offers:
// Load × Rate / (8 × mean wire bytes per message).
func (s *PoissonSpec) PoissonRate() float64 {
	return s.Load * float64(s.Rate) / (8 * MeanWireBytes(s.Sizes, s.Payload, s.Header))
}

// WireBytes is what a message of b bytes puts on the wire.
func WireBytes(b, payload, header int64) int64 {
	pk := max(1, (b+payload-1)/payload)
	return b + pk*header
}

// Poisson generates the arrivals of s, sorted by time (ties by source).
// Each host draws its gaps, sizes and destinations, in that order, from its
// own stream sim.NewRNG(Seed, "workload.poisson/<host>"), so a host's
// messages do not depend on how many hosts there are or on Count.
func Poisson(s PoissonSpec) ([]Arrival, error) {
	switch {
	case s.Hosts < 2:
		return nil, fmt.Errorf("poisson traffic needs at least 2 hosts, got %d", s.Hosts)
	case !(s.Load > 0) || math.IsInf(s.Load, 0):
		return nil, fmt.Errorf("poisson traffic needs a load > 0, got %g", s.Load)
	case s.Rate <= 0:
		return nil, fmt.Errorf("poisson traffic needs a link rate > 0")
	case s.Payload <= 0 || s.Header < 0:
		return nil, fmt.Errorf("poisson traffic needs payload > 0 and header ≥ 0 bytes per packet, got %d and %d", s.Payload, s.Header)
	case s.Sizes == nil:
		return nil, fmt.Errorf("poisson traffic needs a size distribution")
	case s.Duration <= 0 && s.Count <= 0:
		return nil, fmt.Errorf("poisson traffic needs a duration or a message count")
	case s.Duration < 0 || s.Count < 0:
		return nil, fmt.Errorf("poisson traffic: negative duration or count")
	}
	limit := s.Limit
	if limit <= 0 {
		limit = MaxMessages
	}
	if s.Count > limit {
		return nil, fmt.Errorf("poisson traffic: %d messages is more than the limit %d", s.Count, limit)
	}
	lambda := s.PoissonRate()
	gap := 1e12 / lambda // mean gap in ps
	want := s.Count
	if s.Duration > 0 {
		exp := float64(s.Hosts) * float64(s.Duration) / gap
		if s.Count == 0 || exp < float64(s.Count) {
			// Allow for Poisson noise above the mean before refusing.
			if exp+6*math.Sqrt(exp) > float64(limit) {
				return nil, fmt.Errorf("poisson traffic would make about %.0f messages, more than the limit %d; shorten the duration or lower the load", exp, limit)
			}
			if s.Count == 0 {
				want = int(PoissonReserve(exp)) // capacity only
			}
		}
	}
	dest := s.Dest
	if dest == nil {
		dest = UniformDest(s.Hosts)
	}
	q := make(arrHeap, s.Hosts)
	for i := range q {
		q[i] = arrHost{src: i, rng: sim.NewRNG(s.Seed, fmt.Sprintf("workload.poisson/%d", i))}
		q[i].next(gap)
	}
	heap.Init(&q)
	out := make([]Arrival, 0, want)
	for {
		h := &q[0]
		t := sim.Time(h.t)
		if s.Duration > 0 && t >= s.Duration || s.Count > 0 && len(out) == s.Count {
			break
		}
		if len(out) == limit {
			return nil, fmt.Errorf("poisson traffic made more than the limit of %d messages", limit)
		}
		b := s.Sizes.Sample(h.rng)
		d := dest(h.src, h.rng)
		if d < 0 || d >= s.Hosts || d == h.src {
			return nil, fmt.Errorf("poisson traffic: destination pattern sent host %d to %d (must be another host in [0, %d))", h.src, d, s.Hosts)
		}
		out = append(out, Arrival{Time: t, Src: h.src, Dst: d, Bytes: b})
		h.next(gap)
		heap.Fix(&q, 0)
	}
	return out, nil
}

// PoissonReserve is the capacity reserved for the messages of Poisson
// traffic expected to make ex of them: the mean and six standard
// deviations (and a few), so that a run hardly ever grows it.
func PoissonReserve(ex float64) int64 {
	if !(ex > 0) {
		return 0
	}
	return int64(ex + 6*math.Sqrt(ex) + 16)
}

// arrHost is one host's next arrival. Times accumulate in float64 ps (a
// float64 holds every whole picosecond up to 2^53 ps, about 2.5 hours of
// simulated time) and are truncated to sim.Time when compared or emitted.
type arrHost struct {
	t   float64
	src int
	rng *sim.RNG
}

func (h *arrHost) next(gap float64) { h.t += h.rng.ExpFloat64() * gap }

// arrHeap orders hosts by next arrival time, then by host, so the merged
// output is deterministic.
type arrHeap []arrHost

func (q arrHeap) Len() int { return len(q) }
func (q arrHeap) Less(i, j int) bool {
	a, b := sim.Time(q[i].t), sim.Time(q[j].t)
	if a != b {
		return a < b
	}
	return q[i].src < q[j].src
}
func (q arrHeap) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *arrHeap) Push(x any)   { *q = append(*q, x.(arrHost)) }
func (q *arrHeap) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
