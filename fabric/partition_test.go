package fabric_test

import (
	"testing"

	"fabriclab/sim"
)

// Frames sent toward another part leave through the outbox at their
// arrival time, and taken in by the part that owns the far end they
// arrive when they would have on one fabric: host 0 sends three frames
// back to back through the switch to host 1, host 0's link cut between
// two parts (two copies of the same star).
func TestExportedFramesArriveAsOnOneFabric(t *testing.T) {
	one := newStar(lossy(), us, g400, g400)
	one.hosts[0].queue(1, 3, mtuW, 3)
	one.start()
	one.s.Run(-1)

	a, b := newStar(lossy(), us, g400, g400), newStar(lossy(), us, g400, g400)
	a.net.SetRemote([]int{a.hosts[0].port.ID}, false) // the switch is b's
	a.hosts[0].queue(1, 3, mtuW, 3)
	a.start()
	a.s.Run(-1)
	out := a.net.Outbox
	if len(out) != 3 {
		t.Fatalf("%d exports, want 3", len(out))
	}
	for k := range out {
		if want := sim.Time(k+1)*t400 + us; out[k].At != want || out[k].PFC || out[k].Pkt.PSN != int64(k) {
			t.Errorf("export %d: at %d ps (want %d), PFC %v, PSN %d", k, out[k].At, want, out[k].PFC, out[k].Pkt.PSN)
		}
	}
	if a.net.Pool.Live != 0 {
		t.Errorf("the sending part holds %d packets after exporting them", a.net.Pool.Live)
	}
	for k := range out {
		b.net.Import(&out[k], a.net)
	}
	b.s.Run(-1)
	got, want := b.hosts[1].got, one.hosts[1].got
	if len(got) != len(want) {
		t.Fatalf("%d frames delivered, want %d", len(got), len(want))
	}
	for k := range got {
		if got[k] != want[k] {
			t.Errorf("frame %d: %+v, on one fabric %+v", k, got[k], want[k])
		}
	}
	inj := a.net.InjectedBytes + b.net.InjectedBytes
	del := a.net.DeliveredBytes + b.net.DeliveredBytes
	if inj != 3*mtuW || del != inj {
		t.Errorf("injected %d bytes, delivered %d, want %d both", inj, del, 3*mtuW)
	}
}

// A pause for another part's port leaves through the outbox (at least
// the link's delay ahead), and is counted where it was sent.
func TestExportedPauseLeavesThroughTheOutbox(t *testing.T) {
	a := newStar(pfcConfig(2*mtuW, mtuW), us, g400, g400, g400)
	// Hosts 0 and 1 send to host 2 at once: the switch pauses both.
	a.net.SetRemote([]int{a.sw.Ports[0].ID}, false) // host 0 is another part's
	a.hosts[0].queue(2, 20, mtuW, 3)
	a.hosts[1].queue(2, 20, mtuW, 3)
	a.start()
	a.s.Run(-1)
	var pauses int
	for _, x := range a.net.Outbox {
		if x.PFC {
			pauses++
			if x.Port != int32(a.hosts[0].port.ID) || x.At < us {
				t.Errorf("a pause for port %d at %d ps, want host 0's (%d), a link delay ahead at least", x.Port, x.At, a.hosts[0].port.ID)
			}
		}
	}
	if pauses == 0 {
		t.Error("no pause left through the outbox")
	}
	if c := a.sw.Ports[0].Counters(a.s.Now()); c.PFCPausesSent == 0 {
		t.Error("the switch's port counts no pause sent")
	}
}
