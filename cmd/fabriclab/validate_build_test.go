package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate refuses what only a build finds, as run does: a telemetry flow
// id the workload does not have, and traffic engineering over more
// equal-cost paths than it considers. A file that validates runs.
func TestValidateBuildsWhatOnlyABuildChecks(t *testing.T) {
	validate := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := newApp(&stdout, &stderr).execute(context.Background(), append([]string{"validate"}, args...))
		return code, stdout.String(), stderr.String()
	}
	const incast = "../../examples/incast.yaml"

	t.Run("telemetry flow id", func(t *testing.T) {
		code, out, errOut := validate(t, incast, "--set", "sim.telemetry={interval: 10us, flows: [31]}")
		if code != 1 || out != "" {
			t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
		}
		want := "fabriclab: " + incast + ": pfc 64KiB: sim.telemetry.flows[0]: there is no flow 31 (this job's flows are 0 to 30: the id of sim.record_flows' records)\n"
		if errOut != want {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
		// Flow 30, the last, is accepted.
		if code, out, errOut := validate(t, incast, "--set", "sim.telemetry={interval: 10us, flows: [30]}"); code != 0 || !strings.Contains(out, ": ok (") {
			t.Errorf("flow 30: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})

	t.Run("te paths", func(t *testing.T) {
		// tor0 → 17 aggregation switches → 17 cores → 17 aggregation
		// switches → tor1: 17³ = 4,913 shortest paths between the two
		// hosts, more than traffic engineering's 4,096.
		dir := t.TempDir()
		scenario := filepath.Join(dir, "te.yaml")
		write := func(path, text string) {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		topoFile := func(n int) string {
			var b strings.Builder
			b.WriteString("node,host0,host\nnode,host1,host\nnode,tor0,switch,tor\nnode,tor1,switch,tor\n")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "node,a%d,switch,agg\nnode,c%d,switch,core\nnode,b%d,switch,agg\n", i, i, i)
			}
			b.WriteString("link,host0,tor0,100Gbps,1us\nlink,host1,tor1,100Gbps,1us\n")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "link,tor0,a%d,100Gbps,1us\nlink,b%d,tor1,100Gbps,1us\n", i, i)
				for j := 0; j < n; j++ {
					fmt.Fprintf(&b, "link,a%d,c%d,100Gbps,1us\nlink,c%d,b%d,100Gbps,1us\n", i, j, j, i)
				}
			}
			return b.String()
		}
		write(scenario, `name: te-paths
topology:
  kind: custom
  file: fabric.csv
  host_link: {rate: 100Gbps}
switch:
  forwarding: te
workload:
  kind: alltoall
  ranks: 2
  sizes: {list: [1MiB]}
`)
		write(filepath.Join(dir, "fabric.csv"), topoFile(17))
		code, out, errOut := validate(t, scenario)
		if code != 1 || out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 1", code, out, errOut)
		}
		if want := "switch.forwarding te: more than 4096 equal-cost paths from host"; !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
		// 16³ = 4,096 paths: traffic engineering takes them.
		write(filepath.Join(dir, "fabric.csv"), topoFile(16))
		if code, out, errOut := validate(t, scenario); code != 0 || !strings.Contains(out, "te.yaml: ok (1 variant, 1 job)") {
			t.Errorf("4,096 paths: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
}

// run --engine hosts says, before it starts, what real hosts run
// otherwise: a RoCE scenario measures kernel TCP there (one note for the
// variants it is about); a job that cannot reach its agent names it once.
func TestHostsEngineNotesTheTransport(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := "token_file: token\nagents:\n  - address: 127.0.0.1:1\n    hosts:\n"
	for h := range 4 {
		inv += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
	}
	agents := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(agents, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := newApp(&stdout, &stderr).execute(context.Background(), append([]string{"run", "../../examples/hosts-alltoall.yaml", "--engine", "hosts", "--agents", agents, "--no-store"}, args...))
		return code, stderr.String()
	}
	// Every variant runs RoCE: one note, about all of them.
	code, errOut := run("--set", "transport.kind=roce")
	want := "fabriclab: note: transport.kind roce runs as kernel TCP with each kernel's default congestion control on real hosts: transport.dcqcn and transport.hpcc settings are not applied"
	if code != exitError || strings.Count(errOut, want) != 1 {
		t.Errorf("roce on hosts: exit %d, stderr:\n%s\nwant the note %q once", code, errOut, want)
	}
	// The failed jobs name the agent they could not reach, once.
	if !strings.Contains(errOut, "agent 127.0.0.1:1: cannot connect") || strings.Contains(errOut, "agent 127.0.0.1:1: agent") {
		t.Errorf("the dial error:\n%s", errOut)
	}
	// Half the variants on UET: the note names them.
	_, errOut = run("--sweep", "transport.kind=tcp,uet")
	if n := strings.Count(errOut, "transport.kind uet runs as kernel TCP"); n != 1 || !strings.Contains(errOut, "fabriclab: note: variants ") {
		t.Errorf("a sweep over tcp and uet: %d uet notes, stderr:\n%s", n, errOut)
	}
	if _, errOut := run(); strings.Contains(errOut, "transport.kind") {
		t.Errorf("tcp on hosts: a transport note:\n%s", errOut)
	}
	// --heartbeat is checked, and read by the hosts engine only.
	for _, hb := range []string{"2m", "-1s", "1us"} {
		if code, errOut := run("--heartbeat", hb); code != exitUsage || !strings.Contains(errOut, "--heartbeat") || !strings.Contains(errOut, "between 1ms and 1m") {
			t.Errorf("--heartbeat %s: exit %d, stderr:\n%s", hb, code, errOut)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := newApp(&stdout, &stderr).execute(context.Background(), []string{"run", "../../examples/incast.yaml", "--heartbeat", "1s", "--no-store"}); code != exitUsage || !strings.Contains(stderr.String(), "--heartbeat are read by --engine hosts only") {
		t.Errorf("--heartbeat on the simulator: exit %d, stderr:\n%s", code, stderr.String())
	}
}
