package main

import (
	"os"

	"fabriclab/internal/realpath"
	"fabriclab/scenario"
	"fabriclab/store"
)

// An output file must never be one of the files the command reads or
// keeps: writing the results over the database would destroy every saved
// run, over the scenario or a file it references would lose the input.
// Paths are compared as the kernel sees them: symlinks followed, "./" and
// ".." cleaned, and hard links caught by comparing the files themselves.

// guarded is a file an output must not replace, with what it is for the
// message ("the results database (--db r.db)").
type guarded struct {
	path, what string
}

// guardDB returns the files of the SQLite database that dsn names (the
// database and its -wal, -shm and -journal files); none for PostgreSQL.
func guardDB(flag string) []guarded {
	dsn := flag
	if dsn == "" {
		var err error
		if dsn, err = defaultDB(); err != nil {
			return nil
		}
	}
	path, ok := store.SQLitePath(dsn)
	if !ok {
		return nil
	}
	// SQLite names its -wal and -shm files after the file it opens, the
	// end of the link chain: guard those, as well as the link itself.
	path = realpath.Resolve(path)
	what := "the results database"
	if flag != "" {
		what += " (--db " + flag + ")"
	}
	var out []guarded
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		out = append(out, guarded{path + suffix, what})
	}
	return out
}

// refGuards are the files p's scenario reads.
func refGuards(p *plan) []guarded {
	var refs []guarded
	for _, r := range p.Refs {
		refs = append(refs, guarded{r, "a file the scenario reads"})
	}
	return refs
}

// savedRunGuards are the files run m read when it ran, its scenario and
// what that names, found from the directory it ran in and from here
// (relative paths are the ones typed then), as far as they exist: export and report must not write
// over them. Only worked out when some output is a file (the saved
// scenario is read again for it).
func savedRunGuards(m store.Meta, outputs [][2]string) []guarded {
	files := false
	for _, o := range outputs {
		files = files || o[1] != "" && o[1] != "-"
	}
	if m.ScenarioFile == "" || !files {
		return nil
	}
	var g []guarded
	add := func(path, what string) {
		if _, err := os.Stat(path); err == nil {
			g = append(g, guarded{path, what})
		}
	}
	// Where the run read them, and where they are found from here: the
	// directory it ran in may have moved (or be another machine's).
	// The scenario is read without validating it: one that no longer
	// validates (a size distribution gone) still names its files.
	for _, path := range m.ScenarioPaths() {
		add(path, "the run's scenario file")
		o := scenario.Options{Sets: m.Sets, Sweeps: m.Sweeps, MaxBytes: int64(len(m.ScenarioText)) + 1, SavedRun: true, Unchecked: true}
		if f, err := scenario.ParseOptions(path, []byte(m.ScenarioText), o); err == nil {
			for _, r := range f.ReferencedFiles() {
				add(r, "a file the run's scenario reads")
			}
		}
	}
	return g
}

// checkClobber refuses an output (flag name → path) that is a guarded file
// or the same file as another output. "" and "-" (stdout) are not files.
func checkClobber(outputs [][2]string, guards []guarded) error {
	for i, o := range outputs {
		flag, path := o[0], o[1]
		if path == "" || path == "-" {
			continue
		}
		for _, g := range guards {
			if sameFile(path, g.path) {
				return &exitErr{exitUsage, flag + " " + path + " is " + g.what + "; writing it would destroy it: choose another output file"}
			}
		}
		for _, p := range outputs[:i] {
			if p[1] != "" && p[1] != "-" && sameFile(path, p[1]) {
				return &exitErr{exitUsage, p[0] + " and " + flag + " cannot both write to " + path}
			}
		}
	}
	return nil
}

// sameFile reports whether a and b name the same file, existing or not.
func sameFile(a, b string) bool {
	ra, rb := realpath.Resolve(a), realpath.Resolve(b)
	if ra == rb {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
