package topo

import (
	"io"
	"strconv"
	"strings"

	"fabriclab/internal/inputfile"
	"fabriclab/units"
)

// ParseNS3 reads an ns-3 topology.txt as the published RDMA/HPCC
// scenarios ship it, unchanged:
//
//	NODES SWITCHES LINKS
//	SWITCH-ID SWITCH-ID …           (SWITCHES ids)
//	A B RATE DELAY ERROR-RATE       (LINKS lines)
//
// Node ids are 0…NODES−1; the ids on the second line are switches, named
// swID (sw320); every other id is a host, numbered in id order (named
// hostN). Rates and delays are read as ns-3 writes them (100Gbps,
// 0.001ms); the error rate must be 0 (fabriclab loses no packets at
// random). Fields are separated by spaces or tabs; blank lines and # to
// the end of a line are ignored. Errors are "name:line: message".
func ParseNS3(name string, r io.Reader) (*Graph, error) {
	sc := inputfile.NewScanner(name, r, 0)
	next := func() ([]string, bool) {
		for sc.Scan() {
			text := sc.Text()
			if i := strings.IndexByte(text, '#'); i >= 0 {
				text = text[:i]
			}
			if f := strings.Fields(text); len(f) > 0 {
				return f, true
			}
		}
		return nil, false
	}
	b := NewGraphBuilder(name)
	f, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, b.errf(max(sc.Line(), 1), "the file is empty: an ns-3 topology starts with \"nodes switches links\"")
	}
	if len(f) != 3 {
		return nil, sc.Errorf("want \"nodes switches links\" on the first line, got %s", nOf(len(f), "field"))
	}
	var count [3]int
	for i, what := range []string{"nodes", "switches", "links"} {
		n, err := strconv.Atoi(f[i])
		if err != nil || n < 0 {
			return nil, sc.Errorf("%s: %s is not a count", what, inputfile.Token(f[i]))
		}
		count[i] = n
	}
	nodes, switches, links := count[0], count[1], count[2]
	switch {
	case switches > MaxGraphSwitches:
		return nil, sc.Errorf("%d switches, more than the limit of %d", switches, MaxGraphSwitches)
	case switches > nodes:
		return nil, sc.Errorf("%s among %s", nOf(switches, "switch"), nOf(nodes, "node"))
	case nodes-switches > MaxGraphHosts:
		return nil, sc.Errorf("%d hosts, more than the limit of %d", nodes-switches, MaxGraphHosts)
	case links > MaxGraphLinks:
		return nil, sc.Errorf("%d links, more than the limit of %d", links, MaxGraphLinks)
	}
	first := sc.Line()
	isSwitch := make([]bool, nodes)
	swLine := first
	if switches > 0 {
		f, ok = next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, err
			}
			return nil, b.errf(sc.Line(), "the file ends before the line of the %s", nOf(switches, "switch id"))
		}
		if len(f) != switches {
			return nil, sc.Errorf("the first line says %s, this line lists %s", nOf(switches, "switch"), nOf(len(f), "id"))
		}
		for _, s := range f {
			id, err := strconv.Atoi(s)
			if err != nil || id < 0 || id >= nodes {
				return nil, sc.Errorf("switch id %s is not a node id (0–%d)", inputfile.Token(s), nodes-1)
			}
			if isSwitch[id] {
				return nil, sc.Errorf("switch %d is listed twice", id)
			}
			isSwitch[id] = true
		}
		swLine = sc.Line()
	}
	// The link lines are read (and checked) before any node is made: the
	// header's counts alone allocate nothing (a connected graph has at
	// least nodes−1 links, and the file must hold every link it counts).
	type pending struct {
		a, b  int
		rate  units.Rate
		delay units.Duration
		line  int
	}
	var ls []pending
	for {
		f, ok := next()
		if !ok {
			break
		}
		if len(ls) == links {
			return nil, sc.Errorf("the first line says %s; this is one more", nOf(links, "link"))
		}
		if len(f) != 5 {
			return nil, sc.Errorf("want \"a b rate delay error-rate\", got %s", nOf(len(f), "field"))
		}
		var end [2]int
		for i := range 2 {
			id, err := strconv.Atoi(f[i])
			if err != nil || id < 0 || id >= nodes {
				return nil, sc.Errorf("node %s is not a node id (0–%d)", inputfile.Token(f[i]), nodes-1)
			}
			end[i] = id
		}
		if end[0] == end[1] {
			return nil, sc.Errorf("link from node %s to itself", f[0])
		}
		rate, delay, err := linkValues(f[2], f[3])
		if err != nil {
			return nil, sc.Errorf("%v", err)
		}
		if e, err := strconv.ParseFloat(f[4], 64); err != nil || e != 0 {
			return nil, sc.Errorf("error rate %s: fabriclab loses no packets at random; set it to 0", inputfile.Token(f[4]))
		}
		ls = append(ls, pending{a: end[0], b: end[1], rate: rate, delay: delay, line: sc.Line()})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ls) < links {
		return nil, b.errf(max(sc.Line(), 1), "the first line says %s, the file has %d", nOf(links, "link"), len(ls))
	}
	if nodes > links+1 {
		return nil, b.errf(first, "%s cannot be connected by %s", nOf(nodes, "node"), nOf(links, "link"))
	}
	names := make([]string, nodes)
	h := 0
	for id := range nodes {
		nd := GraphNode{Switch: isSwitch[id], Line: first}
		if nd.Switch {
			nd.Name, nd.Line = "sw"+strconv.Itoa(id), swLine
		} else {
			nd.Name = "host" + strconv.Itoa(h)
			h++
		}
		names[id] = nd.Name
		if err := b.AddNode(nd); err != nil {
			return nil, err
		}
	}
	for _, l := range ls {
		if err := b.AddLink(names[l.a], names[l.b], l.rate, l.delay, l.line); err != nil {
			return nil, err
		}
	}
	return b.Graph(first)
}

// nOf is n and the noun, plural unless n is 1: "1 link", "2 switches".
func nOf(n int, noun string) string {
	if n != 1 {
		if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
			noun += "es"
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}
