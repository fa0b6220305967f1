package hosts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/hosts/agent"
	"fabriclab/hosts/inventory"
	"fabriclab/hosts/wire"
	"fabriclab/metrics"
	"fabriclab/runner"
	"fabriclab/scenario"
)

// agentLog collects an agent's log lines.
type agentLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *agentLog) logf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
}

// count is how many lines contain s.
func (l *agentLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// sweep3 is a sweep of three jobs on four hosts.
const sweep3 = `
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1, host_link: {rate: 10Gbps}, fabric_link: {rate: 10Gbps}}
transport: {kind: tcp}
workload: {kind: alltoall, sizes: {list: [64KiB, 128KiB, 256KiB]}}
sim: {time_limit: 5s}
`

// runSweep runs the three jobs of sweep3 on e as `fabriclab run --engine
// hosts` does (one worker, engine.RunJob per job).
func runSweep(t *testing.T, e *Engine) []runner.JobResult {
	t.Helper()
	f, err := scenario.Parse("sweep.yaml", []byte(sweep3))
	if err != nil {
		t.Fatal(err)
	}
	jobs := f.Jobs()
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(jobs))
	}
	r := &runner.Runner{Parallel: 1, Run: func(ctx context.Context, j scenario.Job, p engine.Progress) (metrics.SizeResult, error) {
		return engine.RunJob(ctx, e, j, p)
	}}
	return r.RunAll(context.Background(), jobs)
}

// A wrong token is refused once: the first job's dial fails with one
// error naming the agent and saying the tokens differ, and no later job
// of the run dials an agent again (each try would cost the agent another
// failure delay and log line). Two agents: each sees one attempt.
func TestWrongTokenStopsTheRun(t *testing.T) {
	logs := []*agentLog{{}, {}}
	inv := loopbackAgentsWith(t, 2, func(i int, c *agent.Config) {
		c.Logf, c.AuthFailureDelay = logs[i].logf, 5*time.Millisecond
	})
	wrong := []byte("not-the-agents-token-0123456789")
	var dials atomic.Int32
	e := &Engine{Inventory: inv, DataPort: 17474, Dial: func(ctx context.Context, a inventory.Agent) (Agent, error) {
		dials.Add(1)
		c, err := agent.Dial(ctx, agent.ClientConfig{Address: a.Address, Token: wrong, Timeout: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	res := runSweep(t, e)

	for i, lg := range logs {
		if n := lg.count("auth failure from"); n != 1 {
			t.Errorf("agent %s: %d authentication failures in its log, want 1", inv.Agents[i].Address, n)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d dials over 3 jobs of 2 agents, want 2 (the first job's)", n)
	}
	first := res[0].Err
	var ae *AuthError
	if !errors.As(first, &ae) {
		t.Fatalf("first job: %v, want an *AuthError", first)
	}
	msg := first.Error()
	t.Logf("first job: %s", msg)
	if !strings.HasPrefix(msg, "agent "+ae.Agent+": authentication failed: wrong token") ||
		(ae.Agent != inv.Agents[0].Address && ae.Agent != inv.Agents[1].Address) ||
		!strings.Contains(msg, "does not match") || strings.Count(msg, "agent 127.") != 1 || strings.Contains(msg, string(wrong)) {
		t.Errorf("first job's error: %q", msg)
	}
	if res[0].Result.Error != msg {
		t.Errorf("first job's row says %q, want %q", res[0].Result.Error, msg)
	}
	for _, jr := range res[1:] {
		if !errors.As(jr.Err, &ae) || !strings.HasPrefix(jr.Err.Error(), "not run: agent ") {
			t.Errorf("%s: %v, want the first job's authentication failure, not run", runner.JobLabel(jr.Job), jr.Err)
		}
	}
}

// A transient failure (nothing listens) is not an authentication failure:
// every job dials again, as before.
func TestRefusedConnectionIsRetriedPerJob(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	inv := &inventory.Inventory{Path: "agents.yaml", Scale: 1}
	a := inventory.Agent{Address: addr}
	for h := range 4 {
		a.Hosts = append(a.Hosts, inventory.Host{Host: h, DataIP: netip.AddrFrom4([4]byte{127, 0, 1, byte(h + 1)})})
	}
	inv.Agents = append(inv.Agents, a)
	var dials atomic.Int32
	e := &Engine{Inventory: inv, DataPort: 17475, Dial: func(ctx context.Context, a inventory.Agent) (Agent, error) {
		dials.Add(1)
		c, err := agent.Dial(ctx, agent.ClientConfig{Address: a.Address, Token: loopToken, Timeout: 2 * time.Second})
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	res := runSweep(t, e)
	if n := dials.Load(); n != 3 {
		t.Errorf("%d dials over 3 jobs, want 3", n)
	}
	for _, jr := range res {
		var ae *AuthError
		if jr.Err == nil || errors.As(jr.Err, &ae) || !strings.Contains(jr.Err.Error(), "agent "+addr+": cannot connect") {
			t.Errorf("%s: %v, want a refused connection", runner.JobLabel(jr.Job), jr.Err)
		}
	}
}

// An agent that refused the token is a token mismatch of the agents file;
// one that did not prove it holds the token may not be the agent at all,
// and the error does not claim a mismatch.
func TestAuthErrorWords(t *testing.T) {
	wrong := &AuthError{Agent: "10.0.0.5:7470", AgentFile: "agents.yaml", Err: fmt.Errorf("agent 10.0.0.5:7470: %w", wire.ErrWrongToken)}
	if got, want := wrong.Error(), "agent 10.0.0.5:7470: authentication failed: wrong token (the token of agents.yaml's token_file does not match the agent's --token-file; not retried)"; got != want {
		t.Errorf("wrong token:\n got %s\nwant %s", got, want)
	}
	unproven := &AuthError{Agent: "10.0.0.5:7470", AgentFile: "agents.yaml", Err: wire.ErrAgentUnproven}
	if got := unproven.Error(); !strings.HasPrefix(got, "agent 10.0.0.5:7470: authentication failed: the agent did not prove") ||
		strings.Contains(got, "does not match") || !strings.HasSuffix(got, "(not retried)") {
		t.Errorf("unproven agent: %s", got)
	}
	if !IsAuthError(fmt.Errorf("not run: %w", wrong)) || IsAuthError(wire.ErrWrongToken) {
		t.Error("IsAuthError")
	}
}
