package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/engine"
	"fabriclab/hosts"
	"fabriclab/hosts/agent"
	"fabriclab/hosts/inventory"
	"fabriclab/hosts/nslab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

// engineFor is the job function of run's --engine: the simulator (the
// app's runJob), or the real-hosts engine on the agents of --agents, one
// job at a time (the agents run one run each).
func (a *app) engineFor(cmd *cobra.Command, f *runFlags) (JobFunc, error) {
	switch f.engine {
	case "":
		// The simulator the scenario's sim.engine names (run turns
		// --engine packet|flow|auto into that key).
		if f.agents != "" || f.cc != "" || f.heartbeat != 0 {
			return nil, usageErr(cmd, "--agents, --cc and --heartbeat are read by --engine hosts only")
		}
		return a.runJob, nil
	case "hosts":
	default:
		return nil, usageErr(cmd, "unknown --engine %q; use packet, flow, auto or hosts", f.engine)
	}
	if f.agents == "" {
		return nil, usageErr(cmd, "--engine hosts needs --agents FILE (or --agents lab for the namespace lab)")
	}
	if f.heartbeat != 0 && (f.heartbeat < time.Millisecond || f.heartbeat > time.Minute) {
		return nil, usageErr(cmd, "--heartbeat %v: between 1ms and 1m", f.heartbeat)
	}
	path := f.agents
	if path == "lab" {
		path = filepath.Join(nslab.StateDir(), "agents.yaml")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--agents lab: no namespace lab is up (%s is missing); run 'fabriclab lab up FILE' first", path)
		}
	}
	inv, err := inventory.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--agents: %w", err)
	}
	token, err := inv.ReadToken()
	if err != nil {
		return nil, fmt.Errorf("--agents: %w", err)
	}
	f.inventory = inv
	var stages io.Writer = a.stderr // the engine's progress lines; -q: none
	if f.quiet {
		stages = nil
	}
	e := &hosts.Engine{Inventory: inv, CC: f.cc, Log: stages, Warn: a.stderr, Heartbeat: units.Duration(f.heartbeat.Nanoseconds()) * units.Nanosecond,
		Dial: func(ctx context.Context, ag inventory.Agent) (hosts.Agent, error) {
			c, err := agent.Dial(ctx, agent.ClientConfig{Address: ag.Address, Token: token,
				CAFile: inv.CAFile, CertFile: inv.CertFile, KeyFile: inv.KeyFile, Timeout: 5 * time.Second})
			if err != nil {
				return nil, err
			}
			return c, nil
		}}
	f.parallel = 1 // an agent runs one run at a time
	return func(ctx context.Context, job scenario.Job, progress engine.Progress) (metrics.SizeResult, error) {
		return engine.RunJob(ctx, e, job, progress)
	}, nil
}
