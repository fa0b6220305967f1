package lab

import (
	"context"
	"strings"
	"testing"

	"fabriclab/scenario"
)

// Pinned paths that bounce through leaves close a cycle of PFC pauses: the
// run stops when it forms and names the cycle, ports in order; the same
// flows on the switches' own routes complete (examples/pfc-deadlock.yaml).
func TestPFCDeadlockDetected(t *testing.T) {
	f, err := scenario.Load("../examples/pfc-deadlock.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range f.Jobs() {
		r, err := Run(context.Background(), j, nil)
		switch j.Variant {
		case "bounced":
			want := "PFC deadlock at 141.82668us on priority 3: spine0→leaf1 → leaf1→spine1 → spine1→leaf0 → leaf0→spine0, each paused by the next and waiting on it"
			if err == nil || !strings.Contains(err.Error(), want) || r.Complete {
				t.Errorf("bounced: complete %v, err %v", r.Complete, err)
			}
		default:
			if err != nil || !r.Complete {
				t.Errorf("%s: complete %v, err %v", j.Variant, r.Complete, err)
			}
		}
	}
}
