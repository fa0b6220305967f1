package lab

import (
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// The plan chooses every message's 5-tuple; each transport must put the
// same on the wire (the numbers of a connection at both ends, in the order
// connections open; Homa's message id), or the static paths, the routed
// ideal and analyze would be of other paths than the packets take.
func TestPlanTuplesAreOnTheWire(t *testing.T) {
	for _, tc := range []struct{ kind, conns string }{{"roce", ""}, {"dctcp", ""}, {"tcp", "pool"}, {"homa", ""}} {
		s := leafSpine(8, 4, 2)
		s.Workload = scenario.Workload{Kind: "alltoall", Ranks: 8, QPs: 2, MessageSize: 16 * units.KiB}
		s.Transport.Kind = tc.kind
		if tc.conns != "" {
			s.Transport.TCP.Connections, s.Transport.TCP.PoolSize = tc.conns, 3
		}
		sm, err := Build(job(s, 256*units.KiB))
		if err != nil {
			t.Fatal(tc.kind, err)
		}
		p := sm.Plan
		checked := 0
		for i, m := range p.DAG.Msgs {
			if m.Marker {
				continue
			}
			a, b, sq, dq := sm.tr.tuple(p.Conn[i], int32(i), int(m.Src), int(m.Dst))
			if ps, pd, psq, pdq := p.Tuple(i); a != ps || b != pd || sq != psq || dq != pdq {
				t.Fatalf("%s: message %d: transport (%d, %d, %d, %d), plan (%d, %d, %d, %d)", tc.kind, i, a, b, sq, dq, ps, pd, psq, pdq)
			}
			checked++
		}
		if checked == 0 || (tc.kind != "homa" && len(p.Conns) < 8*7*2) {
			t.Errorf("%s: %d messages, %d connections", tc.kind, checked, len(p.Conns))
		}
	}
}
