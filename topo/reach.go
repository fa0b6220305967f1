package topo

// HostGroups numbers the hosts by which of them can still reach each other
// over links that are up: group[h] is the same for two hosts exactly when
// a path of live links joins them (dead ports: fabric.Port.Dead). Groups
// are numbered from 0 in the order of their lowest host; n is how many.
func (t *Topology) HostGroups() (group []int, n int) {
	net := t.Net
	// Union-find over the nodes: switches 0…S−1, then the network's hosts
	// (scale-up endpoints included), owner[] giving each port's node.
	s := len(net.Switches)
	parent := make([]int, s+len(net.HostPorts))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	owner := make([]int, len(net.Ports))
	for i, sw := range net.Switches {
		for _, pt := range sw.Ports {
			owner[pt.ID] = i
		}
	}
	for h, pt := range net.HostPorts {
		if pt != nil {
			owner[pt.ID] = s + h
		}
	}
	for _, pt := range net.Ports {
		if !pt.Dead() && pt.Peer != nil && !pt.Peer.Dead() {
			parent[find(owner[pt.ID])] = find(owner[pt.Peer.ID])
		}
	}
	group = make([]int, t.Hosts)
	number := map[int]int{}
	for h := range group {
		root := find(s + h)
		g, ok := number[root]
		if !ok {
			g = len(number)
			number[root] = g
		}
		group[h] = g
	}
	return group, len(number)
}
