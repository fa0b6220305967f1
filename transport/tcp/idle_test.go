package tcp

import (
	"fmt"
	"testing"

	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
)

// TestIdleChangesNothing: the NIC's Idle (no connection in the
// round-robin) lets a host port skip frame ends, and changes nothing
// else (fabrictest.IdleAB): a lossy mesh with fast retransmits and RTOs
// (DCTCP and Reno), a lossless incast whose NICs PFC pauses, delayed ACKs,
// and staggered starts; each in one run and in 400 slices, with and without
// renumbering every 7 insertions.
func TestIdleChangesNothing(t *testing.T) {
	var saved int64
	build := func(f fixture, renum uint64, send func(r *rig)) func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
		return func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
			r := f.build(t)
			if renum > 0 {
				r.Sched.RenumberAfter(renum)
			}
			send(r)
			hosts := make([]fabrictest.Host, len(r.tr.NICs))
			for h, n := range r.tr.NICs {
				if n != nil { // a typed nil would not be a nil Host
					hosts[h] = n
				}
			}
			return r.Rig, hosts, func() string { s, rc := r.tr.Stats(); return fmt.Sprintf("%+v %+v %+v", r.tr.Counters(), s, rc) }
		}
	}
	mesh := func(r *rig) {
		msgs := 0
		for src := 0; src < 2; src++ {
			for dst := 2; dst < 4; dst++ {
				c := r.tr.Connect(src, dst)
				for k := 0; k < 4; k++ {
					r.post(c, int32(msgs), int64(1000+97*msgs*msgs)%200_000+1)
					msgs++
				}
			}
		}
	}
	incast := func(r *rig) {
		for src := 0; src < 5; src++ {
			c := r.tr.Connect(src, 5)
			m := int32(src)
			r.Expect(m, 1<<20)
			r.Do(sim.Time(src)*3*us, func() { r.tr.Post(c, m, 1<<20) })
		}
	}
	for _, renum := range []uint64{0, 7} {
		for _, drive := range []struct {
			name string
			f    func(*fabrictest.Rig)
		}{{"all", nil}, {"sliced", fabrictest.IdleSliced}} {
			sfx := fmt.Sprintf("/renum%d/%s", renum, drive.name)
			for _, mode := range []Mode{DCTCP, Reno} {
				f := dumbbell()
				f.Buffer, f.K = 6*wire, 3*wire
				f.Params.Mode = mode
				f.Params.MinRTO, f.Params.InitRTO = 200*us, 200*us
				saved += fabrictest.IdleAB(t, fabrictest.IdleCase{Name: "lossy-" + mode.String() + sfx, Build: build(f, renum, mesh), Drive: drive.f})
			}
			f := dumbbell()
			f.Hosts, f.HostsPerLeaf = 6, 3
			f.K, f.Lossless = 0, true
			f.Params.Mode, f.Params.NoECN = Reno, true
			saved += fabrictest.IdleAB(t, fabrictest.IdleCase{Name: "pfc-incast" + sfx, Build: build(f, renum, incast), Drive: drive.f})
			f = dumbbell()
			f.AckEvery, f.AckDelay = 2, 20*us
			saved += fabrictest.IdleAB(t, fabrictest.IdleCase{Name: "delayed-acks" + sfx, Build: build(f, renum, mesh), Drive: drive.f})
		}
	}
	if saved <= 0 && !t.Failed() {
		t.Errorf("Idle saved no event in any scenario: it never said true")
	}
}
