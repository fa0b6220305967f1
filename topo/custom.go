package topo

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
	"fabriclab/units"
)

// A Graph is a topology read from a file (topology.kind custom or ns3):
// its nodes and links as written, checked by Check. Hosts are numbered in
// the order their nodes appear; switches keep their names.
type Graph struct {
	// Name is the file name as the scenario writes it (errors begin with
	// it).
	Name  string
	Nodes []GraphNode
	Links []GraphLink

	// Filled by Check.
	// HostNodes[h] is the index in Nodes of host h.
	HostNodes []int
	// Switches is the number of switch nodes.
	Switches int
	// ServerSize is the number of hosts of each server when the file
	// groups hosts into servers (0 when it does not).
	ServerSize int
	// Tiers are the switch tiers from the edge up (see Check); Tier[i] is
	// the tier of node i ("" for a host).
	Tiers []string
	Tier  []string
	// HostRates are the distinct rates of the host links, in the order
	// first met.
	HostRates []units.Rate
}

// A GraphNode is a host or a switch.
type GraphNode struct {
	Name   string
	Switch bool
	// Tier is the switch's tier as written ("" = derived from its distance
	// to the hosts, see Check).
	Tier string
	// Server is the host's server as written ("" = none).
	Server string
	Line   int
}

// A GraphLink joins nodes A and B (indices in Nodes) at Rate, Delay one
// way.
type GraphLink struct {
	A, B  int
	Rate  units.Rate
	Delay units.Duration
	Line  int
}

// Limits on a topology file, checked while it is read, before anything
// grows past them.
const (
	MaxGraphHosts    = 1 << 20
	MaxGraphSwitches = 1 << 17
	MaxGraphLinks    = 1 << 22
	// MaxNodeName bounds a node or tier name.
	MaxNodeName = 64
)

// GraphBuilder collects nodes and links by name, as a parser reads them,
// and resolves the names at the end. Every error is "name:line: message".
type GraphBuilder struct {
	g        *Graph
	byName   map[string]int
	links    []pendingLink
	hosts    int
	switches int
}

type pendingLink struct {
	a, b  string
	rate  units.Rate
	delay units.Duration
	line  int
}

// NewGraphBuilder starts a graph read from the file name.
func NewGraphBuilder(name string) *GraphBuilder {
	return &GraphBuilder{g: &Graph{Name: name}, byName: map[string]int{}}
}

func (b *GraphBuilder) errf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", b.g.Name, line, fmt.Sprintf(format, args...))
}

// CheckName refuses a name that routes files, failures and reports could
// not carry: 1 to MaxNodeName characters of letters, digits and _ . : / @ + -.
func CheckName(s string) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	if len(s) > MaxNodeName {
		return fmt.Errorf("%s is longer than %d characters", inputfile.Token(s), MaxNodeName)
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:/@+-", r)
		if !ok {
			return fmt.Errorf("%s has %q; names are letters, digits and _ . : / @ + -", inputfile.Token(s), r)
		}
	}
	return nil
}

// hostNumber is N for a name "hostN" (N without leading zeros), else -1.
func hostNumber(s string) int {
	d, ok := strings.CutPrefix(s, "host")
	if !ok || d == "" || len(d) > 9 || (d[0] == '0' && len(d) > 1) {
		return -1
	}
	n, err := strconv.Atoi(d)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// reservedSwitchName: the names the simulator gives hosts' endpoints and
// scale-up switches.
func reservedSwitchName(s string) bool {
	if hostNumber(s) >= 0 || hostNumber(strings.TrimSuffix(s, "-scaleup")) >= 0 {
		return true
	}
	d, ok := strings.CutPrefix(s, "scaleup")
	if !ok || d == "" {
		return false
	}
	_, err := strconv.Atoi(d)
	return err == nil
}

// AddNode adds a node written at line.
func (b *GraphBuilder) AddNode(n GraphNode) error {
	if err := CheckName(n.Name); err != nil {
		return b.errf(n.Line, "node name %v", err)
	}
	if at, ok := b.byName[n.Name]; ok {
		return b.errf(n.Line, "node %s is defined twice (first at line %d); names must be unique", n.Name, b.g.Nodes[at].Line)
	}
	if n.Switch {
		if n.Server != "" {
			return b.errf(n.Line, "switch %s has a server; only hosts belong to servers", n.Name)
		}
		if reservedSwitchName(n.Name) {
			return b.errf(n.Line, "switch name %s is how the simulator names a host or a scale-up switch; rename the switch", n.Name)
		}
		if n.Tier != "" {
			if err := CheckName(n.Tier); err != nil {
				return b.errf(n.Line, "tier %v", err)
			}
			if n.Tier == "host" || n.Tier == "scale-up" {
				return b.errf(n.Line, "tier %q is reserved (the simulator's name for host ports and scale-up switches)", n.Tier)
			}
		}
		if b.switches++; b.switches > MaxGraphSwitches {
			return b.errf(n.Line, "more than %d switches", MaxGraphSwitches)
		}
	} else {
		if n.Tier != "" {
			return b.errf(n.Line, "host %s has a tier; tiers are for switches", n.Name)
		}
		if n.Server != "" {
			if err := CheckName(n.Server); err != nil {
				return b.errf(n.Line, "server %v", err)
			}
		}
		if k := hostNumber(n.Name); k >= 0 && k != b.hosts {
			return b.errf(n.Line, "host %s is host %d in file order (hosts are numbered in the order they are listed); rename it or move it", n.Name, b.hosts)
		}
		if b.hosts++; b.hosts > MaxGraphHosts {
			return b.errf(n.Line, "more than %d hosts", MaxGraphHosts)
		}
	}
	b.byName[n.Name] = len(b.g.Nodes)
	b.g.Nodes = append(b.g.Nodes, n)
	return nil
}

// AddLink adds a link between the nodes named a and b, written at line;
// the names are resolved by Graph.
func (b *GraphBuilder) AddLink(a, bn string, rate units.Rate, delay units.Duration, line int) error {
	if a == bn {
		return b.errf(line, "link from %s to itself", inputfile.Token(a))
	}
	if err := CheckLinkRate(rate); err != nil {
		return b.errf(line, "link rate %v", err)
	}
	if delay < 0 {
		return b.errf(line, "link delay must not be negative, got %v", delay)
	}
	if len(b.links) >= MaxGraphLinks {
		return b.errf(line, "more than %d links", MaxGraphLinks)
	}
	b.links = append(b.links, pendingLink{a, bn, rate, delay, line})
	return nil
}

// Graph resolves the link ends and checks the whole graph (Check). end is
// the line errors about the file as a whole name (its last line).
func (b *GraphBuilder) Graph(end int) (*Graph, error) {
	g := b.g
	g.Links = make([]GraphLink, 0, len(b.links))
	for _, l := range b.links {
		ia, ok := b.byName[l.a]
		if !ok {
			return nil, b.errf(l.line, "link end %s is not a node of the file", inputfile.Token(l.a))
		}
		ib, ok := b.byName[l.b]
		if !ok {
			return nil, b.errf(l.line, "link end %s is not a node of the file", inputfile.Token(l.b))
		}
		g.Links = append(g.Links, GraphLink{A: ia, B: ib, Rate: l.rate, Delay: l.delay, Line: l.line})
	}
	if err := g.Check(end); err != nil {
		return nil, err
	}
	return g, nil
}

// Check checks a graph as a topology: at least one host and one switch;
// every host with exactly one link, to a switch (a host is one NIC: a
// server with several NICs is several hosts of one server); no self-links
// and no second link between the same two nodes; connected; servers, when
// given, on every host, each server's hosts listed together and every
// server of the same size. It numbers the hosts and works out the tiers:
// a switch without one gets "tierN", N its distance in links from the
// nearest host (1 for a switch hosts attach to), and the tiers are ordered
// by the smallest distance of their switches, then by first appearance.
// end is the line to blame for what is missing from the whole file.
func (g *Graph) Check(end int) error {
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", g.Name, line, fmt.Sprintf(format, args...))
	}
	n := len(g.Nodes)
	if n > MaxGraphHosts+MaxGraphSwitches || len(g.Links) > MaxGraphLinks {
		return errf(end, "more than %d nodes or %d links", MaxGraphHosts+MaxGraphSwitches, MaxGraphLinks)
	}
	g.HostNodes, g.Switches = g.HostNodes[:0], 0
	for i, nd := range g.Nodes {
		if nd.Switch {
			g.Switches++
		} else {
			g.HostNodes = append(g.HostNodes, i)
		}
	}
	if len(g.HostNodes) == 0 {
		return errf(end, "the file has no hosts")
	}
	if g.Switches == 0 {
		return errf(end, "the file has no switches (hosts attach to switches)")
	}
	// Degrees, host links, duplicates.
	hostLink := make([]int, n) // line of a host's link
	linked := make([]bool, n)
	type pair struct{ a, b int }
	seen := make(map[pair]int, len(g.Links))
	deg := make([]int32, n)
	g.HostRates = g.HostRates[:0]
	for _, l := range g.Links {
		if l.A < 0 || l.A >= n || l.B < 0 || l.B >= n {
			return errf(l.Line, "link end out of range")
		}
		if l.A == l.B {
			return errf(l.Line, "link from %s to itself", g.Nodes[l.A].Name)
		}
		a, b := g.Nodes[l.A], g.Nodes[l.B]
		if !a.Switch && !b.Switch {
			return errf(l.Line, "link between two hosts (%s, %s); a host links to a switch", a.Name, b.Name)
		}
		k := pair{min(l.A, l.B), max(l.A, l.B)}
		if at, ok := seen[k]; ok {
			return errf(l.Line, "second link between %s and %s (the first is at line %d); parallel links are not modelled: give one link the combined rate", a.Name, b.Name, at)
		}
		seen[k] = l.Line
		for _, h := range []int{l.A, l.B} {
			if g.Nodes[h].Switch {
				continue
			}
			if linked[h] {
				return errf(l.Line, "host %s has a second link (the first is at line %d); a host is one NIC with one link: list a server's NICs as hosts of one server", g.Nodes[h].Name, hostLink[h])
			}
			hostLink[h], linked[h] = l.Line, true
			if !slices.Contains(g.HostRates, l.Rate) {
				g.HostRates = append(g.HostRates, l.Rate)
			}
		}
		deg[l.A]++
		deg[l.B]++
	}
	for _, h := range g.HostNodes {
		if !linked[h] {
			return errf(g.Nodes[h].Line, "host %s has no link", g.Nodes[h].Name)
		}
	}
	// Adjacency (compressed) for the searches below.
	off := make([]int32, n+1)
	for i := range n {
		off[i+1] = off[i] + deg[i]
	}
	adj := make([]int32, off[n])
	fill := slices.Clone(off[:n])
	for _, l := range g.Links {
		adj[fill[l.A]] = int32(l.B)
		fill[l.A]++
		adj[fill[l.B]] = int32(l.A)
		fill[l.B]++
	}
	// Connected: a search from the first node reaches every node.
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = -1
	}
	queue := make([]int32, 0, n)
	dist[0] = 0
	queue = append(queue, 0)
	for i := 0; i < len(queue); i++ {
		u := queue[i]
		for _, v := range adj[off[u]:off[u+1]] {
			if dist[v] < 0 {
				dist[v] = 0
				queue = append(queue, v)
			}
		}
	}
	if len(queue) < n {
		for i, d := range dist {
			if d < 0 {
				return errf(g.Nodes[i].Line, "node %s is not connected to %s (the topology must be connected)", g.Nodes[i].Name, g.Nodes[0].Name)
			}
		}
	}
	// Distance of every switch from the nearest host.
	for i := range dist {
		dist[i] = -1
	}
	queue = queue[:0]
	for _, h := range g.HostNodes {
		dist[h] = 0
		queue = append(queue, int32(h))
	}
	for i := 0; i < len(queue); i++ {
		u := queue[i]
		for _, v := range adj[off[u]:off[u+1]] {
			if dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	g.Tier = make([]string, n)
	level := map[string]int32{}
	var order []string
	for i, nd := range g.Nodes {
		if !nd.Switch {
			continue
		}
		t := nd.Tier
		if t == "" {
			t = "tier" + strconv.Itoa(int(dist[i]))
		}
		g.Tier[i] = t
		if l, ok := level[t]; !ok {
			level[t] = dist[i]
			order = append(order, t)
		} else if dist[i] < l {
			level[t] = dist[i]
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return int(level[a] - level[b]) })
	g.Tiers = order
	return g.checkServers()
}

// checkServers: servers on every host or none, each server's hosts
// consecutive, every server the same size.
func (g *Graph) checkServers() error {
	g.ServerSize = 0
	first := g.Nodes[g.HostNodes[0]]
	named := 0
	for _, h := range g.HostNodes {
		if g.Nodes[h].Server != "" {
			named++
		}
	}
	if named == 0 {
		return nil
	}
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", g.Name, line, fmt.Sprintf(format, args...))
	}
	done := map[string]bool{}
	size, run := 0, 0
	cur := ""
	for i, h := range g.HostNodes {
		nd := g.Nodes[h]
		if nd.Server == "" {
			return errf(nd.Line, "host %s has no server while host %s has one; give every host a server, or none", nd.Name, g.firstServer().Name)
		}
		if nd.Server != cur {
			if done[nd.Server] {
				return errf(nd.Line, "host %s is in server %s, whose other hosts are listed earlier; list a server's hosts together", nd.Name, nd.Server)
			}
			if i > 0 {
				done[cur] = true
				if size == 0 {
					size = run
				} else if run != size {
					return errf(g.Nodes[g.HostNodes[i-1]].Line, "server %s has %s and server %s %d; every server must have the same number of hosts", cur, nOf(run, "host"), first.Server, size)
				}
			}
			cur, run = nd.Server, 0
		}
		run++
	}
	if size != 0 && run != size {
		last := g.Nodes[g.HostNodes[len(g.HostNodes)-1]]
		return errf(last.Line, "server %s has %s and server %s %d; every server must have the same number of hosts", cur, nOf(run, "host"), first.Server, size)
	}
	if size == 0 {
		size = run
	}
	g.ServerSize = size
	return nil
}

func (g *Graph) firstServer() GraphNode {
	for _, h := range g.HostNodes {
		if g.Nodes[h].Server != "" {
			return g.Nodes[h]
		}
	}
	return GraphNode{}
}

// wireGraph builds a checked graph: the switches in file order, then the
// links in file order (a host link with ConnectHost). A leaf-spine written
// as a file with its leaves, then its spines, and its links in the order
// the built-in builder makes them (every leaf's hosts, then every spine's
// links to the leaves) is the same network, port for port.
func wireGraph(t *Topology, s Spec) {
	g := s.Graph
	n := t.Net
	tiers := map[string]*fabric.SwitchConfig{}
	sw := make([]*fabric.Switch, len(g.Nodes))
	host := make([]int, len(g.Nodes))
	for i, h := range g.HostNodes {
		host[h] = i
	}
	for i, nd := range g.Nodes {
		if nd.Switch {
			sw[i] = n.AddSwitch(nd.Name, g.Tier[i], s.config(g.Tier[i], tiers), s.ECMPSeed)
		}
	}
	for _, l := range g.Links {
		a, b := l.A, l.B
		switch {
		case sw[a] != nil && sw[b] != nil:
			n.ConnectSwitches(sw[a], sw[b], l.Rate, l.Delay)
		case sw[a] != nil:
			a, b = b, a
			fallthrough
		default:
			n.ConnectHost(host[a], sw[b], l.Rate, l.Delay)
			t.Edge[host[a]] = sw[b]
		}
	}
	t.Tiers = slices.Clone(g.Tiers)
}

// ParseCustomCSV reads a topology in fabriclab's CSV form: one record a
// line, fields separated by commas (spaces around them ignored), # to the
// end of the line a comment, blank lines ignored:
//
//	node,NAME,host[,,SERVER]
//	node,NAME,switch[,TIER]
//	link,A,B,RATE,DELAY
//
// An empty field is one not given. Names are resolved at the end, so
// nodes and links may come in any order; hosts are numbered in the order
// of their node lines.
func ParseCustomCSV(name string, r io.Reader) (*Graph, error) {
	b := NewGraphBuilder(name)
	sc := inputfile.NewScanner(name, r, 4096)
	for sc.Scan() {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		switch f[0] {
		case "node":
			if len(f) < 3 || len(f) > 5 {
				return nil, sc.Errorf("want \"node,NAME,host[,,SERVER]\" or \"node,NAME,switch[,TIER]\", got %s", nOf(len(f), "field"))
			}
			nd := GraphNode{Name: f[1], Line: sc.Line()}
			switch f[2] {
			case "host":
			case "switch":
				nd.Switch = true
			default:
				return nil, sc.Errorf("node kind %s: want host or switch", inputfile.Token(f[2]))
			}
			if len(f) > 3 {
				nd.Tier = f[3]
			}
			if len(f) > 4 {
				nd.Server = f[4]
			}
			if err := b.AddNode(nd); err != nil {
				return nil, err
			}
		case "link":
			if len(f) != 5 {
				return nil, sc.Errorf("want \"link,A,B,RATE,DELAY\", got %s", nOf(len(f), "field"))
			}
			rate, delay, err := linkValues(f[3], f[4])
			if err != nil {
				return nil, sc.Errorf("%v", err)
			}
			if err := b.AddLink(f[1], f[2], rate, delay, sc.Line()); err != nil {
				return nil, err
			}
		default:
			return nil, sc.Errorf("a line starts with node or link, got %s", inputfile.Token(f[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return b.Graph(max(sc.Line(), 1))
}

// linkValues parses a link's rate and delay in fabriclab's units.
func linkValues(rs, ds string) (units.Rate, units.Duration, error) {
	if rs == "" {
		return 0, 0, fmt.Errorf("the link has no rate (e.g. 100Gbps)")
	}
	if ds == "" {
		return 0, 0, fmt.Errorf("the link has no delay (e.g. 1us)")
	}
	rate, err := units.ParseRate(rs)
	if err != nil {
		return 0, 0, fmt.Errorf("rate: %s", tokenError(rs, err, "a rate (e.g. 100Gbps)"))
	}
	delay, err := units.ParseDuration(ds)
	if err != nil {
		return 0, 0, fmt.Errorf("delay: %s", tokenError(ds, err, "a duration (e.g. 1us)"))
	}
	return rate, delay, nil
}

// tokenError is err's message when tok is short enough to quote, else
// only that the token (cut short) is not what.
func tokenError(tok string, err error, what string) string {
	if len(tok) <= inputfile.TokenBytes {
		return err.Error()
	}
	return inputfile.Token(tok) + " is not " + what
}
