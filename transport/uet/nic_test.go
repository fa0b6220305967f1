package uet

// Fabric tests of the NIC adapter on the fabrictest rig, which checks
// after every run that bytes are conserved, no packet leaked and every
// message was delivered exactly once.

import (
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/topo"
	"fabriclab/units"
)

var link100 = topo.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}

func rig(t *testing.T, hosts, spines int, buffer int64, trimming bool, lb LB) (*fabrictest.Rig, *Transport) {
	t.Helper()
	sw := &fabric.SwitchConfig{Buffer: buffer, MaxPacketWire: 4178, Trimming: trimming, TrimWire: 64, TrimPrio: 6}
	r := fabrictest.New(t, 1, fabrictest.LeafSpine(hosts, 4, spines, link100, link100, sw))
	cfg := Config{MTU: 4096, Overhead: 82, DataPrio: 3, CtrlPrio: 6, RTO: 100 * units.Microsecond, LB: lb, Entropies: 64, NSCCOn: true,
		NSCC: NSCCParams{TargetDelay: 3 * units.Microsecond, IncreaseGain: 1, FairIncrease: 1, DecreaseGain: 1, MaxWindow: 1.25}}
	tr := New(r.Net, cfg)
	fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
	return r, tr
}

// An incast into a 256 KiB buffer: with trimming every loss is a NACK and
// a resend of that packet alone (no timeout); without it the drops are
// found by the RTO. Either way every message arrives once.
func TestIncastTrimmedAndDropped(t *testing.T) {
	for _, trim := range []bool{true, false} {
		r, tr := rig(t, 8, 2, 256<<10, trim, Spray)
		for s := 1; s < 8; s++ {
			r.Send(s, 0, int32(s), 1<<20)
		}
		r.Run(-1)
		c := tr.Counters()
		if trim {
			if r.Net.TrimmedPackets == 0 || c.Timeouts != 0 || r.Net.DroppedPackets != 0 {
				t.Errorf("trimming: %d trims, %d timeouts, %d drops; want trims and no timeout or drop", r.Net.TrimmedPackets, c.Timeouts, r.Net.DroppedPackets)
			}
			if c.NACKs != r.Net.TrimmedPackets || c.Retransmits != c.NACKs {
				t.Errorf("trimming: %d NACKs and %d resends for %d trims; want one each", c.NACKs, c.Retransmits, r.Net.TrimmedPackets)
			}
		} else if r.Net.DroppedPackets == 0 || c.Timeouts == 0 {
			t.Errorf("no trimming: %d drops, %d timeouts; want both", r.Net.DroppedPackets, c.Timeouts)
		}
	}
}

// Spraying reorders packets across the spines; the receiver takes them
// in any order and nothing is resent on a lossless-enough fabric.
func TestSprayReordersWithoutResends(t *testing.T) {
	r, tr := rig(t, 8, 4, 32<<20, false, Spray)
	for s := 0; s < 4; s++ {
		r.Send(s, 4+s, int32(s), 4<<20)
	}
	r.Run(-1)
	c := tr.Counters()
	if c.OutOfOrder == 0 {
		t.Error("spraying over 4 spines delivered everything in order")
	}
	if c.Retransmits != 0 || c.Timeouts != 0 {
		t.Errorf("%d resends, %d timeouts", c.Retransmits, c.Timeouts)
	}
}

// A message's last packet is its highest PSN (Hdr[1] the first, Hdr[2]
// the count, as the NIC writes them); trimmed or not, it is data.
func TestLastOfMessage(t *testing.T) {
	for _, c := range []struct {
		psn, first, packets int64
		kind                fabric.Kind
		want                bool
	}{{10, 10, 1, fabric.Data, true}, {12, 10, 3, fabric.Data, true}, {11, 10, 3, fabric.Data, false},
		{10, 10, 3, fabric.Data, false}, {12, 10, 3, fabric.Ack, false}} {
		p := &fabric.Packet{Kind: c.kind, PSN: c.psn}
		p.Hdr[1], p.Hdr[2] = uint64(c.first), uint64(c.packets)
		if got := LastOfMessage(p); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}
