// Package hosts is the real-hosts engine: the controller of `fabriclab run
// --engine hosts`. It compiles a job's plan exactly as the simulator does
// (the same DAG, connections and 5-tuples), maps the scenario's hosts to
// agents (package inventory), estimates every agent's clock offset, drives
// the stages a hardware tester has (prepare, connect, start, run, stop)
// and turns what the agents report into the same trace the packet engine
// records, so that measurement, the store and the reports do not care
// which engine ran.
//
// Each agent runs the workload's executor for its own ranks (shares,
// package rankexec): it releases a message when what it waits for is
// delivered, seen there — received, or acknowledged to the sender — or
// relayed by the controller when two other agents' hosts exchanged it.
// The controller hears every start and delivery (on the agents' clocks,
// corrected by their offsets) for the trace, relays, and ends the run when
// every agent's share is done.
package hosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strings"
	"sync"

	"fabriclab/engine"
	"fabriclab/hosts/inventory"
	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

// Agent is what the controller needs of one agent's control channel
// (agent.Client; tests use fakes).
type Agent interface {
	Clock(ctx context.Context) (int64, error)
	Prepare(ctx context.Context, spec wire.RunSpec) error
	Connect(ctx context.Context) ([]wire.ConnFailure, error)
	Start(ctx context.Context, atAgentUnixNano int64) error
	Notify(ctx context.Context, msgs []int64) error
	Events(ctx context.Context) (<-chan wire.Event, error)
	Checkpoint(ctx context.Context) (wire.Checkpoint, error)
	Stop(ctx context.Context) (wire.Final, error)
	Abort(ctx context.Context) error
	Close() error
}

// Dialer opens the control channel of inventory agent a.
type Dialer func(ctx context.Context, a inventory.Agent) (Agent, error)

// DefaultDataPort is the port every data endpoint listens on (each host
// has its own data IP).
const DefaultDataPort = 7471

// Engine runs plans on the agents of an inventory.
type Engine struct {
	Inventory *inventory.Inventory
	Dial      Dialer
	// CC is the kernel TCP congestion control for the run ("" = the
	// scenario's: dctcp for transport.kind dctcp, else the kernel's
	// default).
	CC string
	// DataPort is the data endpoints' port (0 = DefaultDataPort).
	DataPort int
	// Heartbeat is how often the controller checks on every agent during
	// a run (0 = 200ms); each check waits two heartbeats for its answer,
	// and an agent that leaves three checks in a row unanswered fails the
	// run.
	Heartbeat units.Duration
	// Log hears the stages (nil: silent) and Warn what went wrong without
	// failing the job, such as counters an agent could not give (nil: Log).
	Log, Warn io.Writer

	// authErr is the first authentication failure of any run (nil: none
	// yet): the token does not change between the jobs of a run, so every
	// later Run returns it at once and dials no agent.
	authMu  sync.Mutex
	authErr *AuthError
}

// AuthError is an agent that refused the controller's token, or did not
// prove it holds it (wire.IsAuthFailure). It is not transient: each try
// would cost the agent another failure delay and log line, so the engine
// dials no agent after one, and every later Run returns it (wrapped: "not
// run: …"). A caller running many jobs stops the run when errors.As finds
// one.
type AuthError struct {
	Agent     string // the agent's control address
	AgentFile string // the inventory's path ("" if unknown)
	// TokenAt is where the inventory names its token_file,
	// "file:line:column" ("" if unknown: the message names AgentFile).
	TokenAt string
	Err     error // the agent client's error
}

func (e *AuthError) Error() string {
	msg := e.Err.Error()
	if name := "agent " + e.Agent + ": "; !strings.HasPrefix(msg, name) {
		msg = name + msg
	}
	if errors.Is(e.Err, wire.ErrAgentUnproven) {
		// Its text says what it may be (not the agent, or one with
		// another token); not a mismatch of the agents file for sure.
		return msg + " (not retried)"
	}
	if e.TokenAt != "" {
		return fmt.Sprintf("%s (the token of token_file at %s does not match the agent's --token-file; not retried)", msg, e.TokenAt)
	}
	file := "the agents file"
	if e.AgentFile != "" {
		file = e.AgentFile
	}
	return fmt.Sprintf("%s (the token of %s's token_file does not match the agent's --token-file; not retried)", msg, file)
}

func (e *AuthError) Unwrap() error { return e.Err }

// IsAuthError reports whether err is or wraps an AuthError: a runner's
// Fatal, since every later job would meet it too.
func IsAuthError(err error) bool {
	var ae *AuthError
	return errors.As(err, &ae)
}

// authFailed is the engine's authentication failure, if one happened.
func (e *Engine) authFailed() *AuthError {
	e.authMu.Lock()
	defer e.authMu.Unlock()
	return e.authErr
}

// setAuthFailed keeps the first authentication failure.
func (e *Engine) setAuthFailed(ae *AuthError) {
	e.authMu.Lock()
	defer e.authMu.Unlock()
	if e.authErr == nil {
		e.authErr = ae
	}
}

// layout is the hosts engine's plan.Layout: the scenario's topology as
// declared (the real fabric, or the namespace lab that mirrors it), at the
// inventory's scale, which the bounds are computed on.
type layout struct {
	plan.Layout
	topo *topo.Topology
	spec *scenario.Scenario
}

// Plan compiles the jobs sel of job on the declared topology, its rates
// scaled to the inventory's, after checking that every host has an agent.
func (e *Engine) Plan(job scenario.Job, sel plan.Selection) (*plan.Plan, error) {
	if e.Inventory == nil {
		return nil, errors.New("hosts: no agents file")
	}
	spec := scaled(job.Spec, e.Inventory.Scale)
	if spec.Topology.ScaleUp.Rate > 0 {
		return nil, errScaleUp
	}
	tp, err := topo.Build(sim.NewScheduler(), job.Seed, plan.TopoSpec(spec))
	if err != nil {
		return nil, err
	}
	if err := e.Inventory.Cover(tp.Hosts); err != nil {
		return nil, err
	}
	j := job
	j.Spec = spec
	l := &layout{Layout: plan.TopologyLayout(tp), topo: tp, spec: spec}
	p, err := plan.CompileOptions(j, l, plan.Options{Select: sel})
	if err != nil {
		return nil, err
	}
	if sc := e.Inventory.Scale; sc > 0 && sc < 1 {
		// A flow list's start times are written for the scenario's rates:
		// at the fabric's scale they come 1/scale later (the arrivals of
		// message workloads already follow the scaled rates).
		for _, pt := range p.Parts {
			if pt.DAG.Collective != metrics.FlowList {
				continue
			}
			for i := pt.Lo; i < pt.Hi; i++ {
				if at := p.DAG.Msgs[i].At; at > pt.Start {
					p.DAG.Msgs[i].At = pt.Start + units.Duration(float64(at-pt.Start)/sc)
				}
			}
		}
	}
	return p, nil
}

// What real hosts cannot run, whatever the agents: Plan refuses the
// first, the run the second (its plan has no connections).
var (
	errScaleUp       = errors.New("hosts: the hosts engine has no scale-up domain (set topology.scale_up.rate: 0; intra-server transfers go through the NICs)")
	errNoConnections = errors.New("hosts: a transport without connections (homa) has no real-host counterpart; use transport.kind tcp or dctcp")
)

// Check refuses, without agents, what a run of job on real hosts would
// refuse whatever the inventory: a scale-up domain, a transport without
// connections (Homa). A traffic-engineered job (switch.forwarding te),
// whose paths only a compile checks, is compiled as Plan compiles it and
// the plan discarded. validate --engine hosts calls it, so that a file
// that validates there gets as far as its agents.
func Check(job scenario.Job) error {
	spec := job.Spec
	if spec == nil {
		return nil
	}
	if spec.Topology.ScaleUp.Rate > 0 {
		return errScaleUp
	}
	if k, ok := scenario.LookupTransportKind(spec.Transport.Kind); ok && k.PerMessage {
		return errNoConnections
	}
	if spec.Switch.Forwarding != "te" {
		return nil
	}
	tp, err := topo.Build(sim.NewScheduler(), job.Seed, plan.TopoSpec(spec))
	if err != nil {
		return err
	}
	_, err = plan.CompileOptions(job, &layout{Layout: plan.TopologyLayout(tp), topo: tp, spec: spec}, plan.Options{Select: plan.Together})
	return err
}

// scaled is a copy of spec at the fabric's scale: link rates × scale, and
// every time the workload is written in (durations, checkpoints, job
// starts, the time limit) ÷ scale, since at 1/1000 of the rates the same
// bytes take 1,000 times longer.
func scaled(spec *scenario.Scenario, scale float64) *scenario.Scenario {
	s := *spec
	if scale <= 0 || scale == 1 {
		return &s
	}
	r := func(v units.Rate) units.Rate {
		if v <= 0 {
			return v
		}
		return max(units.Rate(float64(v)*scale+0.5), 1)
	}
	t := func(d units.Duration) units.Duration {
		if d <= 0 {
			return d
		}
		return units.Duration(min(float64(d)/scale, float64(math.MaxInt64/2)))
	}
	s.Topology.HostLink.Rate = r(s.Topology.HostLink.Rate)
	s.Topology.FabricLink.Rate = r(s.Topology.FabricLink.Rate)
	s.Probes = append([]scenario.Probe(nil), s.Probes...)
	for i := range s.Probes {
		s.Probes[i].Rate = r(s.Probes[i].Rate)
	}
	s.Sim.TimeLimit = t(s.Sim.TimeLimit)
	w := func(w *scenario.Workload) {
		w.Duration, w.Checkpoint = t(w.Duration), t(w.Checkpoint)
	}
	w(&s.Workload)
	s.Jobs = append([]scenario.JobSpec(nil), s.Jobs...)
	for i := range s.Jobs {
		s.Jobs[i].Start = t(s.Jobs[i].Start)
		w(&s.Jobs[i].Workload)
	}
	return &s
}

// Run executes p on the agents (see run).
func (e *Engine) Run(ctx context.Context, p *plan.Plan, progress engine.Progress) (*engine.Trace, error) {
	l, ok := p.Layout.(*layout)
	if !ok {
		return nil, errors.New("hosts: the plan was not made by the hosts engine")
	}
	if ae := e.authFailed(); ae != nil {
		return nil, fmt.Errorf("not run: %w", ae)
	}
	r := &run{e: e, p: p, l: l, progress: progress}
	return r.execute(ctx)
}

// endpoints is, per scenario host, its data address.
func (e *Engine) endpoints(hosts int) ([]wire.Endpoint, error) {
	port := e.DataPort
	if port == 0 {
		port = DefaultDataPort
	}
	if err := e.Inventory.Cover(hosts); err != nil {
		return nil, err
	}
	at := e.Inventory.HostAgent()
	eps := make([]wire.Endpoint, hosts)
	for h := range eps {
		eps[h] = wire.Endpoint{ID: h, Addr: netip.AddrPortFrom(at[h].Host.DataIP, uint16(port))}
	}
	return eps, nil
}

// bounds are the plan's bounds on the declared topology.
func (l *layout) bounds(p *plan.Plan) measure.Bounds { return measure.TopologyBounds(p, l.topo) }

// logf writes one line of the controller's log.
func (e *Engine) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "hosts: %s\n", safetext.Terminal(fmt.Sprintf(format, args...)))
	}
}

// warnf writes one warning line (Warn, else Log).
func (e *Engine) warnf(format string, args ...any) {
	w := e.Warn
	if w == nil {
		w = e.Log
	}
	if w != nil {
		fmt.Fprintf(w, "hosts: %s\n", safetext.Terminal(fmt.Sprintf(format, args...)))
	}
}
