package tcp

import (
	"fmt"
	"strings"
	"testing"

	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
)

// TestIdleChangesNothing: the NIC's Idle (no connection in the
// round-robin) lets a host port skip frame ends, and changes nothing
// else (fabrictest.IdleMatrix): a lossy mesh with fast retransmits and
// RTOs (DCTCP with ECN, Reno without), a lossless incast whose NICs PFC
// pauses, lossless traffic both ways (paused NICs with ACKs to send),
// delayed ACKs, and staggered starts.
func TestIdleChangesNothing(t *testing.T) {
	var cur *rig // the run being built or driven, for State
	state := func(h int) string {
		var b strings.Builder
		for _, q := range cur.tr.NICs[h].send {
			fmt.Fprintf(&b, "%+v %+v\n", *q, *q.s)
		}
		for _, q := range cur.tr.NICs[h].recv {
			fmt.Fprintf(&b, "%+v %+v\n", *q, *q.r)
		}
		return b.String()
	}
	var cases []fabrictest.IdleCase
	add := func(name string, f fixture, send func(r *rig)) {
		cases = append(cases, fabrictest.IdleCase{Name: name, State: state, Build: func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
			r := f.build(t)
			cur = r
			send(r)
			hosts := make([]fabrictest.Host, len(r.tr.NICs))
			for h, n := range r.tr.NICs {
				if n != nil { // a typed nil would not be a nil Host
					hosts[h] = n
				}
			}
			return r.Rig, hosts, func() string { s, rc := r.tr.Stats(); return fmt.Sprintf("%+v %+v %+v", r.tr.Counters(), s, rc) }
		}})
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
	both := func(r *rig) {
		msgs := int32(0)
		for src := 0; src < 4; src++ {
			for dst := 0; dst < 4; dst++ {
				if src != dst {
					r.post(r.tr.Connect(src, dst), msgs, 300<<10)
					msgs++
				}
			}
		}
	}
	for _, mode := range []Mode{DCTCP, Reno} {
		f := dumbbell()
		f.Buffer, f.K = 6*wire, 3*wire
		f.Params.Mode, f.Params.NoECN = mode, mode == Reno
		f.Params.MinRTO, f.Params.InitRTO = 200*us, 200*us
		add("lossy-"+mode.String(), f, mesh)
	}
	f := dumbbell()
	f.Hosts, f.HostsPerLeaf = 6, 3
	f.K, f.Lossless = 0, true
	f.Params.Mode, f.Params.NoECN = Reno, true
	add("pfc-incast", f, incast)
	// Paused hosts that also receive, so that they have ACKs to send while
	// their data waits, in frames long enough for a pause to end during
	// one: a pause is not idleness (a NIC that said idle while paused
	// would miss the end of its pause).
	f = dumbbell()
	f.K, f.Lossless, f.ControlWire = 0, true, 1500
	add("pfc-both-ways", f, both)
	f = dumbbell()
	f.AckEvery, f.AckDelay = 2, 20*us
	add("delayed-acks", f, mesh)
	fabrictest.IdleMatrix(t, cases)
}
