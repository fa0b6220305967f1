package flow

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"fabriclab/fabric"
)

// Options tune Analyze.
type Options struct {
	// Efficiency is the payload fraction of the wire rate, MTU/(MTU +
	// per-packet overhead): flow rates in GB/s are payload, as the packet
	// simulator measures them. 0 means 1.
	Efficiency float64
	// Tiers lists the switch tiers from the edge up (topo.Topology.Tiers);
	// it orders the collision statistics.
	Tiers []string
	// EndpointName names a host port without an owner (a network built
	// without transports) by its network id (topo.Topology.EndpointName);
	// nil: "host<id>".
	EndpointName func(id int) string
}

// Report is the result of Analyze. Rates of flows are payload GB/s (10⁹
// bytes per second), of links wire Gb/s.
type Report struct {
	Efficiency float64    `json:"efficiency"`
	Flows      []FlowRate `json:"flows"`
	// Links lists every link some flow crosses, most loaded first
	// (offered/capacity, then carried, then name).
	Links      []LinkLoad  `json:"links"`
	Collisions []Collision `json:"collisions"`
	// CompletionS is when the last flow ends at its max-min rate (bytes /
	// rate, the rates held constant), IdealS when it would end at its NIC's
	// rate; Slowdown = CompletionS / IdealS.
	CompletionS float64 `json:"completion_s"`
	IdealS      float64 `json:"ideal_s"`
	Slowdown    float64 `json:"slowdown"`
	// Limited counts flows below 99.9% of their NIC's rate.
	Limited int `json:"limited"`
}

// FlowRate is one flow's result. Flows are sorted by source, then
// destination host.
type FlowRate struct {
	Src        int      `json:"src"`
	Dst        int      `json:"dst"`
	SrcName    string   `json:"src_name"`
	DstName    string   `json:"dst_name"`
	Bytes      int64    `json:"bytes"`
	Msgs       int      `json:"messages"`
	GBps       float64  `json:"bw_gbytes_s"`
	NICPct     float64  `json:"nic_pct"` // of the source NIC's payload rate
	AggGBps    float64  `json:"agg_bw_gbytes_s"`
	Bottleneck string   `json:"bottleneck"`
	Path       []string `json:"path"`
	TimeS      float64  `json:"time_s"`
}

// LinkLoad is one directed link's load.
type LinkLoad struct {
	Name string `json:"name"`
	// Group is "from-tier→to-tier" (leaf→spine, host→leaf, …).
	Group        string  `json:"group"`
	Flows        int     `json:"flows"`
	CapacityGbps float64 `json:"capacity_gbps"`
	// OfferedGbps is what its flows would send at their NICs' rates,
	// CarriedGbps what they get (their max-min rates), both wire Gb/s.
	OfferedGbps float64 `json:"offered_gbps"`
	CarriedGbps float64 `json:"carried_gbps"`
	// Bottleneck is how many flows it limits.
	Bottleneck int `json:"bottleneck_of"`
}

// Collision is the ECMP collision statistics of one group of switch-to-
// switch links (leaf→spine, spine→leaf, edge→agg, …), counting idle links
// but not failed ones: the links of the group that are up, as the routes
// (topo.ComputeRoutes) see them.
type Collision struct {
	Group string  `json:"group"`
	Links int     `json:"links"`
	Flows int     `json:"flows"`
	Max   int     `json:"max"`
	Mean  float64 `json:"mean"`
	// Ideal is the best any routing could do over the links that are up:
	// ceil(flows/links).
	Ideal int `json:"ideal"`
	// Histogram[k] is how many links carry k flows.
	Histogram []int `json:"histogram"`
}

// Analyze gives every flow its max-min fair rate on net and reports rates,
// bottlenecks, link loads and collisions. It is deterministic.
func Analyze(net *fabric.Network, flows []Flow, opt Options) Report {
	eff := opt.Efficiency
	if eff <= 0 || eff > 1 {
		eff = 1
	}
	names := hostNames(net, opt.EndpointName)
	// Number the links the flows use, in order of first use.
	index := map[*fabric.Port]int{}
	var ports []*fabric.Port
	paths := make([][]int, len(flows))
	for f, fl := range flows {
		p := make([]int, len(fl.Path))
		for k, pt := range fl.Path {
			l, ok := index[pt]
			if !ok {
				l = len(ports)
				index[pt] = l
				ports = append(ports, pt)
			}
			p[k] = l
		}
		paths[f] = p
	}
	links := make([]Link, len(ports))
	for l, pt := range ports {
		links[l] = Link{Name: linkName(pt, names), Capacity: float64(pt.Rate)}
	}
	rates, bn := Solve(links, paths)

	r := Report{Efficiency: eff, Flows: make([]FlowRate, len(flows)), Links: make([]LinkLoad, len(ports))}
	for l, pt := range ports {
		r.Links[l] = LinkLoad{Name: links[l].Name, Group: group(pt), CapacityGbps: links[l].Capacity / 1e9}
	}
	agg := map[int]float64{}
	sent, got := map[int]float64{}, map[int]float64{}
	sendRate, recvRate := map[int]float64{}, map[int]float64{}
	for f, fl := range flows {
		nic := 0.0
		if len(fl.Path) > 0 {
			nic = float64(fl.Path[0].Rate)
		}
		rate := rates[f]
		if math.IsInf(rate, 1) {
			rate = nic
		}
		for _, l := range paths[f] {
			r.Links[l].Flows++
			r.Links[l].OfferedGbps += nic / 1e9
			r.Links[l].CarriedGbps += rate / 1e9
		}
		fr := FlowRate{Src: fl.Src, Dst: fl.Dst, SrcName: name(net, names, fl.Src), DstName: name(net, names, fl.Dst),
			Bytes: fl.Bytes, Msgs: fl.Msgs, GBps: rate * eff / 8e9}
		if nic > 0 {
			fr.NICPct = 100 * rate / nic
		}
		if rate < 0.999*nic {
			r.Limited++
		}
		if bn[f] >= 0 {
			fr.Bottleneck = links[bn[f]].Name
			r.Links[bn[f]].Bottleneck++
		}
		for _, l := range paths[f] {
			fr.Path = append(fr.Path, links[l].Name)
		}
		if rate > 0 {
			fr.TimeS = float64(fl.Bytes) * 8 / (rate * eff)
		} else if fl.Bytes > 0 {
			fr.TimeS = math.Inf(1)
		}
		r.CompletionS = math.Max(r.CompletionS, fr.TimeS)
		// The ideal is the busiest NIC, sending or receiving, at line rate
		// (as the packet simulator's ideal time): flows of one host share it.
		if p := paths[f]; len(p) > 0 && nic > 0 {
			sent[fl.Src] += float64(fl.Bytes) * 8
			got[fl.Dst] += float64(fl.Bytes) * 8
			sendRate[fl.Src] = nic
			recvRate[fl.Dst] = links[p[len(p)-1]].Capacity
		}
		agg[fl.Src] += fr.GBps
		r.Flows[f] = fr
	}
	for f := range r.Flows {
		r.Flows[f].AggGBps = agg[r.Flows[f].Src]
	}
	for h, b := range sent {
		r.IdealS = math.Max(r.IdealS, b/(sendRate[h]*eff))
	}
	for h, b := range got {
		if recvRate[h] > 0 {
			r.IdealS = math.Max(r.IdealS, b/(recvRate[h]*eff))
		}
	}
	if r.IdealS > 0 {
		r.Slowdown = r.CompletionS / r.IdealS
	}
	sort.SliceStable(r.Flows, func(i, j int) bool {
		a, b := r.Flows[i], r.Flows[j]
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		return a.Dst < b.Dst
	})
	sort.SliceStable(r.Links, func(i, j int) bool {
		a, b := r.Links[i], r.Links[j]
		if oa, ob := a.OfferedGbps/a.CapacityGbps, b.OfferedGbps/b.CapacityGbps; oa != ob {
			return oa > ob
		}
		if a.CarriedGbps != b.CarriedGbps {
			return a.CarriedGbps > b.CarriedGbps
		}
		return a.Name < b.Name
	})
	r.Collisions = collisions(net, index, paths, opt.Tiers)
	return r
}

// collisions counts flows per switch-to-switch link, by group. A failed
// link (down on net: a failure at time 0 in a static analysis) is no
// path any routing can use, so it is left out, and so is a flow a pin
// still sends into one: it is lost there and loads no link after it. A
// group of failed links only is no group.
func collisions(net *fabric.Network, index map[*fabric.Port]int, paths [][]int, tiers []string) []Collision {
	dead := map[int]bool{}
	for pt, l := range index {
		if pt.Dead() {
			dead[l] = true
		}
	}
	use := map[int]int{}
	for _, p := range paths {
		if slices.ContainsFunc(p, func(l int) bool { return dead[l] }) {
			continue
		}
		for _, l := range p {
			use[l]++
		}
	}
	byGroup := map[string][]int{}
	rank := map[string]int{}
	for _, pt := range net.Ports {
		a, ok1 := pt.Owner.(*fabric.Switch)
		b, ok2 := pt.Peer.Owner.(*fabric.Switch)
		if !ok1 || !ok2 || pt.Dead() {
			continue
		}
		g := a.Tier + "→" + b.Tier
		if _, ok := byGroup[g]; !ok {
			rank[g] = groupRank(a.Tier, b.Tier, tiers)
		}
		n := 0
		if l, ok := index[pt]; ok {
			n = use[l]
		}
		byGroup[g] = append(byGroup[g], n)
	}
	var out []Collision
	for g, counts := range byGroup {
		c := Collision{Group: g, Links: len(counts)}
		for _, n := range counts {
			c.Flows += n
			c.Max = max(c.Max, n)
		}
		c.Histogram = make([]int, c.Max+1)
		for _, n := range counts {
			c.Histogram[n]++
		}
		c.Mean = float64(c.Flows) / float64(c.Links)
		c.Ideal = (c.Flows + c.Links - 1) / c.Links
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank[out[i].Group], rank[out[j].Group]; ri != rj {
			return ri < rj
		}
		return out[i].Group < out[j].Group
	})
	return out
}

// groupRank orders link groups: upward groups from the edge up, then
// downward groups from the top down; unknown tiers last.
func groupRank(from, to string, tiers []string) int {
	pos := func(t string) int {
		for i, x := range tiers {
			if x == t {
				return i
			}
		}
		return len(tiers) + 1
	}
	a, b := pos(from), pos(to)
	if a < b {
		return a
	}
	return 2*len(tiers) + 4 - a
}

// hostNames maps a host port to its host's name: its owner's, else
// endpoint's (nil: "host<id>").
func hostNames(net *fabric.Network, endpoint func(int) string) map[*fabric.Port]string {
	m := make(map[*fabric.Port]string, len(net.HostPorts))
	for h, pt := range net.HostPorts {
		switch {
		case pt == nil:
			continue
		case pt.Owner != nil:
			m[pt] = pt.Owner.Name()
		case endpoint != nil:
			m[pt] = endpoint(h)
		default:
			m[pt] = fmt.Sprintf("host%d", h)
		}
	}
	return m
}

// name is host h's name (its NIC's: "host3", "host3-scaleup").
func name(net *fabric.Network, names map[*fabric.Port]string, h int) string {
	if h >= 0 && h < len(net.HostPorts) {
		if n, ok := names[net.HostPorts[h]]; ok {
			return n
		}
	}
	return fmt.Sprintf("host%d", h)
}

func nodeName(pt *fabric.Port, names map[*fabric.Port]string) string {
	if n, ok := names[pt]; ok {
		return n
	}
	if pt.Owner != nil {
		return pt.Owner.Name()
	}
	return "?"
}

// linkName is "from→to": "leaf0→spine3", "host0→leaf0".
func linkName(pt *fabric.Port, names map[*fabric.Port]string) string {
	return nodeName(pt, names) + "→" + nodeName(pt.Peer, names)
}

func group(pt *fabric.Port) string {
	return pt.Tier + "→" + pt.Peer.Tier
}
