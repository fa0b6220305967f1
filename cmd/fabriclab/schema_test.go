package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/json-schema.golden")

// The JSON output's schema is a contract (README, "Output contract"): every
// key path and its type, from a run that fills every field, must match the
// golden file. Adding a field means updating the golden file (go test
// ./cmd/fabriclab -run Schema -update) and the README; renaming or removing
// one breaks scripts and must not happen.
// The schema is the union over two runs: schema.yaml (collectives, jobs,
// sweeps) and schema-messages.yaml (a message workload's slowdown buckets
// and load).
func TestJSONSchemaIsStable(t *testing.T) {
	paths := map[string]bool{}
	for _, file := range []string{"testdata/schema.yaml", "testdata/schema-messages.yaml"} {
		out := filepath.Join(t.TempDir(), "out.json")
		a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
		if code := a.execute(context.Background(), []string{"run", file, "-q", "--json", out}); code != 0 {
			t.Fatalf("%s: exit %d", file, code)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		schema(v, "", paths)
	}
	var lines []string
	for p := range paths {
		lines = append(lines, p)
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "json-schema.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("JSON schema changed (run with -update if intended, and document it):\n%s", diffLines(string(want), got))
	}
	// The contract's names from the issue are all there.
	for _, k := range []string{"scenario", "seed", "variants[].name", "variants[].results[].size_bytes",
		"variants[].results[].cct_s", "variants[].results[].algbw_gbps", "variants[].results[].busbw_gbps",
		"variants[].results[].ideal_s", "variants[].results[].ideal_pct", "variants[].results[].pfc_pauses",
		"variants[].results[].ecn_marks", "variants[].results[].drops", "variants[].results[].retransmits"} {
		if !strings.Contains(got, k+":") {
			t.Errorf("contract key %s missing", k)
		}
	}
}

// schema records "path: type" for every value; array elements share the
// path "name[]".
func schema(v any, path string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if path != "" {
			out[path+": object"] = true
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			schema(e, p, out)
		}
	case []any:
		out[path+": array"] = true
		for _, e := range x {
			schema(e, path+"[]", out)
		}
	case string:
		out[path+": string"] = true
	case float64:
		out[path+": number"] = true
	case bool:
		out[path+": bool"] = true
	case nil:
		out[path+": null"] = true
	default:
		out[fmt.Sprintf("%s: %T", path, v)] = true
	}
}

func diffLines(want, got string) string {
	w := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	g := map[string]bool{}
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}
