package topo

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"fabriclab/fabric"
)

// Route is one entry of an explicit forwarding table: at switch Switch,
// packets for host Dst leave toward node Next (a switch or host name).
type Route struct {
	Switch string
	Dst    int
	Next   string
	Line   int
}

// ParseRoutes reads a forwarding table file: one route per line,
// "switch dst-host next-node" separated by spaces or commas, # comments and
// blank lines ignored. Errors name the file and line.
func ParseRoutes(name string, r io.Reader) ([]Route, error) {
	var out []Route
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"switch dst-host next-node\", got %d fields", name, line, len(f))
		}
		dst, err := strconv.Atoi(f[1])
		if err != nil || dst < 0 {
			return nil, fmt.Errorf("%s:%d: destination %q is not a host number", name, line, f[1])
		}
		out = append(out, Route{Switch: f[0], Dst: dst, Next: f[2], Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// ApplyRoutes pins each route's switch to one next hop for its
// destination, replacing the computed ECMP group (InfiniBand subnet
// managers write such tables).
func ApplyRoutes(t *Topology, name string, routes []Route) error {
	byName := map[string]*fabric.Switch{}
	for _, s := range t.Net.Switches {
		byName[s.Name()] = s
	}
	for _, r := range routes {
		s, ok := byName[r.Switch]
		if !ok {
			return fmt.Errorf("%s:%d: no switch %q", name, r.Line, r.Switch)
		}
		if r.Dst >= t.Hosts {
			return fmt.Errorf("%s:%d: host %d is not in the topology (hosts 0–%d)", name, r.Line, r.Dst, t.Hosts-1)
		}
		var port *fabric.Port
		for _, pt := range s.Ports {
			if pt.Peer.Owner != nil && pt.Peer.Owner.Name() == r.Next && !pt.Dead() {
				port = pt
			}
		}
		if port == nil {
			return fmt.Errorf("%s:%d: %s has no working link to %q", name, r.Line, r.Switch, r.Next)
		}
		s.Next[r.Dst] = []*fabric.Port{port}
	}
	return nil
}
