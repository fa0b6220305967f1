package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"fabriclab/hosts/inventory"
	"fabriclab/hosts/wire"
)

// parsedAgents is an agents file of two agents (the fake network's A and
// B), parsed so that its errors have positions: token_file at 1:13,
// scale at 2:8, agents at 3:1.
func parsedAgents(t *testing.T, hosts int, scale string) *inventory.Inventory {
	t.Helper()
	src := "token_file: token\nscale: " + scale + "\nagents:\n"
	for i := 0; i*2 < hosts; i++ {
		src += fmt.Sprintf("  - address: agent%c:7470\n    hosts:\n", 'A'+i)
		for h := 2 * i; h < min(2*i+2, hosts); h++ {
			src += fmt.Sprintf("      - {host: %d, data_ip: 127.0.0.%d}\n", h, h+1)
		}
	}
	inv, err := inventory.Parse("agents.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// A scenario host no agent runs is named at the agents file's agents key,
// with the hosts the agents do run.
func TestPlanNamesTheAgentsFile(t *testing.T) {
	e := &Engine{Inventory: parsedAgents(t, 2, "1")}
	want := "agents.yaml:3:1: agents: no agent runs host 2 (the scenario has 4 hosts; map every host 0–3; the agents run hosts 0–1)"
	if _, err := e.Plan(job(t, scen), planTogether); err == nil || err.Error() != want {
		t.Errorf("Plan:\n got %v\nwant %s", err, want)
	}
	if _, err := e.endpoints(4); err == nil || err.Error() != want {
		t.Errorf("endpoints:\n got %v\nwant %s", err, want)
	}
}

// A refused token names where the agents file gives its token_file.
func TestWrongTokenNamesTokenFileLine(t *testing.T) {
	inv := parsedAgents(t, 4, "1")
	e := &Engine{Inventory: inv, Dial: func(_ context.Context, a inventory.Agent) (Agent, error) {
		return nil, fmt.Errorf("agent %s: %w", a.Address, wire.ErrWrongToken)
	}}
	p, err := e.Plan(job(t, scen), planTogether)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), p, nil)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.TokenAt != "agents.yaml:1:13" ||
		!strings.HasSuffix(err.Error(), "(the token of token_file at agents.yaml:1:13 does not match the agent's --token-file; not retried)") {
		t.Errorf("got %v", err)
	}
}

// A workload too long for the run's limit at the agents file's scale
// names where the scale is written.
func TestLongWorkloadNamesTheScale(t *testing.T) {
	_, n := rig(t, 4)
	e := &Engine{Inventory: parsedAgents(t, 4, "1/1000"), Dial: n.dial}
	const anyToAny = `
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1, host_link: {rate: 10Gbps}, fabric_link: {rate: 10Gbps}}
transport: {kind: tcp}
workload: {kind: any-to-any, clients: 2, servers: 2, depth: 1, duration: 1s, sizes: {list: [64KiB]}}
sim: {time_limit: 2s}
`
	p, err := e.Plan(job(t, anyToAny), planTogether)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), p, nil)
	if err == nil || !strings.HasSuffix(err.Error(), "shorten workload.duration or raise the scale (agents.yaml:2:8)") {
		t.Errorf("got %v", err)
	}
}
