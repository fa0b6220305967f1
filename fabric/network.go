package fabric

import (
	"fmt"
	"strconv"

	"fabriclab/counters"
	"fabriclab/internal/ring"
	"fabriclab/sim"
	"fabriclab/units"
)

// Network owns the scheduler, the packet pool, every switch and port, and
// the byte balance that is checked at the end of a run.
type Network struct {
	Sched    *sim.Scheduler
	Pool     Pool
	Seed     uint64
	Switches []*Switch
	// HostPorts[h] is host h's NIC port (nil until connected).
	HostPorts []*Port
	Ports     []*Port

	// observer, when set (SetObserver), hears how long every data packet
	// waited in each switch egress queue and how much of that the queue
	// was paused by PFC (explain mode); nil costs nothing.
	observer Observer
	// dropObserver is observer when it also hears watchdog drops.
	dropObserver DropObserver
	// INT holds the in-band telemetry of the packets that carry it
	// (Packet.INT); switches stamp it at every egress. Empty unless a
	// transport asks for telemetry (HPCC).
	INT INTTable
	// OnDeadlock, when set, hears the first PFC deadlock (deadlock.go): a
	// cycle of egress queues each paused by the next, held for 100 µs.
	OnDeadlock func(*Deadlock)
	deadlock   *Deadlock
	sweep      deadlockSweep
	// OnPause, when set, hears each switch egress queue paused, in place
	// of the deadlock search: a part of a partitioned run, which cannot
	// see the whole fabric, leaves the search to its coordinator
	// (CycleThrough, pausedCycle).
	OnPause func(pt *Port, pr uint8)

	InjectedBytes, InjectedPackets   int64
	DeliveredBytes, DeliveredPackets int64
	DroppedBytes, DroppedPackets     int64
	// TrimmedPackets were cut to their headers (SwitchConfig.Trimming);
	// the bytes cut off are in DroppedBytes.
	TrimmedPackets int64
	// DeliveredData is the payload of the data packets hosts received
	// (retransmitted duplicates included): throughput over a window.
	DeliveredData int64
	// Outbox is what this part of a partitioned run sends the others
	// (partition.go), and OutboxINT the in-band telemetry of its frames;
	// empty otherwise.
	Outbox    []Export
	OutboxINT []INTRecord
	// exported is, by port ID, the frames a port whose far end another
	// part owns has on its wire, by arrival (SetRemote; nil in a run
	// where no link fails); failedAt, by
	// port ID, when a replica port's link last failed (−1: never;
	// SetReplicas).
	exported []*ring.Ring[inFlight]
	failedAt []sim.Time
}

// NewNetwork makes an empty network of nHosts hosts.
func NewNetwork(s *sim.Scheduler, seed uint64, nHosts int) *Network {
	n := &Network{Sched: s, Seed: seed, HostPorts: make([]*Port, nHosts)}
	n.Pool.INT = &n.INT
	prev := s.BeforeRenumber
	s.BeforeRenumber = func() {
		if prev != nil {
			prev()
		}
		n.queueReservedTxDone()
	}
	return n
}

// SetObserver makes o hear every data packet's wait in each switch egress
// queue (explain mode); nil stops it.
func (n *Network) SetObserver(o Observer) {
	n.observer = o
	n.dropObserver, _ = o.(DropObserver)
	for _, pt := range n.Ports {
		pt.observed = o != nil
	}
}

// queueReservedTxDone schedules every frame end a port reserved and did
// not schedule (Port.sending), before the scheduler renumbers.
func (n *Network) queueReservedTxDone() {
	for _, pt := range n.Ports {
		if pt.sending() {
			pt.queueTxDone()
		}
	}
}

// AddSwitch creates a switch. Its ECMP seed mixes the network seed and
// ecmpSeed with the switch id so that switches hash independently.
func (n *Network) AddSwitch(name, tier string, cfg *SwitchConfig, ecmpSeed uint64) *Switch {
	id := len(n.Switches)
	seed := mix64(ecmpSeed ^ mix64(uint64(id)+1))
	if cfg.Polarized {
		seed = mix64(ecmpSeed) // every switch hashes alike
	}
	s := &Switch{ID: id, name: name, Tier: tier, cfg: cfg, net: n, HashSeed: seed,
		rng: sim.NewRNG(n.Seed, fmt.Sprintf("red/%d", id)),
		lb:  sim.NewRNG(n.Seed, fmt.Sprintf("lb/%d", id))}
	n.Switches = append(n.Switches, s)
	return s
}

func (n *Network) newPort(owner Node, sw *Switch, tier string, rate units.Rate, delay sim.Time) *Port {
	pt := &Port{Owner: owner, sw: sw, Tier: tier, Rate: rate, Delay: delay, net: n, ID: len(n.Ports), observed: n.observer != nil}
	if (8e12)%int64(rate) == 0 {
		pt.psPerB = 8e12 / int64(rate)
	}
	if sw != nil {
		pt.Index = len(sw.Ports)
		sw.Ports = append(sw.Ports, pt)
		delay += sw.cfg.ForwardingLatency
		pt.Delay = delay
		if sw.cfg.ECN {
			k0, k1 := sw.cfg.KMin, sw.cfg.KMax
			if sw.cfg.ECNRefRateBps > 0 {
				k0 = k0 * int64(rate) / sw.cfg.ECNRefRateBps
				k1 = k1 * int64(rate) / sw.cfg.ECNRefRateBps
			}
			if k1 <= k0 {
				k1 = k0 + 1
			}
			pt.kmin, pt.kmax, pt.pmax = k0, k1, sw.cfg.PMax
		}
	}
	n.Ports = append(n.Ports, pt)
	return pt
}

// setIngress sizes a switch port's PFC thresholds now that both ends exist.
func setIngress(pt *Port) {
	sw := pt.sw
	if sw == nil {
		return
	}
	cfg := sw.cfg
	pt.xoff, pt.xon = cfg.XOFF, cfg.XON
	pt.headroom = cfg.Headroom
	if pt.headroom == 0 {
		pt.headroom = AutoHeadroom(pt.Rate, max(pt.Delay, pt.Peer.Delay), cfg.MaxPacketWire)
	}
	for _, l := range cfg.Lossless {
		if l {
			sw.headroom += pt.headroom
		}
	}
}

// CheckBuffers reports a switch whose PFC headroom reservations leave no
// shared buffer: lossless traffic could then not be admitted at all.
func (n *Network) CheckBuffers() error {
	for _, s := range n.Switches {
		if s.headroom > 0 && s.sharedLimit() < 2*s.cfg.MaxPacketWire+max(s.cfg.XOFF-s.cfg.XON, s.cfg.MaxPacketWire) {
			return fmt.Errorf("switch %s: the PFC headroom of its %d ports (%v in all) leaves no shared buffer in %v; raise switch.buffer or set a smaller switch.pfc.headroom",
				s.name, len(s.Ports), units.Size(s.headroom), units.Size(s.cfg.Buffer))
		}
	}
	return nil
}

// AutoHeadroom is the buffer that absorbs what still arrives after a pause
// is sent: the pause frame's own time and a round trip of the link at line
// rate, plus a maximum frame the upstream port may have just started and
// the one that crossed XOFF.
func AutoHeadroom(rate units.Rate, delay sim.Time, maxWire int64) int64 {
	rtt := 2*delay + units.SerializationTime(PauseFrameWire, rate)
	return units.BytesIn(rate, rtt) + 2*maxWire
}

// ConnectHost attaches host h to switch sw with a full-duplex link and
// returns the host's port (its owner is set later by SetHost).
func (n *Network) ConnectHost(h int, sw *Switch, rate units.Rate, delay sim.Time) *Port {
	hp := n.newPort(nil, nil, "host", rate, delay)
	hp.host = true
	sp := n.newPort(sw, sw, sw.Tier, rate, delay)
	hp.Peer, sp.Peer = sp, hp
	hp.to = sw // sp.to is the NIC, from SetHost
	setIngress(sp)
	n.HostPorts[h] = hp
	return hp
}

// ConnectSwitches joins a and b with a full-duplex link and returns a's and
// b's ports.
func (n *Network) ConnectSwitches(a, b *Switch, rate units.Rate, delay sim.Time) (*Port, *Port) {
	pa := n.newPort(a, a, a.Tier, rate, delay)
	pb := n.newPort(b, b, b.Tier, rate, delay)
	pa.Peer, pb.Peer = pb, pa
	pa.to, pb.to = b, a
	setIngress(pa)
	setIngress(pb)
	return pa, pb
}

// HostName is how ports and counters name host h's NIC.
func HostName(h int) string { return "host" + strconv.Itoa(h) }

// SetHost installs the NIC that owns host h's port and feeds it data.
func (n *Network) SetHost(h int, node Node, f Feeder) {
	pt := n.HostPorts[h]
	pt.Owner = node
	pt.Peer.to = node
	pt.feeder = f
}

// Consume records p as delivered to its destination host and recycles it.
func (n *Network) Consume(p *Packet) {
	n.DeliveredBytes += int64(p.Wire)
	n.DeliveredPackets++
	if p.Kind == Data {
		n.DeliveredData += int64(p.Payload)
	}
	n.Pool.Put(p)
}

// Balance is the byte conservation check: everything hosts injected was
// delivered, dropped or is still queued or on a wire.
func (n *Network) Balance() counters.Conservation {
	var inflight, pk int64
	for _, pt := range n.Ports {
		b, p := pt.inFlight()
		inflight += b
		pk += p
	}
	_ = pk
	c := counters.Conservation{
		InjectedBytes:  n.InjectedBytes,
		DeliveredBytes: n.DeliveredBytes,
		DroppedBytes:   n.DroppedBytes,
		InFlightBytes:  inflight,
	}
	c.OK = c.InjectedBytes == c.DeliveredBytes+c.DroppedBytes+c.InFlightBytes
	return c
}

// PortName describes a port as "owner→peer".
func PortName(pt *Port) (string, string) {
	name := func(nd Node) string {
		if nd == nil {
			return "?"
		}
		return nd.Name()
	}
	return name(pt.Owner), name(pt.Peer.Owner)
}

// Observer watches queueing for explain mode.
type Observer interface {
	// Queued reports that p left switch port pt after waiting wait, of
	// which paused was spent with the queue paused by downstream PFC.
	Queued(p *Packet, pt *Port, wait, paused sim.Time)
}

// DropObserver is an Observer that also hears of the data packets the PFC
// watchdog drops (its drop action) from switch egress port pt.
type DropObserver interface {
	Dropped(p *Packet, pt *Port)
}

// Path is the ports a packet from host src to host dst leaves through on
// the idle fabric, src's NIC port first: the first choice of every
// switch's group (on a symmetric fabric every choice is as long). It
// stops at a switch with no route (or after 64 hops: a loop).
func (n *Network) Path(src, dst int) []*Port {
	pt := n.HostPorts[src]
	if pt == nil {
		return nil
	}
	ports := []*Port{pt}
	for len(ports) < 64 {
		sw, ok := pt.Peer.Owner.(*Switch)
		if !ok || dst >= len(sw.Next) || len(sw.Next[dst]) == 0 {
			break
		}
		pt = sw.Next[dst][0]
		ports = append(ports, pt)
	}
	return ports
}

// BaseRTT is the unloaded round trip from host src to host dst and back:
// a data frame of dataWire bytes serialized and propagated on every hop
// there, a control frame of ctrlWire bytes on every hop back.
func (n *Network) BaseRTT(src, dst int, dataWire, ctrlWire int32) sim.Time {
	var t sim.Time
	for _, pt := range n.Path(src, dst) {
		t += pt.TxTime(dataWire) + pt.Delay
	}
	for _, pt := range n.Path(dst, src) {
		t += pt.TxTime(ctrlWire) + pt.Delay
	}
	return t
}
