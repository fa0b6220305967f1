package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engineFlagScenario is a small valid scenario with the given sim or
// switch line.
func engineFlagScenario(t *testing.T, dir, name, extra string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	text := "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\n" +
		"transport: {kind: tcp}\n" +
		"workload: {kind: alltoall, sizes: {list: [1MiB]}}\n" + extra + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func engineFlagExec(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := newApp(&stdout, &stderr).execute(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

// run and validate --engine packet|flow|auto set sim.engine as the last
// --set, but their errors name --engine, which the user typed, not
// "--set sim.engine", which they did not; and every one begins with the
// scenario file, even where the file is named further on as well.
func TestEngineFlagErrorsNameEngine(t *testing.T) {
	dir := t.TempDir()
	explain := engineFlagScenario(t, dir, "explain.yaml", "sim: {explain: true}") // the flow engine refuses it
	parts := engineFlagScenario(t, dir, "parts.yaml", "sim: {partitions: 2}")     // only the packet engine is partitioned
	plain := engineFlagScenario(t, dir, "plain.yaml", "")
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"validate", "--engine", "flow", explain},
			"fabriclab: " + explain + ": --engine flow: sim.explain reads per-packet queueing and pauses; use --engine packet or auto\n"},
		{[]string{"run", "--no-store", "-q", "--engine", "flow", explain},
			"fabriclab: " + explain + ": --engine flow: sim.explain reads per-packet queueing and pauses; use --engine packet or auto\n"},
		// The override is blamed for a key of the file, which the message
		// names at its end: it still begins with the file.
		{[]string{"validate", "--engine", "auto", parts},
			"fabriclab: " + parts + ": --engine auto: sim.partitions: 2 parts: partitions split the packet engine's run (sim.engine); leave sim.partitions at 1 (see " + parts + ":4:19)\n"},
		{[]string{"run", "--no-store", "-q", "--engine", "auto", parts},
			"fabriclab: " + parts + ": --engine auto: sim.partitions: 2 parts: partitions split the packet engine's run (sim.engine); leave sim.partitions at 1 (see " + parts + ":4:19)\n"},
		{[]string{"validate", "--engine", "auto", "--set", "workload.sizes.list=[2MiB]", parts},
			"fabriclab: " + parts + ": --set workload.sizes.list, --engine auto: sim.partitions: 2 parts: partitions split the packet engine's run (sim.engine); leave sim.partitions at 1 (see " + parts + ":4:19)\n"},
		{[]string{"validate", "--engine", "flow", "--sweep", "sim.engine=packet,flow", parts},
			"fabriclab: " + parts + ": --engine flow: the sweep varies sim.engine (packet, flow): every point would run with this value under its own name; drop --engine, or sweep only the values wanted\n"},
		// A sweep point the engine cannot run: its advice names --engine.
		{[]string{"validate", "--engine", "flow", "--sweep", "transport.kind=tcp,homa", plain},
			"fabriclab: " + plain + ": --sweep transport.kind: point \"kind=homa\": --engine flow: transport homa schedules messages by priority at the receiver, which max-min sharing does not model; use --engine packet or auto\n"},
		// A --set the user did type keeps its name, and the file comes first.
		{[]string{"validate", "--set", "sim.engine=auto", parts},
			"fabriclab: " + parts + ": --set sim.engine: sim.partitions: 2 parts: partitions split the packet engine's run (sim.engine); leave sim.partitions at 1 (see " + parts + ":4:19)\n"},
	} {
		code, _, errOut := engineFlagExec(tc.args...)
		if code != exitError || errOut != tc.want {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit %d and:\n%s", tc.args, code, errOut, exitError, tc.want)
		}
	}
	// --engine and a --set sim.engine both set sim.engine: refused, as
	// --seed beside --set seed= is, whatever the values.
	for _, cmd := range [][]string{{"validate"}, {"run", "--no-store", "-q"}} {
		for _, set := range []string{"sim.engine=packet", "sim.engine=flow", "sim={engine: packet}"} {
			args := append(append([]string{}, cmd...), "--engine", "flow", "--set", set, explain)
			code, _, errOut := engineFlagExec(args...)
			if want := "--engine flow and --set " + set + " both set sim.engine; give one"; code != exitUsage || !strings.Contains(errOut, want) {
				t.Errorf("%q: exit %d, stderr:\n%s\nwant exit %d and %q", args, code, errOut, exitUsage, want)
			}
		}
	}
	// --engine packet still checks for the packet engine, which runs both.
	if code, out, errOut := engineFlagExec("validate", "--engine", "packet", explain, parts); code != exitOK || strings.Count(out, ": ok (") != 2 {
		t.Errorf("validate --engine packet: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// validate of several files names the file in each of its notes; of one
// file, the notes read as they did (and as run's do).
func TestValidateNotesNameTheirFile(t *testing.T) {
	dir := t.TempDir()
	trim := engineFlagScenario(t, dir, "trim.yaml", "switch: {trimming: true}")
	prio := engineFlagScenario(t, dir, "prio.yaml", "nic: {data_priority: 3, control_priority: 3}")
	const (
		trimNote = "switch.trimming: tcp treats a trimmed packet as lost (only UET asks for it again at once)"
		prioNote = "nic.control_priority is the data priority (3): ACKs and CNPs queue behind data at every switch"
		roceNote = "transport.kind roce runs as kernel TCP"
	)
	code, _, errOut := engineFlagExec("validate", trim, prio)
	for _, want := range []string{
		"fabriclab: note: " + trim + ": " + trimNote + "\n",
		"fabriclab: note: " + prio + ": " + prioNote,
	} {
		if code != exitOK || !strings.Contains(errOut, want) {
			t.Errorf("validate of two files: exit %d, stderr:\n%s\nwant %q", code, errOut, want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !strings.HasPrefix(line, "fabriclab: note: "+trim+": ") && !strings.HasPrefix(line, "fabriclab: note: "+prio+": ") {
			t.Errorf("validate of two files: a note without its file: %q", line)
		}
	}
	// The hosts engine's notes too.
	code, _, errOut = engineFlagExec("validate", "--engine", "hosts", "--set", "transport.kind=roce", trim, prio)
	for _, path := range []string{trim, prio} {
		if want := "fabriclab: note: " + path + ": " + roceNote; code != exitOK || !strings.Contains(errOut, want) {
			t.Errorf("validate --engine hosts of two files: exit %d, stderr:\n%s\nwant %q", code, errOut, want)
		}
	}
	// One file: as before.
	code, _, errOut = engineFlagExec("validate", trim)
	if want := "fabriclab: note: " + trimNote + "\n"; code != exitOK || !strings.Contains(errOut, want) || strings.Contains(errOut, trim) {
		t.Errorf("validate of one file: exit %d, stderr:\n%s\nwant %q", code, errOut, want)
	}
}
