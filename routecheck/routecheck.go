// Package routecheck checks a scenario's routes before it runs: whether
// they can close a cycle of buffer dependencies, and so deadlock under PFC
// (fabric.Network.DependencyCycles), at time 0 and in every routing state
// topology.failures brings about as the simulator replays it: a link goes
// down (it carries nothing from then on), routes converge
// topology.convergence later around the links then down (switch.routes_file
// re-applied, its routes over dead links left to the computed ones), a link
// comes back up, routes converge back. Pinned paths (a flow list's path
// column) keep their own dependencies throughout.
package routecheck

import (
	"fmt"
	"sort"
	"strings"

	"fabriclab/fabric"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
)

// MaxWork bounds the check: destinations × switches of the fabric (the
// size of its route tables, which the check walks, and for every state of
// topology.failures recomputes), summed over the routing states checked.
// A k=16 fat-tree is 1,024 × 320 a state; a k=32 one 8,192 × 1,280. A
// fabric above it is not checked; states beyond it are left out.
const MaxWork = 1 << 24

// MaxStates bounds the routing states of topology.failures checked (each
// recomputes the routes): identical states (a link flapping) count once.
const MaxStates = 64

// Finding is one cycle of buffer dependencies and the first routing state
// it appears in.
type Finding struct {
	Cycle fabric.DependencyCycle
	Hops  []string // Cycle's ports, "owner→peer"
	// At is when that routing state begins (0: from the start); Down the
	// links then down ("leaf0–spine0"), and Routed those the routes were
	// last computed around when they differ (between a change and the
	// reconvergence).
	At     sim.Time
	Down   []string
	Routed []string
	Stale  bool // Routed differs from Down: the routes have not yet reconverged
}

// String is "cycle A → B → … (priority 3)", with when and which links were
// down if not from the start with every link up.
func (f Finding) String() string {
	s := "cycle " + f.Cycle.String()
	var when []string
	if f.At > 0 {
		when = append(when, fmt.Sprintf("from %v", f.At))
	}
	if len(f.Down) > 0 {
		when = append(when, "with "+strings.Join(f.Down, ", ")+" down")
	}
	if f.Stale {
		r := "of every link up"
		if len(f.Routed) > 0 {
			r = "around " + strings.Join(f.Routed, ", ")
		}
		when = append(when, "routes not yet reconverged (still those "+r+")")
	}
	if len(when) > 0 {
		s += " " + strings.Join(when, ", ")
	}
	return s
}

// Report is what Check found.
type Report struct {
	// Findings lists every distinct cycle once, at the first state it
	// appears in, in time order then as DependencyCycles orders them.
	Findings []Finding
	// States is how many routing states were checked.
	States int
	// Skipped says why the check did not run, or stopped short ("" when it
	// checked everything): PFC off, routes that cannot loop, a fabric
	// above MaxWork, more than MaxStates states.
	Skipped string
}

// MayLoop reports whether spec's routes could close a cycle at all:
// shortest paths on the built-in Clos topologies (leaf-spine, fat-tree,
// rail) go up, then down, and never can; pinned paths (a flow list, whose
// paths are known once it is compiled), a routes file, failures or a
// topology file can. The same condition turns the packet engine's deadlock
// search on.
func MayLoop(spec *scenario.Scenario) bool {
	k := spec.Topology.Kind
	if spec.Switch.RoutesFile != "" || len(spec.Topology.Failures) > 0 || k == "custom" || k == "ns3" {
		return true
	}
	return hasFlowList(spec)
}

func hasFlowList(spec *scenario.Scenario) bool {
	if spec.Workload.Kind == "flows" {
		return true
	}
	for _, j := range spec.Jobs {
		if j.Workload.Kind == "flows" {
			return true
		}
	}
	return false
}

// Check builds job's fabric as the packet engine would (topology, links
// down from the start, routes file, pinned paths) and returns the cycles
// of buffer dependencies its routes have on the lossless priorities, at
// time 0 and after every change of topology.failures. It does not run
// when PFC is off (no priority is lossless) or the fabric is above
// MaxWork; it runs whatever MayLoop says (the CLI asks MayLoop first).
// Errors are those a build of the job would meet.
func Check(job scenario.Job) (Report, error) {
	spec := job.Spec
	if spec == nil {
		return Report{}, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	if !spec.Switch.PFC.Enabled {
		return Report{Skipped: "PFC is off: no priority is lossless"}, nil
	}
	ts := plan.TopoSpec(spec)
	hosts, err := topo.NumHosts(ts)
	if err != nil {
		return Report{}, err
	}
	if ts.ScaleUp.Rate > 0 {
		hosts *= 2
	}
	size := int64(hosts) * int64(topo.NumSwitches(ts))
	if size > MaxWork {
		return Report{Skipped: fmt.Sprintf("the fabric's route tables (%d destinations × %d switches) are above the check's bound of %d entries",
			hosts, topo.NumSwitches(ts), MaxWork)}, nil
	}
	// As topo.Build and plan.FailAtStart build it, with the routes
	// computed once, around the links down from the start.
	tp, err := topo.Wire(job.Seed, ts)
	if err != nil {
		return Report{}, err
	}
	if err := tp.Net.CheckBuffers(); err != nil {
		return Report{}, err
	}
	var p *plan.Plan
	if hasFlowList(spec) {
		if p, err = plan.Compile(job, plan.TopologyLayout(tp)); err != nil {
			return Report{}, err
		}
	}
	fs, err := plan.Failures(spec, tp)
	if err != nil {
		return Report{}, err
	}
	for _, f := range fs {
		if f.At == 0 {
			tp.Net.FailLink(f.Link)
		}
	}
	topo.ComputeRoutes(tp)
	routes, err := plan.Routes(job)
	if err != nil {
		return Report{}, err
	}
	if err := plan.ApplyRoutes(spec, tp, routes, false); err != nil {
		return Report{}, err
	}
	if p != nil {
		if err := plan.InstallPaths(p, tp); err != nil {
			return Report{}, err
		}
	}
	r := &replay{spec: spec, tp: tp, routes: routes, size: size,
		names: map[*fabric.Port]string{}, seen: map[string]bool{}, checked: map[string]bool{}}
	for _, f := range fs {
		if _, ok := r.names[f.Link]; !ok {
			r.names[f.Link] = f.From + "–" + f.To
			r.links = append(r.links, f.Link)
		}
	}
	r.down = r.deadSet()
	r.routed, r.current = r.down, r.down
	r.check(0)
	r.timeline(fs)
	return r.rep, nil
}

// replay walks the routing states of topology.failures.
type replay struct {
	spec   *scenario.Scenario
	tp     *topo.Topology
	routes []topo.Route
	links  []*fabric.Port // the links that fail, in the order first named
	names  map[*fabric.Port]string
	// down is the set of links down now, routed the set the routes were
	// last computed around (a bitset over links, as a string key).
	down, routed string
	current      string // routed as the network's tables stand now
	size, work   int64  // route-table entries a state, and so far
	checked      map[string]bool
	seen         map[string]bool // cycles reported
	rep          Report
}

func (r *replay) deadSet() string {
	b := make([]byte, len(r.links))
	for i, l := range r.links {
		b[i] = '0'
		if l.Dead() {
			b[i] = '1'
		}
	}
	return string(b)
}

func (r *replay) namesOf(set string) []string {
	var out []string
	for i, c := range set {
		if c == '1' {
			out = append(out, r.names[r.links[i]])
		}
	}
	return out
}

// setDead brings the network's links to set.
func (r *replay) setDead(set string) {
	net := r.tp.Net
	for i, l := range r.links {
		switch {
		case set[i] == '1' && !l.Dead():
			net.FailLink(l)
		case set[i] == '0' && l.Dead():
			net.RestoreLink(l)
		}
	}
}

// check checks the state (routed, down) once, at its first time at.
func (r *replay) check(at sim.Time) {
	key := r.routed + "|" + r.down
	if r.checked[key] || r.rep.Skipped != "" {
		return
	}
	if len(r.checked) >= MaxStates {
		r.rep.Skipped = fmt.Sprintf("topology.failures bring about more routing states than the check's bound of %d; checked the first %d, those before %v",
			MaxStates, len(r.checked), at)
		return
	}
	if r.work+r.size > MaxWork {
		r.rep.Skipped = fmt.Sprintf("the routing states topology.failures bring about hold more route-table entries than the check's bound of %d in all; checked the first %d, those before %v",
			MaxWork, len(r.checked), at)
		return
	}
	r.checked[key] = true
	r.rep.States++
	r.work += r.size
	if r.current != r.routed {
		// The tables as the routes converged around routed.
		r.setDead(r.routed)
		topo.ComputeRoutes(r.tp)
		// A routes file that loops only after a failure is left as the
		// simulator leaves it (lab: a subnet manager's table).
		_ = plan.ApplyRoutes(r.spec, r.tp, r.routes, true)
	}
	r.current = r.routed
	r.setDead(r.down)
	for _, c := range r.tp.Net.DependencyCycles() {
		f := Finding{Cycle: c, Hops: c.Hops(), At: at, Down: r.namesOf(r.down), Routed: r.namesOf(r.routed), Stale: r.routed != r.down}
		k := fmt.Sprint(c.Prio, f.Hops)
		if r.seen[k] {
			continue
		}
		r.seen[k] = true
		r.rep.Findings = append(r.rep.Findings, f)
	}
}

// timeline replays the failures' events in the simulator's order (by time,
// ties in the order they were scheduled) and checks the state after each
// instant's events.
func (r *replay) timeline(fs []plan.Failure) {
	type event struct {
		at   sim.Time
		kind int // 0 down, 1 converge, 2 up
		link int
	}
	idx := map[*fabric.Port]int{}
	for i, l := range r.links {
		idx[l] = i
	}
	conv := r.spec.Topology.Convergence
	var evs []event
	for _, f := range fs {
		for _, o := range f.Outages() {
			down, up := o[0], o[1]
			if down > 0 {
				evs = append(evs, event{down, 0, idx[f.Link]}, event{down + conv, 1, 0})
			}
			if up > 0 {
				evs = append(evs, event{up, 2, idx[f.Link]}, event{up + conv, 1, 0})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	// The simulator keeps one bit per link: down or up (a second failure
	// of a link that is down changes nothing, nor does restoring one up).
	down := []byte(r.down)
	for i := 0; i < len(evs); {
		at := evs[i].at
		for ; i < len(evs) && evs[i].at == at; i++ {
			switch e := evs[i]; e.kind {
			case 0:
				down[e.link] = '1'
			case 2:
				down[e.link] = '0'
			case 1:
				// A convergence takes the links as they are when it runs.
				r.routed = string(down)
			}
		}
		r.down = string(down)
		r.check(at)
	}
}
