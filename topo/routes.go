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
// managers write such tables), and checks that every pinned destination is
// still reached from every switch without a loop. With skipDead (after a
// failure reconverges) a route over a failed link is left out instead of
// being an error.
func ApplyRoutes(t *Topology, name string, routes []Route, skipDead bool) error {
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
			if skipDead {
				continue
			}
			return fmt.Errorf("%s:%d: %s has no working link to %q", name, r.Line, r.Switch, r.Next)
		}
		s.Next[r.Dst] = []*fabric.Port{port}
	}
	// Every switch must still reach each pinned destination (first choice
	// of every group, which is the pinned port where there is one).
	checked := map[int]bool{}
	for _, r := range routes {
		if checked[r.Dst] {
			continue
		}
		checked[r.Dst] = true
		for _, s := range t.Net.Switches {
			if len(s.Next[r.Dst]) == 0 {
				continue
			}
			pt := s.Next[r.Dst][0]
			for hop := 0; ; hop++ {
				if hop > len(t.Net.Switches) {
					return fmt.Errorf("%s: the routes to host %d loop (from %s)", name, r.Dst, s.Name())
				}
				next, ok := pt.Peer.Owner.(*fabric.Switch)
				if !ok {
					if pt.Peer != t.Net.HostPorts[r.Dst] {
						return fmt.Errorf("%s: the routes to host %d from %s end at another host", name, r.Dst, s.Name())
					}
					break
				}
				if len(next.Next[r.Dst]) == 0 {
					return fmt.Errorf("%s: the routes to host %d from %s reach %s, which has no route on", name, r.Dst, s.Name(), next.Name())
				}
				pt = next.Next[r.Dst][0]
			}
		}
	}
	return nil
}
