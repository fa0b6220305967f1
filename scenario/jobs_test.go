package scenario

import (
	"os"
	"strings"
	"testing"

	"fabriclab/units"
)

const jobsBase = `topology: {hosts: 16, hosts_per_leaf: 8}
workload: {kind: allreduce, ranks: 8, sizes: {list: [1MiB, 4MiB]}}
jobs:
  - name: b
    kind: alltoall
    ranks: 8
    host_offset: 8
    start: 10us
    sizes: {list: [2MiB]}
`

func TestJobsDecodeWithDefaults(t *testing.T) {
	f, err := Parse("j.yaml", []byte(jobsBase+`variants:
  - name: same
  - name: noise
    jobs:
      - {name: bg, kind: uniform, host_offset: 8, load: 0.3, duration: 50us, sizes: {list: [64KiB]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := f.Variants[0].Spec.Jobs
	if len(j) != 1 || j[0].Name != "b" || j[0].Start != 10*units.Microsecond || j[0].QPs != 1 || j[0].Iterations != 1 ||
		j[0].Algorithm != "direct" || j[0].HostOffset != 8 || j[0].Ranks != 8 {
		t.Fatalf("jobs %+v", j)
	}
	// A variant's jobs replace the base's list.
	j = f.Variants[1].Spec.Jobs
	if len(j) != 1 || j[0].Name != "bg" || j[0].Kind != "uniform" || j[0].Ranks != 8 || j[0].Load != 0.3 {
		t.Fatalf("variant jobs %+v", j)
	}
	if n := len(f.Jobs()); n != 4 {
		t.Errorf("%d jobs, want 2 variants × 2 sizes", n)
	}
	hs, err := JobHosts(f.Variants[0].Spec.Jobs[0].Workload, f.Base.Topology, JobSeed(1, 1))
	if err != nil || len(hs) != 8 || hs[0] != 8 || hs[7] != 15 {
		t.Errorf("hosts %v %v", hs, err)
	}
}

func TestJobsErrors(t *testing.T) {
	for _, tc := range []struct{ edit, old, want string }{
		{"    sizes: {list: [2MiB, 4MiB]}", "    sizes: {list: [2MiB]}", "j.yaml:9:5: jobs[0].sizes: a job runs at one data size"},
		{"    host_offset: 4", "    host_offset: 8", `j.yaml:4:9: jobs[0]: job "main" and job "b" both use host 4`},
		{"    host_offset: 12", "    host_offset: 8", "j.yaml:7:18: jobs[0].host_offset: 8 ranks do not fit the 4 GPUs available"},
		{"    kind: alltoal", "    kind: alltoall", `j.yaml:5:11: jobs[0].kind: unknown workload "alltoal"`},
		{"    qps: 0", "    start: 10us", "j.yaml:8:10: jobs[0].qps: needs at least 1 queue pair"},
		{"    start: 2s", "    start: 10us", "j.yaml:8:12: jobs[0].start: 2s is not before sim.time_limit"},
		{"  - name: main", "  - name: b", `j.yaml:4:11: jobs[0].name: "main" is the name of the top-level workload`},
		{"    colour: red", "    start: 10us", `j.yaml:8:5: jobs[0].colour: unknown key "colour"`},
		{"    load: 0.5", "    start: 10us", "j.yaml:8:11: jobs[0].load: load and duration are only read by kinds uniform and messages"},
	} {
		src := strings.Replace(jobsBase, tc.old, tc.edit, 1)
		_, err := Parse("j.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s…", tc.edit, err, tc.want)
		}
	}
	uniform := `topology: {hosts: 16, hosts_per_leaf: 8}
workload: {kind: uniform, load: 1.5, duration: 10us, sizes: {list: [64KiB]}}
`
	if _, err := Parse("u.yaml", []byte(uniform)); err == nil || !strings.HasPrefix(err.Error(), "u.yaml:2:33: workload.load: uniform needs a load in (0, 1]") {
		t.Errorf("uniform load: %v", err)
	}
	big := strings.Replace(uniform, "load: 1.5, duration: 10us, sizes: {list: [64KiB]}", "load: 1, duration: 900ms, sizes: {list: [4KiB]}", 1)
	if _, err := Parse("u.yaml", []byte(big)); err == nil || !strings.Contains(err.Error(), "workload.duration: about") {
		t.Errorf("uniform too many messages: %v", err)
	}
}

// A flow-list job's hosts are its file's sources and destinations: they
// must not overlap another job's.
func TestJobsFlowListHostOverlap(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("clash.txt", "9 3 1MB\n")
	write("apart.txt", "9 12 1MB\n")
	for file, wantErr := range map[string]bool{"clash.txt": true, "apart.txt": false} {
		path := write("j.yaml", `topology: {hosts: 16, hosts_per_leaf: 8}
workload: {kind: allreduce, ranks: 8, sizes: {list: [1MiB]}}
jobs:
  - {name: replay, kind: flows, file: `+file+`}
`)
		_, err := Load(path)
		if wantErr != (err != nil) || err != nil && !strings.Contains(err.Error(), `job "main" and job "replay" both use host 3`) {
			t.Errorf("%s: %v", file, err)
		}
	}
}
