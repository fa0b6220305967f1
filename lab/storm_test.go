package lab

import (
	"context"
	"fmt"
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

// The storm and the watchdog in a partitioned run: host 7's NIC storms
// on the second leaf (part 1 of 2), its pauses spread through the spine
// (part 0) to host 0, whose flow to host 5 is the victim; the watchdog
// there reads only the pause frames its port has heard. Victim, trips,
// drops and the host's pause frames exactly as in one part (nothing ties
// here), in 2 parts and in 3, where host 7 runs apart from its leaf.
func TestPFCStormAndWatchdogInParts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 7 4MiB 0\n0 5 4MiB 0\n4 5 1MiB 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		victim, stormed float64
		trips, drops    int64
		pauses          int64 // the storming host's pause frames
	}
	run := func(parts int, watchdog string) (outcome, error) {
		src := fmt.Sprintf("topology:\n  kind: leaf-spine\n  hosts: 8\n  hosts_per_leaf: 4\n  spines: 1\n  oversubscription: 1\n  pfc_storms: [{host: 7, at: 5us, until: 2ms}]\n"+
			"switch: {pfc: {enabled: true%s}}\ntransport: {dcqcn: {preset: \"off\"}}\nsim: {record_flows: true, port_counters: true, time_limit: 50ms, partitions: %d}\nworkload: {kind: flows, file: flows.txt}\n", watchdog, parts)
		f, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), f.Jobs()[0], nil)
		if err != nil {
			return outcome{}, err
		}
		if !r.Complete || !r.Conservation.OK {
			t.Fatalf("%d parts, watchdog %q: complete %v conservation %+v", parts, watchdog, r.Complete, r.Conservation)
		}
		var o outcome
		for _, fl := range r.Records {
			switch {
			case fl.Src == 0 && fl.Dst == 5:
				o.victim = fl.EndS
			case fl.Dst == 7:
				o.stormed = fl.EndS
			}
		}
		o.trips, o.drops = r.Totals.WatchdogTrips, r.Totals.WatchdogDrops
		for _, pc := range r.Ports {
			if pc.Tier == "host" { // host 7 is the one that sends pauses
				o.pauses += pc.PFCPausesSent
			}
		}
		return o, nil
	}
	// In 2 parts host 7 runs with its leaf (hosts 4–7); in 3 it does not
	// (a leaf goes with its first host: host 4 is in the second part,
	// host 7 in the third), and the storm pauses the leaf's port in the
	// leaf's part and counts the host's frames in the host's.
	for _, wd := range []string{"", ", watchdog: {detect: 100us, action: drop, restore: 200us}"} {
		one, err := run(1, wd)
		if err != nil {
			t.Fatal(err)
		}
		if wd == "" && (one.victim < 2e-3 || one.pauses < 2e-3/10e-6) {
			t.Errorf("without a watchdog the victim finished before the storm ended, or the host sent too few pauses: %+v", one)
		}
		if wd != "" && (one.victim > 1e-3 || one.trips == 0 || one.drops == 0) {
			t.Errorf("with the watchdog in one part: %+v", one)
		}
		for _, parts := range []int{2, 3} {
			o, err := run(parts, wd)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("watchdog %q: one part %+v, %d parts %+v", wd, one, parts, o)
			if o != one {
				t.Errorf("watchdog %q: %d parts %+v, one %+v", wd, parts, o, one)
			}
		}
	}
}
