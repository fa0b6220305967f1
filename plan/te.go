package plan

import (
	"fmt"
	"sort"

	"fabriclab/fabric"
	"fabriclab/topo"
)

// maxTEPaths bounds the equal-cost paths TE considers per host pair.
const maxTEPaths = 4096

// optimalBudget bounds the search of the exact min-max assignment (nodes
// of its branch and bound); a case beyond it keeps the best found.
const optimalBudget = 2_000_000

// TEResult is what traffic engineering chose: its maximum link load (the
// busiest directed link's bytes over its rate, in seconds) and, for the
// exact method, whether the search finished (the load is the optimum).
type TEResult struct {
	Method   string
	Conns    int
	MaxLoadS float64
	Optimal  bool
}

// teConn is one connection's demand and its candidate paths.
type teConn struct {
	c     int
	bytes int64
	paths [][]*fabric.Port // its NIC's port, then the switch egress ports
}

// InstallTE is traffic engineering (switch.forwarding: te): a controller
// that sees the whole traffic matrix — every connection's bytes over the
// run — gives each connection one of its equal-cost paths and pins it on
// every switch of the path. greedy takes the connections largest first
// and puts each on the path whose busiest link would be least busy
// after it (ties: the least total load, then the first path); optimal
// searches every assignment for the least maximum link load (branch and
// bound from the greedy one; beyond optimalBudget steps it keeps the best
// found). Loads are bytes over link rate, so links of different rates
// compare.
func InstallTE(p *Plan, tp *topo.Topology, method string) (TEResult, error) {
	conns, index, err := teDemand(p, tp)
	if err != nil {
		return TEResult{}, err
	}
	load := make([]float64, len(index))
	choice := greedyTE(conns, index, load)
	res := TEResult{Method: method, Conns: len(conns), MaxLoadS: maxOf(load)}
	if method == "optimal" {
		choice, res.MaxLoadS, res.Optimal = optimalTE(conns, index, choice, res.MaxLoadS)
	}
	for i, tc := range conns {
		cn := p.Conns[tc.c]
		for _, pt := range tc.paths[choice[i]] {
			if sw := pt.Sw(); sw != nil {
				sw.Pin(cn.Src, cn.Dst, cn.SQP, cn.DQP, pt)
			}
		}
	}
	return res, nil
}

// teDemand is every connection with bytes to send between hosts on
// different switches, and the directed links of their paths, numbered.
func teDemand(p *Plan, tp *topo.Topology) ([]teConn, map[*fabric.Port]int, error) {
	bytes := make([]int64, len(p.Conns))
	for i, m := range p.DAG.Msgs {
		if c := p.Conn[i]; c >= 0 && !m.Marker {
			bytes[c] += max(m.Bytes, 1)
		}
	}
	index := map[*fabric.Port]int{}
	var conns []teConn
	for c, cn := range p.Conns {
		if bytes[c] == 0 {
			continue
		}
		paths, err := EqualCostPaths(tp, int(cn.Src), int(cn.Dst))
		if err != nil {
			return nil, nil, err
		}
		if len(paths) == 0 {
			continue
		}
		// The source's NIC link is on every path: its load counts in the
		// maximum, though it is no switch's to choose.
		nic := tp.Net.HostPorts[cn.Src]
		for k := range paths {
			paths[k] = append([]*fabric.Port{nic}, paths[k]...)
		}
		for _, path := range paths {
			for _, pt := range path {
				if _, ok := index[pt]; !ok {
					index[pt] = len(index)
				}
			}
		}
		conns = append(conns, teConn{c: c, bytes: bytes[c], paths: paths})
	}
	sort.SliceStable(conns, func(a, b int) bool { return conns[a].bytes > conns[b].bytes })
	return conns, index, nil
}

// EqualCostPaths lists the paths from host src to host dst the switches'
// routes allow (every choice of every group), as the switch egress ports
// they leave by; none when both hosts hang off one port chain without a
// choice (then the single path is listed). An error beyond maxTEPaths.
func EqualCostPaths(tp *topo.Topology, src, dst int) ([][]*fabric.Port, error) {
	if src < 0 || src >= len(tp.Net.HostPorts) || tp.Net.HostPorts[src] == nil {
		return nil, fmt.Errorf("host %d is not in the topology", src)
	}
	var out [][]*fabric.Port
	var walk func(sw *fabric.Switch, path []*fabric.Port) error
	walk = func(sw *fabric.Switch, path []*fabric.Port) error {
		if len(path) > 64 {
			return fmt.Errorf("the routes from host %d to host %d loop", src, dst)
		}
		if dst >= len(sw.Next) {
			return nil
		}
		for _, pt := range sw.Next[dst] {
			next := append(path[:len(path):len(path)], pt)
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
	sw, ok := tp.Net.HostPorts[src].Peer.Owner.(*fabric.Switch)
	if !ok {
		return nil, nil
	}
	return out, walk(sw, nil)
}

// greedyTE places conns largest first, each on the path that leaves the
// least busy maximum; it adds their loads to load.
func greedyTE(conns []teConn, index map[*fabric.Port]int, load []float64) []int {
	choice := make([]int, len(conns))
	for i, tc := range conns {
		best, bestMax, bestSum := 0, 0.0, 0.0
		for k, path := range tc.paths {
			mx, sum := 0.0, 0.0
			for _, pt := range path {
				l := load[index[pt]] + float64(tc.bytes)/float64(pt.Rate)
				mx, sum = max(mx, l), sum+l
			}
			if k == 0 || mx < bestMax || mx == bestMax && sum < bestSum {
				best, bestMax, bestSum = k, mx, sum
			}
		}
		choice[i] = best
		for _, pt := range tc.paths[best] {
			load[index[pt]] += float64(tc.bytes) / float64(pt.Rate)
		}
	}
	return choice
}

// optimalTE searches for the assignment of least maximum link load,
// starting from the greedy choice (bound best); it reports whether the
// search finished within optimalBudget.
func optimalTE(conns []teConn, index map[*fabric.Port]int, greedy []int, best float64) ([]int, float64, bool) {
	bestChoice := append([]int(nil), greedy...)
	cur := make([]int, len(conns))
	load := make([]float64, len(index))
	steps := 0
	var search func(i int, mx float64) bool
	search = func(i int, mx float64) bool {
		if steps++; steps > optimalBudget {
			return false
		}
		if i == len(conns) {
			if mx < best {
				best = mx
				copy(bestChoice, cur)
			}
			return true
		}
		tc := &conns[i]
		for k, path := range tc.paths {
			m := mx
			for _, pt := range path {
				m = max(m, load[index[pt]]+float64(tc.bytes)/float64(pt.Rate))
			}
			if m >= best {
				continue // cannot beat the best found
			}
			for _, pt := range path {
				load[index[pt]] += float64(tc.bytes) / float64(pt.Rate)
			}
			cur[i] = k
			ok := search(i+1, m)
			for _, pt := range path {
				load[index[pt]] -= float64(tc.bytes) / float64(pt.Rate)
			}
			if !ok {
				return false
			}
		}
		return true
	}
	done := search(0, 0)
	return bestChoice, best, done
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
