package topo

import (
	"fmt"

	"fabriclab/fabric"
)

// PinPath resolves a pinned path from host src to host dst through the
// switches named by path, in order: the first must be src's switch, each
// must be linked to the next, the last to dst. It returns, per switch of
// the path, its port toward the next node (dst's at the last).
func (t *Topology) PinPath(src, dst int, path []string) ([]*fabric.Port, error) {
	hp := func(h int) (*fabric.Port, error) {
		if h < 0 || h >= len(t.Net.HostPorts) || t.Net.HostPorts[h] == nil {
			return nil, fmt.Errorf("host %d is not in the topology", h)
		}
		return t.Net.HostPorts[h], nil
	}
	sp, err := hp(src)
	if err != nil {
		return nil, err
	}
	dp, err := hp(dst)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("an empty path")
	}
	first := sp.Peer.Owner.Name()
	if first != path[0] {
		return nil, fmt.Errorf("host %d is attached to %s, not to %s", src, first, path[0])
	}
	seen := map[string]bool{}
	ports := make([]*fabric.Port, 0, len(path))
	cur := sp.Peer.Sw()
	for i, name := range path {
		if seen[name] {
			return nil, fmt.Errorf("%s is on the path twice", name)
		}
		seen[name] = true
		var out *fabric.Port
		if i == len(path)-1 {
			for _, pt := range cur.Ports {
				if pt.Peer == dp {
					out = pt
				}
			}
			if out == nil {
				return nil, fmt.Errorf("host %d is attached to %s, not to %s", dst, dp.Peer.Owner.Name(), name)
			}
		} else {
			next := path[i+1]
			for _, pt := range cur.Ports {
				if sw := pt.Peer.Sw(); sw != nil && sw.Name() == next {
					out = pt
					break
				}
			}
			if out == nil {
				if !t.HasNode(next) {
					return nil, fmt.Errorf("there is no switch %q in the topology (its switches: %s)", next, t.SwitchNames())
				}
				return nil, fmt.Errorf("%s is not linked to %s", name, next)
			}
		}
		ports = append(ports, out)
		if i < len(path)-1 {
			cur = out.Peer.Sw()
		}
	}
	return ports, nil
}
