package topo

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
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
// blank lines ignored. A (switch, destination) pinned twice is refused,
// whether to another next hop or to the same one. Errors are one line,
// "name:line: message", and quote at most a short piece of a token (see
// inputfile.Token).
func ParseRoutes(name string, r io.Reader) ([]Route, error) {
	var out []Route
	type pin struct {
		sw  string
		dst int
	}
	seen := map[pin]int{} // → index in out
	sc := inputfile.NewScanner(name, r, 0)
	for sc.Scan() {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' })
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, sc.Errorf("want \"switch dst-host next-node\", got %d fields", len(f))
		}
		dst, err := strconv.Atoi(f[1])
		if err != nil || dst < 0 {
			return nil, sc.Errorf("destination %s is not a host number", inputfile.Token(f[1]))
		}
		k := pin{f[0], dst}
		if i, ok := seen[k]; ok {
			p := out[i]
			if p.Next == f[2] {
				return nil, sc.Errorf("switch %s destination %d is pinned to %s again (already at line %d); remove the duplicate",
					inputfile.Token(p.Switch), dst, inputfile.Token(p.Next), p.Line)
			}
			return nil, sc.Errorf("switch %s destination %d is pinned to %s here and to %s at line %d",
				inputfile.Token(p.Switch), dst, inputfile.Token(f[2]), inputfile.Token(p.Next), p.Line)
		}
		seen[k] = len(out)
		out = append(out, Route{Switch: f[0], Dst: dst, Next: f[2], Line: sc.Line()})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ApplyRoutes pins each route's switch to one next hop for its
// destination, replacing the computed ECMP group (InfiniBand subnet
// managers write such tables), and checks that every pinned destination is
// still reached from every switch without a loop. With skipDead (after a
// failure reconverges) a route over a failed link is left out instead of
// being an error. Hosts are named as NodeName names them, so that a table
// can be checked on a topology without a transport (see Wire).
func ApplyRoutes(t *Topology, name string, routes []Route, skipDead bool) error {
	byName := map[string]*fabric.Switch{}
	for _, s := range t.Net.Switches {
		byName[s.Name()] = s
	}
	names := t.portNames()
	for _, r := range routes {
		s, ok := byName[r.Switch]
		if !ok {
			return fmt.Errorf("%s:%d: no switch %s", name, r.Line, inputfile.Token(r.Switch))
		}
		if r.Dst >= t.Hosts {
			return fmt.Errorf("%s:%d: host %d is not in the topology (hosts 0–%d)", name, r.Line, r.Dst, t.Hosts-1)
		}
		var port *fabric.Port
		for _, pt := range s.Ports {
			if names(pt.Peer) == r.Next && !pt.Dead() {
				port = pt
			}
		}
		if port == nil {
			if skipDead {
				continue
			}
			return fmt.Errorf("%s:%d: %s has no working link to %s", name, r.Line, r.Switch, inputfile.Token(r.Next))
		}
		s.Next[r.Dst] = []*fabric.Port{port}
		s.RoutesChanged()
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

// RouteTableBytes estimates the next-hop tables Build fills for spec: one
// slice header per switch and destination (hosts, and scale-up endpoints
// when there are any). 0 for an impossible spec.
func RouteTableBytes(s Spec) int64 {
	h, err := NumHosts(s)
	if err != nil {
		return 0
	}
	if s.ScaleUp.Rate > 0 {
		h *= 2 // every GPU's scale-up endpoint is in the tables too
	}
	// A switch's table: one next-hop group per host, and its compiled
	// group number (fabric's routeTable).
	var next [][]*fabric.Port
	return int64(NumSwitches(s)) * int64(h) * int64(unsafe.Sizeof(next[0])+unsafe.Sizeof(uint32(0)))
}

// EndpointName is how network id id is named: hostN for host N's NIC,
// hostN-scaleup for its scale-up endpoint (ids from Hosts on).
func (t *Topology) EndpointName(id int) string {
	if id >= t.Hosts {
		return fabric.HostName(id-t.Hosts) + "-scaleup"
	}
	return fabric.HostName(id)
}

// NodeName is the name of the node that owns port pt: its switch, its
// host's transport, or, before a transport is attached, EndpointName.
func (t *Topology) NodeName(pt *fabric.Port) string { return t.portNames()(pt) }

// portNames names the owner of a port; host ports without an owner are
// looked up once.
func (t *Topology) portNames() func(*fabric.Port) string {
	var ids map[*fabric.Port]int
	return func(pt *fabric.Port) string {
		if pt.Owner != nil {
			return pt.Owner.Name()
		}
		if ids == nil {
			ids = make(map[*fabric.Port]int, len(t.Net.HostPorts))
			for id, hp := range t.Net.HostPorts {
				ids[hp] = id
			}
		}
		if id, ok := ids[pt]; ok {
			return t.EndpointName(id)
		}
		return ""
	}
}

// SwitchLink finds the link between the switches named a and b, written
// in either order, as topology.failures names a link, and returns a's port
// on it (b's when a is a host). A link to a host is refused: only links
// between switches can fail.
func (t *Topology) SwitchLink(a, b string) (*fabric.Port, error) {
	names := t.portNames()
	known := map[string]bool{}
	for _, s := range t.Net.Switches {
		known[s.Name()] = true
	}
	for _, hp := range t.Net.HostPorts {
		if hp != nil {
			known[names(hp)] = true
		}
	}
	for _, ends := range [][2]string{{a, b}, {b, a}} {
		for _, s := range t.Net.Switches {
			if s.Name() != ends[0] {
				continue
			}
			for _, pt := range s.Ports {
				if names(pt.Peer) != ends[1] {
					continue
				}
				if _, ok := pt.Peer.Owner.(*fabric.Switch); !ok {
					return nil, fmt.Errorf("%q–%q is a host link; only links between switches can fail", a, b)
				}
				return pt, nil
			}
		}
	}
	for _, n := range []string{a, b} {
		if !known[n] {
			return nil, fmt.Errorf("there is no switch %q in the topology (its switches: %s)", n, t.SwitchNames())
		}
	}
	return nil, fmt.Errorf("there is no link between %q and %q", a, b)
}

// SwitchNames lists the switches compactly, tier by tier in the order they
// were built, first…last: "leaf0…leaf3, spine0…spine3".
func (t *Topology) SwitchNames() string {
	type span struct{ first, last string }
	var order []string
	spans := map[string]*span{}
	for _, s := range t.Net.Switches {
		sp, ok := spans[s.Tier]
		if !ok {
			sp = &span{first: s.Name()}
			spans[s.Tier] = sp
			order = append(order, s.Tier)
		}
		sp.last = s.Name()
	}
	parts := make([]string, len(order))
	for i, tier := range order {
		sp := spans[tier]
		parts[i] = sp.first
		if sp.last != sp.first {
			parts[i] += "…" + sp.last
		}
	}
	return strings.Join(parts, ", ")
}

// HasNode reports whether a switch or a host endpoint is named name.
func (t *Topology) HasNode(name string) bool {
	for _, s := range t.Net.Switches {
		if s.Name() == name {
			return true
		}
	}
	names := t.portNames()
	for _, hp := range t.Net.HostPorts {
		if hp != nil && names(hp) == name {
			return true
		}
	}
	return false
}
