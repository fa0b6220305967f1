package uet

import (
	"fmt"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/units"
)

// TestIdleChangesNothing: the NIC's Idle (no connection in the
// round-robin) lets a host port skip frame ends, and changes nothing
// else (fabrictest.IdleMatrix): an incast with trimming (NACKs and
// resends) and without (drops and RTOs), sprayed traffic, RCCC's credit,
// and a lossless fabric whose PFC pauses the NICs.
func TestIdleChangesNothing(t *testing.T) {
	type setup struct {
		name     string
		buffer   int64
		trim     bool
		lb       LB
		rccc     bool
		lossless bool
	}
	var cur *Transport // the run being built or driven, for state
	state := func(h int) string {
		var b strings.Builder
		for _, q := range cur.NICs[h].send {
			fmt.Fprintf(&b, "%+v\n", *q)
		}
		return b.String()
	}
	build := func(s setup) func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
		return func() (*fabrictest.Rig, []fabrictest.Host, func() string) {
			sw := &fabric.SwitchConfig{Buffer: s.buffer, MaxPacketWire: 4178, Trimming: s.trim, TrimWire: 64, TrimPrio: 6}
			if s.lossless {
				sw.Lossless[3] = true
				sw.XOFF, sw.XON = 64<<10, 56<<10
			}
			r := fabrictest.New(t, 1, fabrictest.LeafSpine(8, 4, 2, link100, link100, sw))
			cfg := Config{MTU: 4096, Overhead: 82, DataPrio: 3, CtrlPrio: 6, RTO: 100 * units.Microsecond, LB: s.lb, Entropies: 64, NSCCOn: true, RCCC: s.rccc,
				NSCC: NSCCParams{TargetDelay: 3 * units.Microsecond, IncreaseGain: 1, FairIncrease: 1, DecreaseGain: 1, MaxWindow: 1.25}}
			tr := New(r.Net, cfg)
			cur = tr
			fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
			for src := 1; src < 8; src++ {
				r.SendAt(units.Duration(src)*700*units.Nanosecond, src, 0, int32(src), int64(src)<<18)
				r.SendAt(units.Duration(src)*3*units.Microsecond, src, (src+3)%8, int32(100+src), 64<<10)
			}
			hosts := make([]fabrictest.Host, len(tr.NICs))
			for h, n := range tr.NICs {
				if n != nil { // a typed nil would not be a nil Host
					hosts[h] = n
				}
			}
			return r, hosts, func() string { return fmt.Sprintf("%+v", tr.Counters()) }
		}
	}
	var cases []fabrictest.IdleCase
	for _, s := range []setup{
		{name: "trimmed", buffer: 256 << 10, trim: true, lb: Spray},
		{name: "dropped", buffer: 256 << 10, lb: Spray},
		{name: "rccc", buffer: 32 << 20, lb: Spray, rccc: true},
		{name: "lossless", buffer: 32 << 20, lb: Spray, lossless: true},
	} {
		cases = append(cases, fabrictest.IdleCase{Name: s.name, Build: build(s), State: state})
	}
	fabrictest.IdleMatrix(t, cases)
}
