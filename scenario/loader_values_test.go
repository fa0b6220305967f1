package scenario

import (
	"strings"
	"testing"
)

// listFile gives workload.sizes as a list.
const listFile = `topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}
workload: {kind: alltoall, sizes: {list: [64KiB]}}
`

type loadCase struct {
	name, text string
	o          Options
	want       string // a part of the error; "" for none
}

func runLoadCases(t *testing.T, cases []loadCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseOptions("t.yaml", []byte(c.text), c.o)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("no error, want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
		})
	}
}

// A number in quotes is text: refused where a number is wanted as any text
// is, saying so, and never as "too large".
func TestQuotedNumbersAreText(t *testing.T) {
	const quoted = ` (in quotes, so text: write it without quotes)`
	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	runLoadCases(t, []loadCase{
		{"qps", topo + "workload: {kind: alltoall, qps: \"2\", sizes: {list: [1MiB]}}\n", Options{}, `t.yaml:2:33: workload.qps: needs a whole number, got "2"` + quoted},
		{"hosts", "topology: {hosts: '4', hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n", Options{}, `t.yaml:1:19: topology.hosts: needs a whole number, got "4"` + quoted},
		{"seed", minimal + "seed: \"7\"\n", Options{}, `t.yaml:3:7: seed: needs a whole number, got "7"` + quoted},
		{"negative seed", minimal + "seed: \"-7\"\n", Options{}, `seed: needs a whole number, got "-7"` + quoted},
		{"--set", minimal, Options{Sets: []string{`workload.qps="3"`}}, `--set workload.qps: needs a whole number, got "3"` + quoted},
		{"sweep", minimal + "sweep: {workload.qps: [1, \"1\"]}\n", Options{}, `t.yaml:3:27: sweep workload.qps: needs a whole number, got "1"` + quoted},
		{"float", minimal + "sim: {explain_slowdown: \"1.5\"}\n", Options{}, `sim.explain_slowdown: needs a number, got "1.5"` + quoted},
		{"bool", minimal + "sim: {explain: \"true\"}\n", Options{}, `sim.explain: needs true or false, got "true"` + quoted},
		{"text", minimal, Options{Sets: []string{`workload.qps="abc"`}}, `--set workload.qps: needs a whole number, got "abc"`},
		{"plain, too large", minimal, Options{Sets: []string{"workload.qps=9223372036854775808"}}, `--set workload.qps: a number of 19 digits is too large (max 2^63−1 = 9223372036854775807)`},
		{"plain, fits", minimal + "seed: 18446744073709551615\n", Options{Sets: []string{"workload.qps=2"}}, ""},
	})
	_, err := ParseOptions("t.yaml", []byte(minimal), Options{Sets: []string{`workload.qps="2"`}})
	if err != nil && strings.Contains(err.Error(), "too large") {
		t.Errorf("a quoted number is called too large: %v", err)
	}
}

// One end of a from/to sweep written over a list is refused as such, once
// every layer is applied: both ends may come from two of them.
func TestSizesEndOverList(t *testing.T) {
	const alone = "the scenario gives workload.sizes as a list, which to alone cannot change: set from and to together (workload.sizes={from: …, to: …}) or replace the list (workload.sizes.list=[…])"
	variant := listFile + "variants:\n  - name: big\n    workload: {sizes: {to: 64MiB}}\n"
	runLoadCases(t, []loadCase{
		{"--set to", listFile, Options{Sets: []string{"workload.sizes.to=64MiB"}}, "--set workload.sizes.to: " + alone},
		{"--set from", listFile, Options{Sets: []string{"workload.sizes.from=1KiB"}}, "--set workload.sizes.from: the scenario gives workload.sizes as a list, which from alone cannot change"},
		{"--set sizes mapping", listFile, Options{Sets: []string{"workload.sizes={to: 64MiB}"}}, "--set workload.sizes: workload.sizes.to: " + alone},
		{"--set factor", listFile, Options{Sets: []string{"workload.sizes.factor=4"}}, "--set workload.sizes.factor: the scenario gives workload.sizes as a list, which has no factor"},
		{"variant", variant, Options{}, `t.yaml:5:28: variant "big": workload.sizes.to: ` + alone},
		{"sweep", listFile + "sweep: {workload.sizes.to: [1MiB, 2MiB]}\n", Options{}, `t.yaml:3:29: sweep workload.sizes.to: point "to=1MiB": workload.sizes.to: ` + alone},
		{"--sweep", listFile, Options{Sweeps: []string{"workload.sizes.to=1MiB,2MiB"}}, `--sweep workload.sizes.to: point "to=1MiB": ` + alone},
		// Both ends, from one layer or two.
		{"--set both", listFile, Options{Sets: []string{"workload.sizes={from: 1KiB, to: 64MiB}"}}, ""},
		{"two --set", listFile, Options{Sets: []string{"workload.sizes.from=1KiB", "workload.sizes.to=64MiB"}}, ""},
		{"variant and --set", variant, Options{Sets: []string{"workload.sizes.from=1KiB"}}, ""},
		{"sweep and --set", listFile + "sweep: {workload.sizes.to: [1MiB, 2MiB]}\n", Options{Sets: []string{"workload.sizes.from=1KiB"}}, ""},
		{"a new list", listFile, Options{Sets: []string{"workload.sizes.list=[1MiB]"}}, ""},
		// Over from/to, one end alone is a change of that end.
		{"--set to over from/to", minimal, Options{Sets: []string{"workload.sizes.to=16MB"}}, ""},
		// Written together in one place, the file's own error stands.
		{"both in the file", "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {to: 1MiB, list: [64KiB]}}\n", Options{}, "workload.sizes: give either from/to/factor or list, not both"},
	})
	// ApplySets after loading says the same, and leaves the file as it was.
	f := mustParse(t, listFile)
	if err := ApplySets(f, []string{"workload.sizes.to=64MiB"}); err == nil || !strings.Contains(err.Error(), alone) {
		t.Errorf("ApplySets: got %v, want %s", err, alone)
	}
	if got := SweepSizes(f.Variants[0].Spec.Workload.Sizes); len(got) != 1 || got[0].String() != "64KiB" {
		t.Errorf("after the refused ApplySets the sizes are %v", got)
	}
}

// A value given twice, by value and not only by text, is refused at the
// second, naming the first: a list of sizes, and a sweep's values.
func TestDuplicateValues(t *testing.T) {
	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	runLoadCases(t, []loadCase{
		{"sizes by value", topo + "workload: {kind: alltoall, sizes: {list: [64KiB, 65536, 64KiB]}}\n", Options{},
			`t.yaml:2:50: workload.sizes.list[1]: "65536" is 64KiB, as is "64KiB" (list[0], line 2, column 43); give each size once`},
		{"sizes by text", topo + "workload: {kind: alltoall, sizes: {list: [64KiB, 1MiB, 64KiB]}}\n", Options{},
			`t.yaml:2:56: workload.sizes.list[2]: "64KiB" is given twice (list[0], line 2, column 43); give each size once`},
		{"sizes of a job", minimal + "jobs:\n  - {name: j, kind: alltoall, ranks: 2, host_offset: 30, sizes: {list: [1MB, 1000000B]}}\n", Options{},
			`t.yaml:4:78: jobs[0].sizes.list[1]: "1000000B" is 1MB, as is "1MB" (list[0], line 4, column 73)`},
		{"sizes --set", minimal, Options{Sets: []string{"workload.sizes={list: [1MiB, 1MiB]}"}},
			`--set workload.sizes: workload.sizes.list[1]: "1MiB" is given twice (list[0]); give each size once`},
		{"sizes in a sweep value", minimal + "sweep: {workload.sizes.list: [[1KiB, 1024]]}\n", Options{},
			`sweep workload.sizes.list: workload.sizes.list[1]: "1024" is 1KiB, as is "1KiB"`},
		{"sweep numbers", minimal + "sweep: {workload.qps: [1, 01]}\n", Options{},
			`t.yaml:3:27: sweep workload.qps: value "01" is the same as "1" (line 3, column 24); a value cannot be given twice`},
		{"sweep rates", minimal + "sweep: {topology.host_link.rate: [100Gbps, 100G]}\n", Options{},
			`t.yaml:3:44: sweep topology.host_link.rate: value "100G" is the same as "100Gbps" (line 3, column 35); a value cannot be given twice`},
		{"sweep lists", minimal + "sweep: {workload.sizes.list: [[1KiB], [1024]]}\n", Options{},
			`sweep workload.sizes.list: value "[1024]" is the same as "[1KiB]" (line 3, column 31)`},
		{"sweep mappings", minimal + "sweep: {topology.host_link: [{rate: 100Gbps}, {rate: 100G}]}\n", Options{},
			`sweep topology.host_link: value "{rate: 100G}" is the same as "{rate: 100Gbps}"`},
		{"sweep with variants", minimal + "variants: [{name: a}, {name: b, workload: {qps: 3}}]\nsweep: {workload.qps: [2, 0x2]}\n", Options{},
			`sweep workload.qps: value "0x2" is the same as "2"`},
		{"--sweep", minimal, Options{Sweeps: []string{"workload.qps=1,01"}},
			`--sweep workload.qps: value "01" is the same as "1"; a value cannot be given twice`},
		{"--sweep list", minimal, Options{Sweeps: []string{"topology.host_link.rate=[100Gbps, 100G]"}},
			`--sweep topology.host_link.rate: value "100G" is the same as "100Gbps"`},
		{"sweep text twice", minimal + "sweep: {workload.qps: [1, 1]}\n", Options{}, `sweep workload.qps: value "1" is given twice`},
		// Different values stay different: an explicit zero is not the
		// preset's value left alone.
		{"sweep distinct", minimal + "sweep: {workload.qps: [1, 2]}\n", Options{}, ""},
		{"sweep zero and unset", minimal + "sweep: {transport.dcqcn: [{preset: \"off\"}, {preset: \"off\", ai_rate: 0Gbps}]}\n", Options{}, ""},
		{"sizes distinct", topo + "workload: {kind: alltoall, sizes: {list: [64KiB, 64KB]}}\n", Options{}, ""},
	})
}

// A run saved before duplicates were refused still reads (Options.SavedRun).
func TestSavedRunKeepsDuplicates(t *testing.T) {
	const topo = "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\n"
	for _, text := range []string{
		topo + "workload: {kind: alltoall, sizes: {list: [64KiB, 65536]}}\n",
		minimal + "sweep: {workload.qps: [1, 01]}\n",
	} {
		if _, err := ParseOptions("t.yaml", []byte(text), Options{}); err == nil {
			t.Errorf("%q: accepted, want refused", text)
		}
		if _, err := ParseOptions("t.yaml", []byte(text), Options{SavedRun: true}); err != nil {
			t.Errorf("%q: a saved run does not read: %v", text, err)
		}
	}
}
