package queue

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"fabriclab/internal/inputfile"
	"fabriclab/scenario"
	"fabriclab/workload"
)

// A job's files travel as a bundle: a gzip-compressed tar of the scenario
// file and every file it references (flow lists, routing tables, size
// distributions, by path or by short name), laid out as they are on the
// submitting machine relative to each other, so that the scenario's
// relative paths find them. A worker unpacks it into a private temporary
// directory and loads the scenario from there (Unpack, then CheckCarried):
// it reads nothing of its own filesystem.
//
// The tree is rooted as many directories above the scenario's as its
// paths climb (".."), and keeps the real names of those directories, so
// two files that differ on the submitting machine never meet in the
// bundle. A size distribution named by a short name (w5, websearch…) goes
// where a worker looks first for it, shared/data/workloads beside the
// scenario's parent directory.

// Limits on what a bundle may hold. A worker checks them while unpacking,
// before it writes anything past them.
var (
	// MaxBundle bounds a bundle as it travels (compressed), checked when
	// a job is submitted and when a worker reads it.
	MaxBundle int64 = 64 << 20
	// maxUnpacked bounds the files of a bundle together, unpacked.
	maxUnpacked int64 = 1 << 30
	// maxFile bounds one file: what the scenario loader reads of a
	// referenced file.
	maxFile int64 = inputfile.Limit
	// maxFiles bounds how many files a bundle holds.
	maxFiles = 4096
	// maxDepth bounds how far above the scenario's directory its paths may
	// climb.
	maxDepth = 32
	// maxPath bounds a path inside a bundle.
	maxPath = 1024
)

// packed is a bundle and where the scenario is in it.
type packed struct {
	Scenario string // slash-separated path of the scenario file in the bundle
	Data     []byte // the gzip-compressed tar
	Digest   string // hex SHA-256 of Data
}

// source is a file to put in a bundle: its path in the bundle and on disk.
type source struct{ at, from string }

// pack bundles f (loaded from disk, with its options applied) and the files
// its variants reference.
func pack(f *scenario.File) (packed, error) {
	dir := f.Dir
	var srcs []source
	up := 0 // how many directories above dir the paths climb
	carried := map[string]bool{}
	// rel is a file's path relative to the scenario's directory.
	var rels []struct{ rel, from string }
	addPath := func(key, name string) error {
		if name == "" {
			return nil
		}
		if filepath.IsAbs(name) {
			return fmt.Errorf("%s %s is an absolute path: a queued job carries the files a scenario names by their paths relative to it, so a worker can lay them out; write it relative to the scenario file", key, name)
		}
		from := filepath.Clean(scenario.RelativeTo(dir, name))
		rel := filepath.Clean(name)
		rels = append(rels, struct{ rel, from string }{rel, from})
		carried[from] = true
		return nil
	}
	addWorkload := func(key string, w scenario.Workload) error {
		if err := addPath(key+".file", w.File); err != nil {
			return err
		}
		if w.SizeDist == "" {
			return nil
		}
		file := workload.SizeDistFile(w.SizeDist)
		if file == "" {
			return addPath(key+".size_dist", w.SizeDist)
		}
		d := shortDistDir(file, dir)
		if d == "" {
			return nil // the loader said why already; cannot happen after a load
		}
		from := filepath.Clean(filepath.Join(d, file))
		rels = append(rels, struct{ rel, from string }{filepath.Join("..", "shared", "data", "workloads", file), from})
		carried[from] = true
		return nil
	}
	specs := []*scenario.Scenario{f.Base}
	for _, v := range f.Variants {
		specs = append(specs, v.Spec)
	}
	for _, s := range specs {
		if s == nil {
			continue
		}
		if err := addPath("switch.routes_file", s.Switch.RoutesFile); err != nil {
			return packed{}, err
		}
		if k := s.Topology.Kind; k == "custom" || k == "ns3" {
			if err := addPath("topology.file", s.Topology.File); err != nil {
				return packed{}, err
			}
		}
		if err := addWorkload("workload", s.Workload); err != nil {
			return packed{}, err
		}
		for i, j := range s.Jobs {
			if err := addWorkload(fmt.Sprintf("jobs[%d].workload", i), j.Workload); err != nil {
				return packed{}, err
			}
		}
	}
	// Every file the loader says the scenario reads must be carried: a
	// kind of reference this does not know would otherwise be read from
	// a worker's disk (or be missing there).
	for _, p := range f.ReferencedFiles() {
		if !carried[filepath.Clean(p)] {
			return packed{}, fmt.Errorf("the scenario reads %s, which a queued job does not know how to carry", p)
		}
	}
	for _, r := range rels {
		n := 0
		for _, c := range strings.Split(filepath.ToSlash(r.rel), "/") {
			if c != ".." {
				break
			}
			n++
		}
		up = max(up, n)
	}
	if up > maxDepth {
		return packed{}, fmt.Errorf("the scenario's paths climb %d directories above it, more than the %d a queued job carries", up, maxDepth)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return packed{}, err
	}
	// The bundle's root is up directories above the scenario's, whose
	// names it keeps.
	parts := strings.Split(strings.Trim(filepath.ToSlash(abs), "/"), "/")
	if abs == string(filepath.Separator) {
		parts = nil
	}
	if up > len(parts) {
		return packed{}, fmt.Errorf("the scenario's paths climb above the root directory")
	}
	scenDir := strings.Join(parts[len(parts)-up:], "/")
	at := func(rel string) string {
		return path.Clean(path.Join(scenDir, filepath.ToSlash(rel)))
	}
	scenAt := at(filepath.Base(f.Path))
	seen := map[string]string{scenAt: ""}
	for _, r := range rels {
		a := at(r.rel)
		if prev, ok := seen[a]; ok {
			if prev != r.from {
				return packed{}, fmt.Errorf("%s and %s would both be %s in the job", r.from, orScenario(prev, f.Path), a)
			}
			continue
		}
		seen[a] = r.from
		srcs = append(srcs, source{a, r.from})
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].at < srcs[j].at })
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(data)), Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add(scenAt, f.Source); err != nil {
		return packed{}, err
	}
	for _, s := range srcs {
		data, err := inputfile.ReadAll(s.from, maxFile)
		if err != nil {
			return packed{}, err
		}
		if err := add(s.at, data); err != nil {
			return packed{}, err
		}
		if int64(buf.Len()) > MaxBundle {
			break
		}
	}
	if err := tw.Close(); err != nil {
		return packed{}, err
	}
	if err := zw.Close(); err != nil {
		return packed{}, err
	}
	if int64(buf.Len()) > MaxBundle {
		return packed{}, fmt.Errorf("the scenario and the files it reads compress to more than %d MiB, the most a queued job carries", MaxBundle>>20)
	}
	sum := sha256.Sum256(buf.Bytes())
	return packed{Scenario: scenAt, Data: buf.Bytes(), Digest: hex.EncodeToString(sum[:])}, nil
}

func orScenario(from, scenarioPath string) string {
	if from == "" {
		return scenarioPath
	}
	return from
}

// shortDistDir is where the loader finds the shared data file of a short
// size-distribution name, as scenario.ResolveSizeDist looks for it:
// $FABRICLAB_WORKLOADS, then shared/data/workloads one to three levels
// above the scenario's directory, then above the working directory. pack
// checks its answer against scenario.File.ReferencedFiles.
func shortDistDir(file, dir string) string {
	var dirs []string
	if d := os.Getenv(scenario.WorkloadsEnv); d != "" {
		dirs = append(dirs, d)
	}
	rel := filepath.Join("shared", "data", "workloads")
	for _, base := range []string{dir, "."} {
		for _, up := range []string{"..", filepath.Join("..", ".."), filepath.Join("..", "..", "..")} {
			dirs = append(dirs, filepath.Join(base, up, rel))
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, file)); err == nil {
			return d
		}
	}
	return ""
}

// checkName refuses a path in a bundle that is not a plain relative path
// of printable text: fs.ValidPath (no leading slash, no "." or ".."
// element, no empty element), at most maxPath bytes.
func checkName(name string) error {
	switch {
	case len(name) > maxPath:
		return fmt.Errorf("a path of %d bytes (at most %d)", len(name), maxPath)
	case !fs.ValidPath(name) || name == ".":
		return fmt.Errorf("%q is not a relative path inside the job", name)
	case strings.ContainsRune(name, '\\') || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("%q is not a path of printable text", name)
	}
	return nil
}

// unpack writes a bundle's files under root (an empty directory of the
// worker's own), checking as it goes: a gzip-compressed tar whose SHA-256
// is digest, of regular files only, each named once by a plain relative
// path, at most maxFiles of them, each at most maxFile bytes, together
// at most maxUnpacked. It returns the files written (bundle paths).
func unpack(root string, data []byte, digest string) (map[string]bool, error) {
	if int64(len(data)) > MaxBundle {
		return nil, fmt.Errorf("the bundle is %d MiB, more than %d MiB", len(data)>>20, MaxBundle>>20)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != digest {
		return nil, errors.New("the bundle's SHA-256 is not the one the job names (damaged in transit?)")
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, errors.New("the bundle is not gzip-compressed")
	}
	tr := tar.NewReader(zr)
	files := map[string]bool{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the bundle is not a tar archive (%s)", oneLine(err.Error()))
		}
		if len(files) >= maxFiles {
			return nil, fmt.Errorf("the bundle holds more than %d files", maxFiles)
		}
		if err := checkName(h.Name); err != nil {
			return nil, fmt.Errorf("the bundle holds %v", err)
		}
		switch {
		case h.Typeflag != tar.TypeReg:
			return nil, fmt.Errorf("the bundle's %s is not a regular file", h.Name)
		case files[h.Name]:
			return nil, fmt.Errorf("the bundle holds %s twice", h.Name)
		case h.Size < 0 || h.Size > maxFile:
			return nil, fmt.Errorf("the bundle's %s is %d bytes, more than the %d a file may have", h.Name, h.Size, maxFile)
		case total+h.Size > maxUnpacked:
			return nil, fmt.Errorf("the bundle's files add up to more than %d MiB", maxUnpacked>>20)
		}
		total += h.Size
		if err := writeFile(root, h.Name, tr, h.Size); err != nil {
			return nil, fmt.Errorf("the bundle's %s: %v", h.Name, err)
		}
		files[h.Name] = true
	}
	return files, nil
}

// writeFile creates root/name (a new file; its directories as needed)
// with exactly n bytes of r.
func writeFile(root, name string, r io.Reader, n int64) error {
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return unwrapPath(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return unwrapPath(err)
	}
	k, err := io.Copy(f, io.LimitReader(r, n))
	if err == nil && k != n {
		err = fmt.Errorf("%d bytes where its header says %d", k, n)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkCarried refuses a scenario loaded from a bundle under root that
// reads a file the bundle did not carry: every file it references must
// be one of files, so nothing comes from the worker's own disk.
func checkCarried(f *scenario.File, root string, files map[string]bool) error {
	for _, p := range f.ReferencedFiles() {
		rel, err := filepath.Rel(root, p)
		if err == nil {
			rel = filepath.ToSlash(rel)
		}
		if err != nil || !files[rel] {
			name := p
			if r, err := filepath.Rel(f.Dir, p); err == nil {
				name = r
			}
			return fmt.Errorf("the scenario reads %s, which the job does not carry", name)
		}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
