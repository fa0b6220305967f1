package queue

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fabriclab/scenario"
)

// writeTree writes files (slash paths under dir) and returns dir.
func writeTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const flowsScenario = `name: fl
topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 4
  spines: 2
  host_link: {rate: 100Gbps, delay: 1us}
  fabric_link: {rate: 100Gbps, delay: 1us}
switch:
  forwarding: d-mod-k
  routes_file: routes.txt
workload:
  kind: flows
  file: ../../flows/f.txt
variants:
  - name: a
  - name: b
    workload: {file: ../../flows/g.txt}
`

func flowsTree(t testing.TB) (dir, path string) {
	dir = writeTree(t, t.TempDir(), map[string]string{
		"x/y/s.yaml":      flowsScenario,
		"x/y/routes.txt":  "leaf0 5 spine1\n",
		"flows/f.txt":     "0 4 1MB 0\n1 5 2MB 0\n",
		"flows/g.txt":     "2 6 1MB 0\n",
		"flows/other.txt": "3 7 1MB 0\n",
	})
	return dir, filepath.Join(dir, "x", "y", "s.yaml")
}

// planFile loads path and plans its jobs.
func planFile(t testing.TB, path string, sets []string) (*scenario.File, Submission) {
	t.Helper()
	f, err := scenario.LoadOptions(path, scenario.Options{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Plan(path, f, f.Jobs(), sets, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Jobs {
		s.Jobs[i].Run = 1
	}
	return f, s
}

// bundleNames lists a bundle's files.
func bundleNames(t *testing.T, a Args) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(a.Bundle))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}

// The bundle holds the scenario and exactly the files it reads, laid out
// as on disk relative to each other (with the names of the directories
// the paths climb through), and a worker loads the same jobs from it with
// the originals gone.
func TestBundleCarriesReferencedFiles(t *testing.T) {
	dir, path := flowsTree(t)
	f, s := planFile(t, path, nil)
	if len(s.Jobs) != 2 {
		t.Fatalf("%d jobs", len(s.Jobs))
	}
	want := []string{"flows/f.txt", "flows/g.txt", "x/y/routes.txt", "x/y/s.yaml"}
	got := bundleNames(t, s.Jobs[0])
	sortStrings(got)
	if !reflect.DeepEqual(got, want) || s.Jobs[0].Scenario != want[3] {
		t.Fatalf("bundle %v (scenario %s), want %v", got, s.Jobs[0].Scenario, want)
	}
	local := f.Jobs()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for i, a := range s.Jobs {
		a = roundTrip(t, a)
		j, err := load(t.TempDir(), a, 0)
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
		if j.Variant != local[i].Variant || j.Size != local[i].Size || !reflect.DeepEqual(j.FlowList, local[i].FlowList) ||
			!reflect.DeepEqual(j.Spec.Topology, local[i].Spec.Topology) || j.Spec.Switch.RoutesFile != local[i].Spec.Switch.RoutesFile {
			t.Errorf("job %d loaded from the bundle differs from the local one", i)
		}
	}
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// roundTrip sends a through JSON as River does.
func roundTrip(t testing.TB, a Args) Args {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var out Args
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.bad != "" {
		t.Fatalf("round trip: %s", out.bad)
	}
	return out
}

// A --set that names another file carries that one.
func TestBundleFollowsSets(t *testing.T) {
	_, path := flowsTree(t)
	_, s := planFile(t, path, []string{"workload.file=../../flows/other.txt"})
	names := strings.Join(bundleNames(t, s.Jobs[0]), " ")
	if !strings.Contains(names, "flows/other.txt") || strings.Contains(names, "flows/f.txt") {
		t.Errorf("bundle with --set workload.file: %s", names)
	}
}

// A short size-distribution name travels as the file the submitter's
// loader found, placed where a worker's loader looks first.
func TestBundleCarriesShortDistNames(t *testing.T) {
	shared, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "workloads"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shared, "DCTCP_MsgSizeDist.txt")); err != nil {
		t.Skipf("no shared data folder: %v", err)
	}
	t.Setenv(scenario.WorkloadsEnv, shared)
	text := `name: m
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2, host_link: {rate: 10Gbps, delay: 1us}, fabric_link: {rate: 10Gbps, delay: 1us}}
nic: {mtu: 1442}
transport: {kind: homa}
workload: {kind: messages, size_dist: w5, load: 0.5, duration: 2ms}
`
	path := filepath.Join(writeTree(t, t.TempDir(), map[string]string{"s/m.yaml": text}), "s", "m.yaml")
	f, s := planFile(t, path, nil)
	names := bundleNames(t, s.Jobs[0])
	if !reflect.DeepEqual(names[1:], []string{"shared/data/workloads/DCTCP_MsgSizeDist.txt"}) {
		t.Fatalf("bundle %v", names)
	}
	t.Setenv(scenario.WorkloadsEnv, "") // a worker's own folder is not read
	j, err := load(t.TempDir(), roundTrip(t, s.Jobs[0]), 0)
	if err != nil {
		t.Fatal(err)
	}
	if j.Size != f.Jobs()[0].Size {
		t.Errorf("size %v, want %v", j.Size, f.Jobs()[0].Size)
	}
}

func TestPlanRefusesAbsolutePaths(t *testing.T) {
	dir, path := flowsTree(t)
	f, err := scenario.LoadOptions(path, scenario.Options{Sets: []string{"workload.file=" + filepath.Join(dir, "flows", "f.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Plan(path, f, f.Jobs(), nil, nil, "test")
	if err == nil || !strings.Contains(err.Error(), "is an absolute path") {
		t.Fatalf("absolute workload.file: %v", err)
	}
}

// makeBundle builds a bundle from raw tar entries.
func makeBundle(t testing.TB, entries []tar.Header, data []string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i, h := range entries {
		h.Size = int64(len(data[i]))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(data[i]))
		}
	}
	tw.Close()
	zw.Close()
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), hex.EncodeToString(sum[:])
}

// Malformed jobs are refused with a reason, never a panic, and nothing is
// written outside the job's directory.
func TestMalformedJobsRefused(t *testing.T) {
	_, path := flowsTree(t)
	_, s := planFile(t, path, nil)
	good := s.Jobs[0]
	scen, routes := good.Scenario, strings.TrimSuffix(good.Scenario, "s.yaml")+"routes.txt"
	withBundle := func(entries []tar.Header, data []string) Args {
		a := good
		a.Bundle, a.Digest = makeBundle(t, entries, data)
		return a
	}
	text, _ := os.ReadFile(path)
	cases := []struct {
		name string
		args Args
		want string
	}{
		{"digest", func() Args { a := good; a.Digest = strings.Repeat("0", 64); return a }(), "SHA-256"},
		{"not gzip", func() Args {
			a := good
			a.Bundle = []byte("plain")
			s := sha256.Sum256(a.Bundle)
			a.Digest = hex.EncodeToString(s[:])
			return a
		}(), "not gzip"},
		{"climbs", withBundle([]tar.Header{{Name: "../evil"}}, []string{"x"}), "not a relative path"},
		{"absolute", withBundle([]tar.Header{{Name: "/tmp/evil"}}, []string{"x"}), "not a relative path"},
		{"symlink", withBundle([]tar.Header{{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, []string{""}), "not a regular file"},
		{"twice", withBundle([]tar.Header{{Name: "a"}, {Name: "a"}}, []string{"x", "y"}), "twice"},
		{"control", withBundle([]tar.Header{{Name: "a\x1b[2J"}}, []string{"x"}), "printable"},
		{"no scenario", withBundle([]tar.Header{{Name: "other.yaml"}}, []string{"x"}), "does not hold its scenario"},
		{"missing", withBundle([]tar.Header{{Name: scen}}, []string{string(text)}), "routes.txt does not exist"},
		{"not carried", withBundle([]tar.Header{{Name: scen}}, []string{strings.NewReplacer(
			"routes_file: routes.txt", "routes_file: "+filepath.Join(filepath.Dir(path), "routes.txt"),
			"../../flows/", filepath.Join(filepath.Dir(path), "..", "..", "flows")+"/").Replace(string(text))}), "which the job does not carry"},
		{"file and dir", withBundle([]tar.Header{{Name: "a"}, {Name: "a/b"}}, []string{"x", "y"}), "not a directory"},
		{"label", func() Args { a := good; a.Label = "z 1MiB"; return a }(), "not \"z 1MiB\""},
		{"no such job", func() Args { a := good; a.Variant = 7; return a }(), "no job of variant 7"},
		{"bad yaml", withBundle([]tar.Header{{Name: scen}, {Name: routes}}, []string{"topology: [", ""}), "s.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := load(dir, c.args, 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("the error names the worker's directory: %v", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
				t.Error("a file was written outside the job's directory")
			}
		})
	}
}

// Arguments that do not decode are kept as a reason, for the worker to
// refuse the job with.
func TestArgsThatDoNotDecode(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`"nonsense"`, "not a JSON object"},
		{`{"run": "x"}`, "field run"},
		{`{"run": 0}`, "not a run id"},
		{`{"run": 1, "variant": -1}`, "out of range"},
		{`{"run": 1}`, "no bundle"},
		{`{"run": 1, "bundle": "AAAA", "digest": "00"}`, "digest"},
		{`{"run": 1, "bundle": "AAAA", "digest": "` + strings.Repeat("0", 64) + `", "scenario": "../s.yaml"}`, "scenario path"},
	} {
		var a Args
		if err := json.Unmarshal([]byte(c.json), &a); err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if !strings.Contains(a.bad, c.want) {
			t.Errorf("%s: bad = %q, want %q", c.json, a.bad, c.want)
		}
	}
}

// FuzzUnpack: whatever the bundle, unpack returns an error or files, never
// panics and never writes outside its directory.
func FuzzUnpack(f *testing.F) {
	b, _ := makeBundle(f, []tar.Header{{Name: "a/s.yaml"}, {Name: "a/r.txt"}}, []string{"name: x", "leaf0 1 spine0"})
	f.Add(b)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "job")
		os.Mkdir(dir, 0o700)
		sum := sha256.Sum256(data)
		files, err := unpack(dir, data, hex.EncodeToString(sum[:]))
		if err != nil {
			return
		}
		for name := range files {
			if checkName(name) != nil {
				t.Fatalf("unpacked %q", name)
			}
		}
		entries, _ := os.ReadDir(filepath.Dir(dir))
		if len(entries) != 1 {
			t.Fatalf("wrote beside the job's directory: %v", entries)
		}
	})
}

// A queued run's jobs go in largest first (ties in file order), as a
// local run on several workers starts them: workers take jobs in
// insertion order. Every job is there once.
func TestPlanQueuesLargestFirst(t *testing.T) {
	_, s := planFile(t, "../examples/alltoall-dcqcn.yaml", nil)
	if len(s.Jobs) != 40 {
		t.Fatalf("%d jobs, want 40", len(s.Jobs))
	}
	seen := map[[2]int]bool{}
	for i, a := range s.Jobs {
		seen[[2]int{a.Variant, a.Size}] = true
		if i == 0 {
			continue
		}
		p := s.Jobs[i-1]
		if p.Bytes < a.Bytes || p.Bytes == a.Bytes && (p.Variant > a.Variant || p.Variant == a.Variant && p.Size > a.Size) {
			t.Fatalf("job %d (%s, %d B) after %s (%d B)", i, a.Label, a.Bytes, p.Label, p.Bytes)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d distinct jobs, want 40", len(seen))
	}
	if s.Jobs[0].Bytes != 1<<30 || s.Jobs[0].Variant != 0 {
		t.Fatalf("first job %s", s.Jobs[0].Label)
	}
}
