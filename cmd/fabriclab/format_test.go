package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/report"
	"fabriclab/store"
)

const fabricScenario = `name: fab
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 1}
workload: {kind: alltoall, sizes: {list: [8MiB, 16MiB]}}
variants:
  - name: pfc
  - name: lossy
    switch: {pfc: {enabled: false}}
`

// realPlan loads fabricScenario from a file, as run would.
func realPlan(t *testing.T) (*plan, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fab.yaml")
	if err := os.WriteFile(path, []byte(fabricScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := loadPlan(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, path
}

const wantFabric = `# fabric: leaf-spine, 8 hosts, 2 leaves of 4, 1 spine (4:1 oversubscribed)
#   links: hosts 400Gbps, fabric 400Gbps, 1us one-way
#   forwarding: ecmp
#   switches: buffer 32MiB; PFC xoff 512KiB, xon 504KiB, headroom auto; ECN kmin 50KB, kmax 200KB, pmax 0.2 at 100Gbps (scaled per port rate)
#   transport: RoCEv2, DCQCN default; MTU 4KiB, go-back-n
# fabric of lossy: switches: buffer 32MiB; PFC off; ECN kmin 50KB, kmax 200KB, pmax 0.2 at 100Gbps (scaled per port rate)

`

// The table format starts with the fabric summary: the first variant's in
// full, then what the others change; the nccl-tests format has none.
func TestWriteFormattedFabric(t *testing.T) {
	p, _ := realPlan(t)
	fs := planFabrics(p)
	if len(fs) != 2 || fs[1].Variant != "lossy" {
		t.Fatalf("fabrics %+v", fs)
	}
	out := report.Output{Variants: []report.VariantResult{{Name: "pfc", Collective: "alltoall"}}}
	var b bytes.Buffer
	if err := writeFormatted(&b, formatTable, fs, nil, report.NCCLOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.HasPrefix(got, wantFabric+"# variant: pfc") {
		t.Errorf("got\n%s\nwant it to start with\n%s", got, wantFabric)
	}
	b.Reset()
	if err := writeFormatted(&b, formatTable, nil, errors.New("flows.txt: no such file"), report.NCCLOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "# fabric: no summary (the saved scenario could not be read again: flows.txt: no such file)\n\n# variant:") {
		t.Errorf("without a fabric:\n%s", b.String())
	}
	b.Reset()
	if err := writeFormatted(&b, formatNCCL, fs, nil, report.NCCLOptions{}, out); err != nil {
		t.Fatal(err)
	}
	// No fabric summary in nccl-tests' format; a variant without results
	// gets no table (an average of 0 would read as measured).
	if strings.Contains(b.String(), "# fabric:") || b.String() != "# fabriclab alltoall_perf: variant pfc (alltoall): no results\n" {
		t.Errorf("nccl-tests:\n%s", b.String())
	}
	if planFabrics(testPlan(1, 1)) != nil {
		t.Error("a plan without scenarios has fabrics")
	}
	opt := ncclOptionsOf(p, "half", "max")
	if opt.DataType != "half" || opt.Op != "max" || len(opt.Variants) != 2 {
		t.Errorf("nccl options %+v", opt)
	}
}

func TestRunOverrides(t *testing.T) {
	if got := runOverrides(store.Meta{}); got != "-" {
		t.Errorf("none: %q", got)
	}
	m := store.Meta{Sets: []string{"nic.burst=16", "seed=7", "name=a b"}, Sweeps: []string{"workload.qps=1,2"}}
	if got := runOverrides(m); got != "--set nic.burst=16 --set seed=7 --set 'name=a b' --sweep workload.qps=1,2" {
		t.Errorf("got %q", got)
	}
	if got := report.Overrides(report.Output{Seed: 7, Sets: m.Sets[:2]}); got != "seed 7; --set nic.burst=16 --set seed=7" {
		t.Errorf("Overrides %q", got)
	}
}

// hasFlag reports whether cmd (run, show) has --NAME: the --format flags
// of run and show and the runs OVERRIDES column come with the patches to
// cmd.go and store_cmds.go (/tmp/issue14-*.patch); until they are applied
// the tests that need them skip.
func hasFlag(t *testing.T, cmd, name string) bool {
	t.Helper()
	a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	c, _, err := a.rootCmd().Find([]string{cmd})
	return err == nil && c.Flags().Lookup(name) != nil
}

// run prints the fabric summary above the tables; --format nccl-tests
// prints nccl-tests' layout instead; a bad --format is a usage error.
func TestRunFormat(t *testing.T) {
	if !hasFlag(t, "run", "format") {
		t.Skip("run has no --format: the cmd.go patch is not applied")
	}
	p, path := realPlan(t)
	a, out, errb := newTestApp(p, quickRun)
	if code := a.execute(context.Background(), []string{"run", "--no-store", path}); code != 0 {
		t.Fatalf("run: exit %d %s", code, errb)
	}
	if !strings.HasPrefix(out.String(), wantFabric+"# variant: pfc  (alltoall direct, 8 ranks)\n") &&
		!strings.HasPrefix(out.String(), wantFabric+"# variant: pfc  (alltoall, 8 ranks)\n") {
		t.Errorf("run:\n%s", out)
	}
	a, out, _ = newTestApp(p, quickRun)
	if code := a.execute(context.Background(), []string{"run", "--no-store", "--format", "nccl-tests", path}); code != 0 {
		t.Fatalf("run --format nccl-tests: exit %d", code)
	}
	if strings.Count(out.String(), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : ") != 2 ||
		!strings.Contains(out.String(), "     8388608        262144     float    none      -1    209.7   40.00   35.00      0    209.7   40.00   35.00      0\n") {
		t.Errorf("run --format nccl-tests:\n%s", out)
	}
	if code, _, stderr := storeApp(t, p, "run", "--no-store", "--format", "csv", path); code != exitUsage || !strings.Contains(stderr, "unknown --format") {
		t.Errorf("--format csv: exit %d %s", code, stderr)
	}
}

// show prints the run's overrides and fabric before its tables; runs has
// an OVERRIDES column; show --format nccl-tests.
func TestShowOverridesAndFabric(t *testing.T) {
	if !hasFlag(t, "show", "format") {
		t.Skip("show has no --format: the store_cmds.go patch is not applied")
	}
	p, path := realPlan(t)
	db := filepath.Join(t.TempDir(), "lab.db")
	if code, _, stderr := storeApp(t, p, "run", "-q", "--db", db, "--set", "nic.burst=16", "--seed", "7", path); code != 0 {
		t.Fatalf("run: exit %d %s", code, stderr)
	}
	code, out, _ := storeApp(t, nil, "show", "1", "--db", db)
	if code != 0 || !strings.Contains(out, "\n# overrides: seed 1; --set nic.burst=16 --set seed=7\n"+strings.TrimSuffix(wantFabric, "\n")) {
		t.Errorf("show:\n%s", out)
	}
	code, out, _ = storeApp(t, nil, "runs", "--db", db)
	if lines := strings.Split(out, "\n"); code != 0 || !strings.Contains(lines[0], "ROWS  OVERRIDES") || !strings.Contains(lines[1], "--set nic.burst=16 --set seed=7") {
		t.Errorf("runs:\n%s", out)
	}
	code, out, _ = storeApp(t, nil, "show", "1", "--db", db, "--format", "nccl-tests")
	if code != 0 || strings.Count(out, "# Avg bus bandwidth    : ") != 2 || strings.Contains(out, "# variant:") {
		t.Errorf("show --format nccl-tests:\n%s", out)
	}
}

// show, from another directory than the run's, still rebuilds the fabric
// from the saved scenario: its relative file names are found under the
// directory the run started in (they were looked up from the current one).
func TestShowFromAnotherDirectory(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	clobberScenario(t, dir)
	db := filepath.Join(t.TempDir(), "lab.db")
	exec := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := newApp(&stdout, &stderr).execute(context.Background(), args)
		return code, stdout.String(), stderr.String()
	}
	t.Chdir(dir)
	if code, _, stderr := exec("run", "-q", "--db", db, "p.yaml"); code != 0 {
		t.Fatalf("run: exit %d %s", code, stderr)
	}
	t.Chdir(other)
	code, out, stderr := exec("show", "1", "--db", db)
	if code != 0 || !strings.Contains(out, "\n# fabric: leaf-spine, 4 hosts, 2 leaves of 2, 1 spine") || strings.Contains(out+stderr, "flows.txt") {
		t.Errorf("show: exit %d\n%s\nstderr %s", code, out, stderr)
	}
	// The directory moved: the files are found from here, as typed, and
	// still guarded against export's outputs.
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(moved, dir) })
	t.Chdir(moved)
	if code, out, stderr := exec("show", "1", "--db", db); code != 0 || !strings.Contains(out, "\n# fabric: leaf-spine, 4 hosts") {
		t.Errorf("show from the moved directory: exit %d\n%s\nstderr %s", code, out, stderr)
	}
	for _, f := range []string{"flows.txt", "p.yaml"} {
		if code, _, stderr := exec("export", "1", "--db", db, "--json", f); code != exitUsage || !strings.Contains(stderr, "the run's scenario") {
			t.Errorf("export --json %s in the moved directory: exit %d, stderr %q", f, code, stderr)
		}
	}
}
