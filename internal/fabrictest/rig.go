// Package fabrictest is the transports' test rig: a small fabric built with
// topo on a scheduler of its own, one transport attached through its
// nic.Shell, helpers to send messages and to run, and the invariants every
// run ends with:
//
//   - bytes are conserved: what hosts injected was delivered, dropped or is
//     still queued or on a wire (fabric.Network.Balance);
//   - no packet leaked from the free list: the packets handed out are the
//     ones in the fabric (injected, not yet delivered or dropped) plus the
//     ones waiting in host ports' queues, and none is left once the run has
//     nothing more to do;
//   - every message is delivered at most once, and once the run has nothing
//     more to do, every message sent exactly once, with the transport's
//     delivered payload adding up to the messages' bytes.
//
// It depends only on the fabric, topo, sim and transport/nic packages, so a
// transport's own (internal) tests can use it:
//
//	r := fabrictest.New(t, 1, fabrictest.LeafSpine(2, 2, 1, link, link, sw))
//	tr := roce.New(r.Net, cfg)
//	fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
//	r.Send(0, 1, 7, 1<<20)
//	r.Run(-1)   // checks the invariants
//	r.Delivered[7]
//
// The rig assumes the fabric loses packets only in switches (no failed host
// links) and that the transport gets every packet it sends from the
// network's pool.
package fabrictest

import (
	"fmt"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/transport/nic"
)

// Rig is one fabric and its transport under test.
type Rig struct {
	T     testing.TB
	Sched *sim.Scheduler
	Topo  *topo.Topology
	Net   *fabric.Network

	// Delivered[msg] is when message msg was delivered; Order lists the
	// messages in the order they were delivered.
	Delivered map[int32]sim.Time
	Order     []int32
	// OnDelivered, if set, hears every delivery after the rig recorded it
	// (a test may send the next message from it).
	OnDelivered func(msg int32, now sim.Time)

	send    func(src, dst int, msg int32, bytes int64)
	payload *int64 // the transport's delivered payload counter
	sent    map[int32]int64
	// sentBytes and sentMin add up the messages' bytes, and their bytes
	// counting an empty message as 1 (what a transport that cannot send
	// nothing sends).
	sentBytes, sentMin int64
}

// New builds spec with topo.Build on a new scheduler; the transport is
// attached next (Attach).
func New(t testing.TB, seed uint64, spec topo.Spec) *Rig {
	t.Helper()
	sc := sim.NewScheduler()
	tp, err := topo.Build(sc, seed, spec)
	if err != nil {
		t.Fatal(err)
	}
	return &Rig{T: t, Sched: sc, Topo: tp, Net: tp.Net, Delivered: map[int32]sim.Time{}, sent: map[int32]int64{}}
}

// LeafSpine is the spec of a leaf-spine of hosts (perLeaf per leaf) and
// spines, with host and fabric links and the switches' configuration.
func LeafSpine(hosts, perLeaf, spines int, host, fab topo.Link, sw *fabric.SwitchConfig) topo.Spec {
	return topo.Spec{Kind: "leaf-spine", Hosts: hosts, HostsPerLeaf: perLeaf, Spines: spines,
		HostLink: host, FabricLink: fab, Switch: sw}
}

// Attach makes the rig the transport's delivery callback and progress
// reader; send is how Send starts a message on it (nil: the test starts
// its messages itself and declares them with Expect).
func Attach[N nic.NIC](r *Rig, s *nic.Shell[N], send func(src, dst int, msg int32, bytes int64)) {
	r.send = send
	r.payload = &s.DeliveredPayload
	s.OnDelivered = r.deliver
}

// PerPair sends every message of a host pair on one connection, opened at
// its first message (a transport with connections: Connect and Post).
func PerPair[C any](connect func(src, dst int) C, post func(c C, msg int32, bytes int64)) func(src, dst int, msg int32, bytes int64) {
	conns := map[[2]int]C{}
	return func(src, dst int, msg int32, bytes int64) {
		c, ok := conns[[2]int{src, dst}]
		if !ok {
			c = connect(src, dst)
			conns[[2]int{src, dst}] = c
		}
		post(c, msg, bytes)
	}
}

// Expect declares message msg of bytes, started by the test through the
// transport's own API: it must be delivered exactly once.
func (r *Rig) Expect(msg int32, bytes int64) {
	if _, dup := r.sent[msg]; dup {
		r.T.Fatalf("fabrictest: message %d sent twice", msg)
	}
	r.sent[msg] = bytes
	r.sentBytes += bytes
	r.sentMin += max(bytes, 1)
}

// Send starts message msg of bytes from src to dst now.
func (r *Rig) Send(src, dst int, msg int32, bytes int64) {
	if r.send == nil {
		r.T.Fatal("fabrictest: Send without a send function (Attach)")
	}
	r.Expect(msg, bytes)
	r.send(src, dst, msg, bytes)
}

// SendAt starts message msg at time at (a scheduler event).
func (r *Rig) SendAt(at sim.Time, src, dst int, msg int32, bytes int64) {
	r.Do(at, func() { r.Send(src, dst, msg, bytes) })
}

// Do runs f at time at (a scheduler event).
func (r *Rig) Do(at sim.Time, f func()) { r.Sched.At(at, call(f), 0) }

type call func()

func (f call) OnEvent(sim.Time, uint64) { f() }

func (r *Rig) deliver(msg int32, now sim.Time) {
	if _, ok := r.sent[msg]; !ok {
		r.T.Errorf("fabrictest: message %d delivered at %v was never sent", msg, now)
	}
	if at, dup := r.Delivered[msg]; dup {
		r.T.Errorf("fabrictest: message %d delivered again at %v (first at %v)", msg, now, at)
		return
	}
	r.Delivered[msg] = now
	r.Order = append(r.Order, msg)
	if r.OnDelivered != nil {
		r.OnDelivered(msg, now)
	}
}

// Run runs the scheduler until end (−1: until nothing is left to do) as
// sim.Scheduler.Run does, then checks the invariants.
func (r *Rig) Run(end sim.Time) sim.Time {
	r.T.Helper()
	now := r.Sched.Run(end)
	r.Check()
	return now
}

// Check verifies the invariants now (see the package doc) and fails the
// test with what broke.
func (r *Rig) Check() {
	r.T.Helper()
	if err := r.Invariants(); err != nil {
		r.T.Fatal(err)
	}
}

// Invariants is the first invariant that does not hold now, or nil.
func (r *Rig) Invariants() error {
	net := r.Net
	b := net.Balance()
	if !b.OK {
		return fmt.Errorf("fabrictest: bytes not conserved: %+v", b)
	}
	live := net.Pool.Live
	inFabric := net.InjectedPackets - net.DeliveredPackets - net.DroppedPackets
	var hostQueued int64
	for _, pt := range net.HostPorts {
		if pt != nil {
			hostQueued += pt.QueueBytes()
		}
	}
	switch waiting := live - inFabric; {
	case inFabric < 0 || waiting < 0:
		return fmt.Errorf("fabrictest: %d packets handed out, %d in the fabric: a packet was returned twice", live, inFabric)
	case waiting > 0 && hostQueued == 0:
		return fmt.Errorf("fabrictest: %d packets leaked (%d handed out, %d in the fabric, host queues empty)", waiting, live, inFabric)
	case waiting == 0 && hostQueued > 0:
		return fmt.Errorf("fabrictest: %d B queued at hosts but no packet waiting", hostQueued)
	}
	if r.Sched.Pending() > 0 {
		return nil
	}
	// Nothing left to do: everything arrived.
	if live != 0 || b.InFlightBytes != 0 {
		return fmt.Errorf("fabrictest: run over with %d packets (%d B) not returned", live, b.InFlightBytes)
	}
	if len(r.Delivered) != len(r.sent) {
		var missing []int32
		for m := range r.sent {
			if _, ok := r.Delivered[m]; !ok {
				missing = append(missing, m)
			}
		}
		return fmt.Errorf("fabrictest: run over with %d of %d messages delivered; missing %v", len(r.Delivered), len(r.sent), missing)
	}
	if p := r.payload; p != nil && (*p < r.sentBytes || *p > r.sentMin) {
		return fmt.Errorf("fabrictest: delivered payload %d B, the messages hold %d B", *p, r.sentBytes)
	}
	return nil
}
