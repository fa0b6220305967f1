package homa

import (
	"fmt"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/units"
)

// TestIdleChangesNothing: the NIC's Idle (the endpoint has no packet to
// send) lets a host port skip frame ends, and changes nothing else
// (fabrictest.IdleMatrix): an incast whose grants pace the senders, one that
// loses packets and repairs them with RESENDs and PROBEs, one under PFC on
// every level, one under PFC on the data levels only (paused NICs still
// send grants: a pause is not idleness), and staggered messages of mixed
// sizes.
func TestIdleChangesNothing(t *testing.T) {
	type setup struct {
		name     string
		buffer   int64
		lossless bool // PFC on every level
		dataOnly bool // PFC on the data levels, the control level lossy
	}
	var cur *fab // the run being built or driven, for state
	state := func(h int) string { return fmt.Sprintf("%+v", *cur.tr.NICs[h].ep) }
	build := func(s setup) func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
		return func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
			p := fabricParams()
			p.ResendTimeout, p.MaxResends = 20*units.Microsecond, 20
			sw := &fabric.SwitchConfig{Buffer: s.buffer, MaxPacketWire: 1500, ForwardingLatency: fFwd}
			if s.lossless || s.dataOnly {
				sw.XOFF, sw.XON = 6000, 3000
				for i := range sw.Lossless {
					sw.Lossless[i] = s.lossless || i != int(p.ControlPrio())
				}
			}
			ctrl := int32(fCtrl)
			if s.dataOnly {
				ctrl = 1500 // control frames long enough for a pause to end during one
			}
			f := attach(t, 1, 9, 9, 1, sw, Config{Params: p, Overhead: fOverhead, ControlWire: ctrl})
			cur = f
			for src := 1; src <= 8; src++ {
				f.SendAt(units.Duration(src)*900*units.Nanosecond, src, 0, int32(src), int64(src)*12_000)
				ring := int64(3000)
				if s.dataOnly {
					ring = 200_000 // scheduled: every paused sender also grants
				}
				f.SendAt(units.Duration(src)*4*units.Microsecond, src, (src%8)+1, int32(100+src), ring)
			}
			hosts := make([]fabrictest.Host, len(f.tr.NICs))
			for h, n := range f.tr.NICs {
				if n != nil { // a typed nil would not be a nil Host
					hosts[h] = n
				}
			}
			return f.Rig, hosts, func() string { return fmt.Sprintf("%+v %+v", f.tr.Counters(), f.tr.Stats()) }
		}
	}
	var cases []fabrictest.IdleCase
	for _, s := range []setup{
		{name: "granted", buffer: 1 << 20},
		{name: "lossy", buffer: 12_000},
		{name: "pfc", buffer: 4 << 20, lossless: true},
		{name: "pfc-data", buffer: 4 << 20, dataOnly: true},
	} {
		cases = append(cases, fabrictest.IdleCase{Name: s.name, Build: build(s), State: state})
	}
	fabrictest.IdleMatrix(t, cases)
}
