package plan

import (
	"fmt"
	"slices"
	"sort"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

// maxTEPaths bounds the equal-cost paths TE considers per host pair.
const maxTEPaths = 4096

// optimalBudget bounds the search of the exact min-max assignment (nodes
// of its branch and bound); a case beyond it keeps the best found.
const optimalBudget = 2_000_000

// TEResult is what traffic engineering chose: its maximum link load (the
// busiest directed link's traffic over the run: its bytes serialized at
// its rate, in seconds) and, for the exact method, whether the search
// finished (the load is then the optimum).
type TEResult struct {
	Method   string
	Conns    int
	MaxLoadS float64
	Optimal  bool
}

// teConn is one connection's demand: its NIC's port and the equal-cost
// paths it may take (shared by every connection from the same first
// switch to the same destination), as port IDs.
type teConn struct {
	c     int
	bytes int64
	nic   int32
	paths [][]int32
}

// InstallTE is traffic engineering (switch.forwarding: te): a controller
// that sees the whole traffic matrix — every connection's bytes over the
// run — gives each connection one of its equal-cost paths and pins it on
// every switch of the path. greedy takes the connections largest first
// and puts each on the path whose busiest link would be least busy
// after it (ties: the least total load, then the first path); optimal
// searches every assignment for the least maximum link load (branch and
// bound from the greedy one; beyond optimalBudget paths tried it keeps
// the best found). A link's load is the time its bytes take at its rate,
// in integer picoseconds, so links of different rates compare and the
// search adds and removes loads exactly.
func InstallTE(p *Plan, tp *topo.Topology, method string) (TEResult, error) {
	conns, err := teDemand(p, tp)
	if err != nil {
		return TEResult{}, err
	}
	ports := tp.Net.Ports
	load := make([]int64, len(ports))
	choice := greedyTE(conns, ports, load)
	best := slices.Max(append(load, 0))
	res := TEResult{Method: method, Conns: len(conns)}
	if method == "optimal" {
		choice, best, res.Optimal = optimalTE(conns, ports, choice, best)
	}
	res.MaxLoadS = sim.Time(best).Seconds()
	for i, tc := range conns {
		cn := p.Conns[tc.c]
		for _, id := range tc.paths[choice[i]] {
			pt := ports[id]
			pt.Sw().Pin(cn.Src, cn.Dst, cn.SQP, cn.DQP, pt)
		}
	}
	return res, nil
}

// cost is the time bytes take on port pt.
func cost(bytes int64, pt *fabric.Port) int64 {
	return int64(units.SerializationTime(units.Size(bytes), pt.Rate))
}

// teDemand is every connection with bytes to send between hosts behind a
// switch, with its paths, largest first (ties in plan order).
func teDemand(p *Plan, tp *topo.Topology) ([]teConn, error) {
	bytes := make([]int64, len(p.Conns))
	for i, m := range p.DAG.Msgs {
		if c := p.Conn[i]; c >= 0 && !m.Marker {
			bytes[c] += max(m.Bytes, 1)
		}
	}
	type key struct {
		sw  *fabric.Switch
		dst int32
	}
	cache := map[key][][]int32{}
	var conns []teConn
	for c, cn := range p.Conns {
		if bytes[c] == 0 || int(cn.Src) >= len(tp.Net.HostPorts) || tp.Net.HostPorts[cn.Src] == nil {
			continue
		}
		nic := tp.Net.HostPorts[cn.Src]
		sw, ok := nic.Peer.Owner.(*fabric.Switch)
		if !ok {
			continue
		}
		k := key{sw, cn.Dst}
		paths, ok := cache[k]
		if !ok {
			ps, err := pathsFrom(sw, int(cn.Src), int(cn.Dst))
			if err != nil {
				return nil, err
			}
			paths = ps
			cache[k] = paths
		}
		if len(paths) == 0 {
			continue
		}
		conns = append(conns, teConn{c: c, bytes: bytes[c], nic: int32(nic.ID), paths: paths})
	}
	sort.SliceStable(conns, func(a, b int) bool { return conns[a].bytes > conns[b].bytes })
	return conns, nil
}

// pathsFrom lists the paths from switch sw to host dst that the switches'
// routes allow (every choice of every group), as the port IDs they leave
// by; an error beyond maxTEPaths or on a loop.
func pathsFrom(sw *fabric.Switch, src, dst int) ([][]int32, error) {
	var out [][]int32
	var walk func(sw *fabric.Switch, path []int32) error
	walk = func(sw *fabric.Switch, path []int32) error {
		if len(path) > 64 {
			return fmt.Errorf("the routes from host %d to host %d loop", src, dst)
		}
		if dst >= len(sw.Next) {
			return nil
		}
		for _, pt := range sw.Next[dst] {
			next := append(path[:len(path):len(path)], int32(pt.ID))
			nsw, ok := pt.Peer.Owner.(*fabric.Switch)
			if !ok {
				if len(out) == maxTEPaths {
					return fmt.Errorf("more than %d equal-cost paths from host %d to host %d", maxTEPaths, src, dst)
				}
				out = append(out, next)
				continue
			}
			if err := walk(nsw, next); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(sw, nil)
}

// greedyTE places conns largest first, each on the path that leaves the
// least busy maximum; it adds their loads to load (by port ID), the NIC's
// link included.
func greedyTE(conns []teConn, ports []*fabric.Port, load []int64) []int {
	choice := make([]int, len(conns))
	for i, tc := range conns {
		nl := load[tc.nic] + cost(tc.bytes, ports[tc.nic])
		best, bestMax, bestSum := 0, int64(0), int64(0)
		for k, path := range tc.paths {
			mx, sum := nl, nl
			for _, id := range path {
				l := load[id] + cost(tc.bytes, ports[id])
				mx, sum = max(mx, l), sum+l
			}
			if k == 0 || mx < bestMax || mx == bestMax && sum < bestSum {
				best, bestMax, bestSum = k, mx, sum
			}
		}
		choice[i] = best
		load[tc.nic] = nl
		for _, id := range tc.paths[best] {
			load[id] += cost(tc.bytes, ports[id])
		}
	}
	return choice
}

// optimalTE searches for the assignment of least maximum link load,
// starting from the greedy choice (bound best); it reports whether the
// search finished within optimalBudget paths tried.
func optimalTE(conns []teConn, ports []*fabric.Port, greedy []int, best int64) ([]int, int64, bool) {
	bestChoice := append([]int(nil), greedy...)
	cur := make([]int, len(conns))
	load := make([]int64, len(ports))
	// The NICs' links carry their connections whatever the paths: a
	// floor no assignment goes below.
	var floor int64
	for _, tc := range conns {
		load[tc.nic] += cost(tc.bytes, ports[tc.nic])
		floor = max(floor, load[tc.nic])
	}
	if best <= floor {
		return bestChoice, best, true // greedy is at the floor: optimal
	}
	steps := 0
	var search func(i int, mx int64) bool
	search = func(i int, mx int64) bool {
		if i == len(conns) {
			if mx < best {
				best = mx
				copy(bestChoice, cur)
			}
			return true
		}
		tc := &conns[i]
		for k, path := range tc.paths {
			if steps++; steps > optimalBudget {
				return false
			}
			m := mx
			for _, id := range path {
				m = max(m, load[id]+cost(tc.bytes, ports[id]))
			}
			if m >= best {
				continue // cannot beat the best found
			}
			for _, id := range path {
				load[id] += cost(tc.bytes, ports[id])
			}
			cur[i] = k
			ok := search(i+1, m)
			for _, id := range path {
				load[id] -= cost(tc.bytes, ports[id])
			}
			if !ok {
				return false
			}
			if best <= floor {
				return true // at the floor: nothing can do better
			}
		}
		return true
	}
	done := search(0, floor)
	return bestChoice, best, done
}
