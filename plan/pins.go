package plan

import (
	"fmt"
	"strings"

	"fabriclab/topo"
)

// InstallPins pins every message of p that a flow list gave a path to that
// path on tp: each switch of it sends the message's connection on by the
// pinned port. A path that does not exist, or two paths for one
// connection, is an error at the flow's file:line.
// InstallPaths sets what decides the plan's paths before it runs, in
// order: QP-aware entropy (nic.entropy: qp-aware) for the connections'
// 5-tuples, traffic engineering's pins (switch.forwarding: te), then the
// pins of a flow list's paths (InstallPins), which win where they meet.
// Every engine calls it on its topology after the routes are applied.
func InstallPaths(p *Plan, tp *topo.Topology) error {
	spec := p.Job.Spec
	if spec.NIC.Entropy == "qp-aware" {
		AssignQPEntropy(p, tp)
	}
	if spec.Switch.Forwarding == "te" {
		method := spec.Switch.TE.Method
		if method == "" {
			method = "greedy"
		}
		r, err := InstallTE(p, tp, method)
		if err != nil {
			return fmt.Errorf("switch.forwarding te: %v", err)
		}
		p.TE = &r
	}
	return InstallPins(p, tp)
}

func InstallPins(p *Plan, tp *topo.Topology) error {
	if len(p.DAG.Pins) == 0 {
		return nil
	}
	type tuple struct{ src, dst, sqp, dqp int32 }
	given := map[tuple]string{}
	for i := range p.DAG.Msgs {
		pin, ok := p.DAG.Pins[int32(i)]
		if !ok {
			continue
		}
		m := &p.DAG.Msgs[i]
		ports, err := tp.PinPath(int(m.Src), int(m.Dst), pin.Path)
		if err != nil {
			return fmt.Errorf("%s:%d: path: %v", pin.File, pin.Line, err)
		}
		src, dst, sqp, dqp := p.Tuple(i)
		k, path := tuple{src, dst, sqp, dqp}, strings.Join(pin.Path, ">")
		if prev, ok := given[k]; ok && prev != path {
			return fmt.Errorf("%s:%d: path: the flow shares its connection with one pinned to %s (transport.tcp.connections: pool?); give both the same path", pin.File, pin.Line, prev)
		}
		given[k] = path
		for _, pt := range ports {
			pt.Sw().Pin(src, dst, sqp, dqp, pt)
		}
	}
	return nil
}
