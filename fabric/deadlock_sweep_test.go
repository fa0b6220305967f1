package fabric_test

import (
	"context"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/lab"
	"fabriclab/scenario"
)

// The periodic sweep finds a deadlock on its own: with the search at pause
// time off, examples/pfc-deadlock.yaml's bounced flows are still stopped,
// the same cycle named, within a sweep and a confirmation of the moment
// the pause-time search finds it (141.8 µs, lab's TestPFCDeadlockDetected).
func TestDeadlockSweepAlone(t *testing.T) {
	fabric.SearchAtPause(false)
	defer fabric.SearchAtPause(true)
	f, err := scenario.Load("../examples/pfc-deadlock.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range f.Jobs() {
		if j.Variant != "bounced" {
			continue
		}
		r, err := lab.Run(context.Background(), j, nil)
		cycle := "spine0→leaf1 → leaf1→spine1 → spine1→leaf0 → leaf0→spine0"
		if err == nil || !strings.Contains(err.Error(), "PFC deadlock at ") || r.Complete {
			t.Fatalf("bounced: complete %v, err %v", r.Complete, err)
		}
		// The cycle may be named from another of its ports.
		msg := err.Error()
		ok := false
		hops := strings.Split(cycle, " → ")
		for i := range hops {
			rot := strings.Join(append(append([]string{}, hops[i:]...), hops[:i]...), " → ")
			ok = ok || strings.Contains(msg, rot)
		}
		if !ok {
			t.Errorf("sweep named another cycle: %v", err)
		}
		t.Log(msg)
	}
}
