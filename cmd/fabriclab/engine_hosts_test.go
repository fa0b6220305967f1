package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/hosts/nslab"
)

// A scenario asking for the flow engine, with probes: no simulator engine
// runs probes, so the simulator refuses it at probes; on real hosts
// (--engine hosts) sim.engine is not read and the probes run.
const flowProbes = `topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}
transport: {kind: tcp}
workload: {kind: alltoall, sizes: {list: [1MiB]}}
sim: {engine: flow}
probes:
  - {from: 0, to: 3, rate: 1Gbps}
`

// validate and run check a scenario for the engine that runs it: with
// --engine hosts what only a simulator engine refuses (the flow engine's
// reasons, sim.partitions') is not refused, and what real hosts cannot
// run (a scale-up domain, Homa) still is; without it the simulator's
// refusal stands, in the same words.
func TestValidateAndRunForTheEngineThatRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(flowProbes), 0o600); err != nil {
		t.Fatal(err)
	}
	exec := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := newApp(&stdout, &stderr).execute(context.Background(), args)
		return code, stdout.String(), stderr.String()
	}
	const refusal = "probes: paced UDP probes run on real hosts only (--engine hosts); the simulator has no UDP transport"
	for args, at := range map[string]string{
		"validate":                 ":5:1: ",
		"validate --engine flow":   ":5:1: ",
		"validate --engine packet": ":5:1: ",
		"run --no-store -q":        ":5:1: ",
	} {
		words := strings.Fields(args)
		if code, _, errOut := exec(append(words, path)...); code != exitError || errOut != "fabriclab: "+path+at+refusal+"\n" {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant %s", args, code, errOut, path+at+refusal)
		}
	}
	for _, args := range [][]string{
		{"validate", "--engine", "hosts", path},
		{"validate", "--engine", "hosts", "--set", "sim.partitions=2", path},
		{"validate", "--engine", "hosts", "--set", "sim.telemetry.ports=4", "--sweep", "sim.engine=packet,flow,auto", path},
	} {
		if code, out, errOut := exec(args...); code != exitOK || !strings.Contains(out, path+": ok (") || strings.Contains(errOut, "sim.engine") {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", args, code, out, errOut)
		}
	}
	// What real hosts cannot run is refused as the run refuses it.
	for set, want := range map[string]string{
		"transport.kind=homa":            "base 1MiB: hosts: a transport without connections (homa) has no real-host counterpart",
		"topology.scale_up.rate=100Gbps": "base 1MiB: hosts: the hosts engine has no scale-up domain",
	} {
		if code, _, errOut := exec("validate", "--engine", "hosts", "--set", set, path); code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("validate --engine hosts --set %s: exit %d, stderr:\n%s", set, code, errOut)
		}
	}
	if code, _, errOut := exec("validate", "--engine", "fluid", path); code != exitUsage || !strings.Contains(errOut, `unknown --engine "fluid"; use packet, flow, auto or hosts`) {
		t.Errorf("validate --engine fluid: exit %d, stderr:\n%s", code, errOut)
	}

	// run --engine hosts gets as far as the agents (none answers here).
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(dir, "agents.yaml")
	inv := "token_file: token\nagents:\n  - address: 127.0.0.1:1\n    hosts:\n"
	for h := range 4 {
		inv += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
	}
	if err := os.WriteFile(agents, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := exec("run", path, "--engine", "hosts", "--agents", agents, "--no-store", "-q")
	if code != exitError || !strings.Contains(errOut, "agent 127.0.0.1:1: cannot connect") || strings.Contains(errOut, "sim.engine") {
		t.Errorf("run --engine hosts: exit %d, stderr:\n%s\nwant the agent dialed", code, errOut)
	}
}

// Every command reads the scenario for the engine it runs: run and
// validate for --engine hosts, lab up (whose lab only real hosts use)
// always for hosts, analyze (which runs no engine) for none.
func TestLoadForTheEngineThatRuns(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "f.yaml", "--engine", "hosts", "--agents", "lab", "--no-store"}, "hosts"},
		{[]string{"run", "f.yaml", "--engine", "flow", "--no-store"}, ""},
		{[]string{"validate", "--engine", "hosts", "f.yaml"}, "hosts"},
		{[]string{"validate", "--engine", "auto", "f.yaml"}, ""},
		{[]string{"lab", "up", "f.yaml", "--state-dir", t.TempDir()}, "hosts"},
		{[]string{"analyze", "f.yaml"}, "none"},
	} {
		a, _, _ := newTestApp(nil, quickRun)
		got := "not loaded"
		a.load = func(path string, sets, sweeps []string, engine string) (*plan, error) {
			got = engine
			return nil, errors.New("stop here")
		}
		if c.args[0] == "run" && c.args[3] == "hosts" {
			// --agents lab needs a lab's agents file: give it one.
			dir := t.TempDir()
			t.Setenv(nslab.StateDirEnv, dir)
			for name, text := range map[string]string{"token": "0123456789abcdef0123\n",
				"agents.yaml": "token_file: token\nagents:\n  - address: 127.0.0.1:1\n    hosts:\n      - {host: 0, data_ip: 127.0.0.1}\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		a.execute(context.Background(), c.args)
		if got != c.want {
			t.Errorf("%q: loaded for engine %q, want %q", c.args, got, c.want)
		}
	}
}
