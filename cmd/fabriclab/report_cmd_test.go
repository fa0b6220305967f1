package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
)

func TestReportFromStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	p := testPlan(2, 3)
	for range 2 {
		if code, _, stderr := storeApp(t, p, "run", "-q", "--db", db, "x.yaml"); code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
	}
	html := filepath.Join(dir, "r.html")
	pngs := filepath.Join(dir, "png")
	code, _, stderr := storeApp(t, nil, "report", "1", "2", "--db", db, "-o", html, "--png", pngs)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	for _, s := range []string{"<!DOCTYPE html>", "<svg", "run 1: v0", "run 2: v1", ">8MiB<", ">32MiB<", "Bus bandwidth"} {
		if !strings.Contains(h, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	files, _ := filepath.Glob(filepath.Join(pngs, "*.png"))
	if len(files) == 0 || len(files) != strings.Count(h, "<svg") {
		t.Errorf("%d PNGs for %d charts", len(files), strings.Count(h, "<svg"))
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", f)
		}
	}
	// PNGs that cannot be written do not cost the HTML report.
	html2 := filepath.Join(dir, "r2.html")
	code, _, stderr = storeApp(t, nil, "report", "1", "--db", db, "-o", html2, "--png", html)
	if b, err := os.ReadFile(html2); code != exitError || err != nil || !bytes.Contains(b, []byte("<svg")) ||
		!strings.Contains(stderr, "writing the charts as PNGs into "+html) {
		t.Errorf("report --png into a file: exit %d, report %v, stderr %q", code, err, stderr)
	}
	// Errors: no -o, a bad id, a missing run.
	if code, _, _ := storeApp(t, nil, "report", "1", "--db", db); code != exitUsage {
		t.Errorf("report without -o: exit %d", code)
	}
	if code, _, _ := storeApp(t, nil, "report", "x", "--db", db, "-o", html); code != exitUsage {
		t.Errorf("report x: exit %d", code)
	}
	if code, _, stderr := storeApp(t, nil, "report", "9", "--db", db, "-o", html); code != exitError || stderr == "" {
		t.Errorf("report 9: exit %d, stderr %q", code, stderr)
	}
}

func TestRunReport(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "run.html")
	code, _, stderr := storeApp(t, testPlan(1, 2), "run", "-q", "--no-store", "--report", html, "x.yaml")
	if code != 0 {
		t.Fatalf("run --report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "test-scenario") {
		t.Error("run --report wrote no charts")
	}
	if code, _, _ := storeApp(t, testPlan(1, 2), "run", "--no-store", "--report-png", dir, "x.yaml"); code != exitUsage {
		t.Errorf("--report-png without --report: exit %d", code)
	}
	// A --report-png that cannot take files is refused before any job
	// runs (it was found after them all, and cost the HTML report too).
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{notDir, filepath.Join(notDir, "sub"), "/proc/fabriclab-no-such-dir"} {
		ran := false
		a, _, errb := newTestApp(testPlan(1, 2), func(ctx context.Context, j scenario.Job, p lab.Progress) (metrics.SizeResult, error) {
			ran = true
			return quickRun(ctx, j, p)
		})
		code := a.execute(context.Background(), []string{"run", "-q", "--no-store", "--report", filepath.Join(dir, "x.html"), "--report-png", bad, "x.yaml"})
		if code == 0 || ran || !strings.Contains(errb.String(), "--report-png: cannot write into "+bad) {
			t.Errorf("--report-png %s: exit %d, a job ran: %v, stderr %q", bad, code, ran, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a refused run wrote its report")
	}
	// A directory that does not exist yet is made.
	pngs := filepath.Join(dir, "new", "pngs")
	if code, _, stderr := storeApp(t, testPlan(1, 2), "run", "-q", "--no-store", "--report", html, "--report-png", pngs, "x.yaml"); code != 0 {
		t.Fatalf("--report-png into a new directory: exit %d: %s", code, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(pngs, "*.png")); len(files) == 0 {
		t.Error("no PNGs in the new directory")
	}
}
