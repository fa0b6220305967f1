package plan

import (
	"fabriclab/fabric"
	"fabriclab/topo"
)

// maxEntropy bounds the UDP source ports the entropy planner tries.
const maxEntropy = 1 << 16

// AssignQPEntropy is QP-aware load balancing (nic.entropy: qp-aware): it
// gives every connection the UDP source port (its SQP, the entropy the
// switches hash) that sends it, at its NIC's first-hop switch, to the
// next hop toward its destination that the least of its NIC's other
// connections use — first among the connections of the same host pair,
// then among all of the NIC's, ties going round from a port that
// depends on the host — computed with the switch's own hash
// function and seed, as an entropy planner on a NIC or in a collective
// library does. Connections are taken in plan order; each NIC's ports
// stay distinct. A connection whose first hop has one choice, or whose
// switch does not hash (d-mod-k), keeps the lowest free port. It must run
// before the connections are opened and pins installed.
func AssignQPEntropy(p *Plan, tp *topo.Topology) {
	type pair struct{ src, dst int32 }
	type use struct {
		src  int32
		port *fabric.Port
	}
	type pairUse struct {
		pair
		port *fabric.Port
	}
	nicUse := map[use]int{}
	pairCount := map[pairUse]int{}
	taken := map[int32]map[int32]bool{} // src → ports in use
	next := map[int32]int32{}           // src → lowest port not yet tried as free
	for c := range p.Conns {
		cn := &p.Conns[c]
		if taken[cn.Src] == nil {
			taken[cn.Src] = map[int32]bool{}
		}
		used := taken[cn.Src]
		free := func() int32 {
			e := next[cn.Src]
			for used[e] {
				e++
			}
			next[cn.Src] = e
			return e
		}
		var sw *fabric.Switch
		var g []*fabric.Port
		if int(cn.Src) < len(tp.Net.HostPorts) {
			if hp := tp.Net.HostPorts[cn.Src]; hp != nil {
				sw, _ = hp.Peer.Owner.(*fabric.Switch)
			}
		}
		if sw != nil && int(cn.Dst) < len(sw.Next) {
			g = sw.Next[cn.Dst]
		}
		e := free()
		if len(g) > 1 {
			best := func(pt *fabric.Port) [2]int {
				return [2]int{pairCount[pairUse{pair{cn.Src, cn.Dst}, pt}], nicUse[use{cn.Src, pt}]}
			}
			// Ties go round from a port that depends on the host, so
			// that NICs of one switch with a QP or two each do not all
			// take its first next hop.
			off := int(cn.Src) % len(g)
			target := g[off]
			for k := 1; k < len(g); k++ {
				pt := g[(off+k)%len(g)]
				if b, t := best(pt), best(target); b[0] < t[0] || b[0] == t[0] && b[1] < t[1] {
					target = pt
				}
			}
			for try := e; try < maxEntropy; try++ {
				if !used[try] && sw.HashPick(cn.Src, cn.Dst, try, cn.DQP) == target {
					e = try
					break
				}
			}
			pt := sw.HashPick(cn.Src, cn.Dst, e, cn.DQP)
			pairCount[pairUse{pair{cn.Src, cn.Dst}, pt}]++
			nicUse[use{cn.Src, pt}]++
		}
		used[e] = true
		cn.SQP = e
	}
}
