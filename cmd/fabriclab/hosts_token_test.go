package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/hosts/agent"
)

// run --engine hosts against an agent that holds another token: the
// first job fails naming the agent, the run stops there (one handshake
// reaches the agent, not one per job), the exit message says how many
// jobs did not run, and show lists them with the reason.
func TestRunOnHostsStopsAtAWrongToken(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var agentLog strings.Builder
	s, err := agent.Listen(agent.Config{Listen: "127.0.0.1:0", Token: []byte("the-agents-own-token-0123"),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AuthFailureDelay: time.Millisecond,
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&agentLog, format+"\n", args...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() { cancel(); <-done }()

	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("not-the-agents-token-0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := "token_file: token\nagents:\n  - address: " + s.Addr().String() + "\n    hosts:\n"
	for h := range 4 {
		inv += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
	}
	agents := filepath.Join(dir, "agents.yaml")
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(agents, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	scen := "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\ntransport: {kind: tcp}\nworkload: {kind: alltoall, sizes: {list: [1MiB, 2MiB, 4MiB]}}\n"
	if err := os.WriteFile(path, []byte(scen), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "runs.db")
	var stdout, stderr bytes.Buffer
	code := newApp(&stdout, &stderr).execute(context.Background(), []string{"run", path, "--engine", "hosts", "--agents", agents, "--db", db, "--json", filepath.Join(dir, "run.json")})
	errOut := stderr.String()
	if !strings.HasSuffix(stdout.String(), "# missing: 2 of 3 planned jobs have no result (the run stopped at a failed job before they started)\n#   base: 2MiB, 4MiB\n") {
		t.Errorf("run's tables do not list the jobs that did not run:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "# variant: base  (alltoall)\n") {
		t.Errorf("the variant line of rows that all failed before the job was built:\n%s", stdout.String())
	}
	if code != exitError || !strings.Contains(errOut, "fabriclab: base 1MiB: agent 127.0.0.1:") || strings.Contains(errOut, "not run:") ||
		!strings.Contains(errOut, "does not match the agent's --token-file") ||
		!strings.Contains(errOut, "1 of 3 jobs failed; the run stopped there: 2 did not run") || strings.Contains(errOut, "not-the-agents") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	mu.Lock()
	failures := strings.Count(agentLog.String(), "auth failure from")
	mu.Unlock()
	if failures != 1 {
		t.Errorf("the agent saw %d failed handshakes, want 1:\n%s", failures, agentLog.String())
	}

	// The rows of the jobs that never ran are missing, as export and runs
	// say; export's words are a failed run's.
	stdout.Reset()
	stderr.Reset()
	exported := filepath.Join(dir, "export.json")
	if code := newApp(&stdout, &stderr).execute(context.Background(), []string{"export", "1", "--db", db, "--json", exported}); code != exitError ||
		!strings.HasPrefix(stderr.String(), "fabriclab: run 1 failed: 2 of its 3 result rows were never saved") {
		t.Errorf("export: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := newApp(&stdout, &stderr).execute(context.Background(), []string{"runs", "--db", db}); code != 0 || !strings.Contains(stdout.String(), " failed (1 of 3 rows saved) ") {
		t.Errorf("runs: exit %d:\n%s", code, stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := newApp(&stdout, &stderr).execute(context.Background(), []string{"show", "1", "--db", db}); code != 0 ||
		!strings.Contains(stdout.String(), "# missing: 2 of 3 planned jobs have no result (the run failed before they saved a row: it stopped at a job that every later one would fail alike") ||
		!strings.Contains(stdout.String(), "2MiB, 4MiB") {
		t.Errorf("show: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// What every job of a hosts run would fail alike is refused before any
// agent is dialed (the agent's address here answers nothing): a scenario
// host no agent runs, a transport without connections.
func TestRunOnHostsRefusedBeforeDialing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inventory := func(hosts int) string {
		inv := "token_file: token\nagents:\n  - address: 127.0.0.1:1\n    hosts:\n"
		for h := range hosts {
			inv += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
		}
		path := filepath.Join(dir, fmt.Sprintf("agents%d.yaml", hosts))
		if err := os.WriteFile(path, []byte(inv), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := filepath.Join(dir, "s.yaml")
	scen := "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2}\ntransport: {kind: tcp}\nworkload: {kind: alltoall, sizes: {list: [1MiB, 2MiB]}}\n"
	if err := os.WriteFile(path, []byte(scen), 0o600); err != nil {
		t.Fatal(err)
	}
	two, four := inventory(2), inventory(4)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--agents", two}, "fabriclab: --agents: " + two + ":2:1: agents: no agent runs host 2 (the scenario has 4 hosts; map every host 0–3; the agents run hosts 0–1)\n"},
		{[]string{"--agents", four, "--set", "transport.kind=homa"}, "fabriclab: " + path + ": base 1MiB: hosts: a transport without connections (homa)"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", path, "--engine", "hosts", "--no-store", "-q"}, c.args...)
		code := newApp(&stdout, &stderr).execute(context.Background(), args)
		if code != exitError || !strings.HasPrefix(stderr.String(), c.want) || strings.Contains(stderr.String(), "cannot connect") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q and no agent dialed", c.args, code, stderr.String(), c.want)
		}
	}
}
