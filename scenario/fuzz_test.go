package scenario

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary text to the loader: it must never panic, every
// error must be one line starting with "file:line:col: ", and an accepted
// file must expand into jobs.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		minimal,
		minimal + "variants:\n  - name: a\n    nic: {mtu: 1KB}\n  - name: b\n    workload: {sizes: {list: [1MB]}}\n",
		"topology: &t {hosts: 8, hosts_per_leaf: 4}\nworkload: {kind: incast, senders: 3, sizes: {list: [1MB]}}\nvariants:\n  - {name: x, topology: {<<: *t, hosts: 16}}\n",
		"a: &a [*a]\n", "- 1\n", "", "{", "nic: !!str 1\n", "---\n---\n",
		"# only a comment\n", "~\n", "\tnic: {}\n", minimal + "nic:\n\tmtu: 4KB\n",
		minimal + "seed: 99999999999999999999999\n", minimal + "topology: {oversubscription: 1e-300}\n",
		minimal + "nic: {mtu: 8Mb, rto: 1US}\n", minimal + "topology: {host_link: {rate: 400GBPS}}\n",
		minimal + "transport: {dcqcn: {decrease_coefficient: 0.25}}\n",
		minimal + "sweep:\n  workload.qps: [1, 2, 4]\n  workload.algorithm: [direct, pairwise]\n",
		minimal + "sweep: {switch.pfc.xoff: [1MB, 100KB], seed: [1, 2]}\nvariants:\n  - name: a\n  - name: b\n    nic: {burst: 4}\n",
		minimal + "sweep:\n  transport.dcqcn: [{preset: \"off\"}, &d {preset: tuned-final}]\n  workload.sizes: [{list: [1MB]}]\n",
		minimal + "sweep: {workload.qps: [0, x]}\n", minimal + "sweep: {name: [a]}\n",
		minimal + "variants:\n  - name: a\n    sweep: {seed: [1]}\n",
	} {
		f.Add(s)
	}
	const name = "../examples/fuzz.yaml"
	f.Fuzz(func(t *testing.T, text string) {
		file, err := Parse(name, []byte(text))
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			m := posRE.FindStringSubmatch(msg)
			if m == nil || m[1] != name {
				t.Fatalf("error does not start with file:line:col: %q", msg)
			}
			if l, _ := strconv.Atoi(m[2]); l < 1 {
				t.Fatalf("error at line %d: %q", l, msg)
			}
			return
		}
		jobs := file.Jobs()
		if len(jobs) == 0 {
			t.Fatalf("valid file with no jobs")
		}
		for _, j := range jobs {
			if j.Spec == nil || j.Size <= 0 {
				t.Fatalf("bad job %+v", j)
			}
			if _, err := DCQCNParams(j.Spec); err != nil {
				t.Fatalf("DCQCNParams: %v", err)
			}
		}
	})
}

// FuzzApplySets: any override string either applies or fails with one line
// starting with "--set ", never panics, and a failure leaves the file valid.
func FuzzApplySets(f *testing.F) {
	for _, s := range []string{
		"transport.dcqcn.preset=off", "topology.host_link.rate=100Gbps",
		"workload.sizes.list=[1MB,2MB]", "nic={mtu: 2KB}", "seed=*a", "x", "=",
		"workload.sizes.to=1GB", "topology.hosts=30",
		"switch.ecn.pmax=5e-2", "seed=99999999999999999999999", "nic.mtu=8Mb", "nic.rto=10ns",
		"transport.dcqcn.decrease_coefficient=0.25",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		file, err := Parse("t.yaml", []byte(minimal+"variants:\n  - name: a\n  - name: b\n    nic: {mtu: 1KB}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := ApplySets(file, []string{set}); err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "--set ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("bad error %q", msg)
			}
			if err := file.Validate(); err != nil {
				t.Fatalf("failed ApplySets left an invalid file: %v", err)
			}
			return
		}
		if len(file.Jobs()) == 0 {
			t.Fatal("no jobs")
		}
	})
}

// FuzzSweepOption: any --sweep option either applies or fails with one line
// starting with "--sweep ", never panics, and an accepted one expands into
// jobs named after its points.
func FuzzSweepOption(f *testing.F) {
	for _, s := range []string{
		"workload.qps=1,2,4", "workload.algorithm=[direct, pairwise]", `transport.dcqcn.preset="off",tuned-final`,
		"seed=1,1", "workload.qps=0", "nic.mtu=4KBB", "name=a", "x", "=", "workload={qps: 2}",
		"topology.host_link.rate=[100Gbps, 400G]", "workload.sizes.list=[[1MB], [2MB]]", "seed=*a",
	} {
		f.Add(s)
	}
	const text = minimal + "sweep:\n  workload.qps: [1, 2]\nvariants:\n  - name: a\n  - name: b\n    nic: {mtu: 1KB}\n"
	f.Fuzz(func(t *testing.T, sweep string) {
		file, err := ParseOptions("t.yaml", []byte(text), Options{Sweeps: []string{sweep}})
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "--sweep ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("bad error %q", msg)
			}
			return
		}
		if len(file.Jobs()) == 0 || len(file.Variants) < 2 {
			t.Fatalf("%d variants", len(file.Variants))
		}
		for _, v := range file.Variants {
			if len(v.Sweep) == 0 || v.Parent == "" || !strings.HasPrefix(v.Name, v.Parent+" ") {
				t.Fatalf("variant %+v", v)
			}
		}
	})
}

// FuzzPrescan feeds arbitrary text to the checks that bound a scenario
// before the YAML library parses it (prescan.go): they never panic, every
// refusal is one line at a position, and when the lexer's tokens pass, the
// parsed tree is within the limits. Every example passes.
func FuzzPrescan(f *testing.F) {
	for p, b := range exampleFiles(f) {
		if scan, tokens := checkText(p, b, defaultTextLimits); scan != nil || tokens != nil {
			f.Fatalf("%s: prescan %v, tokens %v", p, scan, tokens)
		}
		f.Add(string(b))
	}
	deep := strings.Repeat("[", 70)
	for _, s := range []string{
		deep, strings.Repeat("{a: ", 70), strings.Repeat("- ", 70) + "x\n", string(deepBlock(70)),
		string(keys(257, "")), string(keys(257, "  ")), "[" + strings.Repeat("1,", 50001) + "]",
		`a: "` + deep + `"`, `a: "\"` + deep + `\\"`, `a: "\x22` + deep + `"`, `a: "\uD83D\uDE00` + deep + `"`,
		"a: 'it''s " + deep + "'\n", "a: \"x\n  " + deep + "\"\nb: 1\n", "a: x\n  " + deep + "\n  \"y\nb: [1]\n",
		"a: |\n  " + deep + "\nb: 1\n", "a: >2-\n   " + deep + "\n  " + deep + "\nb: 1\n", "- |\n " + deep + "\n- x\n",
		"--- |\n" + deep + "\n...\n---\na: 1\n", "a: 1 # " + deep + "\n", "k: {a:\"x, \"}\nb: " + deep + "\n",
		"&a a: 1\n!!str b: 2\n? c\n: 3\n<<: *a\n", "a: *x" + deep + "\n", "\tb: 1\n", "a:\r\n  b: [\r\n1]\r\n", "a: b\rc: [[1]]",
		// Found by fuzzing: the lexer's quirks the byte scan follows.
		": : :  :", "%0 [[[[\n---", "% 0 [[[[\n---", "%0 [[[}[\n---", "{[}[[[", "- - - -\x00:", "0: \n0: \n? !\n0:",
		"0:\r0:\r0:\r*\r 0:", "0:\r0:\r0:\r&\r 0:", " 0\n<<: \n0: \n? \n0:", "a: b <<: c\n", "a:\n  - b: \n    c: !t - d: x",
		"\t!0 0: \n0: \n? \n0:", "0:\n 0:\n  0:\n   0:\n   -", "0:\r0:\r*0\r :\r0:", "? \r 0: \n? 0\n? 0",
		"[>\x01-\x01՟----\n--- \x00\x00\x00-\x01--", "a: x\n  -y\n  \"z\n  ---\nb: [[1]]\n", "0:\n00: 00\n0: 0\n... 0:",
		"&a a: 1\x1c!!s1 1\n!tr b: 2\n? c\n\xa9 3\n<<: *a\n", "0\n: 0\n: 0\n: 0\n: 00:", "0:\r0:\r*0\r :\r0:\r :\r0:", "0: \n0: \n 0\n: 0\n: 0\n:", "[   0: \n    0: \n    0: \n    0: 0]",
	} {
		f.Add(s)
	}
	f.Fuzz(checkPrescan)
}
