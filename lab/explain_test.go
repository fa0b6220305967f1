package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
)

// stormExplain runs explain mode on a small PFC storm: host 3's NIC
// pauses its leaf from 5 µs to 500 µs while host 0 sends 1 MiB to host 3
// and 1 MiB to host 1, and host 2 256 KiB to host 1 (watchdog: "" or the
// rest of switch.pfc), in parts parts.
func stormExplain(t *testing.T, watchdog string, parts int) metrics.SizeResult {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 3 1MiB 0\n0 1 1MiB 0\n2 1 256KiB 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("topology:\n  kind: leaf-spine\n  hosts: 4\n  hosts_per_leaf: 4\n  spines: 0\n  oversubscription: 1\n  pfc_storms: [{host: 3, at: 5us, until: 500us}]\n"+
		"switch: {pfc: {enabled: true%s}}\ntransport: {dcqcn: {preset: \"off\"}}\nsim: {explain: true, time_limit: 50ms, partitions: %d}\nworkload: {kind: flows, file: flows.txt}\n", watchdog, parts)
	f, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), f.Jobs()[0], nil)
	if err != nil || !r.Complete || !r.Conservation.OK {
		t.Fatalf("watchdog %q, %d parts: complete %v err %v conservation %+v", watchdog, parts, r.Complete, err, r.Conservation)
	}
	if r.Explain == nil {
		t.Fatalf("watchdog %q, %d parts: no explanation", watchdog, parts)
	}
	return r
}

// A storming NIC is where the pausing starts: explain mode names its host
// as the pause tree's root (a host sends pause frames only when it
// storms), in the text's roots as in the JSON's, and in parts too, where
// host 3 runs apart from its leaf (3 parts: the leaf goes with host 0)
// and its frames are counted in its own part.
func TestExplainStormingNICIsRoot(t *testing.T) {
	one := stormExplain(t, "", 1)
	x := one.Explain
	t.Logf("roots %v, pause tree %+v", x.Roots, x.PauseTree)
	if !slices.Equal(x.Roots, []string{"host3"}) {
		t.Errorf("roots %q, want [host3]", x.Roots)
	}
	want := []metrics.PauseEdge{{From: "host3", To: "leaf0", Pauses: 50, PausedS: 495e-6}}
	if len(x.PauseTree) != 2 || !reflect.DeepEqual(x.PauseTree[:1], want) || x.PauseTree[1].From != "leaf0" || x.PauseTree[1].To != "host0" {
		t.Errorf("pause tree %+v, want %+v first, then leaf0 pausing host0", x.PauseTree, want)
	}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), `,"roots":["host3"]}`) {
		t.Errorf("JSON %s: no roots [host3] at the end", b)
	}
	three := stormExplain(t, "", 3)
	if !reflect.DeepEqual(three.Explain, x) {
		t.Errorf("3 parts: %+v\none part: %+v", three.Explain, x)
	}
}

// A flow whose packets the PFC watchdog dropped is loss-limited, not
// sender-limited (its delivered packets hardly queued: the watchdog
// emptied the paused queue and they were resent after the storm). Every
// drop of the run is the flow into the storming host's, all at its leaf's
// port toward host 3, listed first; in 3 parts the same.
func TestExplainWatchdogDropsAreLossLimited(t *testing.T) {
	r := stormExplain(t, ", watchdog: {detect: 50us, action: drop, restore: 100us}", 1)
	x := r.Explain
	t.Logf("%d watchdog drops; explanation %+v", r.Totals.WatchdogDrops, *x)
	if r.Totals.WatchdogDrops != 232 {
		t.Errorf("%d watchdog drops, want 232", r.Totals.WatchdogDrops)
	}
	if x.SlowFlows != 2 || x.LossLimited != 1 || x.SenderLimited != 0 || x.Victims != 1 || x.Culprits != 0 || x.Contending != 0 {
		t.Errorf("slow %d: %d loss-limited, %d sender-limited, %d victims, %d culprits, %d contending; want 2: 1, 0, 1, 0, 0",
			x.SlowFlows, x.LossLimited, x.SenderLimited, x.Victims, x.Culprits, x.Contending)
	}
	var lost *metrics.SlowFlow
	for k := range x.Flows {
		if f := &x.Flows[k]; f.Dst == 3 {
			lost = f
		} else if f.Role != "victim" || f.Drops != 0 {
			t.Errorf("flow %d→%d: %s with %d drops, want a victim without", f.Src, f.Dst, f.Role, f.Drops)
		}
	}
	if lost == nil {
		t.Fatalf("the flow into host 3 is not slow: %+v", x.Flows)
	}
	if lost.Role != "loss-limited" || lost.Drops != 232 || len(lost.Links) == 0 ||
		lost.Links[0] != (metrics.QueueStay{Link: "leaf0→host3", Drops: 232}) {
		t.Errorf("the flow into host 3: %s with %d drops, links %+v; want loss-limited with 232, leaf0→host3 first",
			lost.Role, lost.Drops, lost.Links)
	}
	if !slices.Equal(x.Roots, []string{"host3"}) {
		t.Errorf("roots %q, want [host3]", x.Roots)
	}
	three := stormExplain(t, ", watchdog: {detect: 50us, action: drop, restore: 100us}", 3)
	if !reflect.DeepEqual(three.Explain, x) {
		t.Errorf("3 parts: %+v\none part: %+v", three.Explain, x)
	}
}

// The observer's per-packet calls allocate nothing: a drop and a wait at
// the same queue share its stay (its drops fill the stay's padding).
func TestExplainerCountsDropsWithoutAllocating(t *testing.T) {
	e := newExplainer(2)
	p, pt := &fabric.Packet{Msg: 1, Kind: fabric.Data}, &fabric.Port{ID: 7}
	if n := testing.AllocsPerRun(100, func() {
		e.Dropped(p, pt)
		e.Queued(p, pt, 3, 1)
	}); n != 0 {
		t.Errorf("%v allocations per drop and wait", n)
	}
	if e.n[0] != 0 || e.n[1] != 1 || e.stays[1][0] != (stay{port: 7, drops: 101, wait: 303, paused: 101, pkts: 101}) {
		t.Errorf("stays %d %d, %+v", e.n[0], e.n[1], e.stays[1][0])
	}
	// The memory estimate counts stays: they are no larger than before
	// they counted drops.
	type before struct {
		port         int32
		wait, paused sim.Time
		pkts         int32
	}
	if s, b := unsafe.Sizeof(stay{}), unsafe.Sizeof(before{}); s != b {
		t.Errorf("a stay takes %d bytes, %d without its drops", s, b)
	}
}
