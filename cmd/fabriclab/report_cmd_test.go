package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
}
