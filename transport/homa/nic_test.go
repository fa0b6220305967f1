package homa

// Homa on the packet-level fabric, on the fabrictest rig (which checks
// bytes, packets and single delivery after every run). The fabric of every
// test: 100 Gb/s links
// (80 ps a byte), 500 ns propagation, 100 ns switch forwarding latency,
// DATA of 1442 B payload + 58 B overhead (1500 B on the wire, 120 ns),
// control frames of 84 B (6.72 ns).
//
// Unloaded RTT between two hosts of one leaf, the paper's definition (first
// bit of a full data packet out → first bit of the grant back), two
// store-and-forward hops each way:
//
//	data   120 + 500 (host link) + 120 + 500 + 100 (switch egress) = 1340 ns
//	grant  6.72 + 500 + 6.72 + 500 + 100                          = 1113.44 ns
//	RTT    2453.44 ns → RTTBytes = 100 Gb/s × RTT = 30668 B
//	Window 22 packets = 31724 B
//
// One-way time of a message alone (the delivery is the arrival of its last
// bit): the first packet is stored once in the switch, then the switch
// egress runs back to back at the same rate as the sender, so
//
//	T(S) = tx(w₀) + Σ tx(wᵢ) + 2·delay + forwarding latency
//
// with wᵢ the wire sizes of S's packets. That holds for long messages too
// when grants come back in time: 22 packets take 2640 ns > RTT, so the
// sender never waits for a grant.

import (
	"fmt"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

const (
	fRate     = 100 * units.Gbps
	fDelay    = 500 * units.Nanosecond
	fFwd      = 100 * units.Nanosecond
	fOverhead = 58
	fCtrl     = 84
	fRTTBytes = 30668
)

func fabricParams() Params {
	p := DefaultParams()
	p.RTTBytes = fRTTBytes
	return p
}

// fab is the fabrictest rig (bytes, packets and single delivery checked
// after every run) with Homa on every host; Send is Transport.Send.
type fab struct {
	*fabrictest.Rig
	tr *Transport
}

// build makes a leaf-spine of hosts (perLeaf per leaf, spines spines) with
// Homa on every host.
func build(t testing.TB, seed uint64, hosts, perLeaf, spines int, buf int64, pol fabric.Policy, p Params) *fab {
	t.Helper()
	cfg := &fabric.SwitchConfig{Buffer: buf, MaxPacketWire: 1500, ForwardingLatency: fFwd, Policy: pol}
	return attach(t, seed, hosts, perLeaf, spines, cfg, Config{Params: p, Overhead: fOverhead, ControlWire: fCtrl})
}

func attach(t testing.TB, seed uint64, hosts, perLeaf, spines int, sw *fabric.SwitchConfig, c Config) *fab {
	t.Helper()
	l := topo.Link{Rate: fRate, Delay: fDelay}
	f := &fab{Rig: fabrictest.New(t, seed, fabrictest.LeafSpine(hosts, perLeaf, spines, l, l, sw))}
	f.tr = New(f.Net, c)
	fabrictest.Attach(f.Rig, &f.tr.Shell, f.tr.Send)
	return f
}

// check adds Homa's own end state to the rig's invariants: msgs messages
// delivered and nothing pending on any endpoint.
func (f *fab) check(t testing.TB, msgs int) {
	t.Helper()
	f.Check()
	if len(f.Delivered) != msgs {
		t.Fatalf("%d of %d messages delivered; stats %+v", len(f.Delivered), msgs, f.tr.Stats())
	}
	if f.tr.Pending() != 0 {
		t.Fatalf("%d messages still pending", f.tr.Pending())
	}
}

// tx is the serialization time of w wire bytes at 100 Gb/s.
func tx(w int64) sim.Time { return units.SerializationTime(units.Size(w), fRate) }

// wireOf is the total wire bytes of a message of s payload bytes and the
// wire size of its first packet.
func wireOf(s int64) (total, first int64) {
	n := (s + mtu - 1) / mtu
	return s + n*fOverhead, min(s, mtu) + fOverhead
}

// alone is T(S) of the header comment: the delivery time of a message of s
// bytes sent at 0 on an idle fabric, between two hosts of one leaf.
func alone(s int64) sim.Time {
	total, first := wireOf(s)
	return tx(first) + tx(total) + 2*fDelay + fFwd
}

// PathRTT follows the fabric: two hops each way within a leaf (the header
// comment's 2453.44 ns), four across the spine (+2 × (120 + 600) ns for
// DATA, +2 × (6.72 + 600) ns for the grant = 5106.88 ns).
func TestFabricRTTBytes(t *testing.T) {
	rtt := 2*tx(1500) + 2*tx(fCtrl) + 4*fDelay + 2*fFwd
	if rtt != 2_453_440 || RTTBytesFor(fRate, rtt) != fRTTBytes || fabricParams().Window() != 22*mtu {
		t.Fatalf("rtt %v, RTTBytes %d, window %d", rtt, RTTBytesFor(fRate, rtt), fabricParams().Window())
	}
	f := build(t, 1, 4, 2, 2, 1<<20, fabric.ECMP, fabricParams())
	if got := PathRTT(f.Topo.Net, 0, 1, 1500, fCtrl); got != rtt {
		t.Fatalf("same-leaf PathRTT %v, want %v", got, rtt)
	}
	if got := PathRTT(f.Topo.Net, 0, 3, 1500, fCtrl); got != 5_106_880 {
		t.Fatalf("cross-leaf PathRTT %v, want 5.10688us", got)
	}
}

// Issue 6: a message of RTTbytes or less completes in one unloaded one-way
// latency plus its serialization, without a grant. 30668 B is 21 full
// packets and one of 386 B (444 B on the wire): T = 120 ns + 31944 B × 80 ps
// + 1000 ns + 100 ns = 3775.52 ns.
func TestFabricShortMessageTakesOneWayLatencyPlusSerialization(t *testing.T) {
	f := build(t, 1, 2, 2, 1, 1<<20, fabric.ECMP, fabricParams())
	f.Send(1, 0, 7, fRTTBytes)
	f.Run(-1)
	f.check(t, 1)
	if alone(fRTTBytes) != 3_775_520 || f.Delivered[7] != alone(fRTTBytes) {
		t.Fatalf("delivered at %v, want %v", f.Delivered[7], alone(fRTTBytes))
	}
	st := f.tr.Stats()
	if st.Grants != 0 || st.DataSent != 22 || st.Acked != 1 || st.Timeouts != 0 {
		t.Fatalf("stats %+v", st)
	}
	if f.tr.DeliveredPayload != fRTTBytes {
		t.Fatalf("delivered payload %d", f.tr.DeliveredPayload)
	}
}

// A long message is paced by grants that arrive in time, so the sender
// never stalls and it completes in exactly T(S) too: 1 MB is 694 packets
// (1040252 B on the wire): 120 ns + 83.22016 µs + 1.1 µs = 84.44016 µs,
// which is size/rate (80 µs) plus the header overhead and less than one RTT
// more.
func TestFabricLongMessageIsNotSlowedByGrants(t *testing.T) {
	const size = 1_000_000
	f := build(t, 1, 2, 2, 1, 1<<20, fabric.ECMP, fabricParams())
	f.Send(1, 0, 3, size)
	f.Run(-1)
	f.check(t, 1)
	want := alone(size)
	if want != 84_440_160 || f.Delivered[3] != want {
		t.Fatalf("delivered at %v, want %v", f.Delivered[3], want)
	}
	total, _ := wireOf(size)
	rtt := 2*tx(1500) + 2*tx(fCtrl) + 4*fDelay + 2*fFwd
	if f.Delivered[3] > tx(total)+rtt {
		t.Fatalf("%v is more than serialization %v + one RTT %v", f.Delivered[3], tx(total), rtt)
	}
	st := f.tr.Stats()
	// One grant per packet after the first, until the grants reach the end:
	// packets 1…672 raise the offset (received + 22 packets ≥ 694 from the
	// 672nd packet on).
	if st.Grants != 672 || st.Resends != 0 || st.Retransmits != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Issue 6 / §3.5: an incast of 8 senders to one receiver on one switch
// (lossy, 1 MiB buffer). Overcommitment k = 3: after every packet the
// receiver handles, the grants it issued went to at most 3 messages, all
// among the 3 not fully granted ones with the fewest remaining bytes, and
// no message has more than Window granted and not received. (Messages that
// fell out of the active set keep the grants they already had until those
// bytes arrive, so more than k can have scheduled bytes in flight for a
// while: the test logs that peak.) All messages complete, no drop, bytes
// balance, and the receiver's link is busy from the first arrival to the
// last: the whole incast ends within 1 % of the time its bytes take on that
// link.
func TestFabricIncastKeepsAtMostKMessagesGrantedAndTheLinkBusy(t *testing.T) {
	const senders, size, k = 8, 256 << 10, 3
	p := fabricParams()
	p.Overcommit = k
	f := build(t, 1, senders+1, senders+1, 1, 1<<20, fabric.ECMP, p)
	rx := f.tr.NICs[0]
	maxOutstanding, maxRaised, checks := 0, 0, 0
	prev := map[MsgID]units.Size{}
	rx.onReceive = func() {
		top := rx.ep.pickActive()
		outstanding, raised := 0, 0
		for _, m := range rx.ep.in {
			if m.granted > p.Unscheduled(m.length) && m.granted > m.received {
				outstanding++
			}
			if m.granted-m.received > p.Window() {
				t.Fatalf("%v has %d bytes granted and not received", m.id, m.granted-m.received)
			}
			g, ok := prev[m.id]
			if !ok {
				g = p.Unscheduled(m.length)
			}
			if m.granted > g && m.granted < m.length {
				raised++
				if !contains(top, m) {
					t.Fatalf("grant to %v outside the active set %s", m.id, dump(top))
				}
			}
			prev[m.id] = m.granted
		}
		maxOutstanding = max(maxOutstanding, outstanding)
		maxRaised = max(maxRaised, raised)
		checks++
	}
	for s := 1; s <= senders; s++ {
		f.Send(s, 0, int32(s), size)
	}
	f.Run(-1)
	f.check(t, senders)
	if maxRaised > k || checks == 0 {
		t.Fatalf("one packet raised the grants of %d messages, k = %d", maxRaised, k)
	}
	if d := f.Net.DroppedPackets; d != 0 {
		t.Fatalf("%d drops", d)
	}
	var last sim.Time
	for _, at := range f.Delivered {
		last = max(last, at)
	}
	total, first := wireOf(size)
	// Lower bound: the first packet arrives at the switch, then every byte of
	// every message crosses the receiver's link back to back.
	ideal := tx(first) + tx(senders*total) + 2*fDelay + fFwd
	eff := float64(ideal) / float64(last)
	t.Logf("incast %d×%d B: last delivery %v, ideal %v (%.2f %%), switch buffer peak %d B, at most %d messages granted by one packet, %d with scheduled bytes in flight; stats %+v",
		senders, size, last, ideal, 100*eff, f.Topo.Edge[0].MaxUsed, maxRaised, maxOutstanding, f.tr.Stats())
	if eff < 0.99 {
		t.Fatalf("receiver link busy only %.2f %% of the incast", 100*eff)
	}
	// SRPT among equal sizes and equal starts: the messages finish one after
	// another, not together (fair sharing would finish all at the end).
	if first := f.Delivered[f.Order[0]]; first > last/2 {
		t.Fatalf("first message done at %v of %v: no SRPT", first, last)
	}
}

// §3.7 on the fabric: a switch buffer of 12 kB (8 frames) cannot hold the
// unscheduled bursts of an 8→1 incast, so packets are dropped; every message
// still completes through RESEND (and PROBE when a message's unscheduled
// packets all vanished), the retransmissions are counted, and bytes balance
// with the drops.
func TestFabricLossIsRepairedByResend(t *testing.T) {
	const senders, size = 8, 64 << 10
	p := fabricParams()
	p.ResendTimeout = 20 * units.Microsecond
	p.MaxResends = 20
	f := build(t, 1, senders+1, senders+1, 1, 12_000, fabric.ECMP, p)
	for s := 1; s <= senders; s++ {
		f.Send(s, 0, int32(s), size)
	}
	f.Run(-1)
	f.check(t, senders)
	c, st := f.tr.Counters(), f.tr.Stats()
	drops := f.Net.DroppedPackets
	t.Logf("drops %d, counters retransmits %d timeouts %d, stats %+v", drops, c.Retransmits, c.Timeouts, st)
	if drops == 0 || c.Retransmits == 0 || c.Timeouts == 0 || st.Resends == 0 {
		t.Fatalf("drops %d, retransmits %d, timeouts %d, resends %d: the test did not exercise loss", drops, c.Retransmits, c.Timeouts, st.Resends)
	}
	if st.Abandoned != 0 {
		t.Fatalf("%d messages abandoned", st.Abandoned)
	}
	if f.tr.DeliveredPayload != senders*size {
		t.Fatalf("delivered payload %d", f.tr.DeliveredPayload)
	}
}

// §3.4 on the fabric: a short message sent while a long one streams to the
// same receiver travels at the unscheduled (highest) level and overtakes the
// long message's scheduled packets in the switch, so it finishes within one
// packet time (120 ns) of its time alone; the long message is late only by
// the short one's bytes. From another sender the long one's packets only
// meet it in the switch; from the same sender the sender's SRPT puts it next
// on the wire too.
func TestFabricShortMessageOvertakesLongOne(t *testing.T) {
	const long, short = 4_000_000, 10_000
	start := 100 * units.Microsecond
	for _, src := range []int{2, 1} {
		t.Run(fmt.Sprintf("short from host %d", src), func(t *testing.T) {
			f := build(t, 1, 3, 3, 1, 1<<20, fabric.ECMP, fabricParams())
			f.Send(1, 0, 1, long)
			f.SendAt(start, src, 0, 2, short)
			f.Run(-1)
			f.check(t, 2)
			fct := f.Delivered[2] - start
			slack := tx(1500)
			if src == 1 {
				slack *= 2 // one long packet on the sender's wire, one in the switch
			}
			shortWire, _ := wireOf(short)
			t.Logf("short FCT %v (alone %v), long %v (alone %v)", fct, alone(short), f.Delivered[1], alone(long))
			if fct > alone(short)+slack {
				t.Fatalf("short message took %v, alone %v", fct, alone(short))
			}
			if f.Order[0] != 2 {
				t.Fatal("the long message finished first")
			}
			if f.Delivered[1] > alone(long)+tx(shortWire)+slack {
				t.Fatalf("long message done at %v, alone %v", f.Delivered[1], alone(long))
			}
		})
	}
}

// mix runs a seeded random workload on two leaves of 4 hosts and 2 spines
// with per-packet random spraying (the switches' seeded streams) and a
// 60 kB buffer (some drops), and returns the delivery time of each message.
func mix(t testing.TB, seed uint64) ([]sim.Time, Stats) {
	p := fabricParams()
	p.ResendTimeout = 50 * units.Microsecond
	p.MaxResends = 20
	f := build(t, seed, 8, 4, 2, 60_000, fabric.SprayRandom, p)
	rng := sim.NewRNG(seed, "homa-test-mix")
	const msgs = 60
	for i := range msgs {
		src := rng.IntN(8)
		dst := (src + 1 + rng.IntN(7)) % 8
		size := int64(1 + rng.IntN(200_000))
		f.SendAt(sim.Time(rng.IntN(50_000))*units.Nanosecond, src, dst, int32(i), size)
	}
	f.Run(-1)
	f.check(t, msgs)
	out := make([]sim.Time, msgs)
	for i := range out {
		out[i] = f.Delivered[int32(i)]
	}
	return out, f.tr.Stats()
}

// Same seed, same delivery times (to the picosecond) and same counters.
func TestFabricSameSeedSameResult(t *testing.T) {
	a, sa := mix(t, 5)
	b, sb := mix(t, 5)
	if !reflect.DeepEqual(a, b) || sa != sb {
		t.Fatalf("same seed, different runs:\n%v\n%v", a, b)
	}
	c, _ := mix(t, 6)
	if reflect.DeepEqual(a, c) {
		t.Fatal("another seed gave the same run: the seed is not used")
	}
	t.Logf("stats %+v", sa)
}

// With PFC on every level Homa uses and small XOFF thresholds, the
// incast's unscheduled bursts pause the senders instead of being dropped:
// the NICs hold a paused level's packets back (Pull returns nil) and
// everything completes without loss.
func TestFabricIncastUnderPFC(t *testing.T) {
	const senders, size = 8, 64 << 10
	cfg := &fabric.SwitchConfig{Buffer: 4 << 20, XOFF: 6000, XON: 3000, MaxPacketWire: 1500, ForwardingLatency: fFwd}
	for i := range cfg.Lossless {
		cfg.Lossless[i] = true
	}
	f := attach(t, 1, senders+1, senders+1, 1, cfg, Config{Params: fabricParams(), Overhead: fOverhead})
	for s := 1; s <= senders; s++ {
		f.Send(s, 0, int32(s), size)
	}
	f.Run(-1)
	f.check(t, senders)
	var pauses int64
	for _, pt := range f.Net.Ports {
		pauses += pt.C.PFCPausesRecv
	}
	if pauses == 0 || f.Net.DroppedPackets != 0 || f.tr.Counters().Retransmits != 0 {
		t.Fatalf("pauses %d, drops %d, retransmits %d", pauses, f.Net.DroppedPackets, f.tr.Counters().Retransmits)
	}
	if f.tr.Config().ControlWire != DefaultControlWire {
		t.Fatalf("control wire %d", f.tr.Config().ControlWire)
	}
	t.Logf("%d pauses", pauses)
}

// Header fields survive the trip through fabric.Packet.
func TestFabricPacketRoundTrip(t *testing.T) {
	f := build(t, 1, 2, 2, 1, 1<<20, fabric.ECMP, fabricParams())
	n := f.tr.NICs[0]
	m3 := int64(-3)
	minus3 := uint64(m3)
	for _, pk := range []Packet{
		{Kind: Data, Src: 0, Dst: 1, ID: MsgID{Client: 0, RPC: 1<<63 | 5, Reply: false}, Length: 99999, Offset: 2884, Bytes: 1442, Prio: 6, Retransmit: true},
		{Kind: Resend, Src: 0, Dst: 1, ID: MsgID{Client: 1, RPC: minus3, Reply: true}, Offset: 1442, Bytes: 4000, Prio: 7, GrantPrio: 2},
		{Kind: Probe, Src: 0, Dst: 1, ID: MsgID{Client: 0, RPC: 12}, Length: 1 << 40, Offset: 7 * 1442, Prio: 7},
	} {
		var p fabric.Packet
		n.encode(&p, &pk)
		got := decode(&p)
		want := pk
		want.ID.RPC = uint64(int64(int32(pk.ID.RPC))) // the id is the caller's int32
		if got != want {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
		if (pk.Kind == Data) != (p.Kind == fabric.Data) || p.SrcQP != p.Msg {
			t.Fatalf("fabric kind %v, SrcQP %d for %v", p.Kind, p.SrcQP, pk.Kind)
		}
	}
}

// The hot path allocates nothing per packet: a steady stream (one long
// message, and an 8→1 incast of long messages, grants and SRPT included)
// runs 10 µs slices (83 data packets and their grants each) without
// a single allocation.
func TestFabricSteadyStreamDoesNotAllocate(t *testing.T) {
	for _, senders := range []int{1, 8} {
		f := build(t, 1, senders+1, senders+1, 1, 1<<20, fabric.ECMP, fabricParams())
		for s := 1; s <= senders; s++ {
			f.Send(s, 0, int32(s), 100_000_000)
		}
		f.Run(50 * units.Microsecond)
		before := f.Net.DeliveredPackets
		allocs := testing.AllocsPerRun(50, func() { f.Sched.Run(f.Sched.Now() + 10*units.Microsecond) })
		if pk := f.Net.DeliveredPackets - before; pk < 50*160 {
			t.Fatalf("only %d packets in the measured runs", pk)
		}
		if allocs != 0 {
			t.Fatalf("%d senders: %v allocations per 10 µs of steady stream", senders, allocs)
		}
	}
}

// BenchmarkFabricIncast: one op is an 8→1 incast of 256 KiB messages.
func BenchmarkFabricIncast(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		f := build(b, 1, 9, 9, 1, 1<<20, fabric.ECMP, fabricParams())
		for s := 1; s <= 8; s++ {
			f.Send(s, 0, int32(s), 256<<10)
		}
		f.Run(-1)
	}
}

// Closed loop: OnDelivered sends the next message from inside the
// receiving NIC's event handling (a nested Send on the same NIC). Ten legs
// of 5000 B bounce between hosts 0 and 1. Each reply waits only for the ACK
// of the message just delivered (84 B, 6.72 ns: control goes first), so leg
// k ≥ 1 takes exactly T(5000) + 6.72 ns.
func TestFabricPingPongFromTheDeliveryCallback(t *testing.T) {
	const size, legs = 5000, 10
	f := build(t, 1, 2, 2, 1, 1<<20, fabric.ECMP, fabricParams())
	var times []sim.Time
	f.OnDelivered = func(msg int32, now sim.Time) {
		times = append(times, now)
		if k := int(msg) + 1; k < legs {
			f.Send(1-k%2, k%2, int32(k), size) // leg k: host 1−k%2 → host k%2
		}
	}
	f.Send(1, 0, 0, size)
	f.Run(-1)
	if len(times) != legs {
		t.Fatalf("%d legs delivered", len(times))
	}
	want := alone(size) + (legs-1)*(alone(size)+tx(fCtrl))
	if times[legs-1] != want {
		t.Fatalf("last leg at %v, want %v", times[legs-1], want)
	}
}

// A DATA packet ends its message when its offset plus bytes is the
// message's length (as the NIC encodes them: PSN, Hdr[2], Hdr[1]).
func TestLastOfMessage(t *testing.T) {
	n := &NIC{t: &Transport{cfg: Config{Overhead: 82}}}
	for _, c := range []struct {
		offset, bytes, length units.Size
		kind                  Kind
		want                  bool
	}{{0, 1, 1, Data, true}, {8000, 2000, 10000, Data, true}, {0, 8000, 10000, Data, false}, {8000, 2000, 10000, Grant, false}} {
		p := &fabric.Packet{}
		n.encode(p, &Packet{Kind: c.kind, Offset: c.offset, Bytes: c.bytes, Length: c.length})
		if got := LastOfMessage(p); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}
