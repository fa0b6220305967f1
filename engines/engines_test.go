package engines

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"fabriclab/scenario"
)

func jobs(t *testing.T, src string) []scenario.Job {
	t.Helper()
	f, err := scenario.Parse("e.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f.Jobs()
}

const base = "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1}\n"

// auto takes the flow engine from sim.flow_above, for what it can express.
func TestForPicksByEngineSizeAndSupport(t *testing.T) {
	js := jobs(t, base+"workload: {kind: alltoall, sizes: {list: [1MiB, 4MiB]}}\nsim: {engine: auto, flow_above: 2MiB}\n")
	if n, _ := For(js[0]); n != Packet {
		t.Errorf("1 MiB under auto: %s", n)
	}
	if n, _ := For(js[1]); n != Flow {
		t.Errorf("4 MiB under auto: %s", n)
	}
	homa := jobs(t, base+"transport: {kind: homa}\nworkload: {kind: alltoall, sizes: {list: [4MiB]}}\nsim: {engine: auto, flow_above: 2MiB}\n")
	if n, why := For(homa[0]); n != Packet || !strings.Contains(why, "homa") {
		t.Errorf("homa under auto: %s (%s)", n, why)
	}
	if n, _ := For(With(js[0], Flow)); n != Flow || js[0].Spec.Sim.Engine != Auto {
		t.Errorf("With: %s, and the original scenario is now %q", n, js[0].Spec.Sim.Engine)
	}
	if n, _ := For(jobs(t, base+"workload: {kind: alltoall, sizes: {list: [4MiB]}}\n")[0]); n != Packet {
		t.Errorf("the default: %s", n)
	}
}

// A flow row says so; a job the flow engine cannot express, asked for by
// name, fails saying why.
func TestRunMarksFlowRows(t *testing.T) {
	js := jobs(t, base+"workload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: flow}\n")
	r, err := Run(context.Background(), js[0], nil)
	if err != nil || r.Engine != Flow || !r.Complete || r.FabricMeasured() {
		t.Fatalf("flow: engine %q complete %v err %v", r.Engine, r.Complete, err)
	}
	p, err := Run(context.Background(), With(js[0], Packet), nil)
	if err != nil || p.Engine != "" || !p.FabricMeasured() {
		t.Fatalf("packet: engine %q err %v", p.Engine, err)
	}
	if d := r.CCTS/p.CCTS - 1; d > 0.05 || d < -0.05 {
		t.Errorf("flow CCT %v vs packet %v", r.CCTS, p.CCTS)
	}
	// Validation refuses it where the file asks for it, at the key …
	if _, err := scenario.Parse("e.yaml", []byte(base+"transport: {kind: homa}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: flow}\n")); err == nil ||
		!strings.Contains(err.Error(), "e.yaml:4:15: sim.engine: flow: transport homa schedules messages") {
		t.Errorf("validating homa on the flow engine: %v", err)
	}
	// So are what the flow engine does not model (they were refused by
	// the run, without a position).
	for _, c := range []struct{ yaml, why string }{
		{"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2, failures: [{from: leaf0, to: spine0, at: 10us, until: 20us}]}\n", "a link that comes back up"},
		{"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2, pfc_storms: [{host: 0, at: 10us, until: 20us}]}\nswitch: {pfc: {enabled: true}}\n", "a PFC storm"},
		{"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}\nswitch: {pfc: {enabled: true, watchdog: {detect: 100us, restore: 100us, action: drop}}}\n", "the PFC watchdog"},
		{"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}\nnic: {active_qps: 4}\n", "nic.active_qps"},
		{"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}\nsim: {telemetry: {ports: 2}}\n", "sim.telemetry"},
	} {
		src := c.yaml + "workload: {kind: alltoall, sizes: {list: [1MiB]}}\n"
		if strings.Contains(src, "sim: {") {
			src = strings.Replace(src, "sim: {", "sim: {engine: flow, ", 1)
		} else {
			src += "sim: {engine: flow}\n"
		}
		_, err := scenario.Parse("e.yaml", []byte(src))
		if err == nil || !regexp.MustCompile(`^e\.yaml:\d+:\d+: sim\.engine: flow: `+regexp.QuoteMeta(c.why)).MatchString(err.Error()) {
			t.Errorf("%s: %v", c.why, err)
		}
	}
	// … and a run asked for it another way says why.
	homa := jobs(t, base+"transport: {kind: homa}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n")
	if _, err := Run(context.Background(), With(homa[0], Flow), nil); err == nil || !strings.Contains(err.Error(), "sim.engine flow:") {
		t.Errorf("homa on the flow engine: %v", err)
	}
}

// The flow engine takes custom topologies too: on a small three-tier file
// it agrees with the packet engine.
func TestFlowEngineOnACustomTopology(t *testing.T) {
	js := jobs(t, "topology: {kind: custom, file: ../topo/testdata/three-tier-small.csv, host_link: {rate: 100Gbps}}\n"+
		"workload: {kind: alltoall, ranks: 16, sizes: {list: [4MiB]}}\n")
	p, err := Run(context.Background(), With(js[0], Packet), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Run(context.Background(), With(js[0], Flow), nil)
	if err != nil || f.Engine != Flow {
		t.Fatal(err)
	}
	if d := f.CCTS/p.CCTS - 1; d > 0.05 || d < -0.05 {
		t.Errorf("custom topology: flow CCT %v, packet %v", f.CCTS, p.CCTS)
	}
}

// Check builds only the jobs whose settings a build alone checks, on the
// engine the job runs on.
func TestCheckBuildsOnlyWhatNeedsIt(t *testing.T) {
	// A job the packet engine refuses to build (probes run on real hosts
	// only): Check leaves it alone unless it uses traffic engineering.
	js := jobs(t, base+"workload: {kind: alltoall, sizes: {list: [1MiB]}}\n")
	spec := *js[0].Spec
	spec.Probes = []scenario.Probe{{}}
	job := js[0]
	job.Spec = &spec
	if err := Check(job); err != nil {
		t.Errorf("no te, no telemetry flows: %v, want no build", err)
	}
	spec.Switch.Forwarding = "te"
	if err := Check(job); err == nil || !strings.Contains(err.Error(), "probes") {
		t.Errorf("te: %v, want the packet engine's build error", err)
	}
	// On either engine a traffic-engineered job that fits is built.
	for _, engine := range []string{Packet, Flow} {
		te := jobs(t, base+"switch: {forwarding: te}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: "+engine+"}\n")
		if err := Check(te[0]); err != nil {
			t.Errorf("%s: %v", engine, err)
		}
	}
	// A flow-engine job the flow engine cannot express is refused as run
	// refuses it, with or without a setting that needs a build.
	for _, forwarding := range []string{"ecmp", "te"} {
		flow := jobs(t, base+"switch: {forwarding: "+forwarding+"}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: flow}\n")[0]
		fs := *flow.Spec
		fs.Topology.PFCStorms = []scenario.PFCStorm{{}}
		flow.Spec = &fs
		if err := Check(flow); err == nil || !strings.Contains(err.Error(), "sim.engine flow: a PFC storm") {
			t.Errorf("%s, flow engine, a PFC storm: %v", forwarding, err)
		}
		fs.Topology.PFCStorms, fs.Probes = nil, []scenario.Probe{{}}
		if err := Check(flow); err == nil || !strings.Contains(err.Error(), "sim.engine flow: probes are paced UDP streams") {
			t.Errorf("%s, flow engine, probes: %v", forwarding, err)
		}
		if _, err := Run(context.Background(), flow, nil); err == nil || !strings.Contains(err.Error(), "probes") {
			t.Errorf("%s, flow engine, probes: run %v, want refused as Check refuses", forwarding, err)
		}
	}
}

// Accept is Fits, then Check: a packet-engine job without a setting that
// needs a build is not built (Check passes it), but one above
// sim.memory_limit is refused all the same, as its build would refuse it.
func TestAcceptChecksTheMemoryLimitOfEveryJob(t *testing.T) {
	big := jobs(t, base+"workload: {kind: alltoall, message_size: 1KiB, sizes: {list: [256MiB]}}\nsim: {memory_limit: 1MiB}\n")[0]
	if err := Check(big); err != nil {
		t.Fatalf("Check: %v, want no build and no refusal", err)
	}
	for name, f := range map[string]func(scenario.Job) error{"Fits": Fits, "Accept": Accept} {
		if err := f(big); err == nil || !strings.Contains(err.Error(), "more than sim.memory_limit=1MiB") {
			t.Errorf("%s: %v, want the memory limit", name, err)
		}
	}
	small := jobs(t, base+"workload: {kind: alltoall, sizes: {list: [1MiB]}}\n")[0]
	if err := Accept(small); err != nil {
		t.Errorf("a small job: %v", err)
	}
}

// The flow engine refuses a job above sim.memory_limit before building
// it, with the packet engine's estimate and words.
func TestFlowEngineKeepsTheMemoryLimit(t *testing.T) {
	src := "topology: {kind: leaf-spine, hosts: 64, hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {engine: flow, memory_limit: 1MiB}\n"
	js := jobs(t, src)
	r, err := Run(context.Background(), js[0], nil)
	if err == nil || !strings.Contains(err.Error(), "more than sim.memory_limit=1MiB") || r.Engine != Flow || r.Error != err.Error() {
		t.Fatalf("engine %q, error %v, row error %q", r.Engine, err, r.Error)
	}
	js = jobs(t, strings.Replace(src, "memory_limit: 1MiB", "memory_limit: 1GiB", 1))
	if r, err := Run(context.Background(), js[0], nil); err != nil || !r.Complete {
		t.Fatalf("within the limit: complete %v, %v", r.Complete, err)
	}
}
