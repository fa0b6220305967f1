package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fabriclab/internal/testmount"
	"fabriclab/metrics"
)

// needTmpfs mounts a tmpfs of its own for t (testmount.Tmpfs).
func needTmpfs(t *testing.T, size string) string { return testmount.Tmpfs(t, size) }

// readOnlyDir returns a directory to create files in and a function that
// then makes the directory and its files truly read-only: as root (who
// ignores permission bits) a tmpfs remounted read-only, else mode 0444
// files in a mode 0555 directory.
func readOnlyDir(t *testing.T) (string, func()) {
	t.Helper()
	if os.Geteuid() == 0 {
		dir := needTmpfs(t, "16m")
		return dir, func() {
			t.Helper()
			if err := testmount.ReadOnly(dir); err != nil {
				t.Fatalf("remounting %s read-only: %v", dir, err)
			}
			mustBeReadOnly(t, dir)
		}
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	return dir, func() {
		t.Helper()
		es, _ := os.ReadDir(dir)
		for _, e := range es {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o444); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		mustBeReadOnly(t, dir)
	}
}

func mustBeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644); err == nil {
		t.Fatalf("%s is still writable", dir)
	}
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_WRONLY, 0); err == nil {
			f.Close()
			t.Fatalf("%s is still writable", e.Name())
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// writesRefused checks that a read-only store refuses every write, through
// its methods and in SQL, with one-line errors.
func writesRefused(t *testing.T, s *Store, id int64) {
	t.Helper()
	_, beginErr := s.BeginRun(Meta{Name: "x"}, nil)
	errs := map[string]error{
		"BeginRun":  beginErr,
		"AddResult": s.AddResult(id, 0, 9, metrics.SizeResult{}),
		"FinishRun": s.FinishRun(id, StatusFailed, "now"),
		"Tag":       s.Tag(id, "x"),
		"SetNote":   s.SetNote(id, "x"),
		"Delete":    s.Delete(id),
	}
	_, errs["SQL"] = s.db.Exec(`CREATE TABLE written (x INTEGER)`)
	_, errs["SQL update"] = s.db.Exec(`UPDATE runs SET note = 'x'`)
	for what, err := range errs {
		if err == nil {
			t.Errorf("%s on a read-only store succeeded", what)
		}
		oneLineErr(t, what, err)
	}
}

// TestOpenReadOnly: defect 12, `runs` and `show` failed on a read-only
// database because opening always migrates. OpenReadOnly reads a database
// on a read-only file system, with or without its WAL files.
func TestOpenReadOnly(t *testing.T) {
	want := testOutput()
	t.Run("clean", func(t *testing.T) {
		dir, makeRO := readOnlyDir(t)
		path := filepath.Join(dir, "runs.db")
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		id := save(t, s, want, StatusDone)
		s.Close()
		makeRO()
		before := entries(t, dir)
		if _, err := Open(path); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open on a read-only file system: %v", err)
		}
		ro, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		got, m, err := ro.Run(id)
		if err != nil || !reflect.DeepEqual(got, want) || m.Rows != 4 {
			t.Fatalf("read-only: %v", err)
		}
		if rs, err := ro.Runs(Filter{}); err != nil || len(rs) != 1 {
			t.Fatalf("runs: %d %v", len(rs), err)
		}
		writesRefused(t, ro, id)
		if got := entries(t, dir); !reflect.DeepEqual(got, before) {
			t.Errorf("files %q, was %q", got, before)
		}
	})
	// A copy taken while a writer had it open: the last run is in the WAL.
	for _, withShm := range []bool{true, false} {
		name := "wal and shm"
		if !withShm {
			name = "wal without shm"
		}
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "runs.db")
			w, err := Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			save(t, w, want, StatusDone)
			id := save(t, w, want, StatusDone)
			if fi, err := os.Stat(src + "-wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("no WAL to test with: %v", err)
			}
			dir, makeRO := readOnlyDir(t)
			path := filepath.Join(dir, "runs.db")
			copyFile(t, src, path)
			copyFile(t, src+"-wal", path+"-wal")
			if withShm {
				copyFile(t, src+"-shm", path+"-shm")
			}
			makeRO()
			ro, err := OpenReadOnly(path)
			if !withShm && err != nil {
				// SQLite cannot read a WAL without its index where it
				// cannot create one: a one-line error naming the way out.
				t.Log(err)
				oneLineErr(t, "OpenReadOnly", err)
				if !strings.Contains(err.Error(), "-shm") {
					t.Errorf("error does not say why: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			// Never the file without its WAL (immutable would be that).
			if got, m, err := ro.Run(id); err != nil || !reflect.DeepEqual(got, want) || m.Rows != 4 {
				t.Fatalf("read-only with a WAL: %v", err)
			}
			writesRefused(t, ro, id)
		})
	}
	t.Run("older schema", func(t *testing.T) {
		dir, makeRO := readOnlyDir(t)
		path := filepath.Join(dir, "runs.db")
		downgrade(t, path)
		makeRO()
		_, err := OpenReadOnly(path)
		mustNeedMigration(t, err)
	})
	t.Run("missing", func(t *testing.T) {
		dir, makeRO := readOnlyDir(t)
		makeRO()
		_, err := OpenReadOnly(filepath.Join(dir, "none", "runs.db"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing database: %v", err)
		}
		oneLineErr(t, "missing", err)
	})
}

// downgrade makes dsn a database of schema 2 (before expected_rows,
// queue, work_dir and engine) with a run in it, and returns the run's id.
func downgrade(t *testing.T, dsn string) int64 {
	t.Helper()
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := save(t, s, testOutput(), StatusDone)
	for _, q := range []string{`ALTER TABLE runs DROP COLUMN expected_rows`, `ALTER TABLE runs DROP COLUMN queue`, `ALTER TABLE runs DROP COLUMN work_dir`, `ALTER TABLE runs DROP COLUMN engine`, `UPDATE schema_version SET version = 2`} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func mustNeedMigration(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("an older schema opened read-only")
	}
	oneLineErr(t, "older schema", err)
	if !errors.Is(err, ErrMigrationNeeded) || !strings.Contains(err.Error(), fmt.Sprintf("has schema 2, this fabriclab needs %d", SchemaVersion)) ||
		!strings.Contains(err.Error(), "fabriclab tag") {
		t.Errorf("older schema: %v", err)
	}
}

// rawVersion reads schema_version without the store.
func rawVersion(t *testing.T, dsn string) int {
	t.Helper()
	driver, name := "sqlite", strings.TrimPrefix(dsn, "sqlite:")
	if IsPostgres(dsn) {
		driver, name = "pgx", dsn
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOpenReadOnlyBackends: OpenReadOnly on both backends, next to a
// writer: it reads, never writes, never migrates, and says when a
// migration is needed.
func TestOpenReadOnlyBackends(t *testing.T) { backends(t, testOpenReadOnly) }

func testOpenReadOnly(t *testing.T, dsn string) {
	// Nothing there yet.
	if IsPostgres(dsn) {
		_, err := OpenReadOnly(dsn)
		if !errors.Is(err, ErrMigrationNeeded) || !strings.Contains(err.Error(), "no fabriclab tables") {
			t.Errorf("empty database: %v", err)
		}
		oneLineErr(t, "empty", err)
	} else {
		path := strings.TrimPrefix(dsn, "sqlite:")
		if _, err := OpenReadOnly(dsn); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("no file: %v", err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("OpenReadOnly created the directory: %v", err)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, nil, 0o644)
		_, err := OpenReadOnly(dsn)
		if !errors.Is(err, ErrMigrationNeeded) || !strings.Contains(err.Error(), "no fabriclab tables") {
			t.Errorf("empty file: %v", err)
		}
		if fi, _ := os.Stat(path); fi.Size() != 0 {
			t.Errorf("OpenReadOnly wrote %d bytes to an empty file", fi.Size())
		}
		os.Remove(path)
	}
	w := openT(t, dsn)
	want := testOutput()
	id := save(t, w, want, StatusDone)
	ro, err := OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, m, err := ro.Run(id); err != nil || !reflect.DeepEqual(got, want) || m.Status != StatusDone {
		t.Fatalf("read-only: %v", err)
	}
	writesRefused(t, ro, id)
	// It sees what a writer commits meanwhile.
	id2 := save(t, w, want, StatusInterrupted)
	if rs, err := ro.Runs(Filter{}); err != nil || len(rs) != 2 || rs[1].ID != id2 || rs[1].Status != StatusInterrupted {
		t.Errorf("runs after a write: %+v %v", rs, err)
	}
	ro.Close()
	w.Close()

	// A newer schema is refused, as by Open.
	func() {
		s := openT(t, dsn)
		defer s.Close()
		if _, err := s.db.Exec(s.d.rebind(`UPDATE schema_version SET version = ?`), SchemaVersion+1); err != nil {
			t.Fatal(err)
		}
	}()
	if _, err := OpenReadOnly(dsn); err == nil || !strings.Contains(err.Error(), "this fabriclab knows up to") {
		t.Errorf("newer schema: %v", err)
	}
}

// TestReadOnlyOlderSchema: an older schema opened read-only is a one-line
// error saying how to migrate, and nothing is migrated; a write command's
// Open then migrates it (old runs have no expected row count).
func TestReadOnlyOlderSchema(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		id := downgrade(t, dsn)
		_, err := OpenReadOnly(dsn)
		mustNeedMigration(t, err)
		if v := rawVersion(t, dsn); v != 2 {
			t.Fatalf("OpenReadOnly migrated to %d", v)
		}
		s := openT(t, dsn)
		s.Close()
		ro, err := OpenReadOnly(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		m, err := ro.Meta(id)
		if err != nil || m.Expected != 0 || m.Missing() != 0 || m.Rows != 4 {
			t.Errorf("migrated run: %+v %v", m, err)
		}
	})
}

// TestReadOnlySchema5: a database of schema 5 (before runs.engine) is read
// as is by OpenReadOnly, its runs with no engine (as the migration would
// give them), and not migrated: show, export and report of a database an
// older fabriclab wrote need no writing command first.
func TestReadOnlySchema5(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		want := testOutput()
		id := save(t, s, want, StatusDone)
		for _, q := range []string{`ALTER TABLE runs DROP COLUMN engine`, `UPDATE schema_version SET version = 5`} {
			if _, err := s.db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		ro, err := OpenReadOnly(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if got, m, err := ro.Run(id); err != nil || !reflect.DeepEqual(got, want) || m.Engine != "" || m.Status != StatusDone {
			t.Errorf("Run of schema 5: %+v %v", m, err)
		}
		if ms, err := ro.Runs(Filter{}); err != nil || len(ms) != 1 || ms[0].ID != id {
			t.Errorf("Runs of schema 5: %+v %v", ms, err)
		}
		writesRefused(t, ro, id)
		if v := rawVersion(t, dsn); v != 5 {
			t.Errorf("OpenReadOnly migrated to %d", v)
		}
	})
}
