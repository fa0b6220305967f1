package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refDir writes the files the reference tests name.
func refDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"r-ok.txt":       "leaf0 9 spine3\nleaf0 3 host3\n",
		"r-unknown.txt":  "# pins\nleaf9 3 spine0\n",
		"r-range.txt":    "leaf0 99 spine0\n",
		"r-adj.txt":      "leaf0 9 leaf1\n",
		"r-loop.txt":     "leaf1 8 spine0\nspine0 8 leaf1\n",
		"r-dead.txt":     "leaf0 9 spine3\n",
		"r-conflict.txt": "leaf0 9 spine3\n\nleaf0 9 spine1\n",
		"r-dup.txt":      "leaf0 9 spine3\nleaf0 9 spine3\n",
		"secret.txt":     "api_key=sk-live-0123456789abcdef\n1 1\n",
		"small.txt":      "0 0\n1000 1\n",
		"flows.txt":      "0 1 1MB\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parseIn parses text as dir/t.yaml and returns its error with the
// directory cut from the front ("" when it is valid).
func parseIn(t *testing.T, dir, text string) string {
	t.Helper()
	_, err := Parse(filepath.Join(dir, "t.yaml"), []byte(text))
	if err == nil {
		return ""
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error not one line: %q", msg)
	}
	return strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
}

const refTopo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
const refWork = "workload: {kind: alltoall, ranks: 8, sizes: {list: [1MB]}}\n"

// validate resolves every name run resolves: a file that validates runs.
func TestValidateResolvesReferences(t *testing.T) {
	dir := refDir(t)
	cases := []struct{ name, text, want string }{
		{"failure on a switch that does not exist", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures:\n    - {from: leaf0, to: spine9}\n",
			`t.yaml:7:25: topology.failures[0].to: there is no switch "spine9" in the topology (its switches: leaf0…leaf3, spine0…spine3)`},
		{"failure from a switch that does not exist", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures:\n    - {from: leaf7, to: spine1}\n",
			`t.yaml:7:14: topology.failures[0].from: there is no switch "leaf7" in the topology`},
		{"failure of a host link", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures:\n    - {from: leaf0, to: spine1}\n    - {from: host3, to: leaf0, at: 10us}\n",
			`t.yaml:8:7: topology.failures[1]: "host3"–"leaf0" is a host link; only links between switches can fail`},
		{"two failures of a host link", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures:\n    - {from: host0, to: leaf0, at: 5us, until: 10us}\n    - {from: leaf0, to: host0, at: 7us}\n",
			`t.yaml:7:7: topology.failures[0]: "host0"–"leaf0" is a host link; only links between switches can fail`},
		{"failure of no link", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures:\n    - {from: leaf0, to: leaf1}\n",
			`t.yaml:7:7: topology.failures[0]: there is no link between "leaf0" and "leaf1"`},
		{"routes for an unknown switch", refTopo + refWork + "switch: {routes_file: r-unknown.txt}\n",
			`t.yaml:3:23: switch.routes_file: r-unknown.txt:2: no switch "leaf9"`},
		{"routes to a host out of range", refTopo + refWork + "switch: {routes_file: r-range.txt}\n",
			`t.yaml:3:23: switch.routes_file: r-range.txt:1: host 99 is not in the topology (hosts 0–31)`},
		{"routes to a node not adjacent", refTopo + refWork + "switch: {routes_file: r-adj.txt}\n",
			`switch.routes_file: r-adj.txt:1: leaf0 has no working link to "leaf1"`},
		{"routes that loop", refTopo + refWork + "switch: {routes_file: r-loop.txt}\n",
			`switch.routes_file: r-loop.txt: the routes to host 8 loop`},
		{"routes over a link down from the start", refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures: [{from: spine3, to: leaf0}]\nswitch: {routes_file: r-dead.txt}\n",
			`switch.routes_file: r-dead.txt:1: leaf0 has no working link to "spine3"`},
		{"routes in a variant", refTopo + refWork + "variants:\n  - name: a\n  - name: pinned\n    switch: {routes_file: r-unknown.txt}\n",
			`t.yaml:6:27: variant "pinned": switch.routes_file: r-unknown.txt:2: no switch "leaf9"`},
		{"routes of a sweep point", refTopo + refWork + "sweep:\n  switch.routes_file: [r-ok.txt, r-range.txt]\n",
			`r-range.txt:1: host 99 is not in the topology`},
		{"conflicting pins", refTopo + refWork + "switch: {routes_file: r-conflict.txt}\n",
			`t.yaml:3:23: switch.routes_file: r-conflict.txt:3: switch "leaf0" destination 9 is pinned to "spine1" here and to "spine3" at line 1`},
		{"duplicate pin", refTopo + refWork + "switch: {routes_file: r-dup.txt}\n",
			`switch.routes_file: r-dup.txt:2: switch "leaf0" destination 9 is pinned to "spine3" again (already at line 1); remove the duplicate`},
		{"buffer too small for the headroom", refTopo + refWork + "switch:\n  buffer: 1MiB\n",
			`t.yaml:4:11: switch.buffer: switch leaf0: the PFC headroom of its 12 ports`},
		{"route tables beyond the memory limit", refWork + "topology: {hosts: 65536, hosts_per_leaf: 64}\nsim: {memory_limit: 1GiB}\n",
			`t.yaml:2:1: topology: the route tables of this topology need about 1.9 GiB, more than sim.memory_limit (1GiB); use fewer hosts or switches, or raise sim.memory_limit`},
		{"messages that yield none", refTopo + "workload: {kind: messages, size_dist: small.txt, load: 0.01, duration: 1ns}\n",
			`t.yaml:2:72: workload.duration: 1ns at load 0.01 yields no message (about 0.027 expected, none drawn with seed 1); raise duration or load`},
		{"messages job that yields none", refTopo + refWork + "jobs:\n  - {name: rpc, kind: messages, size_dist: small.txt, load: 0.01, duration: 1ns, host_offset: 8, ranks: 8}\n",
			`t.yaml:4:77: jobs[0].duration: 1ns at load 0.01 yields no message`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := parseIn(t, dir, c.text)
			if msg == "" {
				t.Fatalf("accepted; want %q", c.want)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error\n  %q\nwant it to contain\n  %q", msg, c.want)
			}
		})
	}
	for _, ok := range []string{
		refTopo + refWork + "switch: {routes_file: r-ok.txt}\n",
		refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures: [{from: spine3, to: leaf0, at: 100us}]\nswitch: {routes_file: r-dead.txt}\n",
		refWork + "topology:\n  hosts: 32\n  hosts_per_leaf: 8\n  spines: 4\n  failures: [{from: spine3, to: leaf0}, {from: leaf1, to: spine0, at: 5us}]\n",
		refTopo + "workload: {kind: messages, size_dist: small.txt, load: 0.5, duration: 10us}\n",
		refTopo + refWork + "switch: {buffer: 1MiB, pfc: {enabled: false}}\n",
	} {
		if msg := parseIn(t, dir, ok); msg != "" {
			t.Errorf("%q: %s", ok, msg)
		}
	}
}

// Every file a scenario names must be a regular file: a FIFO is refused
// at once (reading it would wait for a writer forever), a device in one
// line.
func TestReferencedFilesMustBeRegular(t *testing.T) {
	dir := refDir(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct{ key, text string }{
		{"switch.routes_file", refTopo + refWork + "switch: {routes_file: %s}\n"},
		{"workload.file", refTopo + "workload: {kind: flows, file: %s}\n"},
		{"workload.size_dist", refTopo + "workload: {kind: messages, size_dist: %s, load: 0.5, duration: 10us}\n"},
	} {
		for _, p := range []string{fifo, "/dev/zero"} {
			if _, err := os.Stat(p); err != nil {
				continue
			}
			done := make(chan string, 1)
			go func() { done <- parseIn(t, dir, strings.Replace(c.text, "%s", p, 1)) }()
			select {
			case msg := <-done:
				what := "is a named pipe (FIFO), not a regular file"
				if p == "/dev/zero" {
					what = "is a device, not a regular file"
				}
				if !strings.Contains(msg, c.key+": ") || !strings.Contains(msg, strings.TrimPrefix(p, dir+string(filepath.Separator))+" "+what) {
					t.Errorf("%s %s: %q", c.key, p, msg)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: validation blocked on %s", c.key, p)
			}
		}
	}
}

// An error about a referenced file never echoes its lines: at most a
// short piece of a token (16 bytes).
func TestReferencedFileErrorsDoNotEchoLines(t *testing.T) {
	dir := refDir(t)
	for _, text := range []string{
		refTopo + "workload: {kind: messages, size_dist: secret.txt, load: 0.5, duration: 10us}\n",
		refTopo + "workload: {kind: flows, file: secret.txt}\n",
		refTopo + refWork + "switch: {routes_file: secret.txt}\n",
		refTopo + "workload: {kind: messages, size_dist: /etc/passwd, load: 0.5, duration: 10us}\n",
		refTopo + "workload: {kind: flows, file: /etc/passwd}\n",
		refTopo + refWork + "switch: {routes_file: /etc/passwd}\n",
	} {
		msg := parseIn(t, dir, text)
		if msg == "" {
			if strings.Contains(text, "/etc/passwd") {
				continue // no such file here, or an odd one: nothing to leak
			}
			t.Fatalf("%q accepted", text)
		}
		if strings.Contains(msg, "api_key=sk-live-0") || strings.Contains(msg, "0123456789abcdef") || strings.Contains(msg, "root:x:0:0:root:/") || strings.Contains(msg, "/bin/") {
			t.Errorf("%q: the error quotes the file: %q", text, msg)
		}
	}
}

func TestNoteTimeLimitBelowIdeal(t *testing.T) {
	f := mustParse(t, refTopo+"workload: {kind: alltoall, sizes: {list: [1MiB, 1GiB]}}\nsim: {time_limit: 1ms}\n")
	notes := Notes(f.Variants[0].Spec)
	want := "sim.time_limit=1ms is below the ideal time of the 1GiB size (21ms): that job will end incomplete; raise sim.time_limit"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	f = mustParse(t, refTopo+"workload: {kind: allreduce, iterations: 2, warmup: 1, sizes: {from: 8MB, to: 1GB}}\nsim: {time_limit: 1ms}\n")
	want = "sim.time_limit=1ms is below the ideal time of the sizes from 16MB to 512MB (1.9ms to 60ms for 3 runs: warmup and iterations): those jobs will end incomplete; raise sim.time_limit"
	if notes := Notes(f.Variants[0].Spec); len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	f = mustParse(t, refTopo+refWork+"jobs:\n  - {name: big, kind: alltoall, ranks: 8, host_offset: 8, start: 500us, sizes: {list: [64MiB]}}\nsim: {time_limit: 1ms}\n")
	want = `sim.time_limit=1ms is below the start of job "big" (500us) plus its ideal time at 64MiB (1.2ms): every row will end incomplete; raise sim.time_limit`
	if notes := Notes(f.Variants[0].Spec); len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	for _, ok := range []string{
		refTopo + "workload: {kind: alltoall, sizes: {list: [1MiB, 1GiB]}}\n",
		refTopo + "workload: {kind: alltoall, sizes: {list: [1MiB]}}\nsim: {time_limit: 1ms}\n",
		// A scale-up domain carries part of the traffic past the NICs.
		"topology: {hosts: 32, hosts_per_leaf: 8, spines: 4, gpus_per_server: 8, scale_up: {rate: 3600Gbps}}\nworkload: {kind: alltoall, sizes: {list: [1GiB]}}\nsim: {time_limit: 1ms}\n",
	} {
		if n := Notes(mustParse(t, ok).Variants[0].Spec); len(n) != 0 {
			t.Errorf("%q: notes %q", ok, n)
		}
	}
	if n := Notes(Defaults()); len(n) != 0 {
		t.Errorf("defaults: %q", n)
	}
}
