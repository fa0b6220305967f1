package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fabriclab/report"
)

// A real run with telemetry, saved and exported: the CSV has a row per
// sample and quantity of every kept port and followed flow, the JSON the
// series run --json wrote; a run without telemetry says so.
func TestExportTelemetry(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	runJSON := filepath.Join(dir, "run.json")
	run := func(sets ...string) {
		t.Helper()
		args := []string{"run", "../../examples/incast.yaml", "-q", "--db", db, "--set", "workload.sizes.list=[64KiB]"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
		if code := a.execute(context.Background(), append(args, "--json", runJSON)); code != 0 {
			t.Fatalf("run %v: exit %d", sets, code)
		}
	}
	run("sim.telemetry={interval: 2us, ports: 3, flows: [1]}")
	var o report.Output
	b, _ := os.ReadFile(runJSON)
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	tel := o.Variants[0].Results[0].Telemetry
	if tel == nil || len(tel.Ports) != 3 || len(tel.Flows) != 1 {
		t.Fatalf("telemetry %+v", tel)
	}

	export := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		a := newApp(&out, &errb)
		code := a.execute(context.Background(), append([]string{"export", "1", "--db", db}, args...))
		return code, out.String(), errb.String()
	}
	code, out, stderr := export("--telemetry", "-")
	if code != 0 {
		t.Fatalf("export --telemetry: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(report.TelemetryCSVHeader, ",") {
		t.Errorf("header %v", rows[0])
	}
	want := 1
	for _, v := range o.Variants {
		for _, r := range v.Results {
			for _, ps := range r.Telemetry.Ports {
				want += (6 + len(ps.Priorities)) * r.Telemetry.Samples
			}
			want += 2 * len(r.Telemetry.Flows[0].Value)
		}
	}
	if len(rows) != want {
		t.Errorf("%d rows, want %d (per row: 3 ports × 6 quantities and their priorities × its samples, a flow's two series; the header)", len(rows), want)
	}
	ps := tel.Ports[0]
	first := rows[1]
	if first[2] != "port" || first[3] != ps.Node+"->"+ps.Peer || first[5] != "0" || first[7] != "queue_bytes" || first[8] != itoa(ps.QueueBytes[0]) {
		t.Errorf("first row %v, want %s->%s's first queue sample %d", first, ps.Node, ps.Peer, ps.QueueBytes[0])
	}
	code, out, _ = export("--telemetry", "-", "--telemetry-format", "json")
	var got []report.TelemetryRow
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != len(o.Variants) {
		t.Fatalf("export --telemetry-format json: exit %d, %v", code, err)
	}
	gj, _ := json.Marshal(got[0].Telemetry)
	wj, _ := json.Marshal(tel)
	if !bytes.Equal(gj, wj) {
		t.Errorf("exported telemetry differs from run --json's")
	}

	run() // run 2: no telemetry
	var errb bytes.Buffer
	a := newApp(&bytes.Buffer{}, &errb)
	if code := a.execute(context.Background(), []string{"export", "2", "--db", db, "--telemetry", filepath.Join(dir, "t.csv")}); code == 0 || !strings.Contains(errb.String(), "run 2: the run recorded no telemetry") {
		t.Errorf("export of a run without telemetry: exit %d, %q", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "t.csv")); err == nil {
		t.Error("an empty telemetry file was written")
	}
	errb.Reset()
	a = newApp(&bytes.Buffer{}, &errb)
	if code := a.execute(context.Background(), []string{"export", "2", "--db", db, "--json", filepath.Join(dir, "j.json"), "--telemetry", filepath.Join(dir, "t.csv")}); code == 0 {
		t.Error("export --json --telemetry of a run without telemetry succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "j.json")); err == nil {
		t.Error("--json was written for an export that failed")
	}
	if code, _, stderr := export("--json", "-", "--telemetry-format", "json"); code == 0 || !strings.Contains(stderr, "--telemetry-format needs --telemetry FILE") {
		t.Errorf("--telemetry-format alone: exit %d, %q", code, stderr)
	}
	if code, _, stderr := export("--telemetry", "x.csv", "--telemetry-format", "xml"); code == 0 || !strings.Contains(stderr, "--telemetry-format must be csv or json") {
		t.Errorf("bad format: exit %d, %q", code, stderr)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
