package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/store"
)

// clobberScenario writes a small flow-list scenario and its flow file into
// dir and returns the scenario's path.
func clobberScenario(t *testing.T, dir string) string {
	t.Helper()
	flows := filepath.Join(dir, "flows.txt")
	if err := os.WriteFile(flows, []byte("0 1 64KiB\n2 3 64KiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.yaml")
	text := "topology: {hosts: 4, hosts_per_leaf: 2, spines: 1}\nworkload: {kind: flows, file: flows.txt}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunRefusesToOverwriteInputs: an output path that is the database
// (or its -wal/-shm), the scenario or a file the scenario reads is refused
// with exit 2 before anything runs, however the path is spelt (issue 10,
// items 1 and 2).
func TestRunRefusesToOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	scen := clobberScenario(t, dir)
	db := filepath.Join(dir, "r.db")
	// A saved run to lose.
	a := newApp(&strings.Builder{}, &strings.Builder{})
	if code := a.execute(context.Background(), []string{"run", "-q", "--db", db, scen}); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	if err := os.Symlink(db, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "later.db"), filepath.Join(dir, "dangling.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(scen, filepath.Join(dir, "hard.yaml")); err != nil {
		t.Fatal(err)
	}
	// inner/.. is deep, not dir: the kernel follows the link, then "..".
	if err := os.MkdirAll(filepath.Join(dir, "deep", "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "deep", "in"), filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, f := range []string{db, scen, filepath.Join(dir, "flows.txt")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--csv", db}, "is the results database"},
		{[]string{"--db", db, "--json", "./r.db"}, "is the results database"},
		{[]string{"--db", db, "--report", "sub/../r.db"}, "is the results database"},
		{[]string{"--db", db, "--json", "link.db"}, "is the results database"},
		{[]string{"--db", db, "--json", db + "-wal"}, "is the results database"},
		{[]string{"--db", db, "--csv", db + "-shm"}, "is the results database"},
		{[]string{"--db", "sqlite:" + db, "--csv", "r.db"}, "is the results database"},
		{[]string{"--db", db, "--json", scen}, "is the scenario file"},
		{[]string{"--db", db, "--json", "p.yaml"}, "is the scenario file"},
		{[]string{"--db", db, "--csv", "hard.yaml"}, "is the scenario file"},
		{[]string{"--db", db, "--report", "flows.txt"}, "a file the scenario reads"},
		{[]string{"--db", db, "--json", "out.json", "--csv", "./out.json"}, "cannot both write to"},
		{[]string{"--db", scen}, "is the scenario file"},
		{[]string{"--db", "link.db", "--json", db + "-wal"}, "is the results database"},
		{[]string{"--db", "link.db", "--json", "r.db"}, "is the results database"},
		{[]string{"--db", "dangling.db", "--json", "later.db"}, "is the results database"},
		{[]string{"--db", "dangling.db", "--json", "inner/../../later.db"}, "is the results database"},
		{[]string{"--db", db, "--json", "inner/../o.json", "--csv", "deep/o.json"}, "cannot both write to"},
	} {
		var stdout, stderr strings.Builder
		a := newApp(&stdout, &stderr)
		ran := false
		a.runJob = func(ctx context.Context, j scenario.Job, p lab.Progress) (metrics.SizeResult, error) {
			ran = true
			return quickRun(ctx, j, p)
		}
		args := append(append([]string{"run", "-q"}, c.args...), "p.yaml")
		if c.args[0] == "--db" && c.args[1] == scen && len(c.args) == 2 {
			args = []string{"run", "-q", "--db", "p.yaml", scen}
		}
		code := a.execute(context.Background(), args)
		if code != exitUsage || ran || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d (ran %v), stderr %q; want exit 2 and %q", c.args, code, ran, stderr.String(), c.want)
		}
	}
	for f, b := range before {
		if got, err := os.ReadFile(f); err != nil || string(got) != string(b) {
			t.Errorf("%s changed (%v)", f, err)
		}
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ms, err := st.Runs(store.Filter{}); err != nil || len(ms) != 1 {
		t.Errorf("saved runs: %d, %v", len(ms), err)
	}
	// analyze guards its inputs too.
	for _, out := range []string{"p.yaml", "flows.txt", "./hard.yaml"} {
		var stdout, stderr strings.Builder
		if code := newApp(&stdout, &stderr).execute(context.Background(), []string{"analyze", "--json", out, "p.yaml"}); code != exitUsage {
			t.Errorf("analyze --json %s: exit %d, stderr %q", out, code, stderr.String())
		}
	}
	// export and report guard the database the same way.
	for _, args := range [][]string{
		{"export", "1", "--db", db, "--json", "r.db"},
		{"export", "1", "--db", db, "--csv", "link.db"},
		{"report", "1", "--db", db, "-o", db + "-wal"},
	} {
		var stdout, stderr strings.Builder
		if code := newApp(&stdout, &stderr).execute(context.Background(), args); code != exitUsage || !strings.Contains(stderr.String(), "is the results database") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	// … and the files the saved run read: its scenario and what it names
	// (they wrote over them before).
	for _, args := range [][]string{
		{"export", "1", "--db", db, "--json", scen},
		{"export", "1", "--db", db, "--csv", "flows.txt"},
		{"report", "1", "--db", db, "-o", "hard.yaml"},
		{"report", "1", "--db", db, "-o", "./flows.txt"},
	} {
		var stdout, stderr strings.Builder
		if code := newApp(&stdout, &stderr).execute(context.Background(), args); code != exitUsage ||
			!strings.Contains(stderr.String(), "the run's scenario") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	for f, b := range before {
		if got, err := os.ReadFile(f); err != nil || string(got) != string(b) {
			t.Errorf("%s changed (%v)", f, err)
		}
	}
}

// TestEmptyDBFlagIsRefused: --db ” (an unset variable) is an error, not the
// default database (issue 10, item 13).
func TestEmptyDBFlagIsRefused(t *testing.T) {
	for _, args := range [][]string{{"run", "--db", "", "x.yaml"}, {"runs", "--db", ""}, {"show", "1", "--db="}} {
		code, _, stderr := storeApp(t, testPlan(1, 1), args...)
		if code != exitUsage || !strings.Contains(stderr, "--db needs a path") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A saved run whose scenario no longer validates (a size distribution it
// names is gone) still guards the other files it names: export wrote over
// the flow list then.
func TestExportGuardsFilesOfAScenarioThatNoLongerValidates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("flows.txt", "0 1 64KiB\n")
	write("d.txt", "1000 0\n64000 1\n")
	write("p.yaml", "topology: {hosts: 4, hosts_per_leaf: 2, spines: 1}\nworkload: {kind: flows, file: flows.txt}\n"+
		"jobs:\n  - {name: bg, kind: messages, size_dist: d.txt, load: 0.1, duration: 10us, host_offset: 2}\n")
	db := filepath.Join(dir, "r.db")
	t.Chdir(dir)
	exec := func(args ...string) (int, string) {
		var stdout, stderr strings.Builder
		code := newApp(&stdout, &stderr).execute(context.Background(), args)
		return code, stderr.String()
	}
	if code, stderr := exec("run", "-q", "--db", db, "p.yaml"); code != 0 {
		t.Fatalf("run: exit %d %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(dir, "d.txt")); err != nil {
		t.Fatal(err)
	}
	if code, stderr := exec("export", "1", "--db", db, "--json", "flows.txt"); code != exitUsage || !strings.Contains(stderr, "is a file the run's scenario reads") {
		t.Errorf("export --json flows.txt: exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "flows.txt")); err != nil || string(b) != "0 1 64KiB\n" {
		t.Errorf("flows.txt now %q (%v)", b, err)
	}
}
