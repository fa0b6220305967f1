package nslab

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/topo"
	"fabriclab/units"
)

// maxIfName is the longest interface name Linux accepts (IFNAMSIZ − 1).
const maxIfName = 15

// Plan lays out the lab of job's scenario without touching the system:
// the namespaces, links with their addresses, rates and queue limits,
// and the routes, from the topology the simulator builds (topo), its
// failures at time 0 and switch.routes_file (package plan resolves both
// as the engines do).
func Plan(job scenario.Job, o Options) (*Lab, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	spec := job.Spec
	if spec == nil {
		return nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	l := &Lab{Prefix: o.Prefix, Scenario: job.Scenario, Variant: job.Variant, Topology: spec.Topology.Kind,
		DataSubnet: DataSubnet, FabricSubnet: FabricSubnet, StateDir: o.StateDir, AgentPort: o.AgentPort}
	ts := plan.TopoSpec(spec)
	if ts.ScaleUp.Rate > 0 {
		l.note("topology.scale_up is not built: ranks of one server talk through their NICs and the fabric")
		ts.ScaleUp = topo.Link{}
	}
	tp, err := topo.Wire(job.Seed, ts)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	if err := l.resolveRoutes(job, tp); err != nil {
		return nil, err
	}
	l.Scale = o.Scale
	if l.Scale == 0 {
		l.Scale = AutoScale(spec.Topology.HostLink.Rate)
	}
	l.ScaleText = FormatScale(l.Scale)
	l.HostRate = scaleRate(spec.Topology.HostLink.Rate, l.Scale)
	l.FabricRate = scaleRate(spec.Topology.FabricLink.Rate, l.Scale)
	for _, r := range []struct {
		what string
		rate units.Rate
		bps  int64
	}{{"host", spec.Topology.HostLink.Rate, l.HostRate}, {"fabric", spec.Topology.FabricLink.Rate, l.FabricRate}} {
		if r.bps < int64(MinRate) {
			return nil, fmt.Errorf("at scale %s the %s links (%v) would run at %v, below the lab's %v: use a larger --scale",
				l.ScaleText, r.what, r.rate, units.Rate(r.bps), MinRate)
		}
	}
	l.MTU = min(max(int(spec.NIC.MTU)+40, 1280), 9000)
	if err := l.layOut(tp, spec, o); err != nil {
		return nil, err
	}
	l.notes(spec)
	return l, nil
}

// resolveRoutes fills tp's route tables as an engine does: shortest paths,
// links failing at 0 routed around, then the pins of switch.routes_file.
func (l *Lab) resolveRoutes(job scenario.Job, tp *topo.Topology) error {
	topo.ComputeRoutes(tp)
	fs, err := plan.Failures(job.Spec, tp)
	if err != nil {
		return err
	}
	later := 0
	for _, f := range fs {
		if f.At > 0 {
			later++
		}
	}
	switch {
	case later == 1:
		l.note("the link failure of topology.failures after time 0 is not emulated (the link stays up)")
	case later > 1:
		l.note(fmt.Sprintf("the %d link failures of topology.failures after time 0 are not emulated (those links stay up)", later))
	}
	plan.FailAtStart(tp, fs)
	routes, err := plan.Routes(job)
	if err != nil {
		return err
	}
	return plan.ApplyRoutes(job.Spec, tp, routes, false)
}

func (l *Lab) note(s string) { l.Notes = append(l.Notes, s) }

// notes records what of the scenario the lab cannot emulate.
func (l *Lab) notes(spec *scenario.Scenario) {
	if spec.Topology.HostLink.Delay > 0 || spec.Topology.FabricLink.Delay > 0 || spec.Topology.SwitchLatency > 0 {
		l.note("link delays and switch latency are not emulated (the kernel has no netem qdisc): the lab's delays are veth's, microseconds")
	}
	if spec.Switch.ECN.Enabled {
		l.note("switch.ecn is not emulated (the kernel has no red qdisc): no packet is ECN-marked")
	}
	if spec.Switch.PFC.Enabled {
		l.note("switch.pfc is not emulated: full queues drop their tail")
	}
}

// layOut names the namespaces and interfaces and gives every link its
// addresses, rate and queue limit, then the routes.
func (l *Lab) layOut(tp *topo.Topology, spec *scenario.Scenario, o Options) error {
	n := tp.Net
	nh := tp.Hosts
	if nh > MaxHosts {
		return fmt.Errorf("the lab builds at most %d hosts, this topology has %d: use a smaller one (e.g. --set topology.hosts=…)", MaxHosts, nh)
	}
	if 4*nh+2 > subnetSize(DataSubnet) {
		return fmt.Errorf("%d hosts do not fit in the lab's data subnet %s (at most %d)", nh, DataSubnet, subnetSize(DataSubnet)/4-1)
	}
	if need := nh + 3; need > subnetSize(o.MgmtSubnet) {
		return fmt.Errorf("%d hosts do not fit in the management subnet %s: use a larger --mgmt-subnet", nh, o.MgmtSubnet)
	}
	if nh > 0 && len(RootDev(o.Prefix, nh-1)) > maxIfName {
		return fmt.Errorf("the prefix %q is too long for %d hosts: interface %s would exceed %d characters", o.Prefix, nh, RootDev(o.Prefix, nh-1), maxIfName)
	}
	frame := int64(l.MTU) + 14
	policies := l.forwarding(spec)

	// Switches: names, queue limits, interface names.
	devs := map[*fabric.Port]string{}
	swLimit := map[*fabric.Switch]int64{}
	for _, s := range n.Switches {
		ports := len(s.Ports)
		limit := max(int64(float64(spec.Switch.Buffer)/float64(max(ports, 1))*l.Scale), MinQueueFrames*frame)
		swLimit[s] = limit
		l.Switches = append(l.Switches, Switch{Name: s.Name(), Tier: s.Tier, NS: SwitchNS(o.Prefix, s.Name()),
			Forwarding: policies[s.Tier], Ports: ports, QueueLimit: limit})
		nameSwitchPorts(tp, s, devs)
	}
	hostNode := map[*fabric.Port]int{}
	for h := 0; h < nh; h++ {
		hostNode[n.HostPorts[h]] = h
	}
	burst := func(rate int64) int64 { return max(rate/8/1000, 2*frame) }

	// Hosts and their links.
	ips := map[*fabric.Port]End{}
	for h := 0; h < nh; h++ {
		hp := n.HostPorts[h]
		sp := hp.Peer
		sw := sp.Owner.(*fabric.Switch)
		swIP, hostIP := hostLinkAddrs(h)
		ns := HostNS(o.Prefix, h)
		host := Host{Host: h, Name: fabric.HostName(h), NS: ns, DataDev: "eth0", DataIP: hostIP, Gateway: swIP,
			MgmtDev: "mgmt0", RootDev: RootDev(o.Prefix, h), MgmtIP: mgmtHostAddr(o.MgmtSubnet, h)}
		l.Hosts = append(l.Hosts, host)
		l.Namespaces = append(l.Namespaces, ns)
		rate := scaleRate(hp.Rate, l.Scale)
		a := End{Node: host.Name, NS: ns, Dev: "eth0", IP: hostIP, Bits: linkBits, Rate: rate,
			Limit: max(HostQueueFrames*frame, swLimit[sw]), Burst: burst(rate)}
		b := End{Node: sw.Name(), NS: SwitchNS(o.Prefix, sw.Name()), Dev: devs[sp], IP: swIP, Bits: linkBits,
			Rate: scaleRate(sp.Rate, l.Scale), Limit: swLimit[sw], Burst: burst(scaleRate(sp.Rate, l.Scale)), Switch: true}
		ips[hp], ips[sp] = a, b
		l.Links = append(l.Links, Link{A: a, B: b, Down: hp.Dead()})
	}
	for _, s := range l.Switches {
		l.Namespaces = append(l.Namespaces, s.NS)
	}
	// Links between switches, in the order topo made them.
	i := 0
	for _, s := range n.Switches {
		for _, pt := range s.Ports {
			peer, ok := pt.Peer.Owner.(*fabric.Switch)
			if !ok || pt.Peer.ID < pt.ID {
				continue
			}
			lo, up := fabricLinkAddrs(i)
			i++
			if !FabricSubnet.Contains(up) {
				return fmt.Errorf("%d links between switches do not fit in the lab's fabric subnet %s", i, FabricSubnet)
			}
			ra, rb := scaleRate(pt.Rate, l.Scale), scaleRate(pt.Peer.Rate, l.Scale)
			a := End{Node: s.Name(), NS: SwitchNS(o.Prefix, s.Name()), Dev: devs[pt], IP: lo, Bits: linkBits,
				Rate: ra, Limit: swLimit[s], Burst: burst(ra), Switch: true}
			b := End{Node: peer.Name(), NS: SwitchNS(o.Prefix, peer.Name()), Dev: devs[pt.Peer], IP: up, Bits: linkBits,
				Rate: rb, Limit: swLimit[peer], Burst: burst(rb), Switch: true}
			ips[pt], ips[pt.Peer] = a, b
			l.Links = append(l.Links, Link{A: a, B: b, Down: pt.Dead()})
		}
	}
	l.Mgmt = Mgmt{Bridge: BridgeName(o.Prefix), Subnet: o.MgmtSubnet, RootIP: mgmtRootAddr(o.MgmtSubnet)}
	l.route(tp, ips, policies)
	return nil
}

// nameSwitchPorts names each interface of switch s after the node at its
// other end (h3, spine1), or p<index> when that is too long or taken.
func nameSwitchPorts(tp *topo.Topology, s *fabric.Switch, devs map[*fabric.Port]string) {
	want := make([]string, len(s.Ports))
	count := map[string]int{}
	for i, pt := range s.Ports {
		if sw, ok := pt.Peer.Owner.(*fabric.Switch); ok {
			want[i] = sw.Name()
		} else {
			for h, hp := range tp.Net.HostPorts {
				if hp == pt.Peer {
					want[i] = "h" + itoa(h)
				}
			}
		}
		count[want[i]]++
	}
	for i, pt := range s.Ports {
		name := want[i]
		if name == "" || len(name) > maxIfName || count[name] > 1 || name == "lo" {
			name = "p" + itoa(i)
		}
		devs[pt] = name
	}
}

// forwarding is how each tier forwards in the lab: d-mod-k as the
// simulator does, everything else as ECMP (noted when that is not what
// the scenario asks).
func (l *Lab) forwarding(spec *scenario.Scenario) map[string]string {
	tiers := []string{"leaf", "spine", "edge", "agg", "core", "rail"}
	out := map[string]string{}
	warned := map[string]bool{}
	for _, t := range tiers {
		p := spec.Switch.Forwarding
		for _, tf := range spec.Switch.ForwardingTiers {
			if tf.Tier == t {
				p = tf.Forwarding
			}
		}
		switch p {
		case "d-mod-k":
			out[t] = "d-mod-k"
		default:
			out[t] = "ecmp"
			if p != "" && p != "ecmp" && !warned[p] {
				warned[p] = true
				l.note(fmt.Sprintf("switch.forwarding %s is not emulated: the lab forwards with ECMP (L4 hash)", p))
			}
		}
	}
	return out
}

// route fills l.Routes: a /32 for every host at every switch that does not
// attach to it, toward every next hop the simulator would use (one for
// d-mod-k and for a pinned route), and each host's route to the data
// subnet via its switch.
func (l *Lab) route(tp *topo.Topology, ips map[*fabric.Port]End, policies map[string]string) {
	n := tp.Net
	for _, s := range n.Switches {
		ns := SwitchNS(l.Prefix, s.Name())
		for h := 0; h < tp.Hosts; h++ {
			g := s.Next[h]
			if len(g) > 1 && policies[s.Tier] == "d-mod-k" {
				g = []*fabric.Port{s.NextHop(0, int32(h), 0, 0)}
			}
			if len(g) == 0 || len(g) == 1 && g[0].Peer == n.HostPorts[h] {
				continue // unreachable, or the connected /30
			}
			r := Route{NS: ns, Dst: hostPrefix(l.Hosts[h].DataIP)}
			for _, pt := range g {
				r.Via = append(r.Via, NextHop{Dev: ips[pt].Dev, Gw: ips[pt.Peer].IP})
			}
			l.Routes = append(l.Routes, r)
		}
	}
	for _, h := range l.Hosts {
		l.Routes = append(l.Routes, Route{NS: h.NS, Dst: DataSubnet, Via: []NextHop{{Dev: h.DataDev, Gw: h.Gateway}}, Src: h.DataIP})
	}
}
