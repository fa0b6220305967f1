package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/store/pgtest"
)

func testOutput() report.Output {
	res := func(size int64, flows bool) metrics.SizeResult {
		r := metrics.SizeResult{
			Completion:   metrics.Completion{SizeBytes: size, Ranks: 8, Timing: metrics.Timing{CCTS: float64(size) / 4e10, IdealS: float64(size) / 5e10}},
			FabricTotals: metrics.FabricTotals{PFCPauses: 3, ECNMarks: 7},
			Outcome:      metrics.Outcome{Complete: true, IterationsS: []float64{1e-3, 2e-3}},
			WallS:        0.25,
		}
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

// backends runs fn once per backend, each with a fresh empty database:
// SQLite in a temporary file, PostgreSQL on the test server (pgtest).
func backends(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "sqlite:"+filepath.Join(t.TempDir(), "sub", "runs.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Database(t)) })
}

func openT(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRoundTrip(t *testing.T) { backends(t, testRoundTrip) }

func testRoundTrip(t *testing.T, dsn string) {
	s := openT(t, dsn)
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
	// The directory it started from is kept, to find its files again.
	if wd, _ := os.Getwd(); m.WorkDir != wd || m.ScenarioPath() != filepath.Join(wd, m.ScenarioFile) || !filepath.IsAbs(m.ScenarioPath()) {
		t.Errorf("work dir %q, scenario path %q; want %q", m.WorkDir, m.ScenarioPath(), wd)
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
	for _, table := range []string{"results", "variants", "flow_records"} {
		var n int
		if err := s.db.QueryRow(s.d.rebind(`SELECT COUNT(*) FROM `+table+` WHERE run_id = ?`), id).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d rows left in %s after delete (%v)", n, table, err)
		}
	}
	// Notes and date filters.
	if err := s.SetNote(id2, "after the firmware update"); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Meta(id2); m.Note != "after the firmware update" {
		t.Errorf("note %q", m.Note)
	}
	day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		f    Filter
		want int
	}{{Filter{Since: day}, 1}, {Filter{Since: day.AddDate(0, 0, 1)}, 0}, {Filter{Until: day}, 0}, {Filter{Until: day.AddDate(0, 0, 1)}, 1}} {
		if rs, _ := s.Runs(c.f); len(rs) != c.want {
			t.Errorf("runs %+v: %d, want %d", c.f, len(rs), c.want)
		}
	}
}

func TestUnknownID(t *testing.T) { backends(t, testUnknownID) }

func testUnknownID(t *testing.T, dsn string) {
	s := openT(t, dsn)
	checks := map[string]error{}
	_, _, checks["run"] = s.Run(99)
	checks["delete"] = s.Delete(99)
	checks["tag"] = s.Tag(99, "x")
	checks["finish"] = s.FinishRun(99, StatusDone, "")
	checks["note"] = s.SetNote(99, "x")
	for what, err := range checks {
		if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "run 99") {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := ParseID("abc"); err == nil {
		t.Error("ParseID(abc) succeeded")
	}
}

func TestMigrationsAndNewerSchema(t *testing.T) { backends(t, testMigrationsAndNewerSchema) }

func testMigrationsAndNewerSchema(t *testing.T, dsn string) {
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	id := save(t, s, testOutput(), StatusRunning)
	s.Close()
	// Reopening at the same version keeps the data.
	s, err = Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.Meta(id); err != nil || m.Status != StatusRunning || m.Rows != 4 {
		t.Fatalf("reopened: %+v %v", m, err)
	}
	// A database from a newer fabriclab is refused with one line.
	if _, err := s.db.Exec(s.d.rebind(`UPDATE schema_version SET version = ?`), SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(dsn)
	want := fmt.Sprintf("has schema %d, this fabriclab knows up to %d", SchemaVersion+1, SchemaVersion)
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

// TestMigrateFromVersion1 opens a database made by the first schema (before
// flow records had their own table) and checks it is upgraded in place.
func TestMigrateFromVersion1(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		// Everything later migrations added goes.
		for _, q := range []string{`DROP TABLE flow_records`, `ALTER TABLE runs DROP COLUMN expected_rows`, `ALTER TABLE runs DROP COLUMN queue`, `ALTER TABLE runs DROP COLUMN work_dir`, `ALTER TABLE runs DROP COLUMN engine`} {
			if _, err := s.db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.db.Exec(`UPDATE schema_version SET version = 1`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = openT(t, dsn)
		want := testOutput()
		id := save(t, s, want, StatusDone)
		if got, _, err := s.Run(id); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("after migration: %v", err)
		}
	})
}

func TestPostgresBadURL(t *testing.T) {
	// Nothing listens on port 1: a one-line error naming the server, no password.
	_, err := Open("postgres://fab:secret@127.0.0.1:1/x?sslmode=disable")
	if err == nil || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "secret") ||
		!strings.Contains(err.Error(), "cannot open database postgres://fab:xxxxx@127.0.0.1:1/x") {
		t.Fatalf("unreachable server: %v", err)
	}
	if _, err := Open("postgres://%zz"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad URL: %v", err)
	}
}

// TestPostgresConcurrentOpen: two processes opening a fresh database at
// once must not both run the migrations.
func TestPostgresConcurrentOpen(t *testing.T) {
	dsn := pgtest.Database(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := Open(dsn)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
