package workload

import (
	"fmt"

	"fabriclab/sim"
)

// Placements lists the rank placement policies.
func Placements() []string { return []string{"packed", "spread", "rail-aligned", "random", "list"} }

// Place maps ranks to hosts (NICs, one GPU each). server[h] and rail[h]
// give each host's server and its index there; perServer is how many ranks
// a server takes (0 = all its GPUs):
//
//   - packed: fill servers in order, perServer ranks each (its first GPUs);
//   - spread: rank r goes to server r mod S (S servers), one GPU at a time;
//   - rail-aligned: like packed, and a server's k-th rank sits on rail k
//     (so rank r's local index is its NIC's rail, as rail-optimized
//     collectives assume);
//   - random: a seeded shuffle of the GPUs packed would offer;
//   - list: the hosts given, one per rank.
func Place(policy string, ranks int, server, rail []int, perServer int, rng *sim.RNG, list []int) ([]int, error) {
	if ranks < 1 {
		return nil, fmt.Errorf("needs at least one rank, got %d", ranks)
	}
	hosts := len(server)
	if policy == "list" {
		if len(list) != ranks {
			return nil, fmt.Errorf("the host list has %d entries for %d ranks", len(list), ranks)
		}
		seen := make(map[int]bool, ranks)
		for i, h := range list {
			if h < 0 || h >= hosts {
				return nil, fmt.Errorf("rank %d: host %d is not in the topology (hosts 0–%d)", i, h, hosts-1)
			}
			if seen[h] {
				return nil, fmt.Errorf("rank %d: host %d already holds a rank", i, h)
			}
			seen[h] = true
		}
		return append([]int(nil), list...), nil
	}
	// The GPUs each server offers, in rail order.
	var order []int // servers in first-seen order
	gpus := map[int][]int{}
	for h := 0; h < hosts; h++ {
		sv := server[h]
		if _, ok := gpus[sv]; !ok {
			order = append(order, sv)
		}
		gpus[sv] = append(gpus[sv], h)
	}
	for _, sv := range order {
		g := gpus[sv]
		// Sort by rail (insertion sort: servers are small).
		for i := 1; i < len(g); i++ {
			for j := i; j > 0 && rail[g[j]] < rail[g[j-1]]; j-- {
				g[j], g[j-1] = g[j-1], g[j]
			}
		}
		if perServer > 0 && perServer < len(g) {
			gpus[sv] = g[:perServer]
		}
	}
	capacity := 0
	for _, sv := range order {
		capacity += len(gpus[sv])
	}
	if ranks > capacity {
		if perServer > 0 {
			return nil, fmt.Errorf("%d ranks do not fit %d servers × %d ranks per server", ranks, len(order), perServer)
		}
		return nil, fmt.Errorf("%d ranks do not fit the %d GPUs available", ranks, capacity)
	}
	out := make([]int, 0, ranks)
	switch policy {
	case "packed", "rail-aligned", "":
		for _, sv := range order {
			for _, h := range gpus[sv] {
				if len(out) < ranks {
					out = append(out, h)
				}
			}
		}
	case "spread":
		for slot := 0; len(out) < ranks; slot++ {
			for _, sv := range order {
				if g := gpus[sv]; slot < len(g) && len(out) < ranks {
					out = append(out, g[slot])
				}
			}
		}
	case "random":
		var all []int
		for _, sv := range order {
			all = append(all, gpus[sv]...)
		}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		out = append(out, all[:ranks]...)
	default:
		return nil, fmt.Errorf("unknown placement %q", policy)
	}
	return out, nil
}
