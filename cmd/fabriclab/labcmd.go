package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/hosts/nslab"
	"fabriclab/scenario"
	"fabriclab/units"
)

// lab up / lab down: the namespace lab (hosts/nslab) that the hosts
// engine runs on when there is no cluster.

func init() { moreCommands = append(moreCommands, (*app).labCmd) }

func (a *app) labCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Build a scenario's fabric on this machine from network namespaces",
		Long: `lab up builds the topology of a scenario on this machine: one network
namespace per host and per switch, links as veth pairs shaped to the
scenario's (scaled) link rates, switches routing with ECMP or the
scenario's static routes, a management network to the root namespace, and
one agent per host. lab status shows what of it is on this machine; lab
down removes it. Up and down need root.

The lab cannot emulate propagation delay, ECN marking or PFC (the kernel
offers tbf, htb and fifo qdiscs, no netem or red).`,
		Example: `  sudo fabriclab lab up examples/hosts-any-to-any.yaml --scale 1/1000
  sudo fabriclab run examples/hosts-any-to-any.yaml --engine hosts --agents lab
  sudo fabriclab lab status
  sudo fabriclab lab down`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr(cmd, "unknown lab command %q: use lab up, lab status or lab down", args[0])
			}
			return usageErr(cmd, "lab needs a command: up, status or down")
		},
	}
	cmd.AddCommand(a.labUpCmd(), a.labStatusCmd(), a.labDownCmd())
	return cmd
}

type labUpFlags struct {
	sets     []string
	variant  string
	scale    string
	stateDir string
	prefix   string
	mgmt     string
	replace  bool
	noAgents bool
	verbose  bool
}

func (a *app) labUpCmd() *cobra.Command {
	var f labUpFlags
	cmd := &cobra.Command{
		Use:   "up FILE",
		Short: "Build the scenario's fabric from network namespaces and start its agents",
		Long: `lab up builds the fabric of one variant of FILE (the first, or --variant)
from network namespaces on this machine and starts one fabriclab agent per
host namespace. It needs root.

Every link is a veth pair shaped at both ends to its rate × --scale with
tbf (htb where the kernel has no tbf). The default scale, auto, runs host
links at 100 Mb/s (1/1000 for 100G links, 1/4000 for 400G), which a 2-core
machine forwards for a few dozen hosts; --scale takes a fraction (1/1000)
or a number (0.001). Each switch port queues its share of switch.buffer
× scale (at least 64 full frames).

Switches forward with ECMP multipath routes (L4 hash) or d-mod-k, with
switch.routes_file pinned. Hosts have data addresses 10.70.0.2, 10.70.0.6,
… (host h: 10.70.0.0 + 4h + 2) and management addresses in --mgmt-subnet
(host h: the (h+1)th address), which the root namespace reaches through
the bridge PREFIXmgmt.

The state goes to --state-dir: lab.json, the agents' token and
agents.yaml, which 'fabriclab run --engine hosts --agents' reads. lab up
refuses when a lab with the prefix exists (see --replace) and removes what
it made when a step fails.

Not emulated: propagation delay, ECN marking, PFC (no netem or red qdisc),
dynamic load balancing (spraying, flowlets, adaptive: ECMP instead), the
scale-up domain, and link failures after time 0. lab up says which of
these the scenario uses.`,
		Example: `  sudo fabriclab lab up examples/hosts-any-to-any.yaml
  sudo fabriclab lab up examples/hosts-any-to-any.yaml --scale 1/2000 --variant swap
  sudo fabriclab lab up my-fabric.yaml --prefix lab2- --mgmt-subnet 10.253.0.0/24 --state-dir /run/lab2
  sudo fabriclab lab up my-fabric.yaml --replace --no-agents`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr(cmd, "lab up needs exactly one scenario file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.labUp(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario `key=value` (repeatable)")
	fl.StringVar(&f.variant, "variant", "", "build variant `NAME` (default: the first)")
	fl.StringVar(&f.scale, "scale", "auto", "run links at `S` × their rate: 1/1000, 0.001, or auto (host links at 100 Mb/s)")
	labStateFlags(fl.StringVar, &f.stateDir, &f.prefix)
	fl.StringVar(&f.mgmt, "mgmt-subnet", nslab.DefaultMgmtSubnet.String(), "the management network's IPv4 `CIDR` (must not overlap this machine's routes)")
	fl.BoolVar(&f.replace, "replace", false, "remove an existing lab with the prefix first")
	fl.BoolVar(&f.noAgents, "no-agents", false, "build the fabric without starting agents")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every command on stderr")
	a.maxScenarioFlag(cmd)
	return cmd
}

// labStateFlags adds --state-dir and --prefix, shared by up and down.
func labStateFlags(add func(*string, string, string, string), stateDir, prefix *string) {
	add(stateDir, "state-dir", "", "keep the lab's state in `DIR` (default $"+nslab.StateDirEnv+" or "+nslab.DefaultStateDir+")")
	add(prefix, "prefix", "", "name the lab's namespaces and interfaces with prefix `P` (default "+nslab.DefaultPrefix+")")
}

func (a *app) labUp(cmd *cobra.Command, path string, f labUpFlags) error {
	scale, err := nslab.ParseScale(f.scale)
	if err != nil {
		return usageErr(cmd, "--scale %q: %v", f.scale, err)
	}
	if f.prefix != "" {
		if err := nslab.CheckPrefix(f.prefix); err != nil {
			return usageErr(cmd, "--prefix: %v", err)
		}
	}
	mgmt, err := netip.ParsePrefix(f.mgmt)
	if err != nil || !mgmt.Addr().Is4() {
		return usageErr(cmd, "--mgmt-subnet %q: want an IPv4 subnet such as 10.254.0.0/16", f.mgmt)
	}
	p, err := a.load(path, f.sets, nil, scenario.EngineHosts) // the lab runs real hosts
	if err != nil {
		return withPath(path, err)
	}
	job, err := pickJob(cmd, p, f.variant, 0)
	if err != nil {
		return err
	}
	o := nslab.Options{Prefix: f.prefix, Scale: scale, StateDir: f.stateDir, MgmtSubnet: mgmt,
		Replace: f.replace, StartAgents: !f.noAgents}
	if f.verbose {
		o.Log = a.stderr
	}
	// The first stop signal cancels the build, which then removes what it
	// made; a second one quits at once (lab down removes the rest).
	processStop.jobPhase()
	l, err := nslab.Up(cmd.Context(), job, o)
	processStop.setPhase(phaseIdle)
	if err != nil {
		if ctx := cmd.Context(); ctx.Err() != nil {
			return &exitErr{signalExitCode(ctx), fmt.Sprintf("lab up %v: removed what it had built", context.Cause(ctx))}
		}
		return err
	}
	for _, n := range l.Notes {
		fmt.Fprintf(a.stderr, "fabriclab: note: %s\n", n)
	}
	a.printLab(a.stdout, path, l, !f.noAgents)
	return nil
}

// printLab says what lab up built and what to run next.
func (a *app) printLab(w io.Writer, path string, l *nslab.Lab, agents bool) {
	fmt.Fprintf(w, "lab %s: %s of %s and %s (variant %s), scale %s: host links %v, fabric links %v, shaped with %s\n",
		l.Prefix, l.Topology, plural(len(l.Hosts), "host"), labCount(len(l.Switches), "switch", "switches"), l.Variant, l.ScaleText,
		units.Rate(l.HostRate), units.Rate(l.FabricRate), l.Qdisc)
	first, last := l.Hosts[0], l.Hosts[len(l.Hosts)-1]
	fmt.Fprintf(w, "  hosts     %s…%s, data %s…%s, management %s…%s (bridge %s)\n",
		first.NS, last.NS, first.DataIP, last.DataIP, first.MgmtIP, last.MgmtIP, l.Mgmt.Bridge)
	if agents {
		fmt.Fprintf(w, "  agents    %d on port %d, logs in %s\n", len(l.Hosts), l.AgentPort, l.StateDir)
	} else {
		fmt.Fprintf(w, "  agents    none started (--no-agents)\n")
	}
	agentsFile := nslab.AgentsPath(l.StateDir)
	fmt.Fprintf(w, "  state     %s\n", l.StateDir)
	fmt.Fprintf(w, "next: fabriclab run %s --engine hosts --agents %s\n", path, agentsFile)
	down := "fabriclab lab down"
	if l.Prefix != nslab.DefaultPrefix {
		down += " --prefix " + l.Prefix
	}
	if l.StateDir != nslab.StateDir() {
		down += " --state-dir " + l.StateDir
	}
	fmt.Fprintf(w, "then: %s\n", down)
}

func (a *app) labStatusCmd() *cobra.Command {
	var stateDir, prefix string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the namespace lab on this machine: its state, namespaces and agents",
		Long: `lab status says whether a lab is up: the lab recorded in --state-dir (its
topology, rates and agents file), and the namespaces, root interfaces
and processes (the agents) on this machine whose names start with its
prefix — found by name, as lab down finds them, so a lab a crash left
behind shows too. It changes nothing; it needs root, which alone sees the
agents (any process in a host's namespace counts as its agent). It exits 0
when the lab is whole (every host namespace up with its agent), 1
otherwise.`,
		Example: `  sudo fabriclab lab status
  sudo fabriclab lab status --prefix lab2- --state-dir /run/lab2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix != "" {
				if err := nslab.CheckPrefix(prefix); err != nil {
					return usageErr(cmd, "--prefix: %v", err)
				}
			}
			st, err := nslab.LabStatus(cmd.Context(), nslab.Options{Prefix: prefix, StateDir: stateDir})
			if err != nil {
				return err
			}
			return a.printLabStatus(st)
		},
	}
	labStateFlags(cmd.Flags().StringVar, &stateDir, &prefix)
	return cmd
}

// printLabStatus prints st; an error when the lab is not whole.
func (a *app) printLabStatus(st *nslab.Status) error {
	w := a.stdout
	if st.Empty() {
		fmt.Fprintf(w, "no lab with prefix %s here\n", st.Prefix)
		return &exitErr{exitError, ""}
	}
	procs := 0
	for _, ps := range st.Processes {
		procs += len(ps)
	}
	if st.Lab == nil {
		fmt.Fprintf(w, "lab %s: no state recorded, but %s, %s and %s are here (left by a crash?): sudo fabriclab lab down --prefix %s\n",
			st.Prefix, plural(len(st.Namespaces), "namespace"), plural(len(st.Links), "interface"), labCount(procs, "process", "processes"), st.Prefix)
		return &exitErr{exitError, ""}
	}
	l := st.Lab
	up, want := st.Hosts()
	agents := st.Agents()
	fmt.Fprintf(w, "lab %s: %s of %s and %s (variant %s), scale %s, shaped with %s\n",
		l.Prefix, l.Topology, plural(want, "host"), labCount(len(l.Switches), "switch", "switches"), l.Variant, l.ScaleText, l.Qdisc)
	fmt.Fprintf(w, "  namespaces %d of %d up, %s on the host side\n", len(st.Namespaces), want+len(l.Switches), labCount(agents, "agent", "agents"))
	fmt.Fprintf(w, "  state      %s (agents file %s)\n", l.StateDir, nslab.AgentsPath(l.StateDir))
	if up == want && len(st.Namespaces) == want+len(l.Switches) && agents == want {
		fmt.Fprintf(w, "  whole: ready for fabriclab run FILE --engine hosts --agents %s\n", nslab.AgentsPath(l.StateDir))
		return nil
	}
	fmt.Fprintf(w, "  not whole: %d of %d host namespaces, %d of %d agents; rebuild with lab up --replace\n", up, want, agents, want)
	return &exitErr{exitError, ""}
}

func (a *app) labDownCmd() *cobra.Command {
	var stateDir, prefix string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove the namespace lab: its agents, namespaces, interfaces and state",
		Long: `lab down stops every process in the lab's namespaces (the agents), deletes
every network namespace and root-namespace interface whose name starts
with the prefix, and the state files. It finds them by name, so it also
cleans up after a crash that left the state missing or stale, and it does
nothing when there is nothing to remove. Without --prefix it takes the
prefix of the lab recorded in --state-dir, else ` + nslab.DefaultPrefix + `. It needs root.`,
		Example: `  sudo fabriclab lab down
  sudo fabriclab lab down --prefix lab2- --state-dir /run/lab2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix != "" {
				if err := nslab.CheckPrefix(prefix); err != nil {
					return usageErr(cmd, "--prefix: %v", err)
				}
			}
			rm, err := nslab.Down(cmd.Context(), nslab.Options{Prefix: prefix, StateDir: stateDir})
			if err != nil {
				return err
			}
			if rm.Empty() {
				fmt.Fprintf(a.stdout, "no lab with prefix %s here: nothing to remove\n", rm.Prefix)
				return nil
			}
			var parts []string
			if n := len(rm.Processes); n > 0 {
				parts = append(parts, fmt.Sprintf("stopped %s", labCount(n, "process", "processes")))
			}
			parts = append(parts, fmt.Sprintf("removed %s and %s", plural(len(rm.Namespaces), "namespace"), plural(len(rm.Links), "interface")))
			if len(rm.StateFiles) > 0 {
				parts = append(parts, fmt.Sprintf("%s of state", plural(len(rm.StateFiles), "file")))
			}
			fmt.Fprintf(a.stdout, "lab %s: %s\n", rm.Prefix, strings.Join(parts, ", "))
			return nil
		},
	}
	labStateFlags(cmd.Flags().StringVar, &stateDir, &prefix)
	return cmd
}

// labCount is "1 thing" or "N things" for words whose plural is not plural's.
func labCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
