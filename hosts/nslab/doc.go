// Package nslab builds a scenario's fabric on one Linux machine from
// network namespaces — the "namespace lab" behind `fabriclab lab up` and
// `fabriclab lab down` — so that the hosts engine can be tried, and
// tested, without a cluster.
//
// # What it builds
//
// The topology is built by package topo exactly as the simulator builds it
// (leaf-spine, fat-tree or rail), and then mirrored:
//
//   - one namespace per host (PREFIX + "h" + N, e.g. fl-h0) and per switch
//     (PREFIX + the simulator's switch name, e.g. fl-leaf0, fl-spine1);
//   - one veth pair per link. In a host namespace the data interface is
//     eth0; in a switch namespace each interface is named after the node at
//     its other end (h3, leaf0, spine1; p<port index> if that name does not
//     fit in 15 characters);
//   - every veth end shaped on egress to the scaled link rate (see Scale)
//     with tbf, or htb with a bfifo leaf where the kernel has no tbf;
//   - routes: every switch has a /32 route to every host it does not
//     attach to, with all of the simulator's equal-cost next hops as a
//     multipath route (net.ipv4.fib_multipath_hash_policy=1: an L4 hash,
//     the lab's stand-in for the simulator's 5-tuple hash); d-mod-k
//     switches and the pins of switch.routes_file get the one next hop the
//     simulator uses. Hosts route the data subnet via their edge switch.
//   - a management network in the root namespace: a bridge PREFIX+"mgmt"
//     with one veth per host (PREFIX+"m"+N in the root namespace, mgmt0 in
//     the host), so that a controller in the root namespace reaches the
//     agents. Switches have no route to it and hosts do not forward, so the
//     data fabric and the management network do not route into each other.
//
// # Addressing plan
//
//   - host link of host h: 10.70.0.0/16 carved in /30s, the (4h)th address
//     on: the switch end is .4h+1, the host .4h+2 (host 0 is 10.70.0.2,
//     host 1 10.70.0.6). DataSubnet (10.70.0.0/16) is what agents --allow.
//   - link i between switches: 10.71.0.0/16 in /30s, the lower tier's end
//     .4i+1, the upper tier's .4i+2.
//   - management: Options.MgmtSubnet (default 10.254.0.0/16): host h is the
//     (h+1)th address (host 0 is 10.254.0.1), the bridge in the root
//     namespace the last usable one (10.254.255.254). Up refuses a subnet
//     that overlaps a route of the root namespace.
//
// The data and fabric subnets exist only inside the lab's namespaces, so
// several labs (and the machine's own networks) never clash there; only
// the management subnet is seen by the root namespace.
//
// # Rates, queues, MTU
//
// Scale multiplies every link rate (topology.host_link.rate,
// topology.fabric_link.rate). By default (Scale 0, "auto") it is the scale
// that makes a host link DefaultHostRate (100 Mb/s): 1/1000 for 100G
// links, 1/4000 for 400G — what a 2-core machine forwards for a few dozen
// hosts. A scaled rate below MinRate is refused.
//
// A switch port's queue limit is its static share of the switch buffer,
// switch.buffer / ports, times the scale: the queue then holds as much
// time of traffic at the scaled rate as the scenario's buffer holds at the
// full rate. It is never below MinQueueFrames full frames: at the scales
// a small machine runs, the buffer's share is a few frames, and a queue
// that small drops at every incast of a few TCP flows, so that the
// kernel's retransmission timer, not the fabric, would set the time (the
// simulator's TCP on the same scaled fabric sees none of that). A host's NIC queue is HostQueueFrames frames (a NIC's
// transmit ring), and never below its switch's port limit. The tbf burst
// is a millisecond of the rate, at least two frames.
//
// The interface MTU is nic.mtu + 40 (an IPv4 and a TCP header around a
// payload of nic.mtu), between 1280 and 9000. The data links carry no GSO
// super-packets (gso_max_segs 1), so queues hold and drop real frames.
//
// # Agents
//
// With Options.StartAgents, Up starts one agent per host, in a session of
// its own with its output in STATE/agent-hN.log:
//
//	ip netns exec NS EXE agent --listen MGMT_IP:7470 --data-ip DATA_IP --token-file STATE/token --allow 10.70.0.0/16
//
// and waits until each listens. Down stops every process in the lab's
// namespaces (SIGTERM, then SIGKILL after 2 s), found by namespace, not by
// the PIDs in lab.json (which a reboot makes someone else's).
//
// # What the lab cannot emulate
//
// The kernels the lab is built for offer the tbf, htb and pfifo/bfifo
// qdiscs and neither netem nor red. So the lab has no propagation delay
// (link delays are what veth and the scheduler add, microseconds), no ECN
// marking (switch.ecn is ignored) and no PFC (switch.pfc is ignored: every
// queue drops its tail when full). Dynamic load balancing (spray, flowlet,
// adaptive) falls back to ECMP; a scale-up domain (topology.scale_up) is
// not built; links that fail later than time 0 stay up (those that fail at
// 0 are built down and routed around). Up returns these as notes.
//
// # State
//
// Up writes into Options.StateDir: lab.json (the Lab), token (0600, 32
// random bytes in hex) and agents.yaml (hosts/inventory's format). Down
// finds what to remove by the name prefix, not from lab.json, so it also
// cleans up after a crash.
package nslab
