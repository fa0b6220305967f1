package fabric

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// The channel dependency graph: a static check, before running, of whether
// the routes could ever deadlock under PFC (deadlock.go finds a deadlock
// when it forms). Its nodes are the egress queues of the links between
// switches on one lossless priority; an edge A → B when A leads into
// switch S, B leaves S, and some route forwards a packet that came in by A
// out by B: then B's queue filling makes S pause A. A cycle of such edges
// is a cycle of queues each of which may wait for the next: a deadlock
// the traffic may close. Without a cycle no deadlock can form (Dally and
// Seitz). Routes that go up, then down, on a Clos have none.

// DependencyCycle is a cycle of buffer dependencies on one lossless
// priority: the egress ports of links between switches, each of whose
// packets the routes may forward into the next.
type DependencyCycle struct {
	Prio  uint8
	Ports []*Port // in cycle order; the first is the lowest port ID
}

// Hops names the cycle's ports "owner→peer", in order.
func (c DependencyCycle) Hops() []string {
	out := make([]string, len(c.Ports))
	for i, pt := range c.Ports {
		node, peer := PortName(pt)
		out[i] = node + "→" + peer
	}
	return out
}

// String names the cycle: "leaf0→spine0 → spine0→leaf1 → … (priority 3)".
func (c DependencyCycle) String() string {
	return fmt.Sprintf("%s (priority %d)", strings.Join(c.Hops(), " → "), c.Prio)
}

// DependencyCycles returns the cycles of the network's channel dependency
// graph on every lossless priority, as its routes stand: the route tables
// (Next: every next hop of a group may be taken, as a hash, a spray or
// adaptive routing may take any; d-mod-k only the one it computes) of the
// switches that traffic toward each destination reaches from the hosts,
// and the pinned paths (Pin) of connections. Failed links carry nothing.
// It returns one cycle per strongly connected component of the graph, the
// shortest through the component's lowest port, ordered by priority and
// then by that port's ID; nil when no route can deadlock (or no priority
// is lossless).
//
// Its cost is a pass over the route tables (destinations × switches),
// then, once for each class of destinations the tables treat alike (the
// hosts under one switch), the next hops of the switches that class
// reaches; its memory is a bit per pair of ports of a switch and a few
// words per destination and port. A k=16 fat-tree takes milliseconds.
func (n *Network) DependencyCycles() []DependencyCycle {
	var prios []uint8
	for pr := 0; pr < NumPrio; pr++ {
		for _, s := range n.Switches {
			if s.cfg.Lossless[pr] {
				prios = append(prios, uint8(pr))
				break
			}
		}
	}
	if len(prios) == 0 {
		return nil
	}
	g := n.dependencies()
	if g.nchan == 0 {
		return nil
	}
	var out []DependencyCycle
	for _, pr := range prios {
		out = append(out, g.cycles(n, pr)...)
	}
	return out
}

// depGraph is the dependencies found between the ports of each switch:
// for switch s and its port j, the set of its ports i such that a packet
// that came in by port i may leave by port j (a bitset over s's ports).
type depGraph struct {
	chans []*Port // the working links between switches, in port ID order
	chan_ []int32 // port ID → channel index, −1 for none
	nchan int
	words []int // per switch: 64-bit words in a bitset over its ports
	base  []int // per switch: where its bitsets start in dep
	dep   []uint64
}

func (g *depGraph) set(s *Switch, out, in int) {
	w := g.words[s.ID]
	g.dep[g.base[s.ID]+out*w+in/64] |= 1 << (in % 64)
}

// isChannel reports whether pt is a working link from a switch to a switch.
func isChannel(pt *Port) bool {
	return pt.sw != nil && !pt.dead && pt.Peer.sw != nil && !pt.Peer.dead
}

// hops is the next hops s may take toward dst by its table: all of the
// group, or the one d-mod-k computes.
func (s *Switch) hops(dst int) []*Port {
	if dst >= len(s.Next) {
		return nil
	}
	g := s.Next[dst]
	if len(g) > 1 && s.cfg.Policy == DModK {
		i := (dst / max(s.DModKDiv, 1)) % len(g)
		return g[i : i+1]
	}
	return g
}

// dependencies finds, for every destination, the switches its packets
// reach (from the hosts, by the tables, and where a pinned path hands
// over to them) and by which ports they come in, then adds the edges of
// the pinned paths. Destinations the tables treat alike (the hosts under
// one switch, whose groups ComputeRoutes shares) are walked once.
func (n *Network) dependencies() *depGraph {
	g := &depGraph{chan_: make([]int32, len(n.Ports)),
		words: make([]int, len(n.Switches)), base: make([]int, len(n.Switches))}
	var peerSw, peerIn []int32 // per channel: the switch it leads into, and its port there
	for i, pt := range n.Ports {
		g.chan_[i] = -1
		if isChannel(pt) {
			g.chan_[i] = int32(len(g.chans))
			g.chans = append(g.chans, pt)
			peerSw = append(peerSw, int32(pt.Peer.sw.ID))
			peerIn = append(peerIn, int32(pt.Peer.Index))
		}
	}
	g.nchan = len(g.chans)
	if g.nchan == 0 {
		return g
	}
	total, inTotal := 0, 0
	inBase := make([]int, len(n.Switches))
	dests := 0
	for _, s := range n.Switches {
		w := (len(s.Ports) + 63) / 64
		g.words[s.ID], g.base[s.ID], inBase[s.ID] = w, total, inTotal
		total += w * len(s.Ports)
		inTotal += w
		dests = max(dests, len(s.Next))
	}
	g.dep = make([]uint64, total)

	// The hosts under each switch: it sends toward every destination but
	// its only host's own.
	hosts := make([]int, len(n.Switches))
	only := make([]int, len(n.Switches))
	edgeOf := make([]int, dests)
	for d := range edgeOf {
		edgeOf[d] = -1
	}
	for h, hp := range n.HostPorts {
		if hp == nil || hp.dead || hp.Peer.sw == nil {
			continue
		}
		id := hp.Peer.sw.ID
		hosts[id]++
		only[id] = h
		if h < dests {
			edgeOf[h] = id
		}
	}
	// Pinned paths: an edge between consecutive pinned ports; where a
	// pinned packet meets a switch without a pin for it, the table takes
	// it on from there (a seed of its destination).
	type seed struct{ sw, in int }
	handover := map[int][]seed{}
	for _, s := range n.Switches {
		for k, o := range s.pins {
			if !isChannel(o) {
				continue
			}
			t := o.Peer.sw
			o2, ok := t.pins[k]
			if !ok {
				handover[int(k.dst)] = append(handover[int(k.dst)], seed{t.ID, o.Peer.Index})
				continue
			}
			if isChannel(o2) {
				g.set(t, o2.Index, o.Peer.Index)
			}
		}
	}

	rep := g.classes(n, dests, func(d int) int {
		if _, ok := handover[d]; ok {
			return -2 - d // alone in its class
		}
		if e := edgeOf[d]; e >= 0 && hosts[e] == 1 {
			return e // its switch sends it nothing
		}
		return -1
	})

	in := make([]uint64, inTotal) // per switch: the ports traffic for d comes in by
	reached := make([]bool, len(n.Switches))
	queue := make([]int, 0, len(n.Switches))
	for _, d := range rep {
		queue = queue[:0]
		for id, c := range hosts {
			if c > 1 || c == 1 && only[id] != d {
				reached[id] = true
				queue = append(queue, id)
			}
		}
		for _, sd := range handover[d] {
			in[inBase[sd.sw]+sd.in/64] |= 1 << (sd.in % 64)
			if !reached[sd.sw] {
				reached[sd.sw] = true
				queue = append(queue, sd.sw)
			}
		}
		for qi := 0; qi < len(queue); qi++ {
			for _, o := range n.Switches[queue[qi]].hops(d) {
				c := g.chan_[o.ID]
				if c < 0 {
					continue
				}
				t, i := peerSw[c], int(peerIn[c])
				in[inBase[t]+i/64] |= 1 << (i % 64)
				if !reached[t] {
					reached[t] = true
					queue = append(queue, int(t))
				}
			}
		}
		// Every switch reached now knows all its ports traffic for d
		// comes in by: each may leave by any of its next hops.
		for _, id := range queue {
			reached[id] = false
			w := g.words[id]
			mask := in[inBase[id] : inBase[id]+w]
			if nonzero(mask) {
				for _, o := range n.Switches[id].hops(d) {
					if g.chan_[o.ID] < 0 {
						continue
					}
					dst := g.dep[g.base[id]+o.Index*w : g.base[id]+(o.Index+1)*w]
					for k := range mask {
						dst[k] |= mask[k]
					}
				}
			}
			clear(mask)
		}
	}
	return g
}

// classes groups the destinations 0…dests−1 that every switch forwards
// alike toward channels (the same next hops between switches; a hop to a
// host is none) and that extra tells apart no further, and returns one
// destination of each class, in order.
func (g *depGraph) classes(n *Network, dests int, extra func(d int) int) []int {
	// key identifies what s does for d: a single hop by its port (0 for
	// a hop to a host), a group by its backing array and length (the same
	// array means the same ports: ComputeRoutes shares one group between
	// the hosts under a switch).
	type key struct {
		p uintptr
		n int
	}
	keyOf := func(s *Switch, d int) key {
		hp := s.hops(d)
		switch len(hp) {
		case 0:
			return key{}
		case 1:
			if c := g.chan_[hp[0].ID]; c >= 0 {
				return key{uintptr(c) + 1, 1}
			}
			return key{}
		}
		return key{uintptr(unsafe.Pointer(unsafe.SliceData(hp))), len(hp)}
	}
	sig := make([]uint64, dests)
	for d := range sig {
		sig[d] = mix64(uint64(int64(extra(d))))
	}
	for _, s := range n.Switches {
		for d := range sig {
			k := keyOf(s, d)
			sig[d] = mix64(sig[d] ^ uint64(k.p) ^ uint64(k.n)<<56)
		}
	}
	// A representative per signature, then every member checked against
	// it: one that differs after all (a collision) is a class of its own.
	first := map[uint64]int{}
	repOf := make([]int, dests)
	for d, x := range sig {
		r, ok := first[x]
		if !ok {
			first[x], r = d, d
		}
		repOf[d] = r
	}
	alone := make([]bool, dests)
	for d, r := range repOf {
		if r != d && extra(d) != extra(r) {
			alone[d] = true
		}
	}
	for _, s := range n.Switches {
		for d, r := range repOf {
			if r != d && !alone[d] && keyOf(s, d) != keyOf(s, r) {
				alone[d] = true
			}
		}
	}
	var out []int
	for d, r := range repOf {
		if r == d || alone[d] {
			out = append(out, d)
		}
	}
	return out
}

func nonzero(m []uint64) bool {
	for _, x := range m {
		if x != 0 {
			return true
		}
	}
	return false
}

// cycles finds the cycles on priority pr: the graph over the channels into
// switches for which pr is lossless (those that pause), its strongly
// connected components (Tarjan, iterative), and in each the shortest cycle
// through its lowest channel.
func (g *depGraph) cycles(n *Network, pr uint8) []DependencyCycle {
	lossless := func(c int) bool { return g.chans[c].Peer.sw.cfg.Lossless[pr] }
	// Edges (from, to) in a deterministic order, then CSR by source.
	start := make([]int32, g.nchan+1)
	var edges [][2]int32
	for _, s := range n.Switches {
		w := g.words[s.ID]
		if !s.cfg.Lossless[pr] {
			continue // its ingress never pauses: nothing waits on it
		}
		for j, o := range s.Ports {
			to := g.chan_[o.ID]
			if to < 0 || !lossless(int(to)) {
				continue
			}
			row := g.dep[g.base[s.ID]+j*w : g.base[s.ID]+(j+1)*w]
			for k, x := range row {
				for x != 0 {
					i := k*64 + bits.TrailingZeros64(x)
					x &= x - 1
					from := g.chan_[s.Ports[i].Peer.ID]
					if from < 0 {
						continue
					}
					edges = append(edges, [2]int32{from, to})
					start[from+1]++
				}
			}
		}
	}
	if len(edges) == 0 {
		return nil
	}
	for c := 0; c < g.nchan; c++ {
		start[c+1] += start[c]
	}
	adj := make([]int32, len(edges))
	fill := slices.Clone(start[:g.nchan])
	for _, e := range edges {
		adj[fill[e[0]]] = e[1]
		fill[e[0]]++
	}
	succ := func(v int32) []int32 { return adj[start[v]:start[v+1]] }

	comp := tarjan(g.nchan, succ)
	// The lowest channel of each component of more than one channel (a
	// channel never depends on itself: it leads into S, its successors
	// out of S).
	size := map[int32]int{}
	for _, c := range comp {
		size[c]++
	}
	var out []DependencyCycle
	seen := map[int32]bool{}
	for v := int32(0); v < int32(g.nchan); v++ {
		c := comp[v]
		if size[c] < 2 || seen[c] {
			continue
		}
		seen[c] = true
		cyc := shortestCycle(v, comp, succ)
		ports := make([]*Port, len(cyc))
		for i, x := range cyc {
			ports[i] = g.chans[x]
		}
		out = append(out, DependencyCycle{Prio: pr, Ports: ports})
	}
	return out
}

// tarjan labels every node 0…n−1 with its strongly connected component,
// iteratively (no recursion, whatever the depth).
func tarjan(n int, succ func(int32) []int32) []int32 {
	const unvisited = -1
	index := make([]int32, n)
	low := make([]int32, n)
	comp := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i], comp[i] = unvisited, unvisited
	}
	var stack []int32
	type frame struct {
		v    int32
		next int32 // the next successor to look at
	}
	var call []frame
	var counter, ncomp int32
	for root := int32(0); root < int32(n); root++ {
		if index[root] != unvisited {
			continue
		}
		call = append(call, frame{v: root})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			ss := succ(v)
			if int(f.next) < len(ss) {
				w := ss[f.next]
				f.next++
				if index[w] == unvisited {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			// v is done: close its component, return to its caller.
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return comp
}

// shortestCycle is the shortest cycle through v within its component (a
// breadth-first search back to v), from v on.
func shortestCycle(v int32, comp []int32, succ func(int32) []int32) []int32 {
	parent := map[int32]int32{v: -1}
	queue := []int32{v}
	for qi := 0; qi < len(queue); qi++ {
		u := queue[qi]
		for _, w := range succ(u) {
			if comp[w] != comp[v] {
				continue
			}
			if w == v {
				var cyc []int32
				for x := u; x >= 0; x = parent[x] {
					cyc = append(cyc, x)
				}
				slices.Reverse(cyc)
				return cyc
			}
			if _, ok := parent[w]; !ok {
				parent[w] = u
				queue = append(queue, w)
			}
		}
	}
	return []int32{v} // unreachable: v is in a component of more than one
}
