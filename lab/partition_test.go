package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
)

// partJob is variant v of file with sets, split into parts.
func partJob(t *testing.T, file, variant string, parts int, sets ...string) scenario.Job {
	t.Helper()
	f, err := scenario.LoadSets(file, append(sets, fmt.Sprintf("sim.partitions=%d", parts)))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range f.Jobs() {
		if variant == "" || j.Variant == variant {
			return j
		}
	}
	t.Fatalf("%s: no variant %q", file, variant)
	return scenario.Job{}
}

func runPart(t *testing.T, j scenario.Job) metrics.SizeResult {
	t.Helper()
	r, err := Run(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || !r.Conservation.OK {
		t.Fatalf("%d parts: complete %v, conservation %+v", j.Spec.Sim.Partitions, r.Complete, r.Conservation)
	}
	r.WallS = 0
	return r
}

// A flow alone crosses from one part to the other exactly as it crosses
// the one-part fabric: nothing ties, so the closed form holds to the
// picosecond (TestOneFlowAloneMatchesClosedForm).
// Messages alone cross from one part to the other exactly as they cross
// the one-part fabric: nothing ties, so each FCT is the same to the
// picosecond. Over TCP the receiver's part learns each message's framing
// from the sender's (partition_framing.go): several messages follow one
// another on a connection here. Homa's receiver grants from its own part.
func TestPartitionedFlowAloneIsExact(t *testing.T) {
	dir := t.TempDir()
	list := "0 4 64KiB 0\n0 4 1MiB 20us\n0 4 8KiB 200us\n5 1 256KiB 300us\n"
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: flows, file: f.txt}
sim: {record_flows: true}
`
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"roce", "dctcp", "homa"} {
		one := runPart(t, partJob(t, filepath.Join(dir, "s.yaml"), "", 1, "transport.kind="+kind))
		two := runPart(t, partJob(t, filepath.Join(dir, "s.yaml"), "", 2, "transport.kind="+kind))
		if len(one.Records) != 4 || len(two.Records) != 4 {
			t.Fatalf("%s: %d and %d records, want 4", kind, len(one.Records), len(two.Records))
		}
		for i := range one.Records {
			if one.Records[i].FCTS != two.Records[i].FCTS || one.Records[i].FCTS <= 0 {
				t.Errorf("%s, message %d: FCT %v with two parts, %v with one", kind, i, two.Records[i].FCTS, one.Records[i].FCTS)
			}
		}
		// The parts run on to the end of the window the last delivery fell
		// in (a link delay), where the one-part run stops at it: a few ACKs
		// more.
		if two.Events < one.Events || two.Events > one.Events+20 {
			t.Errorf("%s: %d events with two parts, %d with one", kind, two.Events, one.Events)
		}
	}
}

// A link between two parts fails five times under an all-to-all: the
// frames on its wire when it fails are counted lost by the part that sent
// them (and discarded where they were going), routes converge in every
// part alike, and a pause heard before the failure applies again when it
// comes back. Drops, every outage's record and the CCT are those of one
// part.
func TestPartitionedLinkFailures(t *testing.T) {
	flap := "topology.failures=[{from: leaf1, to: spine0, at: 100us, until: 150us, period: 200us, count: 5}]"
	for _, variant := range []string{"ecmp", "adaptive"} {
		one := runPart(t, partJob(t, "../examples/link-flap.yaml", variant, 1, flap))
		if one.Drops == 0 || len(one.Failures) != 5 {
			t.Fatalf("%s: %d drops, %d outages: the test needs losses", variant, one.Drops, len(one.Failures))
		}
		for _, parts := range []int{2, 3} {
			r := runPart(t, partJob(t, "../examples/link-flap.yaml", variant, parts, flap))
			if r.CCTS != one.CCTS || r.Drops != one.Drops || !reflect.DeepEqual(r.Failures, one.Failures) {
				t.Errorf("%s, %d parts: CCT %v, %d drops, outages %+v; one part: %v, %d, %+v", variant, parts, r.CCTS, r.Drops, r.Failures, one.CCTS, one.Drops, one.Failures)
			}
		}
	}
}

// A cycle of PFC pauses through several parts' switches is found by the
// run's coordinator between the windows (partition_deadlock.go): the run
// stops 100 µs after the pause that closed the cycle, as one part does,
// with the same cycle named from that queue, and the same on any number
// of cores; the same flows on the switches' own routes complete. (The
// pauses come some 0.2 µs earlier in parts than in one, their ties
// broken otherwise: 141.576 against 141.827 µs.)
func TestPartitionedDeadlockDetected(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const cycle = "on priority 3: spine0→leaf1 → leaf1→spine1 → spine1→leaf0 → leaf0→spine0, each paused by the next and waiting on it; the run stopped there"
	at := regexp.MustCompile(`^PFC deadlock at ([0-9.]+)us `)
	for _, parts := range []int{1, 2, 3} {
		var first string
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			s, err := Build(partJob(t, "../examples/pfc-deadlock.yaml", "bounced", parts))
			if err != nil {
				t.Fatal(err)
			}
			s.Run(context.Background(), nil)
			err = s.stalled(context.Background())
			if err == nil || s.Trace().Done() {
				t.Fatalf("%d parts on %d cores: done %v, %v", parts, procs, s.Trace().Done(), err)
			}
			m := at.FindStringSubmatch(err.Error())
			if m == nil || !strings.HasSuffix(err.Error(), cycle) || first != "" && err.Error() != first {
				t.Fatalf("%d parts on %d cores: %v", parts, procs, err)
			}
			first = err.Error()
			us, _ := strconv.ParseFloat(m[1], 64)
			// 100 µs after the last pause of the cycle's first queue, in
			// the part that owns it.
			sims := append([]*Sim{s}, s.others...)
			for _, pt := range s.Topo.Net.Ports {
				if a, b := fabric.PortName(pt); a == "spine0" && b == "leaf1" {
					if parts > 1 {
						pt = sims[s.partOf[pt.ID]].Topo.Net.Ports[pt.ID]
					}
					if want := pt.PausedAt(3) + 100*units.Microsecond; sim.Time(math.Round(us*1e6)) != want || s.Trace().Now != want {
						t.Errorf("%d parts: deadlock at %v µs, run's end %v; its first queue paused at %v", parts, us, s.Trace().Now, pt.PausedAt(3))
					}
				}
			}
			if parts > 1 && s.partOf[s.Topo.Net.Switches[0].Ports[0].ID] == s.partOf[s.Topo.Net.Switches[len(s.Topo.Net.Switches)-1].Ports[0].ID] {
				t.Fatalf("%d parts: the cycle's switches all run in one part", parts)
			}
		}
		t.Logf("%d parts: %s", parts, first)
		if r := runPart(t, partJob(t, "../examples/pfc-deadlock.yaml", "direct", parts)); !r.Complete {
			t.Errorf("direct, %d parts: not complete", parts)
		}
	}
	// Links of 150 µs between the parts: windows longer than the 100 µs
	// a cycle must hold are cut there, so what a pause sets comes after
	// its window; the run stops at the deadlock's time, within 2 ns of one
	// part's (722.217 µs).
	var ends [2]sim.Time
	for i, parts := range []int{1, 2} {
		s, err := Build(partJob(t, "../examples/pfc-deadlock.yaml", "bounced", parts, "topology.fabric_link.delay=150us", "switch.buffer=256MiB"))
		if err != nil {
			t.Fatal(err)
		}
		s.Run(context.Background(), nil)
		err = s.stalled(context.Background())
		m := at.FindStringSubmatch(fmt.Sprint(err))
		if m == nil || s.Trace().Done() {
			t.Fatalf("150 µs links, %d parts: %v", parts, err)
		}
		us, _ := strconv.ParseFloat(m[1], 64)
		if ends[i] = s.Trace().Now; ends[i] != sim.Time(math.Round(us*1e6)) {
			t.Errorf("150 µs links, %d parts: the run ended at %v, the deadlock at %v µs", parts, ends[i], us)
		}
	}
	if d := ends[1] - ends[0]; d < -2*units.Nanosecond || d > 2*units.Nanosecond || ends[0] < 700*units.Microsecond {
		t.Errorf("150 µs links: deadlock at %v in one part, %v in two", ends[0], ends[1])
	}
}

// A partitioned run is the same on any number of cores: each part's
// windows and what it takes in at their ends depend only on the parts.
func TestPartitionedRunIsTheSameOnAnyNumberOfCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		parts int
		cc    string
		more  []string
	}{{2, "dcqcn", nil}, {3, "dcqcn", nil}, {2, "hpcc", nil},
		{3, "dcqcn", []string{"sim.telemetry.interval=3us", "sim.telemetry.ports=top 8", "sim.telemetry.flows=top 2"}},
		{3, "all-to-all", nil}, {3, "pairwise", nil},
		{3, "dctcp", []string{"sim.telemetry.interval=3us", "sim.telemetry.ports=top 8", "sim.telemetry.flows=top 2"}}, {2, "homa", nil},
		{3, "flap", nil}, {3, "any-to-any", nil}} {
		parts := c.parts
		var j scenario.Job
		switch c.cc {
		case "all-to-all":
			j = partJob(t, "../examples/alltoall-dcqcn-published.yaml", "dcqcn-default", parts, "workload.sizes.list=[4MiB]", "sim.record_flows=true", "sim.port_counters=true")
		case "pairwise":
			j = partJob(t, "../examples/alltoall-dcqcn.yaml", "dcqcn-default", parts, "workload.algorithm=pairwise", "workload.sizes.list=[4MiB]", "sim.record_flows=true")
		case "any-to-any":
			f, err := scenario.Parse("a.yaml", []byte("topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 2, spines: 2}\nworkload: {kind: any-to-any, clients: 3, servers: 3, depth: 2, duration: 200us, sizes: {list: [32KiB]}}\nsim: {record_flows: true, partitions: 3}\n"))
			if err != nil {
				t.Fatal(err)
			}
			j = f.Jobs()[0]
		case "flap":
			j = partJob(t, "../examples/link-flap.yaml", "adaptive", parts, "topology.failures=[{from: leaf1, to: spine0, at: 100us, until: 150us, period: 200us, count: 5}]", "sim.record_flows=true")
		case "dctcp", "homa":
			j = partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, append([]string{"workload.duration=100us", "sim.record_flows=true", "sim.port_counters=true", "transport.kind=" + c.cc}, c.more...)...)
		default:
			j = partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, append([]string{"workload.duration=100us", "sim.record_flows=true", "sim.port_counters=true", "transport.cc=" + c.cc}, c.more...)...)
		}
		var first metrics.SizeResult
		for i, procs := range []int{1, 2, 1} {
			runtime.GOMAXPROCS(procs)
			r := runPart(t, j)
			if i == 0 {
				first = r
				continue
			}
			if c.more != nil && (r.Telemetry == nil || len(r.Telemetry.Ports) != 8 || len(r.Telemetry.Flows) != 2) {
				t.Fatalf("%d parts: telemetry %+v, want 8 ports and 2 flows", parts, r.Telemetry)
			}
			if !reflect.DeepEqual(first, r) {
				t.Errorf("%d parts, %s: the run on %d cores differs from the run on 1 (%d against %d events)", parts, c.cc, procs, r.Events, first.Events)
			}
		}
	}
}

// Split in parts, a congested run differs from the one-part run only in
// the order of simultaneous events, which shifts packets as another seed
// would: within a few percent on every distribution (measured on
// WebSearch at 1 ms: FCT mean and slowdown p50 within 0.5%, slowdown p99
// within 3%; 31-to-1 incast with PFC, whose pauses cross the parts: CCT
// within 0.1%).
func TestPartitionedRunAgreesWithOnePart(t *testing.T) {
	within := func(what string, got, want, tol float64) {
		t.Helper()
		t.Logf("%s: %.6g with parts, %.6g with one (%+.2f%%)", what, got, want, 100*(got-want)/want)
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Errorf("%s: %.6g with parts, %.6g with one (tolerance %.0f%%)", what, got, want, 100*tol)
		}
	}
	ws := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, "workload.duration=1ms"))
	}
	one := ws(1)
	for _, parts := range []int{2, 4} {
		r := ws(parts)
		if r.Flows != one.Flows {
			t.Fatalf("%d parts: %d flows, %d with one", parts, r.Flows, one.Flows)
		}
		within("websearch events", float64(r.Events), float64(one.Events), 0.01)
		within("websearch FCT mean", r.FCT.Mean, one.FCT.Mean, 0.03)
		within("websearch slowdown p50", r.Slowdown.P50, one.Slowdown.P50, 0.03)
		within("websearch slowdown p99", r.Slowdown.P99, one.Slowdown.P99, 0.10)
		within("websearch ECN marks", float64(r.ECNMarks), float64(one.ECNMarks), 0.10)
		within("websearch CNPs", float64(r.CNPs), float64(one.CNPs), 0.10)
	}
	// Ultra Ethernet, sprayed over REPS entropies, lossy with trimming.
	uet := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, "workload.duration=500us",
			"transport.kind=uet", "transport.uet.lb=reps", "switch.pfc.enabled=false", "switch.trimming=true"))
	}
	one = uet(1)
	r := uet(2)
	within("uet FCT mean", r.FCT.Mean, one.FCT.Mean, 0.03)
	within("uet slowdown p50", r.Slowdown.P50, one.Slowdown.P50, 0.03)
	within("uet slowdown p99", r.Slowdown.P99, one.Slowdown.P99, 0.10)
	// HPCC: every data packet's in-band telemetry crosses with it.
	hpcc := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, "workload.duration=500us", "transport.cc=hpcc"))
	}
	one = hpcc(1)
	r = hpcc(2)
	// 1%: with the records lost on the way (the window's last hops
	// unseen) the mean moved by −2.5% to −2.9%.
	within("hpcc FCT mean", r.FCT.Mean, one.FCT.Mean, 0.01)
	within("hpcc slowdown p50", r.Slowdown.P50, one.Slowdown.P50, 0.03)
	within("hpcc slowdown p99", r.Slowdown.P99, one.Slowdown.P99, 0.10)
	// DCTCP (framing sent to the receivers' parts) and Homa, sprayed.
	for _, kind := range []string{"dctcp", "homa"} {
		tr := func(parts int) metrics.SizeResult {
			sets := []string{"workload.duration=500us", "transport.kind=" + kind}
			if kind == "homa" {
				sets = append(sets, "switch.forwarding=spray-random")
			}
			return runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, sets...))
		}
		one = tr(1)
		r = tr(3)
		within(kind+" FCT mean", r.FCT.Mean, one.FCT.Mean, 0.03)
		within(kind+" slowdown p50", r.Slowdown.P50, one.Slowdown.P50, 0.03)
		within(kind+" slowdown p99", r.Slowdown.P99, one.Slowdown.P99, 0.10)
	}
	ic := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../examples/incast.yaml", "pfc", parts, "workload.sizes.list=[1MiB]"))
	}
	one = ic(1)
	if one.PFCPauses == 0 {
		t.Fatal("the incast paused nothing: the test needs pauses between the parts")
	}
	r = ic(2)
	within("incast CCT", r.CCTS, one.CCTS, 0.01)
	within("incast pauses", float64(r.PFCPauses), float64(one.PFCPauses), 0.25)
	within("incast paused share", r.Balance.PFCPausedShare, one.Balance.PFCPausedShare, 0.25)
	// Collectives whose ranks wait only on what they receive: each
	// message is released in the part that hears the delivery it waits
	// on. The all-to-all (4 QPs a pair, bursts, DCQCN) is congested: its
	// CCT is one flow's and moves with the tie order as with the seed
	// (dcqcn-default at 16 MiB: 399 to 778 µs over seeds 1–4), its FCT
	// mean does not.
	a2a := func(variant string, parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../examples/alltoall-dcqcn-published.yaml", variant, parts, "workload.sizes.list=[16MiB]"))
	}
	one, r = a2a("pfc-only", 1), a2a("pfc-only", 2)
	within("all-to-all pfc-only CCT", r.CCTS, one.CCTS, 0.01)
	one, r = a2a("dcqcn-default", 1), a2a("dcqcn-default", 2)
	if one.ECNMarks == 0 {
		t.Fatal("the all-to-all marked nothing: the test needs congestion")
	}
	within("all-to-all dcqcn-default FCT mean", r.FCT.Mean, one.FCT.Mean, 0.03)
	within("all-to-all dcqcn-default ECN marks", float64(r.ECNMarks), float64(one.ECNMarks), 0.10)
	for _, alg := range []string{"ring", "halving-doubling", "double-binary-tree"} {
		ar := func(parts int) metrics.SizeResult {
			return runPart(t, partJob(t, "../examples/allreduce-algorithms.yaml", alg, parts, "workload.sizes.list=[16MiB]"))
		}
		one, r = ar(1), ar(2)
		within("all-reduce "+alg+" CCT", r.CCTS, one.CCTS, 0.01)
	}
	// Deliveries other parts wait on, sent to them (partition_deps.go):
	// a direct all-to-all of three iterations (each waits on the last;
	// the published example's 32 hosts) and a pairwise one (each step on
	// the rank's own send of the last) on the k=8 fat-tree, congested by
	// ECMP: its CCT is the slowest of 127 steps in a row and moves with
	// the tie order (at 256 KB a pair 8.55 ms in one and three parts,
	// 8.32 ms in two and four; here, at 128 KB, within 1%).
	it := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../examples/alltoall-dcqcn-published.yaml", "dcqcn-default", parts, "workload.sizes.list=[4MiB]", "workload.iterations=3"))
	}
	one, r = it(1), it(2)
	within("all-to-all 3 iterations CCT", r.CCTS, one.CCTS, 0.01)
	within("all-to-all 3 iterations FCT mean", r.FCT.Mean, one.FCT.Mean, 0.01)
	pw := func(parts int) metrics.SizeResult {
		return runPart(t, partJob(t, "../testdata/bench/alltoall-k8-pairwise.yaml", "", parts, "workload.sizes.list=[16384000B]"))
	}
	one, r = pw(1), pw(2)
	within("pairwise k=8 CCT", r.CCTS, one.CCTS, 0.05)
	within("pairwise k=8 FCT mean", r.FCT.Mean, one.FCT.Mean, 0.01)
}

// Deliveries other parts wait on arrive in time: in a pairwise
// all-to-all, every step of which waits on the rank's own send of the
// last (delivered in another part) and on what it received, each message
// starts the very picosecond its last dependency was delivered, in three
// parts as in one. A delivery taken in late would start it late. The
// cases: one QP a pair; four, each transfer closed by a marker at its
// receiver that the sender's next step waits on; host wires shorter than
// the links between parts (the windows end a host wire's delay after
// their start); and a second job started 20 µs in, whose markers wait
// for their earliest start.
func TestPartitionedDependentsStartOnTime(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "later.yaml")
	if err := os.WriteFile(later, []byte(`name: later
topology: {kind: leaf-spine, hosts: 16, hosts_per_leaf: 4, spines: 2}
workload: {kind: alltoall, algorithm: pairwise, ranks: 8, qps: 2, sizes: {list: [1MiB]}}
jobs:
  - {name: b, kind: alltoall, algorithm: pairwise, ranks: 8, host_offset: 8, qps: 2, iterations: 2, start: 20us, sizes: {list: [1MiB]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		parts      int
		sets       []string
	}{
		{"qps 1", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise"}},
		{"qps 4, 2 iterations", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "workload.qps=4", "workload.iterations=2"}},
		// Two parts of whole leaves: the links between them are the
		// fabric's (1 µs), the host wires shorter.
		{"host wires 300ns", "../examples/alltoall-dcqcn.yaml", 2, []string{"workload.algorithm=pairwise", "topology.host_link.delay=300ns"}},
		{"a job started later", later, 3, nil},
		// Receivers that take packets out of order, behind adaptive
		// routing: a message whose last packet came first completes on
		// another (a straggler).
		{"out of order", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "switch.forwarding=adaptive", "nic.out_of_order=accept"}},
		// UET sprayed over its entropies and Homa sprayed by the
		// switches: each completes a message on whichever packet comes
		// last.
		{"out of order, uet", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "transport.kind=uet", "transport.uet.lb=reps", "workload.iterations=2"}},
		{"out of order, homa", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "transport.kind=homa", "switch.forwarding=spray-random"}},
		// DCTCP: a message's last segment is the one carrying its last
		// byte, and behind adaptive routing a segment that fills a hole
		// completes the messages after it.
		{"dctcp", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "transport.kind=dctcp", "workload.iterations=2"}},
		{"out of order, dctcp", "../examples/alltoall-dcqcn.yaml", 3, []string{"workload.algorithm=pairwise", "transport.kind=dctcp", "switch.forwarding=adaptive"}},
	} {
		for _, parts := range []int{1, c.parts} {
			f, err := scenario.LoadSets(c.file, append(c.sets, "workload.sizes.list=[1MiB]", fmt.Sprintf("sim.partitions=%d", parts)))
			if err != nil {
				t.Fatal(err)
			}
			j := f.Jobs()[0]
			s, err := Build(j)
			if err != nil {
				t.Fatal(err)
			}
			s.Run(context.Background(), nil)
			if err := s.stalled(context.Background()); err != nil || !s.Trace().Done() {
				t.Fatalf("%s, %d parts: %v", c.name, parts, err)
			}
			start, end := s.times()
			ready := make([]sim.Time, len(start)) // the last dependency's delivery
			for i := range s.DAG.Msgs {
				for _, k := range s.DAG.Successors(int32(i)) {
					ready[k] = max(ready[k], end[i])
				}
			}
			waited, markers := 0, 0
			for k, n := range s.DAG.DepCount {
				if n == 0 {
					continue
				}
				waited++
				if s.DAG.Msgs[k].Marker {
					markers++
				}
				if want := max(ready[k], s.DAG.Msgs[k].At); start[k] != want {
					t.Fatalf("%s, %d parts: message %d started at %v, its last dependency delivered at %v (earliest start %v)", c.name, parts, k, start[k], ready[k], s.DAG.Msgs[k].At)
				}
			}
			if waited == 0 || strings.HasPrefix(c.name, "qps 4") && markers == 0 {
				t.Fatalf("%s: %d messages waited on others, %d of them markers", c.name, waited, markers)
			}
			if parts > 1 && strings.HasPrefix(c.name, "out of order") {
				n := 0
				for _, o := range append([]*Sim{s}, s.others...) {
					n += o.cross.stragglers
				}
				if n == 0 {
					t.Fatalf("%s: no message's last packet came before another of its packets", c.name)
				}
				t.Logf("%s, %d parts: %d straggling messages", c.name, parts, n)
			}
			if parts > 1 && (s.cross == nil || c.name == "host wires 300ns" && s.cross.hostDelay >= s.lookahead) {
				t.Fatalf("%s: no deliveries crossing, or host wires (%v) not shorter than the lookahead %v", c.name, s.cross != nil && s.cross.hostDelay >= 0, s.lookahead)
			}
		}
	}
}

// What a part cannot see is refused with the key to change.
func TestPartitionsRefused(t *testing.T) {
	const file = "../testdata/bench/permutation-k8.yaml"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"sim.partitions=65"}, "between 0 and 64"},
	} {
		_, err := scenario.LoadSets(file, c.sets)
		if err == nil || !strings.Contains(err.Error(), "sim.partitions") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.sets, err)
		}
	}
	s := leafSpine(2, 1, 1)
	s.Sim.Partitions = 3
	s.Workload = scenario.Workload{Kind: "incast", Senders: 1, Target: 0}
	if _, err := Run(context.Background(), job(s, units.MiB), nil); err == nil || !strings.Contains(err.Error(), "every part needs a host") {
		t.Errorf("3 parts of 2 hosts: %v", err)
	}
}

// Every part holds the whole fabric's structures: the memory estimate
// (sim.memory_limit) counts each.
func TestPartitionedMemoryEstimateCountsEveryPart(t *testing.T) {
	est := func(parts int) int64 {
		e, err := EstimateMemory(partJob(t, "../testdata/bench/permutation-k8.yaml", "", parts))
		if err != nil {
			t.Fatal(err)
		}
		return e.Bytes
	}
	if one, three := est(1), est(3); three != 3*one {
		t.Errorf("3 parts estimated at %d bytes, one at %d", three, one)
	}
}

// A partitioned run stops at the time limit as the one-part run does:
// incomplete, at the limit, with no error.
func TestPartitionedRunStopsAtTheTimeLimit(t *testing.T) {
	for _, parts := range []int{1, 2} {
		j := partJob(t, "../testdata/bench/websearch-320.yaml", "", parts, "workload.duration=100us", "sim.time_limit=150us")
		r, err := Run(context.Background(), j, nil)
		if err != nil {
			t.Fatalf("%d parts: %v", parts, err)
		}
		if r.Complete || r.SimEndS != 150e-6 || !r.Conservation.OK {
			t.Errorf("%d parts: complete %v at %v s, conservation %+v", parts, r.Complete, r.SimEndS, r.Conservation)
		}
	}
}

// A cancelled partitioned run stops, every part with it.
func TestPartitionedRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	j := partJob(t, "../testdata/bench/websearch-320.yaml", "", 2, "workload.duration=1ms")
	r, err := Run(ctx, j, func(float64) {
		if calls++; calls == 3 {
			cancel()
		}
	})
	if err != nil || r.Complete {
		t.Errorf("cancelled: complete %v, %v", r.Complete, err)
	}
	if calls < 3 {
		t.Errorf("progress heard %d times", calls)
	}
}

// Hosts with a scale-up domain: each endpoint goes with its host, so the
// parts split the hosts, not the endpoints (a server of 8 GPUs across the
// two parts). The permutation starts at time 0, so frames cross between
// the parts while they are built, before the first window: they must be
// taken in, not lost (run checks that bytes are conserved).
func TestPartitionedRunWithScaleUp(t *testing.T) {
	s := leafSpine(8, 8, 1)
	s.Topology.GPUsPerServer = 8
	s.Topology.ScaleUp = scenario.Link{Rate: 800 * units.Gbps, Delay: 500 * units.Nanosecond}
	s.Workload = scenario.Workload{Kind: "permutation"}
	one := run(t, s, units.MiB)
	s.Sim.Partitions = 2
	two := run(t, s, units.MiB)
	t.Logf("CCT %v s in two parts, %v s in one; %d and %d events", two.CCTS, one.CCTS, two.Events, one.Events)
	if !two.Complete || math.Abs(two.CCTS-one.CCTS) > 0.01*one.CCTS {
		t.Errorf("two parts: complete %v, CCT %v s; one part %v s", two.Complete, two.CCTS, one.CCTS)
	}
}

// A part that fails stops every part: the panic comes back to the caller,
// and no thread is left spinning.
func TestPartitionedRunPanicStopsEveryPart(t *testing.T) {
	j := partJob(t, "../testdata/bench/websearch-320.yaml", "", 2, "workload.duration=100us")
	s, err := Build(j)
	if err != nil {
		t.Fatal(err)
	}
	o, err := buildWith(j, plan.Together, buildOpts{part: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.others = []*Sim{o}
	// Both parts fail in the same window, with panics of other types:
	// the first is raised again, with its own stack.
	o.Sched.At(20*units.Microsecond, panicker{"part 1 failed"}, 0)
	s.Sched.At(20*units.Microsecond, panicker{errors.New("part 0 failed")}, 0)
	defer func() {
		r := recover()
		p, ok := r.(*PartPanic)
		if !ok || !strings.Contains(fmt.Sprint(p.Value), "failed") || !strings.Contains(string(p.PanicStack()), "panicker") {
			t.Errorf("recovered %v", r)
		}
	}()
	s.Run(context.Background(), nil)
	t.Error("the run returned")
}

type panicker struct{ v any }

func (p panicker) OnEvent(sim.Time, uint64) { panic(p.v) }

// Telemetry in a partitioned run: each port's series comes from the part
// that owns the port, so its interval counts add up to that port's own
// counters (a replica's would be zeros), and a followed flow is read in
// its sender's part (the rate) and its receiver's (what arrived). The
// whole agrees with the one-part run's.
func TestPartitionedTelemetry(t *testing.T) {
	s := leafSpine(32, 8, 4)
	s.Transport.DCQCN.Preset = "default"
	s.Workload = scenario.Workload{Kind: "incast", Senders: 31, Target: 0}
	s.Sim.PortCounters = true
	// Flow 0 goes from host 1 (part 0) to host 0; flow 30 from host 31
	// (part 1).
	s.Sim.Telemetry = scenario.Telemetry{Interval: 2 * units.Microsecond, Ports: scenario.Pick{Top: scenario.MaxTelemetryPorts},
		Flows: scenario.Pick{List: []string{"0", "30"}}, What: []string{"queue", "util", "pause", "ecn", "drops", "rate", "delivered"}}
	one := run(t, s, 256*units.KiB)
	s.Sim.Partitions = 2
	two := run(t, s, 256*units.KiB)
	if one.PFCPauses == 0 {
		t.Fatal("the incast paused nothing: the test needs pauses")
	}
	counts := map[[2]string]metrics.Counters{}
	for _, p := range two.Ports {
		counts[[2]string{p.Node, p.Peer}] = p.Counters
	}
	tel, tel1 := two.Telemetry, one.Telemetry
	if tel == nil || tel1 == nil || len(tel.Ports) == 0 {
		t.Fatal("no telemetry")
	}
	if tel.IntervalS != tel1.IntervalS || tel.Samples < tel1.Samples-1 || tel.Samples > tel1.Samples+1 {
		t.Errorf("%d samples of %v s with two parts, %d of %v s with one", tel.Samples, tel.IntervalS, tel1.Samples, tel1.IntervalS)
	}
	if len(tel.Ports) != len(tel1.Ports) {
		t.Errorf("%d ports' series with two parts, %d with one", len(tel.Ports), len(tel1.Ports))
	}
	var frames, frames1 int64
	for _, ps := range tel.Ports {
		c, ok := counts[[2]string{ps.Node, ps.Peer}]
		if !ok {
			t.Fatalf("%s→%s: a series for a port without counters", ps.Node, ps.Peer)
		}
		var f, m int64
		for k := range ps.PauseFrames {
			f += ps.PauseFrames[k]
			m += ps.ECNMarks[k]
		}
		// What the utilization series says was sent, within the frame
		// that may pass the line rate's share of the last sample.
		var sent float64
		for k, u := range ps.UtilPct {
			span := tel.IntervalS
			if k == len(ps.UtilPct)-1 {
				span = tel.EndS - float64(tel.Samples-1)*tel.IntervalS
			}
			sent += u / 100 * ps.RateGbps * 1e9 / 8 * span
		}
		if d := float64(c.TxBytes) - sent; d < -0.01*float64(c.TxBytes) || d > 2*(4096+256)+0.01*float64(c.TxBytes) {
			t.Errorf("%s→%s: utilization integrates to %.0f bytes, the port sent %d", ps.Node, ps.Peer, sent, c.TxBytes)
		}
		if ps.TxBytes != c.TxBytes || f != c.PFCPausesRecv || m != c.ECNMarks {
			t.Errorf("%s→%s: series of %d bytes, %d pause frames, %d marks; the port's counters %d, %d, %d",
				ps.Node, ps.Peer, ps.TxBytes, f, m, c.TxBytes, c.PFCPausesRecv, c.ECNMarks)
		}
		frames += f
	}
	for _, ps := range tel1.Ports {
		for _, f := range ps.PauseFrames {
			frames1 += f
		}
	}
	if frames == 0 || math.Abs(float64(frames-frames1)) > 0.25*float64(frames1) {
		t.Errorf("%d pause frames in the series with two parts, %d with one", frames, frames1)
	}
	t.Logf("%d samples, %d series, %d pause frames in them (one part: %d samples, %d frames)", tel.Samples, len(tel.Ports), frames, tel1.Samples, frames1)
	if len(tel.Flows) != 2 {
		t.Fatalf("%d flows followed, want 2", len(tel.Flows))
	}
	for i, f := range tel.Flows {
		f1 := tel1.Flows[i]
		if f.ID != f1.ID || f.FCTS <= 0 || math.Abs(f.FCTS-f1.FCTS) > 0.01*f1.FCTS {
			t.Errorf("flow %d: FCT %v s with two parts, flow %d %v s with one", f.ID, f.FCTS, f1.ID, f1.FCTS)
		}
		d := f.Delivered
		if len(d) == 0 || d[len(d)-1] != f.Bytes || len(f.Value) != len(d) {
			t.Fatalf("flow %d: %d rates, delivered %v of %d bytes", f.ID, len(f.Value), d, f.Bytes)
		}
		var rate, rate1 float64
		for k := range d {
			if k > 0 && d[k] < d[k-1] {
				t.Fatalf("flow %d: delivered falls from %d to %d at sample %d", f.ID, d[k-1], d[k], k)
			}
			rate += f.Value[k] / float64(len(d))
		}
		for _, v := range f1.Value {
			rate1 += v / float64(len(f1.Value))
		}
		if rate <= 0 || math.Abs(rate-rate1) > 0.05*rate1 {
			t.Errorf("flow %d: mean rate %.2f Gb/s with two parts, %.2f with one", f.ID, rate, rate1)
		}
		// Half the flow had arrived by the same sample, give or take one.
		half := func(f metrics.FlowSeries) int {
			return f.First + slices.IndexFunc(f.Delivered, func(b int64) bool { return 2*b >= f.Bytes })
		}
		if h, h1 := half(f), half(f1); h < h1-1 || h > h1+1 {
			t.Errorf("flow %d: half delivered at sample %d with two parts, %d with one", f.ID, h, h1)
		}
	}
}

// In parts, the telemetry samples are the fabric's once (each part keeps
// its own ports'), and merging them holds them again: the estimate
// counts them with that copy, not once per part.
func TestPartitionedMemoryEstimateCoversTelemetry(t *testing.T) {
	j := withTelemetry(telemetryCases(t)["incast-pfc"], units.Microsecond, scenario.MaxTelemetryPorts)
	spec := *j.Spec
	spec.Sim.TimeLimit = 200 * units.Microsecond
	spec.Sim.Partitions = 3
	j.Spec = &spec
	s, r := runSim(t, j)
	held := 0
	for _, o := range append([]*Sim{s}, s.others...) {
		tel := o.tel
		held += 8*(cap(tel.queue)+cap(tel.sent)) + cap(tel.paused) + 4*(cap(tel.frames)+cap(tel.marks)+cap(tel.drops)+cap(tel.qprio))
	}
	np := len(s.Topo.Net.Ports)
	held += r.Telemetry.Samples * np * (8 + 8 + 1 + 3*4 + 4*len(s.tel.prios)) // the merge's arrays
	for _, ps := range r.Telemetry.Ports {
		held += 8*(len(ps.QueueBytes)+len(ps.UtilPct)+len(ps.PauseFrames)+len(ps.ECNMarks)+len(ps.Drops)) + len(ps.Paused)
		for _, q := range ps.Priorities {
			held += 8 * len(q.QueueBytes)
		}
	}
	bare := spec
	bare.Sim.Telemetry = scenario.Telemetry{}
	without, err := EstimateMemory(job(&bare, 256*units.KiB))
	if err != nil {
		t.Fatal(err)
	}
	with, err := EstimateMemory(j)
	if err != nil {
		t.Fatal(err)
	}
	est := with.Bytes - without.Bytes
	t.Logf("3 parts, %d samples of %d ports: %d bytes held, %d estimated", r.Telemetry.Samples, np, held, est)
	if est < int64(held) || est > 4*int64(held) {
		t.Errorf("telemetry estimate %d bytes against %d held", est, held)
	}
}

// Explain mode in parts: each part records the waits in the queues it
// owns, and the merged explanation reads every queue and counter from its
// owner: a 31-to-1 incast's slow flows wait on both sides of the cut, and
// the roles, roots and pause tree agree with the one-part run's.
func TestPartitionedExplain(t *testing.T) {
	ex := func(parts int) *metrics.Explanation {
		r := runPart(t, partJob(t, "../examples/incast.yaml", "pfc", parts, "workload.sizes.list=[1MiB]", "sim.explain=true"))
		if r.Explain == nil {
			t.Fatalf("%d parts: no explanation", parts)
		}
		return r.Explain
	}
	one, two := ex(1), ex(2)
	t.Logf("one part: %d slow, %d victims, %d culprits, roots %v; two: %d, %d, %d, %v",
		one.SlowFlows, one.Victims, one.Culprits, one.Roots, two.SlowFlows, two.Victims, two.Culprits, two.Roots)
	if !slices.Equal(one.Roots, two.Roots) || len(two.Roots) == 0 {
		t.Errorf("roots %v with two parts, %v with one", two.Roots, one.Roots)
	}
	if two.SlowFlows != one.SlowFlows || math.Abs(float64(two.Victims-one.Victims)) > 3 || math.Abs(float64(two.Culprits-one.Culprits)) > 3 {
		t.Errorf("two parts: %d slow, %d victims, %d culprits; one: %d, %d, %d", two.SlowFlows, two.Victims, two.Culprits, one.SlowFlows, one.Victims, one.Culprits)
	}
	edges := func(x *metrics.Explanation) map[string]int64 {
		m := map[string]int64{}
		for _, e := range x.PauseTree {
			m[e.From+">"+e.To] = e.Pauses
		}
		return m
	}
	e1, e2 := edges(one), edges(two)
	if len(e1) != len(e2) {
		t.Errorf("%d pause edges with two parts, %d with one", len(e2), len(e1))
	}
	for k, n := range e1 {
		if m, ok := e2[k]; !ok || math.Abs(float64(m-n)) > 0.25*float64(n)+2 {
			t.Errorf("pause edge %s: %d frames with two parts, %d with one", k, m, n)
		}
	}
	// Hosts 16–31 and their leaves are part 1's, leaf0 and host 0 part
	// 0's: a flow from host 16 up waited in queues of both parts.
	both := false
	for _, f := range two.Flows {
		var p0, p1 bool
		for _, l := range f.Links {
			p0 = p0 || strings.HasPrefix(l.Link, "leaf0") || strings.HasPrefix(l.Link, "leaf1")
			p1 = p1 || strings.HasPrefix(l.Link, "leaf2") || strings.HasPrefix(l.Link, "leaf3")
		}
		both = both || p0 && p1
	}
	if !both {
		t.Errorf("no slow flow waited in both parts' queues: %+v", two.Flows)
	}
}

// In parts, the windows end before each telemetry sample whether or not
// the build samples, so "top N" flows, which runs the job first without
// telemetry and then again following the slowest, repeats it exactly
// (Engine.Run checks every end time). Against a run without sim.telemetry
// the windows differ, and with them how ties are broken (frames taken in
// at a window's end are numbered then): the results move as with another
// tie order, within a percent.
func TestPartitionedTelemetryTopFlowsRepeat(t *testing.T) {
	base := []string{"workload.duration=1ms", "transport.cc=hpcc", "sim.record_flows=true"}
	plain := runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", 3, base...))
	tel := runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", 3,
		append(base, "sim.telemetry.interval=1us", "sim.telemetry.ports=top 2", "sim.telemetry.flows=top 2")...))
	if tel.Telemetry == nil || len(tel.Telemetry.Flows) != 2 {
		t.Fatalf("telemetry %+v, want 2 flows", tel.Telemetry)
	}
	if d := tel.FCT.Mean/plain.FCT.Mean - 1; math.Abs(d) > 0.01 || tel.Flows != plain.Flows {
		t.Errorf("with telemetry: %d flows, FCT mean %v; without: %d, %v (%+.2f%%)", tel.Flows, tel.FCT.Mean, plain.Flows, plain.FCT.Mean, 100*d)
	}
}

// At the time limit, a partitioned run samples on to it as the one-part
// run does.
func TestPartitionedTelemetryToTheTimeLimit(t *testing.T) {
	var samples [2]int
	for i, parts := range []int{1, 2} {
		r, err := Run(context.Background(), partJob(t, "../testdata/bench/websearch-320.yaml", "", parts,
			"workload.duration=100us", "sim.time_limit=150us", "sim.telemetry.interval=5us", "sim.telemetry.ports=top 2"), nil)
		if err != nil || r.Telemetry == nil || r.Complete {
			t.Fatalf("%d parts: %v, complete %v, telemetry %v", parts, err, r.Complete, r.Telemetry)
		}
		samples[i] = r.Telemetry.Samples
		if r.Telemetry.EndS != 150e-6 {
			t.Errorf("%d parts: telemetry ends at %v s, want the limit", parts, r.Telemetry.EndS)
		}
	}
	if samples[0] != samples[1] || samples[0] != 30 {
		t.Errorf("%d samples in one part, %d in two, want 30", samples[0], samples[1])
	}
}

// A TCP message's last segment is the one that carries its last byte,
// whatever else it carries: a segment may end several messages (the
// last of them named), a 1-byte message ends one byte after another, and
// messages delivered already are dropped from the front.
func TestPartitionedLastSegment(t *testing.T) {
	k := holdKey{3, 7}
	c := &crossing{ends: map[holdKey][]streamEnd{k: {{0, 1000}, {1, 1001}, {2, 5000}}}}
	end := []sim.Time{-1, -1, -1}
	seg := func(from, to int64) *fabric.Packet {
		return &fabric.Packet{Kind: fabric.Data, Dst: 3, DstQP: 7, PSN: from, Payload: int32(to - from)}
	}
	for _, s := range []struct {
		from, to int64
		msg      int32 // −1: none
	}{{0, 1000, 0}, {999, 1000, 0}, {1000, 2000, 1}, {0, 2000, 1}, {1000, 1001, 1}, {1001, 4000, -1}, {4000, 5000, 2}, {4999, 6000, 2}, {5000, 6000, -1}} {
		m, ok := c.lastSegment(seg(s.from, s.to), end)
		if ok != (s.msg >= 0) || ok && m != s.msg {
			t.Errorf("segment [%d, %d): %d %v, want %d", s.from, s.to, m, ok, s.msg)
		}
	}
	other := seg(0, 1000)
	other.DstQP = 8
	ack := seg(0, 1000)
	ack.Kind = fabric.Ack
	for _, p := range []*fabric.Packet{other, ack} {
		if _, ok := c.lastSegment(p, end); ok {
			t.Errorf("%+v: a last segment", p)
		}
	}
	end[0], end[1] = 10, 10 // delivered: dropped
	if _, ok := c.lastSegment(seg(0, 2000), end); ok || len(c.ends[k]) != 1 {
		t.Errorf("after two deliveries: a last segment %v, %d ends left", ok, len(c.ends[k]))
	}
	end[2] = 20
	if _, ok := c.lastSegment(seg(4000, 5000), end); ok || c.ends[k] != nil {
		t.Errorf("after every delivery: a last segment %v, ends %v", ok, c.ends[k])
	}
}

// Any-to-any writes in parts: each write waits on the one before it in
// its chain, delivered at its server, often in another part, and the
// workload's duration cuts what would start after it, with all that
// waits on it: a part's executor cuts as the sender's does, and the
// trace counts each cut once. The writes completed and the pairs' mean
// rate are those of one part, over TCP and over RoCE; which pair
// completes a write first moves with the tie order.
func TestPartitionedAnyToAny(t *testing.T) {
	for _, kind := range []string{"tcp", "roce"} {
		run := func(parts int) metrics.SizeResult {
			f, err := scenario.Parse("a.yaml", []byte(fmt.Sprintf(`
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 2, spines: 2, host_link: {rate: 10Gbps}, fabric_link: {rate: 40Gbps}}
transport: {kind: %s}
workload: {kind: any-to-any, clients: 3, servers: 3, depth: 2, duration: 1ms, checkpoint: 250us, sizes: {list: [32KiB]}}
sim: {time_limit: 5ms, partitions: %d}
`, kind, parts)))
			if err != nil {
				t.Fatal(err)
			}
			return runPart(t, f.Jobs()[0])
		}
		one := run(1)
		if one.Endpoints == nil || one.Endpoints.Pairs != 9 || len(one.Checkpoints) == 0 {
			t.Fatalf("%s: endpoints %+v, %d checkpoints", kind, one.Endpoints, len(one.Checkpoints))
		}
		completions := func(r metrics.SizeResult) (n int64) {
			for _, p := range r.Endpoints.PerPair {
				n += p.Completions
			}
			return n
		}
		for _, parts := range []int{2, 3} {
			r := run(parts)
			t.Logf("%s, %d parts: %d writes, %d completed, mean %.4f Gb/s, Jain %.4f; one part: %d, %d, %.4f, %.4f", kind, parts,
				r.Flows, completions(r), r.Endpoints.MeanGbps, r.Endpoints.Jain, one.Flows, completions(one), one.Endpoints.MeanGbps, one.Endpoints.Jain)
			// The parts stop at the window of the last write, as they do
			// at the last delivery (they ran on to stale timers, and their
			// links' rates, read there, came out 9–39× too low). Over RoCE
			// the last write comes 5% earlier in parts: the tie order.
			tier := func(r metrics.SizeResult) float64 { return r.Balance.Tiers[0].MeanGbps }
			if math.Abs(r.SimEndS-one.SimEndS) > 0.1*one.SimEndS || math.Abs(tier(r)-tier(one)) > 0.1*tier(one) {
				t.Errorf("%s, %d parts: the run ended at %v s, host links at %.3f Gb/s; one part: %v s, %.3f Gb/s", kind, parts, r.SimEndS, tier(r), one.SimEndS, tier(one))
			}
			if r.Flows != one.Flows || completions(r) != completions(one) || math.Abs(r.Endpoints.MeanGbps-one.Endpoints.MeanGbps) > 0.01*one.Endpoints.MeanGbps ||
				math.Abs(r.Endpoints.Jain-one.Endpoints.Jain) > 0.02 || len(r.Checkpoints) != len(one.Checkpoints) {
				t.Errorf("%s, %d parts: %d writes, %d completed, endpoints %+v, %d checkpoints; one part: %d, %d, %+v, %d", kind, parts, r.Flows, completions(r), r.Endpoints, len(r.Checkpoints), one.Flows, completions(one), one.Endpoints, len(one.Checkpoints))
			}
		}
	}
}

// Homa's followed flows (sim.telemetry.flows) read the receiver's grants
// and bytes in the receiver's part, the hosts as the sender's part
// posted the message: the series are those of one part.
func TestPartitionedHomaFollowedFlows(t *testing.T) {
	sets := []string{"workload.duration=100us", "transport.kind=homa", "switch.forwarding=spray-random",
		"sim.telemetry.interval=2us", "sim.telemetry.ports=top 1", "sim.telemetry.flows=top 4"}
	one := runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", 1, sets...))
	two := runPart(t, partJob(t, "../testdata/bench/websearch-320.yaml", "", 2, sets...))
	tel, tel1 := two.Telemetry, one.Telemetry
	if tel == nil || tel1 == nil || len(tel1.Flows) != 4 || len(tel.Flows) != len(tel1.Flows) {
		t.Fatalf("telemetry: %+v in two parts, %+v in one", tel, tel1)
	}
	across := 0
	for i, f := range tel.Flows {
		f1 := tel1.Flows[i]
		var src, dst int
		fmt.Sscanf(f.Src, "host%d", &src)
		fmt.Sscanf(f.Dst, "host%d", &dst)
		if src < 160 != (dst < 160) { // the parts: hosts 0–159 and 160–319
			across++
		}
		if f.Metric != "granted_bytes" || f.ID != f1.ID || f.First != f1.First || !slices.Equal(f.Value, f1.Value) || !slices.Equal(f.Delivered, f1.Delivered) {
			t.Errorf("flow %d (%s→%s): two parts' series (%s, from sample %d) differ from one part's (flow %d, from %d)", f.ID, f.Src, f.Dst, f.Metric, f.First, f1.ID, f1.First)
		}
		if n := len(f.Delivered); n == 0 || f.Delivered[n-1] != f.Bytes || slices.Max(f.Value) <= 0 {
			t.Errorf("flow %d: delivered %v of %d bytes, granted %v", f.ID, f.Delivered, f.Bytes, f.Value)
		}
	}
	if across == 0 {
		t.Fatal("no followed flow crosses the parts")
	}
}
