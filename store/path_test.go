package store

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// entries lists dir's names, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestPathIsAPath: defect 13, --db paths were parsed as URIs: `b#c.db`
// wrote `b`, `d%20e.db` wrote `d e.db`, `a?mode=memory` became options.
// Open and OpenReadOnly use exactly the file named, relative or absolute,
// with or without the sqlite: prefix.
func TestPathIsAPath(t *testing.T) {
	names := []string{"b#c.db", "d%20e.db", "a?mode=memory", "x%3Fy#z?w.db", ":memory:", "file:f.db", "sp ace.db", "pct%.db", "q?.db"}
	for _, name := range names {
		for _, form := range []string{"relative", "absolute", "sqlite:relative", "sqlite:absolute", "sub/relative"} {
			t.Run(name+"/"+form, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				path := name
				if strings.HasSuffix(form, "absolute") {
					path = filepath.Join(dir, name)
				}
				check := dir
				if strings.HasPrefix(form, "sub/") {
					path = filepath.Join("sub", name)
					check = filepath.Join(dir, "sub")
				}
				dsn := path
				if strings.HasPrefix(form, "sqlite:") {
					dsn = "sqlite:" + path
				}
				if p, ok := SQLitePath(dsn); !ok || p != path {
					t.Errorf("SQLitePath(%q) = %q, %v, want %q", dsn, p, ok, path)
				}
				s, err := Open(dsn)
				if err != nil {
					t.Fatal(err)
				}
				id := save(t, s, testOutput(), StatusDone)
				s.Close()
				want := []string{name}
				if strings.HasPrefix(form, "sub/") {
					if got := entries(t, dir); !reflect.DeepEqual(got, []string{"sub"}) {
						t.Errorf("%s holds %q, want only sub", dir, got)
					}
				}
				if got := entries(t, check); !reflect.DeepEqual(got, want) {
					t.Fatalf("Open(%q) left %q, want %q", dsn, got, want)
				}
				// It is a real database, with the run in it. A read-only
				// reader of a WAL database leaves SQLite's empty -wal and
				// its -shm, named after exactly that file; the next
				// writer removes them.
				for _, open := range []func(string) (*Store, error){OpenReadOnly, Open} {
					s, err := open(dsn)
					if err != nil {
						t.Fatal(err)
					}
					if m, err := s.Meta(id); err != nil || m.Rows != 4 {
						t.Errorf("reopened: %+v %v", m, err)
					}
					s.Close()
					if got := entries(t, check); !reflect.DeepEqual(got, want) && !reflect.DeepEqual(got, []string{name, name + "-shm", name + "-wal"}) {
						t.Errorf("after reopening %q: %q", dsn, got)
					}
				}
				if got := entries(t, check); !reflect.DeepEqual(got, want) {
					t.Errorf("after reopening %q: %q, want %q", dsn, got, want)
				}
			})
		}
	}
}

// TestNotARegularFile: defect 13, --db /dev/null created /dev/null-journal
// and --db ” silently used the default. An existing file that is not a
// regular file, an empty path, a directory name: one-line errors, and
// nothing created.
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sub := filepath.Join(dir, "subdir")
	os.Mkdir(sub, 0o755)
	link := filepath.Join(dir, "link-to-null")
	os.Symlink("/dev/null", link)
	before := entries(t, dir)
	_, devNullJournal := os.Stat("/dev/null-journal")
	cases := map[string]string{
		"/dev/null":                     "not a regular file",
		"sqlite:/dev/null":              "not a regular file",
		"/dev/zero":                     "not a regular file",
		fifo:                            "not a regular file",
		sock:                            "not a regular file",
		sub:                             "not a regular file",
		link:                            "not a regular file",
		"":                              "empty",
		"sqlite:":                       "empty",
		sub + "/":                       "",
		dir + "/new/":                   "",
		filepath.Join(dir, "a\x00b.db"): "",
		filepath.Join(dir, "."):         "",
	}
	for dsn, want := range cases {
		for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
			s, err := open(dsn)
			if err == nil {
				s.Close()
				t.Errorf("%s(%q) succeeded", name, dsn)
				continue
			}
			oneLineErr(t, name, err)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%q): %v, want %q", name, dsn, err, want)
			}
		}
	}
	if got := entries(t, dir); !reflect.DeepEqual(got, before) {
		t.Errorf("refused paths created files: %q, was %q", got, before)
	}
	if _, err := os.Stat("/dev/null-journal"); err == nil && devNullJournal != nil {
		t.Error("/dev/null-journal was created")
	}
	if p, ok := SQLitePath("postgres://u@h/db"); ok || p != "" {
		t.Errorf("SQLitePath(postgres) = %q, %v", p, ok)
	}
	if p, ok := SQLitePath(""); ok || p != "" {
		t.Errorf("SQLitePath(\"\") = %q, %v", p, ok)
	}
	// A symbolic link to a regular file is that file.
	real := filepath.Join(dir, "real.db")
	s, err := Open(real)
	if err != nil {
		t.Fatal(err)
	}
	id := save(t, s, testOutput(), StatusDone)
	s.Close()
	os.Symlink(real, filepath.Join(dir, "link.db"))
	s, err = OpenReadOnly(filepath.Join(dir, "link.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(id); err != nil {
		t.Error(err)
	}
}
