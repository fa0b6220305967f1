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
// the pause-time search finds it (141.8 µs, lab's TestPFCDeadlockDetected),
// in one part and in parts (their coordinator's sweep, lab's
// TestPartitionedDeadlockDetected).
func TestDeadlockSweepAlone(t *testing.T) {
	fabric.SearchAtPause(false)
	defer fabric.SearchAtPause(true)
	for _, parts := range []string{"1", "2", "3"} {
		f, err := scenario.LoadSets("../examples/pfc-deadlock.yaml", []string{"sim.partitions=" + parts})
		if err != nil {
			t.Fatal(err)
		}
		j := f.Jobs()[0]
		if j.Variant != "bounced" {
			t.Fatalf("the first job is %s", j.Variant)
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
		t.Logf("%s parts: %s", parts, msg)
	}
}
