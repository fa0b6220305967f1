package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"fabriclab/report"
)

// Output files (--json, --csv) are checked before any job starts, so that a
// bad path fails at once instead of after a long run, and written at the end
// without ever leaving a half-written file or clobbering a previous result:
//
//   - A regular file (or a path that does not exist yet) is written to a
//     temporary file in the same directory, which is renamed over the path
//     only once it is complete. If anything fails, or the process is killed,
//     the previous content of the path is untouched.
//   - Anything else that is not a directory (/dev/stdout, a pipe such as
//     bash's >(jq .), a terminal) cannot be renamed over and is written
//     directly.
//
// The check opens the path with O_WRONLY|O_CREATE but never truncates it; a
// file that the check created is removed again at once, so a run that never
// gets to write leaves nothing behind.

// checkOutputDir reports whether dir (--report-png) can take files at
// the end of the run: a directory that exists and is writable, or one
// that can be made inside the nearest one that exists. Nothing is left
// behind.
func checkOutputDir(dir string) error {
	for d := dir; ; {
		st, err := os.Stat(d)
		switch {
		case err == nil && !st.IsDir():
			return fmt.Errorf("cannot write into %s: %s is not a directory", dir, d)
		case err == nil:
			f, err := os.CreateTemp(d, ".fabriclab-check-*")
			if err != nil {
				return fmt.Errorf("cannot write into %s: %w", dir, unwrapPath(err))
			}
			f.Close()
			return os.Remove(f.Name())
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("cannot write into %s: %w", dir, unwrapPath(err))
		}
		parent := filepath.Dir(d)
		if parent == d {
			return fmt.Errorf("cannot write into %s: no part of it exists", dir)
		}
		d = parent
	}
}

// checkOutput reports whether path (not "" or "-") can be written at the
// end of the run.
func checkOutput(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	}
	st, err := os.Stat(path) // follows symlinks: the target is what matters
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Create it to prove we can, then remove it again.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
		}
		f.Close()
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
		}
		return nil
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	case st.IsDir():
		return fmt.Errorf("cannot write %s: it is a directory", path)
	case st.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0:
		// Opening a FIFO for writing blocks until a reader comes, and
		// closing it again would send that reader an EOF: do not test.
		return nil
	}
	// Existing file or device: open for writing without truncating.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	f.Close()
	if st.Mode().IsRegular() {
		// It will be replaced by a rename: the directory must be writable.
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
		}
		tmp, err := createTemp(target, 0o666)
		if err != nil {
			// The file is there, but its directory takes no new file (a
			// file of /proc says "no such file" here).
			return fmt.Errorf("cannot write %s: it would be replaced by renaming a new file over it, and no file can be created in %s (%w)", path, filepath.Dir(target), unwrapPath(err))
		}
		tmp.Close()
		os.Remove(tmp.Name())
	}
	return nil
}

// writeTo writes with fn to path: nothing for "", stdout for "-", else the
// file as described at the top of this file.
func writeTo(stdout io.Writer, path string, fn func(io.Writer) error) error {
	switch path {
	case "":
		return nil
	case "-":
		return fn(stdout)
	}
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return fmt.Errorf("cannot write %s: it is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return f.Close()
	}

	// A regular file or none yet: write a temporary file next to the
	// target (the end of a symlink chain, so the link is kept) and rename.
	target := path
	perm, keepMode := fs.FileMode(0o666), false // new file: less the umask, like os.Create
	if err == nil {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return err
		}
		perm, keepMode = st.Mode().Perm(), true
	}
	tmp, err := createTemp(target, perm)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	// A signal that quits the process now removes the temporary file.
	defer processStop.onQuit(func() { os.Remove(tmp.Name()) })()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fn(tmp); err != nil {
		return fail(err)
	}
	if keepMode {
		// Keep the mode of the file being replaced (the umask may have
		// narrowed it at creation).
		if err := tmp.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	return nil
}

// createTemp creates a new file "PATH.RANDOM.tmp" next to path, with perm
// less the umask.
func createTemp(path string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		name := path + "." + strconv.FormatUint(uint64(rand.Uint32()), 36) + ".tmp"
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file next to %s", path)
}

// unwrapPath drops the "open PATH:" prefix of a *PathError when the message
// already names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// runJSON is the JSON of run --json and export --json: report.Output's
// keys, unchanged, then "missing" when the run planned jobs that have no
// result row.
type runJSON struct {
	report.Output
	// Missing is what the "# missing:" block after run's and show's tables
	// says: the jobs the run planned that have no result row, and why. A
	// run stopped at a fatal error (on real hosts, an agent that refused
	// the token: every later job would fail alike) has the failed job's
	// row, with its "error", and none for the jobs that never started; an
	// interrupted run ("interrupted": true) none for the jobs Ctrl-C
	// stopped before they started or measured anything; a saved run none
	// for the rows it could not save, or has not yet. No key when every
	// planned job has its row.
	Missing *missingJSON `json:"missing,omitempty"`
}

// missingJSON is the "missing" object of runJSON.
type missingJSON struct {
	// Planned is how many jobs the run planned (variants × sweep points ×
	// sizes); no key when unknown (a saved run from before it was saved).
	Planned int `json:"planned,omitempty"`
	// Count is how many of them have no result row.
	Count int `json:"count"`
	// Reason is why, as the "# missing:" line says it.
	Reason string `json:"reason,omitempty"`
	// Jobs are those jobs, by variant (in the run's order) then size, as
	// the "variants" name them. A saved run's are its saved scenario
	// expanded again, less the rows it saved; when that plan could not be
	// rebuilt there is no key, JobsUnknown says why and
	// VariantsWithoutRows names the variants with no row at all.
	Jobs                []missingJob `json:"jobs,omitempty"`
	JobsUnknown         string       `json:"jobs_unknown,omitempty"`
	VariantsWithoutRows []string     `json:"variants_without_rows,omitempty"`
}

// missingJob is a job of missingJSON: a variant (or sweep point) at one
// data size.
type missingJob struct {
	Variant   string `json:"variant"`
	SizeBytes int64  `json:"size_bytes"`
}

// missingOf is u as runJSON's "missing", nil when nothing is missing.
func missingOf(u report.Unsaved) *missingJSON {
	if u.None() {
		return nil
	}
	m := &missingJSON{Planned: max(u.Planned, 0), Count: max(u.Missing, len(u.Jobs)), Reason: u.Why}
	for _, j := range u.Jobs {
		m.Jobs = append(m.Jobs, missingJob{Variant: j.Variant, SizeBytes: j.SizeBytes})
	}
	if u.Jobs == nil {
		m.JobsUnknown, m.VariantsWithoutRows = u.NoPlan, u.Empty
	}
	return m
}

// writeRunJSON writes out as report.WriteJSON does (the same keys and
// values), followed by "missing" for the jobs of u (notRunJobs for run,
// store.Unsaved for a saved run) when there are any.
func writeRunJSON(w io.Writer, out report.Output, u report.Unsaved) error {
	missing := missingOf(u)
	return report.WriteJSONOf(w, out, func(o report.Output) any {
		if missing == nil {
			return o
		}
		return runJSON{Output: o, Missing: missing}
	})
}
