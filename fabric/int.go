package fabric

import (
	"fabriclab/sim"
	"fabriclab/units"
)

// MaxINTHops is how many switch hops one packet's in-band telemetry
// records (HPCC's INT header holds five; a path longer than that keeps
// its first five).
const MaxINTHops = 5

// INTHop is what a switch egress port stamps on a packet with in-band
// network telemetry as the packet leaves it (HPCC's per-hop record): the
// bytes queued at the port behind it, the bytes the port has transmitted
// so far, the time, and the port's rate.
type INTHop struct {
	QueueBytes int64
	TxBytes    int64
	At         sim.Time
	Rate       units.Rate
	// Port is the stamping port (its index in Network.Ports): a sender
	// comparing two records tells a new path from the same one by it.
	Port int32
}

// INTRecord is one packet's telemetry: its hops, in path order.
type INTRecord struct {
	Hops [MaxINTHops]INTHop
	N    int
}

// INTTable holds the telemetry of the packets that carry it, off the
// packet (a record is 5 × 40 bytes; a packet is 128): a packet names its
// record by Packet.INT (index + 1, 0 = none). Records come from a free
// list, so steady state allocates nothing, and Pool.Put returns a
// packet's record with it; a transport that moves a record from a data
// packet to its ACK clears the data packet's INT first.
type INTTable struct {
	recs []INTRecord
	free []int32
	// Live is how many records are handed out (conservation tests).
	Live int
}

// New hands out an empty record and returns its Packet.INT value.
func (t *INTTable) New() int32 {
	t.Live++
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		t.recs[id-1].N = 0
		return id
	}
	t.recs = append(t.recs, INTRecord{})
	return int32(len(t.recs))
}

// Allocated is how many records were ever made: at most one per packet
// the pool ever made, as only a packet holds one.
func (t *INTTable) Allocated() int { return len(t.recs) }

// Get is record id (id from New, not yet released).
func (t *INTTable) Get(id int32) *INTRecord { return &t.recs[id-1] }

// Release returns record id to the free list.
func (t *INTTable) Release(id int32) {
	t.Live--
	t.free = append(t.free, id)
}

// stamp appends port pt's hop to p's record at now (the packet leaves pt).
func (t *INTTable) stamp(p *Packet, pt *Port, now sim.Time) {
	r := &t.recs[p.INT-1]
	if r.N == MaxINTHops {
		return
	}
	r.Hops[r.N] = INTHop{QueueBytes: pt.total, TxBytes: pt.txBytes, At: now, Rate: pt.Rate, Port: int32(pt.ID)}
	r.N++
}
