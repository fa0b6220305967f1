package hosts

import (
	"reflect"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

func TestNotes(t *testing.T) {
	for _, c := range []struct {
		kind, cc string
		want     []string
	}{
		{"tcp", "", nil},
		{"tcp", "bbr", nil},
		{"dctcp", "", nil},
		{"dctcp", "dctcp", nil},
		{"dctcp", "cubic", []string{"transport.kind dctcp runs with congestion control cubic on real hosts (--cc)"}},
		{"roce", "", []string{"transport.kind roce runs as kernel TCP with each kernel's default congestion control on real hosts: transport.dcqcn and transport.hpcc settings are not applied (the real NICs' and switches' behaviour is measured)"}},
		{"uet", "bbr", []string{"transport.kind uet runs as kernel TCP with congestion control bbr on real hosts: transport.uet settings are not applied (the real NICs' and switches' behaviour is measured)"}},
		{"homa", "", nil},
	} {
		s := scenario.Defaults()
		s.Transport.Kind = c.kind
		if got := Notes(s, c.cc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Notes(%s, %q) = %q, want %q", c.kind, c.cc, got, c.want)
		}
	}
}

// What only the simulator does is named in one note; a plain scenario,
// and links down from the start, have none.
func TestNotesSimulatorOnly(t *testing.T) {
	s := scenario.Defaults()
	s.Transport.Kind = "tcp"
	if got := Notes(s, ""); got != nil {
		t.Errorf("plain tcp: %q", got)
	}
	s.Topology.Failures = []scenario.Failure{{}} // down from the start: the fabric as built
	if got := Notes(s, ""); got != nil {
		t.Errorf("a link down from the start: %q", got)
	}
	s.Topology.Failures = append(s.Topology.Failures, scenario.Failure{At: units.Millisecond})
	s.Topology.PFCStorms = []scenario.PFCStorm{{}}
	s.Sim.Explain = true
	s.Sim.Telemetry.Ports = scenario.Pick{Top: 4}
	want := []string{"topology.failures during the run, topology.pfc_storms, sim.telemetry, sim.explain: the simulator's only; real hosts fail no link, storm no port, and record no telemetry over time or explanation (each row has the hosts' counters over the run)"}
	if got := Notes(s, ""); !reflect.DeepEqual(got, want) {
		t.Errorf("Notes = %q\nwant %q", got, want)
	}
}
