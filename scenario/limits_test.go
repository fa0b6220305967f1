package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fabriclab/units"
)

// The inputs of the defect report on unbounded scenario input, built in
// memory: each must fail with a one-line error that names the limit, using
// little memory. Wall time is logged, not asserted (machines are noisy).

// budget is the memory (bytes allocated, garbage included) one hostile
// input may cost.
const budget = 100 << 20

// measure runs f and returns its error and the bytes it allocated.
func measure(t *testing.T, f func() error) (error, uint64) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := f()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%v, %.1f MB allocated: %v", elapsed.Round(time.Millisecond), float64(alloc)/(1<<20), err)
	return err, alloc
}

// checkLimit asserts a one-line positioned error naming file that contains
// every one of want, within the memory budget.
func checkLimit(t *testing.T, file string, err error, alloc uint64, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %.200q", msg)
	}
	if m := posRE.FindStringSubmatch(msg); m == nil || m[1] != file {
		t.Errorf("error does not start with %s:line:col: %.200q", file, msg)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error is a %T, want *Error", err)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %.300q does not contain %q", msg, w)
		}
	}
	if alloc > budget {
		t.Errorf("allocated %.0f MB, more than %d MB", float64(alloc)/(1<<20), budget>>20)
	}
}

// keys returns n lines "kI: 1" at the given indentation.
func keys(n int, indent string) []byte {
	b := make([]byte, 0, n*(len(indent)+12))
	for i := 0; i < n; i++ {
		b = append(b, indent...)
		b = append(b, 'k')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ": 1\n"...)
	}
	return b
}

// noSizeLimit lifts the file-size limit so that the limit behind it is tested.
var noSizeLimit = Options{MaxBytes: 1 << 30}

func TestHostileInputs(t *testing.T) {
	const name = "hostile.yaml"
	sizes := func(n int) []byte {
		b := []byte("topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload:\n  kind: alltoall\n  sizes:\n    list: [")
		b = append(b, bytes.Repeat([]byte("1MB, "), n)...)
		return append(b, "1MB]\n"...)
	}
	jobs := func(n int, compact bool) []byte {
		b := []byte(minimal + "jobs:\n")
		for i := 0; i < n; i++ {
			if compact {
				b = append(b, "  - {name: j"...)
				b = strconv.AppendInt(b, int64(i), 10)
				b = append(b, "}\n"...)
				continue
			}
			b = append(b, "  - name: j"...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, "\n    kind: alltoall\n    host_offset: 0\n    sizes: {list: [1MB]}\n"...)
		}
		return b
	}
	spread := func(n, per int) []byte {
		var b []byte
		for i := 0; i < n; i += per {
			b = append(b, "m"...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, ":\n"...)
			b = append(b, keys(per, "  ")...)
		}
		return b
	}
	for _, c := range []struct {
		name string
		text []byte
		o    Options
		want []string
	}{
		// 1.5 M keys in one mapping overflowed the parser's stack.
		{"1.5M keys", keys(1_500_000, ""), Options{}, []string{"larger than the limit of 1 MiB", "--max-scenario-size"}},
		{"1.5M keys, no size limit", keys(1_500_000, ""), noSizeLimit, []string{"hostile.yaml:257:1:", "more than 256 keys in one mapping"}},
		// [ × 100,000 took 55 s and 15 GB before "nested too deeply".
		{"deep flow", bytes.Repeat([]byte("["), 100_000), Options{}, []string{"hostile.yaml:1:65:", "nested too deeply (more than 64 levels)"}},
		{"deep flow in a value", append([]byte(minimal+"nic: "), bytes.Repeat([]byte("{a: "), 100_000)...), Options{}, []string{"hostile.yaml:3:", "nested too deeply"}},
		{"deep block", deepBlock(1000), Options{}, []string{"nested too deeply"}},
		// 100 k keys took 38 s.
		{"100k keys", keys(100_000, ""), Options{}, []string{"hostile.yaml:257:1: more than 256 keys in one mapping"}},
		{"100k keys, no size limit", keys(100_000, ""), noSizeLimit, []string{"hostile.yaml:257:1: more than 256 keys"}},
		{"100k keys in mappings of 100", spread(100_000, 100), noSizeLimit, []string{"more than 50000 values"}},
		{"100k keys in a value", append([]byte(minimal+"nic:\n"), keys(100_000, "  ")...), noSizeLimit, []string{"hostile.yaml:260:3:", "more than 256 keys"}},
		// 8,000 jobs took more than 120 s although the limit is 64.
		{"8000 jobs", jobs(8000, true), Options{}, []string{"hostile.yaml:4:3: jobs: lists 8000 entries, at most 63"}},
		{"8000 long jobs", jobs(8000, false), Options{}, []string{"more than 50000 values"}},
		// 5 M sizes took 4 GB before the error.
		{"5M sizes", sizes(5_000_000), Options{}, []string{"larger than the limit"}},
		{"5M sizes, no size limit", sizes(5_000_000), noSizeLimit, []string{"more than 50000 values"}},
		{"5000 sizes", sizes(5000), Options{}, []string{"hostile.yaml:5:11: workload.sizes.list: lists 5001 entries, at most 4096"}},
		// A file just over the size limit.
		{"17 MiB", append([]byte(minimal), bytes.Repeat([]byte("# comment\n"), 17<<20/10)...), Options{}, []string{"hostile.yaml:1:1:", "the file is 17", "larger than the limit of 1 MiB (raise it with --max-scenario-size)"}},
		{"2 MiB with a 1 MiB limit", make([]byte, 2<<20), Options{MaxBytes: 1 << 20}, []string{"the file is 2 MiB, larger than the limit of 1 MiB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, alloc := measure(t, func() error {
				_, err := ParseOptions(name, c.text, c.o)
				return err
			})
			checkLimit(t, name, err, alloc, c.want...)
		})
	}
}

// deepBlock nests n block mappings, one more space each.
func deepBlock(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		b = append(b, bytes.Repeat([]byte(" "), i)...)
		b = append(b, "a:\n"...)
	}
	return b
}

// TestLimitsAccept: input up to the limits gets past them (the schema
// may still refuse it, but not for its size).
func TestLimitsAccept(t *testing.T) {
	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	var jobs strings.Builder
	for i := 0; i < 63; i++ {
		fmt.Fprintf(&jobs, "  - {name: j%d, kind: incast}\n", i)
	}
	// 4096 sizes, each once (a size given twice is refused): 1000000B on.
	sizes4096 := func(format string) string {
		var b strings.Builder
		for i := 0; i < 4096; i++ {
			fmt.Fprintf(&b, format, 1_000_000+i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, text string
		o          Options
		want       string // the error the schema gives, "" for none
	}{
		{"256 keys", string(keys(256, "")), Options{}, `unknown key "k0"`},
		{"63 jobs", minimal + "jobs:\n" + jobs.String(), Options{}, "jobs[0]"},
		{"4096 sizes", topo + "workload: {kind: alltoall, sizes: {list: [" + strings.TrimSuffix(sizes4096("%dB, "), ", ") + "]}}\n", Options{}, ""},
		{"a raised size limit", minimal + strings.Repeat("# comment\n", 120_000), Options{MaxBytes: 2 << 20}, ""},
		{"64 levels", strings.Repeat("[", 64) + strings.Repeat("]", 64), Options{}, "needs a mapping"},
		// Decoding a unit (a size, a rate, a duration) made the YAML
		// library format its node from the whole token list, comments
		// included, each time: 4096 sizes took 3.4 GB, a 2 MiB file of
		// comments 40 GB.
		{"4096 sizes and comments", topo + "workload:\n  kind: alltoall\n  sizes:\n    list:\n" + sizes4096("      - %dB\n") + strings.Repeat("# c\n", 50_000), Options{}, ""},
		{"4096 block scalar sizes and comments", topo + "workload:\n  kind: alltoall\n  sizes:\n    list:\n" + sizes4096("      - |-\n        %dB\n") + strings.Repeat("# c\n", 50_000), Options{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, alloc := measure(t, func() error {
				_, err := ParseOptions("ok.yaml", []byte(c.text), c.o)
				return err
			})
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			case err != nil && (strings.Contains(err.Error(), "lists") || strings.Contains(err.Error(), "more than") || strings.Contains(err.Error(), "limit")):
				t.Fatalf("a limit error: %v", err)
			}
			if alloc > budget {
				t.Errorf("allocated %.0f MB, more than %d MB", float64(alloc)/(1<<20), budget>>20)
			}
		})
	}
}

// TestLoadFileLimits: the file is checked before it is read: too large, or
// not a regular file (a FIFO would block the read forever, /dev/zero never
// ends).
func TestLoadFileLimits(t *testing.T) {
	dir := t.TempDir()
	large := filepath.Join(dir, "large.yaml")
	f, err := os.Create(large)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 17 MiB without writing them.
	if _, err := f.WriteString(minimal); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(17 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	err, alloc := measure(t, func() error { _, err := Load(large); return err })
	checkLimit(t, large, err, alloc, "the file is 17 MiB, larger than the limit of 1 MiB (raise it with --max-scenario-size)")
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes: the file was read", alloc)
	}
	// A 2 MiB scenario (mostly comments) needs the limit raised.
	padded := filepath.Join(dir, "padded.yaml")
	if err := os.WriteFile(padded, []byte(minimal+strings.Repeat("# a comment line\n", 2<<20/17)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(padded); err == nil || !strings.Contains(err.Error(), "the file is 2.0 MiB, larger than the limit of 1 MiB") {
		t.Errorf("2 MiB with the default limit: %v", err)
	}
	if _, err := LoadOptions(padded, Options{MaxBytes: 4 << 20}); err != nil {
		t.Errorf("2 MiB with a 4 MiB limit: %v", err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOptions(ok, Options{MaxBytes: int64(len(minimal))}); err != nil {
		t.Errorf("a file exactly at the limit: %v", err)
	}
	err = nil
	if _, err = LoadOptions(ok, Options{MaxBytes: int64(len(minimal)) - 1}); err == nil || !strings.Contains(err.Error(), "larger than the limit of") {
		t.Errorf("a file one byte over the limit: %v", err)
	}

	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a device, not a regular file"},
		{dir, "is a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(c.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.path+" "+c.want) || strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("Load(%s) = %v, want %q", c.path, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) blocks", c.path)
		}
	}
}

// TestNameControlCharacters: names are printed on terminals and in
// "# variant:" lines; control characters could clear the screen, retitle
// the terminal or forge a line.
func TestNameControlCharacters(t *testing.T) {
	for _, c := range []struct {
		name, text, key string
		o               Options
	}{
		{"ESC", minimal + "name: \"run\\e[2J\"  # <-\n", "name", Options{}},
		{"BEL", minimal + "name: \"run\\a\"  # <-\n", "name", Options{}},
		{"OSC title", minimal + "name: \"\\e]0;pwned\\a\"  # <-\n", "name", Options{}},
		{"CR", minimal + "name: \"a\\rb\"  # <-\n", "name", Options{}},
		{"LF", minimal + "name: \"a\\n# variant: forged\"  # <-\n", "name", Options{}},
		{"tab", minimal + "name: \"a\\tb\"  # <-\n", "name", Options{}},
		{"C1 CSI", minimal + "name: \"a\\u009b2J\"  # <-\n", "name", Options{}},
		{"job ESC", minimal + "jobs:\n  - name: \"j\\e[2J\"  # <-\n    kind: incast\n", "jobs[0].name", Options{}},
		{"job LF", minimal + "jobs:\n  - kind: incast\n    name: \"j\\nk\"  # <-\n", "jobs[0].name", Options{}},
		{"variant job", minimal + "variants:\n  - name: v\n    jobs: [{name: \"\\e[2J\", kind: incast}]  # <-\n", "jobs[0].name", Options{}},
		{"description ESC", minimal + "description: \"fine\\e[2J\"  # <-\n", "description", Options{}},
		{"description BEL", minimal + "description: \"a\\ab\"  # <-\n", "description", Options{}},
		{"description CR", minimal + "description: \"a\\rb\"  # <-\n", "description", Options{}},
		{"description DEL", minimal + "description: \"a\\x7fb\"  # <-\n", "description", Options{}},
		{"variant description", minimal + "variants:\n  - name: v\n    description: \"\\e[31m\"  # <-\n", "description", Options{}},
		{"--set name", minimal, "name", Options{Sets: []string{`name="\e[2J"`}}},
		{"--set description", minimal, "description", Options{Sets: []string{`description="\a"`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseOptions("names.yaml", []byte(c.text), c.o)
			if len(c.o.Sets) > 0 {
				if err == nil || !strings.HasPrefix(err.Error(), "--set "+c.key+": ") || strings.ContainsAny(err.Error(), "\r\n\x1b\a") {
					t.Fatalf("got %q, want a --set %s error", err, c.key)
				}
				return
			}
			checkError(t, "names.yaml", c.text, err, c.key)
			if strings.ContainsAny(err.Error(), "\x1b\a\r\n\t\u009b") {
				t.Errorf("the error prints the control character: %q", err)
			}
			line := strings.Count(c.text[:strings.Index(c.text, marker)], "\n") + 1
			if !strings.HasPrefix(err.Error(), "names.yaml:"+strconv.Itoa(line)+":") {
				t.Errorf("error %q is not at line %d", err, line)
			}
		})
	}
	// Units may be written in any scalar form, a block scalar too (whose
	// token the loader detaches from the others; see detach).
	u := mustParse(t, "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4, host_link: {rate: '100Gbps'}}\n"+
		"workload: {kind: alltoall, sizes: {from: 8MB, to: 64MB}}\nnic:\n  mtu: |-\n    4KB\n  rto: \"2ms\"\n")
	if u.Base.NIC.MTU != 4000 || u.Base.NIC.RTO != 2*units.Millisecond || u.Base.Topology.HostLink.Rate != 100*units.Gbps {
		t.Errorf("mtu %v rto %v rate %v", u.Base.NIC.MTU, u.Base.NIC.RTO, u.Base.Topology.HostLink.Rate)
	}
	// Text that is fine: a multi-line description with tabs, spaces around
	// a name (trimmed), non-ASCII letters.
	f := mustParse(t, minimal+"name: \"  Zürich run \"\ndescription: |\n  line one\n  \tindented with a tab\n  line three\n")
	if f.Base.Name != "Zürich run" {
		t.Errorf("name %q", f.Base.Name)
	}
	if want := "line one\n\tindented with a tab\nline three\n"; f.Base.Description != want {
		t.Errorf("description %q, want %q", f.Base.Description, want)
	}
	if g := mustParse(t, minimal+"name: \"   \"\n"); g.Base.Name != "t" {
		t.Errorf("a blank name gives %q, want the file name", g.Base.Name)
	}
	if _, err := Parse("t.yaml", []byte(minimal+"jobs: [{name: \" rpc\\t\", kind: incast}]\n")); err != nil && strings.Contains(err.Error(), "printable") {
		t.Errorf("a job name with spaces and a tab around it: %v", err)
	}
}

// TestListLimits: lists are bounded before their entries are decoded.
func TestListLimits(t *testing.T) {
	const base = "workload: {kind: alltoall, sizes: {list: [1MB]}}\n"
	for _, c := range []struct{ name, text, want string }{
		{"variants", minimal + "variants:\n" + strings.Repeat("  - {name: v}\n", 1025), "names.yaml:4:3: variants: lists 1025 entries, at most 1024"},
		{"failures", base + "topology:\n  hosts: 32\n  failures: [" + strings.Repeat("{from: leaf0, to: spine0}, ", 1024) + "{from: leaf0, to: spine0}]\n", "names.yaml:4:13: topology.failures: lists 1025 entries, at most 1024"},
		{"forwarding tiers", minimal + "switch: {forwarding_tiers: [" + strings.Repeat("{tier: leaf}, ", 3) + "{tier: leaf}]}\n", "switch.forwarding_tiers: lists 4 entries, at most 3"},
		{"job sizes", minimal + "jobs: [{name: j, kind: incast, sizes: {list: [" + strings.Repeat("1MB, ", 4096) + "1MB]}}]\n", "jobs[0].sizes.list: lists 4097 entries, at most 4096"},
		{"--set sizes", minimal, "--set workload.sizes.list: lists 4097 entries, at most 4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o Options
			if strings.HasPrefix(c.want, "--set") {
				o.Sets = []string{"workload.sizes.list=[" + strings.Repeat("1MB,", 4096) + "1MB]"}
			}
			_, err := ParseOptions("names.yaml", []byte(c.text), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestCommandLineValuesAreBounded: --set and --sweep values meet the same
// bounds as the file before the YAML parser sees them (the review found
// `--set description=[[[…` out of memory).
func TestCommandLineValuesAreBounded(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	for _, o := range []Options{
		{Sets: []string{"description=" + deep}},
		{Sweeps: []string{"workload.iterations=" + deep}},
		{Sets: []string{"description=" + strings.Repeat("{a: ", 25000)}},
		{Sets: []string{"description=" + strings.Repeat("x", DefaultMaxBytes+1)}},
	} {
		err, alloc := measure(t, func() error {
			_, err := ParseOptions("t.yaml", []byte(minimal), o)
			return err
		})
		if err == nil || strings.ContainsAny(err.Error(), "\n") {
			t.Errorf("%.40v: error %v, want one line", o, err)
		}
		if alloc > budget {
			t.Errorf("%.40v: allocated %.0f MB, more than %d MB", o, float64(alloc)/(1<<20), budget>>20)
		}
	}
}

// TestJobCountIsBounded: 1,024 variants × 4,096 sizes in a 49 KB file is
// refused before the jobs are built (the review's 4 M jobs, 1.8 GB).
func TestJobCountIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}\nworkload: {kind: alltoall, sizes: {list: [")
	for i := range 4096 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", 1024+i)
	}
	b.WriteString("]}}\nvariants:\n")
	for i := range 1024 {
		fmt.Fprintf(&b, "  - {name: v%d}\n", i)
	}
	err, alloc := measure(t, func() error {
		_, err := Parse("t.yaml", []byte(b.String()))
		return err
	})
	checkLimit(t, "t.yaml", err, alloc, "more than 65536 jobs")
}

// TestLongFlowListRefusedBeforeParsing: a flow list that sim.memory_limit
// cannot hold is refused from its line count, before it is parsed (the
// review: 6 M lines under 256 MiB reached 900 MB first).
func TestLongFlowListRefusedBeforeParsing(t *testing.T) {
	dir := t.TempDir()
	list := bytes.Repeat([]byte("0 1 1\n"), 3_000_000)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), list, 0o644); err != nil {
		t.Fatal(err)
	}
	text := "topology: {hosts: 4, hosts_per_leaf: 2, spines: 1}\nworkload: {kind: flows, file: f.txt}\nsim: {memory_limit: 64MiB}\n"
	err, alloc := measure(t, func() error {
		_, err := Parse(filepath.Join(dir, "t.yaml"), []byte(text))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "parsing it needs about") || !strings.Contains(err.Error(), "workload.file") {
		t.Fatalf("error %v", err)
	}
	if alloc > 20<<20 {
		t.Errorf("allocated %.0f MB before refusing", float64(alloc)/(1<<20))
	}
}
