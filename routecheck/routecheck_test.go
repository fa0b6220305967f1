package routecheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fabriclab/fabric"
	"fabriclab/lab"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
)

// load parses a scenario written in dir (with the files it reads) and
// returns its first job of each variant, by name.
func load(t *testing.T, yaml string, files map[string]string) map[string]scenario.Job {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return jobsOf(t, path)
}

func jobsOf(t *testing.T, path string, sets ...string) map[string]scenario.Job {
	t.Helper()
	f, err := scenario.LoadSets(path, sets)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]scenario.Job{}
	for _, j := range f.Jobs() {
		if _, ok := out[j.Variant]; !ok {
			out[j.Variant] = j
		}
	}
	return out
}

// one is the job of a scenario without variants.
func one(t *testing.T, jobs map[string]scenario.Job) scenario.Job {
	t.Helper()
	if len(jobs) != 1 {
		t.Fatalf("%d variants, want 1", len(jobs))
	}
	for _, j := range jobs {
		return j
	}
	panic("unreachable")
}

func check(t *testing.T, j scenario.Job) Report {
	t.Helper()
	r, err := Check(j)
	if err != nil {
		t.Fatalf("%s: %v", j.Variant, err)
	}
	return r
}

func cycles(r Report) [][]string {
	var out [][]string
	for _, f := range r.Findings {
		out = append(out, f.Hops)
	}
	return out
}

// The flows pinned through paths that bounce through leaves close the
// cycle the run finds when it forms (lab TestPFCDeadlockDetected), named
// from its lowest port; the same flows on the switches' routes cannot.
func TestDeadlockCheckPinnedPaths(t *testing.T) {
	jobs := jobsOf(t, "../examples/pfc-deadlock.yaml")
	r := check(t, jobs["bounced"])
	want := [][]string{{"leaf0→spine0", "spine0→leaf1", "leaf1→spine1", "spine1→leaf0"}}
	if got := cycles(r); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("bounced: cycles %v, want %v", got, want)
	}
	f := r.Findings[0]
	if f.Cycle.Prio != 3 || f.At != 0 || r.States != 1 {
		t.Errorf("bounced: priority %d at %v, %d states; want 3 at 0, 1", f.Cycle.Prio, f.At, r.States)
	}
	if got, w := f.String(), "cycle leaf0→spine0 → spine0→leaf1 → leaf1→spine1 → spine1→leaf0 (priority 3)"; got != w {
		t.Errorf("String() = %q, want %q", got, w)
	}
	if r := check(t, jobs["direct"]); len(r.Findings) != 0 || r.Skipped != "" {
		t.Errorf("direct: %v (skipped %q), want no cycle", cycles(r), r.Skipped)
	}
	// Without PFC nothing pauses: no check, no finding.
	off := jobsOf(t, "../examples/pfc-deadlock.yaml", "switch.pfc.enabled=false")["bounced"]
	if r := check(t, off); len(r.Findings) != 0 || !strings.Contains(r.Skipped, "PFC is off") {
		t.Errorf("PFC off: %v, skipped %q", cycles(r), r.Skipped)
	}
}

// Every shipped example but the deadlock one routes without a cycle.
func TestDeadlockCheckExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, path := range files {
		for name, j := range jobsOf(t, path) {
			r := check(t, j)
			got := cycles(r)
			if filepath.Base(path) == "pfc-deadlock.yaml" && name == "bounced" {
				if len(got) != 1 {
					t.Errorf("%s %s: cycles %v, want one", path, name, got)
				}
				continue
			}
			if len(got) != 0 {
				t.Errorf("%s %s: cycles %v, want none", path, name, got)
			}
		}
	}
}

// twoFailures is a leaf-spine of 4 leaves and 2 spines losing leaf0–spine0
// and leaf1–spine1: leaf0 reaches leaf1 only by spine1, which bounces
// through leaf2 or leaf3 to spine0, and back the other way: the shortest
// paths go down and up again and close two cycles (the classic case of
// failures making a Clos deadlock-prone). One failure alone cannot.
const twoFailures = `
name: two-failures
topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 2
  spines: 2
  convergence: 20us
  failures:
    - {from: leaf0, to: spine0, at: %s}
    - {from: leaf1, to: spine1, at: %s}
workload: {kind: alltoall, sizes: {list: [1MiB]}}
`

func TestDeadlockCheckFailures(t *testing.T) {
	want := [][]string{
		{"leaf2→spine0", "spine0→leaf3", "leaf3→spine1", "spine1→leaf2"},
		{"spine0→leaf2", "leaf2→spine1", "spine1→leaf3", "leaf3→spine0"},
	}
	t.Run("at start", func(t *testing.T) {
		r := check(t, one(t, load(t, strings.NewReplacer("%s", "0").Replace(twoFailures), nil)))
		if got := cycles(r); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("cycles %v, want %v", got, want)
		}
		if got, w := r.Findings[0].String(), "cycle leaf2→spine0 → spine0→leaf3 → leaf3→spine1 → spine1→leaf2 (priority 3) with leaf0–spine0, leaf1–spine1 down"; got != w {
			t.Errorf("String() = %q, want %q", got, w)
		}
	})
	t.Run("mid-run", func(t *testing.T) {
		// Down at 100us and 300us, routes converging 20us after each: the
		// cycles appear when the second reconvergence routes around both.
		y := strings.Replace(strings.Replace(twoFailures, "%s", "100us", 1), "%s", "300us", 1)
		r := check(t, one(t, load(t, y, nil)))
		if got := cycles(r); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("cycles %v, want %v", got, want)
		}
		// States: all up; leaf0–spine0 down, then routed around; the same
		// with leaf1–spine1 down, then routed around.
		if r.States != 5 {
			t.Errorf("%d routing states checked, want 5", r.States)
		}
		for _, f := range r.Findings {
			if f.At != sim.Time(320*units.Microsecond) || f.Stale || len(f.Down) != 2 {
				t.Errorf("%s: at %v, stale %v, want at 320us with both down", f, f.At, f.Stale)
			}
		}
		if got, w := r.Findings[0].String(), "cycle leaf2→spine0 → spine0→leaf3 → leaf3→spine1 → spine1→leaf2 (priority 3) from 320us, with leaf0–spine0, leaf1–spine1 down"; got != w {
			t.Errorf("String() = %q, want %q", got, w)
		}
	})
	t.Run("one failure", func(t *testing.T) {
		y := strings.Replace(twoFailures, "    - {from: leaf1, to: spine1, at: %s}\n", "", 1)
		r := check(t, one(t, load(t, strings.Replace(y, "%s", "0", 1), nil)))
		if len(r.Findings) != 0 {
			t.Errorf("one failure: cycles %v, want none", cycles(r))
		}
	})
	t.Run("back up before", func(t *testing.T) {
		// leaf0–spine0 is back up (and routed back) before leaf1–spine1
		// fails: never both down, no cycle.
		y := strings.Replace(strings.Replace(twoFailures, "%s", "100us, until: 200us", 1), "%s", "300us", 1)
		if r := check(t, one(t, load(t, y, nil))); len(r.Findings) != 0 {
			t.Errorf("cycles %v, want none", cycles(r))
		}
	})
}

// A flapping link brings about the same few states again and again: each
// is checked once (examples/link-flap.yaml: all up; down, not yet routed
// around; routed around; back up, not yet routed back).
func TestDeadlockCheckFlapsOnce(t *testing.T) {
	for name, j := range jobsOf(t, "../examples/link-flap.yaml") {
		r := check(t, j)
		if r.States != 4 || len(r.Findings) != 0 || r.Skipped != "" {
			t.Errorf("%s: %d states, cycles %v, skipped %q; want 4, none", name, r.States, cycles(r), r.Skipped)
		}
	}
}

// A routes file that detours through leaves (up, down, up) closes a cycle
// with the ECMP routes the other leaves keep.
func TestDeadlockCheckRoutesFile(t *testing.T) {
	y := `
name: detour
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 2, spines: 2}
switch: {routes_file: routes.txt}
workload: {kind: alltoall, sizes: {list: [1MiB]}}
variants:
  - name: detour
  - name: down
    switch: {routes_file: down.txt}
`
	files := map[string]string{
		// spine0 reaches leaf1's hosts through leaf2, spine1 leaf0's
		// through leaf3.
		"routes.txt": "spine0 2 leaf2\nspine0 3 leaf2\nleaf2 2 spine1\nleaf2 3 spine1\n" +
			"spine1 0 leaf3\nspine1 1 leaf3\nleaf3 0 spine0\nleaf3 1 spine0\n",
		// An explicit table that only picks one uplink: still up, then down.
		"down.txt": "leaf0 2 spine1\nleaf0 3 spine1\n",
	}
	jobs := load(t, y, files)
	want := [][]string{{"spine0→leaf2", "leaf2→spine1", "spine1→leaf3", "leaf3→spine0"}}
	if got := cycles(check(t, jobs["detour"])); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("detour: cycles %v, want %v", got, want)
	}
	if got := cycles(check(t, jobs["down"])); len(got) != 0 {
		t.Errorf("down: cycles %v, want none", got)
	}
}

// A topology file may route anything: a ring of four switches on shortest
// paths has a cycle each way round; a ring of three (every switch next to
// every other) has none.
func TestDeadlockCheckCustomRing(t *testing.T) {
	ring := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("node,s" + string(rune('0'+i)) + ",switch\n")
			b.WriteString("node,host" + string(rune('0'+i)) + ",host\n")
		}
		for i := range n {
			b.WriteString("link,host" + string(rune('0'+i)) + ",s" + string(rune('0'+i)) + ",100Gbps,1us\n")
			b.WriteString("link,s" + string(rune('0'+i)) + ",s" + string(rune('0'+(i+1)%n)) + ",100Gbps,1us\n")
		}
		return b.String()
	}
	y := `
name: ring
topology: {kind: custom, file: ring4.csv, host_link: {rate: 100Gbps}}
workload: {kind: alltoall, sizes: {list: [1MiB]}}
variants:
  - name: four
  - name: three
    topology: {file: ring3.csv}
`
	jobs := load(t, y, map[string]string{"ring4.csv": ring(4), "ring3.csv": ring(3)})
	want := [][]string{{"s0→s1", "s1→s2", "s2→s3", "s3→s0"}, {"s1→s0", "s0→s3", "s3→s2", "s2→s1"}}
	if got := cycles(check(t, jobs["four"])); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("four: cycles %v, want %v", got, want)
	}
	if got := cycles(check(t, jobs["three"])); len(got) != 0 {
		t.Errorf("three: cycles %v, want none", got)
	}
}

// Above MaxWork the check says so instead of building the fabric; a k=16
// fat-tree with a failure is checked, quickly.
func TestDeadlockCheckBounded(t *testing.T) {
	y := `
name: big
topology:
  kind: fat-tree
  k: 16
  host_link: {rate: 400Gbps}
  fabric_link: {rate: 400Gbps}
  failures: [{from: edge0-0, to: agg0-0, at: 100us}]
workload: {kind: alltoall, sizes: {list: [1MiB]}}
`
	j := one(t, load(t, y, nil))
	t0 := time.Now()
	r := check(t, j)
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("k=16 with a failure: %v", took)
	}
	if len(r.Findings) != 0 || r.States != 3 || r.Skipped != "" {
		t.Errorf("k=16: cycles %v, %d states, skipped %q", cycles(r), r.States, r.Skipped)
	}

	spec := *j.Spec
	spec.Topology.K = 64
	j.Spec = &spec
	t0 = time.Now()
	r = check(t, j)
	want := "the fabric's route tables (65536 destinations × 5120 switches) are above the check's bound of 16777216 entries"
	if r.Skipped != want || r.States != 0 {
		t.Errorf("k=64: skipped %q, %d states; want %q", r.Skipped, r.States, want)
	}
	if took := time.Since(t0); took > 100*time.Millisecond {
		t.Errorf("k=64: skipping took %v", took)
	}
}

func TestMayLoop(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"../examples/pfc-deadlock.yaml", true},         // a flow list (with paths)
		{"../examples/link-flap.yaml", true},            // failures
		{"../examples/static-routes.yaml", true},        // a flow list, a routes file
		{"../examples/three-tier-websearch.yaml", true}, // a topology file
		{"../examples/alltoall-dcqcn.yaml", false},
		{"../examples/fattree-permutation.yaml", false},
	} {
		for name, j := range jobsOf(t, tc.path) {
			if got := MayLoop(j.Spec); got != tc.want {
				t.Errorf("%s %s: MayLoop %v, want %v", tc.path, name, got, tc.want)
			}
		}
	}
}

// The check and the run agree: flows on the routes around the two failed
// links deadlock when run, on a cycle the check names before running.
func TestDeadlockCheckAgreesWithRun(t *testing.T) {
	y := strings.NewReplacer("%s", "0", "workload: {kind: alltoall, sizes: {list: [1MiB]}}",
		"workload: {kind: flows, file: flows.txt}\ntransport: {dcqcn: {preset: \"off\"}}\nsim: {time_limit: 20ms}").Replace(twoFailures)
	// Both ways between leaf0 and leaf1 (bounced through leaf2 or leaf3)
	// and between leaf2 and leaf3.
	flows := "0 2 64MiB 0\n1 3 64MiB 0\n2 0 64MiB 0\n3 1 64MiB 0\n4 6 64MiB 0\n5 7 64MiB 0\n" +
		"6 4 64MiB 0\n7 5 64MiB 0\n0 3 64MiB 0\n2 1 64MiB 0\n4 7 64MiB 0\n6 5 64MiB 0\n"
	j := one(t, load(t, y, map[string]string{"flows.txt": flows}))
	r := check(t, j)
	if len(r.Findings) == 0 {
		t.Fatal("the check finds no cycle")
	}
	_, err := lab.Run(context.Background(), j, nil)
	if err == nil || !strings.Contains(err.Error(), "PFC deadlock at ") {
		t.Fatalf("the run: %v, want a PFC deadlock", err)
	}
	msg := err.Error()
	i, k := strings.Index(msg, "priority 3: "), strings.Index(msg, ", each paused")
	if i < 0 || k < i {
		t.Fatalf("the run: %v", err)
	}
	ran := strings.Split(msg[i+len("priority 3: "):k], " → ")
	for _, f := range r.Findings {
		for s := range f.Hops {
			if slices.Equal(append(slices.Clone(f.Hops[s:]), f.Hops[:s]...), ran) {
				return
			}
		}
	}
	t.Errorf("the run deadlocked on %v, which the check did not name (it found %v)", ran, cycles(r))
}

// How a finding says when: from the start with every link up (nothing),
// with links down, and between a change and the reconvergence.
func TestFindingString(t *testing.T) {
	r := newRingForString(t)
	for _, tc := range []struct {
		f    Finding
		want string
	}{
		{Finding{Cycle: r}, "cycle a→b → b→a (priority 3)"},
		{Finding{Cycle: r, Down: []string{"a–b"}}, "cycle a→b → b→a (priority 3) with a–b down"},
		{Finding{Cycle: r, At: sim.Time(10 * units.Microsecond), Down: []string{"a–b", "c–d"}, Routed: []string{"a–b"}, Stale: true},
			"cycle a→b → b→a (priority 3) from 10us, with a–b, c–d down, routes not yet reconverged (still those around a–b)"},
		{Finding{Cycle: r, At: sim.Time(10 * units.Microsecond), Routed: []string{"a–b"}, Stale: true},
			"cycle a→b → b→a (priority 3) from 10us, routes not yet reconverged (still those around a–b)"},
		{Finding{Cycle: r, At: sim.Time(10 * units.Microsecond), Down: []string{"a–b"}, Stale: true},
			"cycle a→b → b→a (priority 3) from 10us, with a–b down, routes not yet reconverged (still those of every link up)"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// newRingForString is a cycle of two ports named a→b and b→a (not a real
// dependency: only its names are used).
func newRingForString(t *testing.T) fabric.DependencyCycle {
	t.Helper()
	net := fabric.NewNetwork(sim.NewScheduler(), 1, 0)
	cfg := &fabric.SwitchConfig{Buffer: 1 << 20, MaxPacketWire: 4178}
	a, b := net.AddSwitch("a", "leaf", cfg, 0), net.AddSwitch("b", "leaf", cfg, 0)
	pa, pb := net.ConnectSwitches(a, b, 400*units.Gbps, 0)
	return fabric.DependencyCycle{Prio: 3, Ports: []*fabric.Port{pa, pb}}
}

// More routing states than MaxStates: the first are checked, and the
// report says where it stopped.
func TestDeadlockCheckManyStates(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: many\ntopology:\n  kind: leaf-spine\n  hosts: 64\n  hosts_per_leaf: 8\n  spines: 8\n  convergence: 10us\n  failures:\n")
	n := 0
	for l := range 8 {
		for s := range 4 {
			n++
			fmt.Fprintf(&b, "    - {from: leaf%d, to: spine%d, at: %dus}\n", l, s, 100*n)
		}
	}
	n++
	fmt.Fprintf(&b, "    - {from: leaf0, to: spine4, at: %dus}\n", 100*n)
	b.WriteString("workload: {kind: alltoall, sizes: {list: [1MiB]}}\n")
	// 1 + 2 × 33 states: all up, then each failure down and routed around.
	r := check(t, one(t, load(t, b.String(), nil)))
	want := "topology.failures bring about more routing states than the check's bound of 64; checked the first 64, those before 3.21ms"
	if r.States != MaxStates || r.Skipped != want {
		t.Errorf("%d states, skipped %q; want %d, %q", r.States, r.Skipped, MaxStates, want)
	}
}
