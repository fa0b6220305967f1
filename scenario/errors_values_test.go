package scenario

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"fabriclab/internal/inputfile"
)

// leafKeys lists the dotted keys of every value of type t below path that
// a --set can give: scalars, and lists (as one value).
func leafKeys(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	for t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == pickType || t == responseType {
		*out = append(*out, path)
		return
	}
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	names := []string{}
	for k := range fieldsOf(t) {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		leafKeys(fieldsOf(t)[k].Type, join(path, k), seen, out)
	}
}

// An error never echoes more than inputfile.TokenBytes bytes of a long
// value or key, wherever it is given: every key of the schema set to a long
// value (or list of one), and an unknown long key under every mapping.
func TestErrorsCutLongValues(t *testing.T) {
	long := strings.Repeat("w", 2000)
	tooMuch := strings.Repeat("w", inputfile.TokenBytes+1)
	var keys []string
	leafKeys(reflect.TypeFor[Scenario](), "", map[reflect.Type]bool{}, &keys)
	if len(keys) < 100 {
		t.Fatalf("only %d keys found", len(keys))
	}
	// A variant's or point's name keeps maxNameBytes.
	label := regexp.MustCompile(`(variant|point) "[^"]*"…: `)
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		if msg := err.Error(); strings.Contains(label.ReplaceAllString(msg, ""), tooMuch) || len(msg) > 600 {
			t.Errorf("%s: the error echoes the long value (%d bytes): %.300s", what, len(msg), msg)
		}
	}
	parents := map[string]bool{"": true}
	for _, k := range keys {
		for p := parent(k); p != ""; p = parent(p) {
			parents[p] = true
		}
		for _, v := range []string{long, "1" + long, "[" + long + "]", `"` + long + `"`, "{" + long + ": 1}"} {
			_, err := ParseOptions("t.yaml", []byte(minimal), Options{Sets: []string{k + "=" + v}})
			check("--set "+k, err)
		}
	}
	for p := range parents {
		_, err := ParseOptions("t.yaml", []byte(minimal), Options{Sets: []string{join(p, long) + "=1"}})
		check("--set "+join(p, "LONG"), err)
	}
	// In the file, in a variant and in a sweep.
	files := map[string]string{
		"topology.kind":   "topology: {kind: " + long + ", hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n",
		"unknown key":     minimal + "nic: {" + long + ": 1}\n",
		"sizes.list":      "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {list: [64" + long + "]}}\n",
		"failures.from":   "topology: {hosts: 32, hosts_per_leaf: 8, spines: 4, failures: [{from: " + long + ", to: spine0}]}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n",
		"variant":         minimal + "variants: [{name: a, workload: {algorithm: " + long + "}}]\n",
		"variant key":     minimal + "variants: [{name: a, " + long + ": 1}]\n",
		"sweep value":     minimal + "sweep: {workload.algorithm: [" + long + "]}\n",
		"sweep key":       minimal + "sweep: {" + long + ": [1]}\n",
		"sweep point":     minimal + "sweep: {transport.dcqcn.preset: [" + long + "]}\n",
		"variant name":    minimal + "variants: [{name: " + long + ", workload: {qps: 0}}]\n",
		"scenario name":   minimal + "name: \"\\x01" + long + "\"\n",
		"huge number":     minimal + "seed: 1" + strings.Repeat("0", 2000) + "\n",
		"job name twice":  minimal + "jobs: [{name: " + long + ", workload: {kind: alltoall, sizes: {list: [1MiB]}}}, {name: " + long + ", workload: {kind: alltoall, sizes: {list: [1MiB]}}}]\n",
		"description tab": minimal + "description: \"\\x01" + long + "\"\n",
		"alias":           minimal + "seed: *" + long + "\n",
		"routes file":     minimal + "switch: {routes_file: " + long + "}\n",
	}
	for name, text := range files {
		_, err := Parse("t.yaml", []byte(text))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		check(name, err)
	}
	for name, opts := range map[string]Options{
		"--sweep value": {Sweeps: []string{"workload.algorithm=" + long}},
		"--sweep key":   {Sweeps: []string{long + "=1,2"}},
		"--set swept":   {Sweeps: []string{"workload.algorithm=direct," + long[:200]}, Sets: []string{"workload.algorithm=direct"}},
	} {
		_, err := ParseOptions("t.yaml", []byte(minimal), opts)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		check(name, err)
	}
}

// The cut of a long value: 16 bytes and "…", as inputfile.Token; a variant
// name keeps 64 bytes; known keys and the forms of files' lines are kept.
func TestErrorCutForms(t *testing.T) {
	long := strings.Repeat("w", 100)
	cases := []struct{ text, want string }{
		{"topology: {kind: " + long + ", hosts: 32, hosts_per_leaf: 8, spines: 4}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n",
			`t.yaml:1:18: topology.kind: unknown topology "wwwwwwwwwwwwwwww"…; use one of: leaf-spine, fat-tree, rail, custom, ns3`},
		{minimal + "nic: {" + long + ": 1}\n",
			`t.yaml:3:7: nic.wwwwwwwwwwwwwwww…: unknown key "wwwwwwwwwwwwwwww"…; known keys here:`},
		{minimal + "variants: [{name: " + long + ", workload: {qps: 0}}]\n",
			`variant "` + long[:64] + `"…: workload.qps: needs at least 1 queue pair`},
		{minimal + "transport: {dcqcn: {clamp_after_time_increas: true}}\n",
			`transport.dcqcn.clamp_after_time…: unknown key "clamp_after_time"… (did you mean "clamp_after_time_increase"?); known keys here: ai_rate,`},
		{minimal + "sim: {telemetry: {ports: [" + long + "]}}\n",
			`got "wwwwwwwwwwwwwwww"… (100 characters)`},
		{minimal + "variants: [{name: \"p algorithm=direct\"}, {name: p}]\nsweep: {workload.algorithm: [pairwise, \"direct algorithm=pairwise\"]}\n",
			`t.yaml:4:9: sweep workload.algorithm: point "p algorithm=direct algorithm=pairwise": two sweep points have this name; make the values or variant names distinct`},
	}
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s…: got %v\nwant it to contain %s", c.text, err, c.want)
		}
	}
	if got := capQuoted(`want "nodes switches links" on the first line`); got != `want "nodes switches links" on the first line` {
		t.Errorf("a line form is cut: %s", got)
	}
	if got := capKey("workload.placement_hosts, transport.dcqcn.clamp_after_time_increase"); got != "workload.placement_hosts, transport.dcqcn.clamp_after_time_increase" {
		t.Errorf("known keys are cut: %s", got)
	}
}
