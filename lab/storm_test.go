package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"fabriclab/scenario"
)

// A PFC storm and the watchdog: host 3's NIC keeps pausing its switch
// port. The flow into it stalls, its packets fill host 0's ingress, PFC
// pauses host 0, and host 0's flow to host 1 — a victim that never touches
// host 3 — stalls too. The watchdog (drop) takes the stuck queue out of
// PFC after detect: the victim finishes long before the storm ends; the
// flow into the storming host loses what the watchdog dropped and resends
// it after the storm. Without the watchdog the victim waits for the storm.
func TestPFCStormAndWatchdog(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 3 4MiB 0\n0 1 4MiB 0\n2 1 1MiB 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(watchdog string) (victim, stormed float64, trips, drops int64) {
		src := "topology:\n  kind: leaf-spine\n  hosts: 4\n  hosts_per_leaf: 4\n  spines: 0\n  oversubscription: 1\n  pfc_storms: [{host: 3, at: 5us, until: 2ms}]\n" +
			"switch: {pfc: {enabled: true" + watchdog + "}}\ntransport: {dcqcn: {preset: \"off\"}}\nsim: {record_flows: true, time_limit: 50ms}\nworkload: {kind: flows, file: flows.txt}\n"
		f, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), f.Jobs()[0], nil)
		if err != nil || !r.Complete || !r.Conservation.OK {
			t.Fatalf("watchdog %q: complete %v err %v conservation %+v", watchdog, r.Complete, err, r.Conservation)
		}
		for _, fl := range r.Records {
			switch {
			case fl.Src == 0 && fl.Dst == 1:
				victim = fl.EndS
			case fl.Dst == 3:
				stormed = fl.EndS
			}
		}
		return victim, stormed, r.Totals.WatchdogTrips, r.Totals.WatchdogDrops
	}
	v0, s0, trips0, _ := run("")
	v1, s1, trips1, drops1 := run(", watchdog: {detect: 100us, action: drop, restore: 200us}")
	t.Logf("victim done at %.3f ms without the watchdog, %.3f ms with; the stormed flow at %.3f and %.3f ms; %d trips, %d drops", v0*1e3, v1*1e3, s0*1e3, s1*1e3, trips1, drops1)
	if v0 < 2e-3 {
		t.Errorf("without a watchdog the victim finished at %v s, before the storm ended at 2 ms", v0)
	}
	if v1 > 1e-3 || trips1 == 0 || drops1 == 0 || trips0 != 0 {
		t.Errorf("with the watchdog: victim at %v s, %d trips, %d drops (%d trips without)", v1, trips1, drops1, trips0)
	}
	v2, _, trips2, drops2 := run(", watchdog: {detect: 100us, action: ignore, restore: 200us}")
	if v2 > 1e-3 || trips2 == 0 || drops2 != 0 {
		t.Errorf("watchdog ignoring the pauses: victim at %v s, %d trips, %d drops", v2, trips2, drops2)
	}
	if s0 < 2e-3 || s1 < 2e-3 {
		t.Errorf("the flow into the storming host finished during the storm: %v, %v", s0, s1)
	}
}
