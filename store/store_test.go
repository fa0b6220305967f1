package store

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
)

func testOutput() report.Output {
	res := func(size int64, flows bool) metrics.SizeResult {
		r := metrics.SizeResult{SizeBytes: size, Ranks: 8, CCTS: float64(size) / 4e10, IdealS: float64(size) / 5e10,
			PFCPauses: 3, ECNMarks: 7, Complete: true, WallS: 0.25, IterationsS: []float64{1e-3, 2e-3}}
		r.Finish(metrics.AllToAll)
		if flows {
			r.Records = []metrics.FlowRecord{{ID: 1, Src: 0, Dst: 1, Bytes: size, StartS: 0, EndS: 1e-3, FCTS: 1e-3, Done: true}}
		}
		return r
	}
	failed := res(4<<20, false)
	failed.Complete, failed.Error = false, "boom"
	return report.Output{
		Scenario: "rt", ScenarioFile: "rt.yaml", Seed: 1<<63 + 5, Sets: []string{"seed=9"}, Sweeps: []string{"workload.qps=1,2"},
		Version: "dev", Started: "2025-06-01T12:00:00Z", Finished: "2025-06-01T12:01:00Z",
		Variants: []report.VariantResult{
			{Name: "a", Collective: "alltoall", Results: []metrics.SizeResult{res(1<<20, true), res(2<<20, true)}},
			{Name: "b", Collective: "alltoall", Parent: "x", Sweep: report.Point{{Key: "workload.qps", Value: "2"}},
				Results: []metrics.SizeResult{res(1<<20, false), failed}},
			{Name: "empty", Collective: "alltoall", Results: []metrics.SizeResult{}},
		},
	}
}

func save(t *testing.T, s *Store, o report.Output, status string) int64 {
	t.Helper()
	id, err := s.BeginRun(Meta{Name: o.Scenario, ScenarioFile: o.ScenarioFile, ScenarioText: "name: rt\n", Seed: o.Seed,
		Sets: o.Sets, Sweeps: o.Sweeps, Version: o.Version, Started: o.Started}, o.Variants)
	if err != nil {
		t.Fatal(err)
	}
	for vi, v := range o.Variants {
		for si, r := range v.Results {
			if err := s.AddResult(id, vi, si, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if status != StatusRunning {
		if err := s.FinishRun(id, status, o.Finished); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "runs.db")
	s, err := Open("sqlite:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := testOutput()
	id := save(t, s, want, StatusDone)
	got, m, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	if m.Status != StatusDone || m.Variants != 3 || m.Rows != 4 || m.ScenarioText != "name: rt\n" || m.Stale() {
		t.Errorf("meta %+v", m)
	}
	// Interrupted status shows in the Output.
	id2 := save(t, s, want, StatusInterrupted)
	got, _, _ = s.Run(id2)
	if !got.Interrupted {
		t.Error("interrupted run not marked interrupted")
	}
	// Tags, filters, delete.
	if err := s.Tag(id, "base", "pfc", "base"); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.Runs(Filter{Tag: "base"}); len(rs) != 1 || rs[0].ID != id || !reflect.DeepEqual(rs[0].Tags, []string{"base", "pfc"}) {
		t.Errorf("runs by tag: %+v", rs)
	}
	if rs, _ := s.Runs(Filter{Name: "r"}); len(rs) != 2 {
		t.Errorf("runs by name: %d", len(rs))
	}
	if rs, _ := s.Runs(Filter{Name: "zzz"}); len(rs) != 0 {
		t.Errorf("runs by other name: %d", len(rs))
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Run(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run: %v", err)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM results WHERE run_id = ?`, id).Scan(&n)
	if n != 0 {
		t.Errorf("%d results left after delete", n)
	}
}

func TestUnknownID(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := map[string]error{}
	_, _, checks["run"] = s.Run(99)
	checks["delete"] = s.Delete(99)
	checks["tag"] = s.Tag(99, "x")
	checks["finish"] = s.FinishRun(99, StatusDone, "")
	for what, err := range checks {
		if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "run 99") {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := ParseID("abc"); err == nil {
		t.Error("ParseID(abc) succeeded")
	}
}

func TestMigrationsAndNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id := save(t, s, testOutput(), StatusRunning)
	s.Close()
	// Reopening at the same version keeps the data.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.Meta(id); err != nil || m.Status != StatusRunning || m.Rows != 4 {
		t.Fatalf("reopened: %+v %v", m, err)
	}
	s.Close()
	// A database from a newer fabriclab is refused with one line.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(path)
	want := "has schema 2, this fabriclab knows up to 1"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("newer schema: %v, want %q", err, want)
	}
}

func TestUnwritablePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A path below a regular file cannot be created, even by root.
	_, err := Open(filepath.Join(file, "runs.db"))
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "cannot open database") {
		t.Fatalf("path below a file: %v", err)
	}
	if os.Geteuid() == 0 {
		return // root writes read-only files
	}
	ro := filepath.Join(dir, "ro.db")
	s, err := Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Remove(ro + "-wal")
	os.Remove(ro + "-shm")
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ro); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("read-only file: %v", err)
	}
}

func TestPostgresNotYet(t *testing.T) {
	if _, err := Open("postgres://localhost/x"); err == nil {
		t.Fatal("postgres DSN accepted")
	}
}
