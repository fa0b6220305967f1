package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fabriclab/hosts/agent"
	"fabriclab/metrics"
	"fabriclab/report"
)

// wrongTokenSetup starts an agent on loopback whose token the agents file
// does not hold (as TestRunOnHostsStopsAtAWrongToken) and writes a
// scenario of three sizes of an all-to-all on its four hosts: run
// --engine hosts fails the first job and stops there, the other two
// never run. It returns the scenario and the agents file.
func wrongTokenSetup(t *testing.T) (scenarioPath, agentsPath string) {
	t.Helper()
	dir := t.TempDir()
	s, err := agent.Listen(agent.Config{Listen: "127.0.0.1:0", Token: []byte("the-agents-own-token-0123"),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AuthFailureDelay: time.Millisecond,
		Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("not-the-agents-token-0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := "token_file: token\nagents:\n  - address: " + s.Addr().String() + "\n    hosts:\n"
	for h := range 4 {
		inv += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
	}
	agentsPath = filepath.Join(dir, "agents.yaml")
	scenarioPath = filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(agentsPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	scen := "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\ntransport: {kind: tcp}\nworkload: {kind: alltoall, sizes: {list: [1MiB, 2MiB, 4MiB]}}\n"
	if err := os.WriteFile(scenarioPath, []byte(scen), 0o600); err != nil {
		t.Fatal(err)
	}
	return scenarioPath, agentsPath
}

// execApp runs the CLI with args; it returns the exit code, stdout and
// stderr.
func execApp(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := newApp(&stdout, &stderr).execute(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

// haltedMissing is the "missing" object of the wrong-token run's JSON:
// the two jobs after the failed one never ran.
func haltedMissing(reason string) map[string]any {
	return map[string]any{
		"planned": 3.0, "count": 2.0, "reason": reason,
		"jobs": []any{
			map[string]any{"variant": "base", "size_bytes": float64(2 << 20)},
			map[string]any{"variant": "base", "size_bytes": float64(4 << 20)},
		},
	}
}

// readJSONObject reads a JSON file as an object.
func readJSONObject(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return top
}

// export of a saved run that stopped at a wrong agent token has, besides
// "missing_rows" as before, the "missing" object: how many of the
// planned jobs have no row, why (the saved run's status, as show says
// it), and which. Every key it had before is unchanged.
func TestExportJSONOfAHaltedRunListsItsMissingJobs(t *testing.T) {
	path, agents := wrongTokenSetup(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	if code, _, errOut := execApp("run", path, "--engine", "hosts", "--agents", agents, "--db", db, "-q"); code != exitError ||
		!strings.Contains(errOut, "the run stopped there: 2 did not run") {
		t.Fatalf("run: exit %d:\n%s", code, errOut)
	}
	exported := filepath.Join(dir, "export.json")
	if code, _, errOut := execApp("export", "1", "--db", db, "--json", exported); code != exitError ||
		!strings.HasPrefix(errOut, "fabriclab: run 1 failed: 2 of its 3 result rows were never saved") {
		t.Errorf("export: exit %d: %s", code, errOut)
	}
	top := readJSONObject(t, exported)
	want := haltedMissing("the run failed before they saved a row: it stopped at a job that every later one would fail alike, or its job queue gave up on them")
	if !reflect.DeepEqual(top["missing"], want) {
		t.Errorf("export's \"missing\":\n got %v\nwant %v", top["missing"], want)
	}
	if top["interrupted"] != false || top["missing_rows"] != 2.0 {
		t.Errorf("interrupted %v, missing_rows %v; want false and 2", top["interrupted"], top["missing_rows"])
	}
	vs, _ := top["variants"].([]any)
	if len(vs) != 1 {
		t.Fatalf("variants: %v", top["variants"])
	}
	rows, _ := vs[0].(map[string]any)["results"].([]any)
	if len(rows) != 1 || !strings.Contains(fmt.Sprint(rows[0].(map[string]any)["error"]), "authentication failed") {
		t.Errorf("the failed job's row: %v", rows)
	}

	// Its HTML report says so at the top: the status, the failed row's
	// error and the jobs that never ran (charts.SavedRun).
	page := filepath.Join(dir, "report.html")
	if code, _, errOut := execApp("report", "1", "--db", db, "-o", page); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<strong>run 1: failed.</strong>", "1 of its 1 result row failed", "authentication failed",
		"2 of 3 planned jobs have no result", "<li>base: 2MiB, 4MiB</li>", "<td>run 1 (failed)</td>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report of the run lacks %q", want)
		}
	}

	// The same run as CSV is unchanged: the failed job's row only.
	code, csv, errOut := execApp("export", "1", "--db", db, "--csv", "-")
	if code != exitError || strings.Count(csv, "\n") != 2 || strings.Contains(csv, "missing") {
		t.Errorf("export --csv: exit %d:\n%s\n%s", code, csv, errOut)
	}
}

// export of an interrupted run lists the jobs Ctrl-C left without a row
// as show does, with "interrupted": true and no "missing_rows" (and exit
// 0) as before; export of a complete run has no "missing" key.
func TestExportJSONOfAnInterruptedRunListsItsMissingJobs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	path := writeScenario(t, threeSizesYAML)
	started := make(chan int, 1)
	if code, stderr := runReal(t, stopAfter(1, started), started, "run", "-j", "1", "--db", db, path); code != exitInterrupted {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if code, stderr := runReal(t, stopAfter(3, nil), nil, "run", "-j", "1", "--db", db, path); code != 0 {
		t.Fatalf("complete run: exit %d: %s", code, stderr)
	}
	code, out, errOut := execApp("export", "1", "--db", db, "--json", "-")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	var top map[string]any
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"planned": 3.0, "count": 2.0, "reason": "interrupted: the run stopped before they started or measured anything",
		"jobs": []any{
			map[string]any{"variant": "base", "size_bytes": float64(4 << 20)},
			map[string]any{"variant": "base", "size_bytes": float64(16 << 20)},
		},
	}
	if !reflect.DeepEqual(top["missing"], want) || top["interrupted"] != true {
		t.Errorf("export of the interrupted run: missing %v, interrupted %v", top["missing"], top["interrupted"])
	}
	if _, ok := top["missing_rows"]; ok {
		t.Errorf("missing_rows in an interrupted run's export: %v", top["missing_rows"])
	}
	code, out, errOut = execApp("export", "2", "--db", db, "--json", "-")
	if code != 0 || strings.Contains(out, `"missing"`) {
		t.Errorf("export of the complete run: exit %d: %s\n%s", code, errOut, out)
	}
}

// writeRunJSON writes report.WriteJSON's bytes when nothing is missing,
// and otherwise the same keys with the same values, and "missing" last.
func TestWriteRunJSONKeepsTheKeys(t *testing.T) {
	out := report.Output{Scenario: "s", ScenarioFile: "s.yaml", Seed: 7, Version: "dev", Started: "2026-01-01T00:00:00Z",
		Finished: "2026-01-01T00:01:00Z", MissingRows: 1,
		Variants: []report.VariantResult{{Name: "base", Collective: "alltoall", Results: []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 2 << 20}, Outcome: metrics.Outcome{Error: "boom"}},
			{Completion: metrics.Completion{SizeBytes: 1 << 20}, Outcome: metrics.Outcome{Complete: true}},
		}}}}
	var want, got bytes.Buffer
	if err := report.WriteJSON(&want, out); err != nil {
		t.Fatal(err)
	}
	if err := writeRunJSON(&got, out, report.Unsaved{Planned: 2}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("nothing missing: not report.WriteJSON's bytes:\n%s\nwant\n%s", got.String(), want.String())
	}

	got.Reset()
	u := report.Unsaved{Planned: 3, Missing: 1, Why: "why", Jobs: []report.UnsavedJob{{Variant: "base", SizeBytes: 4 << 20}}}
	if err := writeRunJSON(&got, out, u); err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(want.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	missing := b["missing"]
	delete(b, "missing")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the other keys changed:\n%s\nwant\n%s", got.String(), want.String())
	}
	if w := map[string]any{"planned": 3.0, "count": 1.0, "reason": "why", "jobs": []any{map[string]any{"variant": "base", "size_bytes": float64(4 << 20)}}}; !reflect.DeepEqual(missing, w) {
		t.Errorf("missing: %v, want %v", missing, w)
	}
	if !strings.HasSuffix(got.String(), "  \"missing\": {\n    \"planned\": 3,\n    \"count\": 1,\n    \"reason\": \"why\",\n"+
		"    \"jobs\": [\n      {\n        \"variant\": \"base\",\n        \"size_bytes\": 4194304\n      }\n    ]\n  }\n}\n") {
		t.Errorf("\"missing\" is not the last key, indented as the others:\n%s", got.String())
	}

	// A saved run whose plan could not be rebuilt: how many, why not
	// which, and the variants without any row.
	got.Reset()
	u = report.Unsaved{Planned: 4, Missing: 2, Why: "why", NoPlan: "gone", Empty: []string{"b"}}
	if err := writeRunJSON(&got, out, u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if w := map[string]any{"planned": 4.0, "count": 2.0, "reason": "why", "jobs_unknown": "gone", "variants_without_rows": []any{"b"}}; !reflect.DeepEqual(b["missing"], w) {
		t.Errorf("missing without a plan: %v, want %v", b["missing"], w)
	}
}
