package main

import (
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/units"
)

func TestParseNCCLSize(t *testing.T) {
	for in, want := range map[string]int64{
		"8": 8, "1024": 1024, "8M": 8 << 20, "8m": 8 << 20, "1G": 1 << 30, "1g": 1 << 30, "64K": 64 << 10, "64k": 64 << 10,
		"1.5K": 1536, "0.5M": 512 << 10, "8 M": 8 << 20, "8MiB": 8 << 20, "1GiB": 1 << 30, "2.7": 2, " 32M ": 32 << 20,
	} {
		if got, err := parseNCCLSize(in); got != want || err != nil {
			t.Errorf("parseNCCLSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"8MB": "ambiguous: nccl-tests reads it as 8M (2^20), fabriclab's units as 8MB (10^6)",
		"1GB": "write 1G or 1GiB",
		"8T":  "unknown size unit",
		"8Mx": "unknown size unit",
		"abc": "is not a size",
		"":    "is not a size",
		"0":   "from 1 byte",
		"0.5": "from 1 byte",
		"-8M": "is not a size",
	} {
		if _, err := parseNCCLSize(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("parseNCCLSize(%q) = %v, want an error with %q", in, err, msg)
		}
	}
}

func TestNCCLSizes(t *testing.T) {
	for _, c := range []struct {
		b, e, i int64
		f       int
		want    []int64
	}{
		{8 << 20, 1 << 30, 1 << 20, 2, []int64{8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30}},
		{8 << 20, 1000 << 20, 1 << 20, 2, []int64{8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20}},
		{1 << 20, 4 << 20, 1 << 20, 0, []int64{1 << 20, 2 << 20, 3 << 20, 4 << 20}},
		{1 << 20, 4 << 20, 1 << 20, 1, []int64{1 << 20, 2 << 20, 3 << 20, 4 << 20}},
		{32 << 20, 32 << 20, 1 << 20, 0, []int64{32 << 20}},
		{8, 8 << 10, 1, 4, []int64{8, 32, 128, 512, 2048, 8192}},
	} {
		got, err := ncclSizes(c.b, c.e, c.i, c.f)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ncclSizes(%d, %d, %d, %d) = %v, %v; want %v", c.b, c.e, c.i, c.f, got, err, c.want)
			continue
		}
		for k := range got {
			if got[k] != c.want[k] {
				t.Errorf("ncclSizes(%d, %d, %d, %d) = %v; want %v", c.b, c.e, c.i, c.f, got, c.want)
				break
			}
		}
	}
	if _, err := ncclSizes(2<<20, 1<<20, 1, 2); err == nil || !strings.Contains(err.Error(), "below -b") {
		t.Errorf("-e below -b: %v", err)
	}
	if _, err := ncclSizes(8, 1<<30, 8, 0); err == nil || !strings.Contains(err.Error(), "more than 4096 sizes") {
		t.Errorf("too many sizes: %v", err)
	}
}

func TestParseFabric(t *testing.T) {
	f, err := parseFabric("leaf-spine:400G:2to1")
	if err != nil || f.kind != "leaf-spine" || f.rate != 400*units.Gbps || f.oversub != 2 {
		t.Fatalf("leaf-spine:400G:2to1 = %+v, %v", f, err)
	}
	y, err := f.topologyYAML(32)
	want := "topology:\n  kind: leaf-spine\n  hosts: 32\n  hosts_per_leaf: 8\n  oversubscription: 2\n  host_link: {rate: 400Gbps}\n  fabric_link: {rate: 400Gbps}\n"
	if err != nil || y != want {
		t.Errorf("topology:\n%s\nwant\n%s", y, want)
	}
	if f, err := parseFabric("fat-tree:100Gbps"); err != nil || f.rate != 100*units.Gbps {
		t.Errorf("fat-tree:100Gbps = %+v, %v", f, err)
	} else if y, _ := f.topologyYAML(100); !strings.Contains(y, "  k: 8\n") { // 8³/4 = 128 ≥ 100
		t.Errorf("fat-tree for 100 ranks:\n%s", y)
	}
	if f, err := parseFabric("rail:200G:3to2"); err != nil || f.oversub != 1.5 {
		t.Errorf("rail:200G:3to2 = %+v, %v", f, err)
	} else if y, _ := f.topologyYAML(32); !strings.Contains(y, "servers: 4\n  gpus_per_server: 8\n  oversubscription: 1.5\n") {
		t.Errorf("rail for 32 ranks:\n%s", y)
	}
	if f, _ := parseFabric("leaf-spine"); f.rate != 400*units.Gbps || f.oversub != 1 {
		t.Errorf("leaf-spine defaults: %+v", f)
	}
	if y, _ := (fabricSpec{kind: "leaf-spine", rate: units.Gbps, oversub: 1}).topologyYAML(12); !strings.Contains(y, "hosts_per_leaf: 6\n") {
		t.Errorf("12 ranks: %s", y)
	}
	if y, _ := (fabricSpec{kind: "leaf-spine", rate: units.Gbps, oversub: 1}).topologyYAML(8); !strings.Contains(y, "hosts_per_leaf: 4\n") {
		t.Errorf("8 ranks: %s", y)
	}
	// 3to1 on 48 ranks: 6 hosts a leaf over 2 spines, not 8 over 3
	// (2.67:1); on 8 ranks no leaf size makes 3:1, and run's note says
	// what the fabric is.
	if y, _ := (fabricSpec{kind: "leaf-spine", rate: units.Gbps, oversub: 3}).topologyYAML(48); !strings.Contains(y, "hosts_per_leaf: 6\n") {
		t.Errorf("48 ranks at 3to1: %s", y)
	}
	code, _, stderr := storeApp(t, nil, "nccl", "alltoall", "-b", "1M", "-e", "1M", "--ranks", "8", "--fabric", "leaf-spine:400G:3to1", "--no-store")
	if code != 0 || !strings.Contains(stderr, "note: topology.oversubscription 3: 4 hosts per leaf at 400Gbps over 2 spines at 400Gbps make the leaves 2:1") {
		t.Errorf("8 ranks at 3to1: exit %d, stderr %q", code, stderr)
	}
	for in, msg := range map[string]string{
		"torus":                "unknown topology",
		"leaf-spine:400GB":     "rates are in bits per second",
		"leaf-spine:400G:2:1":  "too many parts",
		"leaf-spine:400G:2-1":  "is not NtoM",
		"leaf-spine:400G:1to2": "at least 1to1",
		"fat-tree:400G:2to1":   "non-blocking",
	} {
		if _, err := parseFabric(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("parseFabric(%q) = %v, want %q", in, err, msg)
		}
	}
	if _, err := (fabricSpec{kind: "rail", rate: units.Gbps, oversub: 1}).topologyYAML(12); err == nil {
		t.Error("rail with 12 ranks")
	}
}

// The command line prints this scenario, which loads into the
// jobs nccl-tests would run.
func TestNCCLPrintScenario(t *testing.T) {
	code, out, stderr := storeApp(t, nil, "nccl", "all_reduce", "-b", "8M", "-e", "1G", "-f", "2", "-n", "20", "-w", "5",
		"--ranks", "32", "--fabric", "leaf-spine:400G:2to1", "--print-scenario")
	want := `# fabriclab nccl all_reduce -b 8M -e 1G -f 2 -n 20 -w 5 --ranks 32 --fabric leaf-spine:400G:2to1
# nccl-tests' all_reduce_perf with -b 8388608 -e 1073741824, factor 2 on 32 ranks (one per host) of a leaf-spine fabric.
name: nccl-all_reduce
topology:
  kind: leaf-spine
  hosts: 32
  hosts_per_leaf: 8
  oversubscription: 2
  host_link: {rate: 400Gbps}
  fabric_link: {rate: 400Gbps}
workload:
  kind: allreduce
  ranks: 32
  iterations: 20
  warmup: 5
  sizes: {from: 8MiB, to: 1GiB, factor: 2}
`
	if code != 0 || out != want {
		t.Fatalf("exit %d, stderr %q\n%s\nwant\n%s", code, stderr, out, want)
	}
	p, err := ncclPlan("all_reduce", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Jobs) != 8 || p.Jobs[0].Size != 8*units.MiB || p.Jobs[7].Size != units.GiB || p.Path != "nccl:all_reduce" {
		t.Fatalf("plan: %d jobs, path %s", len(p.Jobs), p.Path)
	}
	s := p.Jobs[0].Spec
	if s.Workload.Kind != "allreduce" || s.Workload.Iterations != 20 || s.Workload.Warmup != 5 || s.Topology.Oversubscription != 2 {
		t.Errorf("spec %+v", s.Workload)
	}
	if fs := planFabrics(p); len(fs) != 1 || fs[0].Fields[0].Value != "leaf-spine, 32 hosts, 4 leaves of 8, 4 spines (2:1 oversubscribed)" {
		t.Errorf("fabric %+v", fs)
	}
	// Without -f nccl-tests steps by -i: an explicit list.
	_, out, _ = storeApp(t, nil, "nccl", "broadcast", "-b", "1M", "-e", "3M", "-r", "2", "--print-scenario")
	if !strings.Contains(out, "  root: 2\n  sizes: {list: [1MiB, 2MiB, 3MiB]}\n") || !strings.Contains(out, "  iterations: 1\n") {
		t.Errorf("broadcast:\n%s", out)
	}
}

// Every nccl-tests collective name maps to its kind; an unknown one is a
// usage error naming the known ones.
func TestNCCLCollectiveNames(t *testing.T) {
	for name, kind := range map[string]string{"all_reduce": "allreduce", "all_gather": "allgather", "alltoall": "alltoall",
		"broadcast": "broadcast", "reduce": "reduce", "reduce_scatter": "reducescatter", "sendrecv": "sendrecv",
		"gather": "gather", "scatter": "scatter", "all_reduce_perf": "allreduce"} {
		code, out, stderr := storeApp(t, nil, "nccl", name, "--print-scenario")
		if code != 0 || !strings.Contains(out, "  kind: "+kind+"\n") {
			t.Errorf("%s: exit %d %s\n%s", name, code, stderr, out)
		}
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"nccl", "hypercube"}, "hypercube is not a collective fabriclab models"},
		{[]string{"nccl", "allreduc"}, `unknown nccl-tests collective "allreduc" (one of all_reduce, all_gather, alltoall`},
		{[]string{"nccl"}, "exactly one collective"},
		{[]string{"nccl", "all_reduce", "-b", "8MB"}, "ambiguous"},
		{[]string{"nccl", "all_reduce", "-d", "float128"}, "unknown nccl-tests data type"},
		{[]string{"nccl", "all_reduce", "-o", "xor"}, "-o \"xor\""},
		{[]string{"nccl", "all_reduce", "--ranks", "1"}, "at least 2 ranks"},
		{[]string{"nccl", "all_reduce", "--fabric", "torus"}, "unknown topology"},
		{[]string{"nccl", "all_reduce", "--format", "csv"}, "unknown --format"},
		{[]string{"nccl", "broadcast", "-r", "8"}, "the root must be a rank"},
		{[]string{"nccl", "all_reduce", "--set", " workload.kind =alltoall"}, "--set makes the workload alltoall; the collective is the argument (all_reduce): run fabriclab nccl alltoall instead"},
		{[]string{"nccl", "all_reduce_perf", "--set", "workload={kind: allgather}"}, "--set makes the workload allgather; the collective is the argument (all_reduce): run fabriclab nccl all_gather instead"},
	} {
		code, out, stderr := storeApp(t, nil, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, stderr, c.msg)
		}
	}
}

// The quick mode runs, saves and prints in nccl-tests' format (or
// fabriclab's tables after the fabric summary).
func TestNCCLRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	code, out, stderr := storeApp(t, nil, "nccl", "alltoall", "-b", "8M", "-e", "16M", "-f", "2", "--ranks", "8", "--db", db, "-c", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{
		"# fabriclab alltoall_perf: nccl-alltoall, variant base (alltoall, 8 ranks, simulated)\n",
		"validation: 0 graph: 0\n",
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n",
		"     8388608        262144     float    none      -1    209.7   40.00   35.00    N/A    209.7   40.00   35.00    N/A\n",
		"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 35 \n#\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if !savedRe.MatchString(stderr) {
		t.Errorf("not saved: %s", stderr)
	}
	code, out, _ = storeApp(t, nil, "nccl", "alltoall", "-b", "8M", "-e", "8M", "--ranks", "8", "--no-store", "--format", "table")
	if code != 0 || !strings.HasPrefix(out, "# fabric: leaf-spine, 8 hosts, 2 leaves of 4, 4 spines (1:1, non-blocking)\n") ||
		!strings.Contains(out, "\n\n# variant: base  (alltoall, 8 ranks)\n") {
		t.Errorf("--format table: exit %d\n%s", code, out)
	}
	code, _, stderr = storeApp(t, nil, "nccl", "all_reduce", "--no-store", "--tag", "x")
	if code != exitUsage || !strings.Contains(stderr, "need the results store") {
		t.Errorf("--tag with --no-store: exit %d %s", code, stderr)
	}
}
