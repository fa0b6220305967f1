package plan

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
)

// The simulated fabric a job's plan is placed on: the topology, the links
// that fail, the pinned routes. Engines with a fabric (packet, fluid) and
// analyses that read paths build it the same way.

// TopoSpec is what topo builds for the scenario (scenario.TopoSpec, the
// one conversion validation also uses).
func TopoSpec(spec *scenario.Scenario) topo.Spec { return scenario.TopoSpec(spec) }

// Failure is one entry of topology.failures resolved to its link: the
// port at its From end.
type Failure struct {
	Link *fabric.Port
	// At is when it fails: 0 = down from the start (routes avoid it).
	At sim.Time
	// Until is when it comes back up (0: never); Period and Count repeat
	// the outage (a flapping link): down at At + k·Period, up at
	// Until + k·Period.
	Until, Period sim.Time
	Count         int
	From, To      string
}

// Outages lists f's down and up times in order (up 0: it stays down).
func (f Failure) Outages() [][2]sim.Time {
	return scenario.Failure{At: f.At, Until: f.Until, Period: f.Period, Count: f.Count}.Outages()
}

// Failures resolves topology.failures on tp, in order.
func Failures(spec *scenario.Scenario, tp *topo.Topology) ([]Failure, error) {
	var out []Failure
	for i, f := range spec.Topology.Failures {
		pt := tp.Link(f.From, f.To)
		if pt == nil {
			pt = tp.Link(f.To, f.From) // written host first
		}
		if pt == nil {
			return nil, fmt.Errorf("topology.failures[%d]: there is no link between %q and %q", i, f.From, f.To)
		}
		if _, ok := pt.Peer.Owner.(*fabric.Switch); !ok {
			return nil, fmt.Errorf("topology.failures[%d]: %q–%q is a host link; only links between switches can fail", i, f.From, f.To)
		}
		out = append(out, Failure{Link: pt, At: f.At, Until: f.Until, Period: f.Period, Count: f.Count, From: f.From, To: f.To})
	}
	return out, nil
}

// FailAtStart takes down the links of fs that fail at time 0 and, if
// there are any, recomputes the routes around them.
func FailAtStart(tp *topo.Topology, fs []Failure) {
	down := false
	for _, f := range fs {
		if f.At == 0 {
			tp.Net.FailLink(f.Link)
			down = true
		}
	}
	if down {
		topo.ComputeRoutes(tp)
	}
}

// Routes reads switch.routes_file (relative to the scenario); nil when
// the scenario has none.
func Routes(job scenario.Job) ([]topo.Route, error) {
	name := job.Spec.Switch.RoutesFile
	if name == "" {
		return nil, nil
	}
	path := scenario.RelativeTo(job.Dir, name)
	f, err := inputfile.Open(path, inputfile.Limit)
	if err != nil {
		return nil, fmt.Errorf("switch.routes_file: %w", err)
	}
	defer f.Close()
	return topo.ParseRoutes(name, f)
}

// ApplyRoutes pins routes (switch.routes_file) on tp; skipDead leaves a
// pin over a failed link to the computed routes (after a reconvergence).
func ApplyRoutes(spec *scenario.Scenario, tp *topo.Topology, routes []topo.Route, skipDead bool) error {
	if len(routes) == 0 {
		return nil
	}
	return topo.ApplyRoutes(tp, spec.Switch.RoutesFile, routes, skipDead)
}

// Static compiles every job of job's scenario together on its topology
// as that stands at time 0 — links that fail at 0 down and routed around,
// switch.routes_file and a flow list's paths pinned — built on a scheduler of its own and without
// hosts' transports: what an analysis of static paths reads (the plan's
// Tuple gives each message's 5-tuple, the topology's switches its path).
// Errors come in the order an engine's build meets them.
func Static(job scenario.Job) (*Plan, *topo.Topology, error) {
	if job.Spec == nil {
		return nil, nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	tp, err := topo.Build(sim.NewScheduler(), job.Seed, TopoSpec(job.Spec))
	if err != nil {
		return nil, nil, err
	}
	p, err := Compile(job, TopologyLayout(tp))
	if err != nil {
		return nil, nil, err
	}
	fs, err := Failures(job.Spec, tp)
	if err != nil {
		return nil, nil, err
	}
	FailAtStart(tp, fs)
	routes, err := Routes(job)
	if err != nil {
		return nil, nil, err
	}
	if err := ApplyRoutes(job.Spec, tp, routes, false); err != nil {
		return nil, nil, err
	}
	if err := InstallPaths(p, tp); err != nil {
		return nil, nil, err
	}
	return p, tp, nil
}
