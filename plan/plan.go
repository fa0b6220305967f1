// Package plan compiles a scenario job into what every engine executes:
// the DAG of messages (every job of the scenario together, or one alone),
// the jobs' shares of it (parts), the connections the messages travel on
// and the 5-tuple each message's packets carry. A plan is placed on a
// Layout: the hosts of a simulated topology or, later, of an inventory of
// real servers.
//
// A plan holds no time and no state of a run: engines (package engine)
// execute it and record a trace, package measure turns plan and trace
// into results.
package plan

import (
	"fmt"
	"unsafe"

	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/workload"
)

// Layout is where a plan's messages run: numbered hosts (one NIC each)
// grouped into servers, and, when the servers have a scale-up domain, a
// second endpoint per host that messages between GPUs of one server use.
type Layout interface {
	// Hosts is how many hosts there are (ids 0…Hosts−1).
	Hosts() int
	// Server is host h's server and Rail its NIC's index within it.
	Server(h int) int
	Rail(h int) int
	// ScaleUp is the endpoint id of host h in its server's scale-up
	// domain; ok is false without scale-up domains.
	ScaleUp(h int) (id int32, ok bool)
	// Host is the host endpoint id belongs to, and whether id is that
	// host's scale-up endpoint.
	Host(id int32) (h int, scaleUp bool)
}

// TopologyLayout is the layout of a built topology: its hosts, servers,
// rails and scale-up endpoints (network ids Hosts… stand for them).
func TopologyLayout(tp *topo.Topology) Layout { return topoLayout{tp} }

type topoLayout struct{ t *topo.Topology }

func (l topoLayout) Hosts() int       { return l.t.Hosts }
func (l topoLayout) Server(h int) int { return l.t.Server[h] }
func (l topoLayout) Rail(h int) int   { return l.t.Rail[h] }
func (l topoLayout) ScaleUp(h int) (int32, bool) {
	if l.t.ScaleUpEndpoint == nil {
		return 0, false
	}
	return int32(l.t.ScaleUpEndpoint[h]), true
}
func (l topoLayout) Host(id int32) (int, bool) {
	if int(id) >= l.t.Hosts {
		return int(id) - l.t.Hosts, true
	}
	return int(id), false
}

// Plan is a compiled job.
type Plan struct {
	Job    scenario.Job
	Layout Layout
	// DAG is every message of the run: the jobs' DAGs combined, each
	// delayed by its start (one job: its own DAG).
	DAG *workload.DAG
	// Parts are the jobs in DAG, in job order (one for a scenario without
	// jobs:, or a job compiled alone).
	Parts []Part
	// Conn is each message's connection (an index into Conns), −1 for a
	// marker, which travels nowhere.
	Conn []int32
	// Conns are the connections in the order they are first used: one
	// per (job, source, destination, channel), or with TCP's pool policy
	// up to pool_size of them used round-robin. Jobs never share one.
	Conns []Conn
	// PerMessage is set for a transport without connections (Homa): each
	// message then carries a 5-tuple of its own (Tuple).
	PerMessage bool
	// Dists holds the size distributions the compile read, for the
	// engine's transport to reuse (Homa derives its priorities from one).
	Dists SizeDists
	// TE is what traffic engineering chose (switch.forwarding: te), once
	// InstallPaths has run; nil otherwise.
	TE *TEResult
}

// Part is one job's share of the DAG: messages [Lo, Hi), and the job's own
// DAG, whose metadata (collective, ranks, size, iterations relative to Lo)
// its summary uses.
type Part struct {
	Index  int // job index: 0 = the workload, i = jobs[i−1]
	Name   string
	Kind   string
	Lo, Hi int32
	Start  sim.Time // when the job starts (its jobs[].start; 0 alone)
	DAG    *workload.DAG
}

// Conn is one connection: its endpoints and the 5-tuple fields that tell
// it from the others, which is what ECMP hashes. SQP is the connection's
// number among those leaving Src, DQP among those arriving at Dst (a
// queue pair's numbers at both ends, a TCP connection's ports).
type Conn struct {
	Src, Dst int32
	SQP, DQP int32
}

// Tuple is the 5-tuple fields message i's packets carry: its connection's,
// or with PerMessage its endpoints, SQP = i and DQP = 0.
func (p *Plan) Tuple(i int) (src, dst, sqp, dqp int32) {
	m := &p.DAG.Msgs[i]
	if p.PerMessage {
		return m.Src, m.Dst, int32(i), 0
	}
	c := &p.Conns[p.Conn[i]]
	return c.Src, c.Dst, c.SQP, c.DQP
}

// Selection says which jobs of a scenario a plan runs.
type Selection struct {
	alone bool
	job   int
}

// Together selects every job of the scenario, each from its start.
var Together = Selection{}

// Alone selects job i alone (0 = the workload, i = jobs[i−1]), started
// at time 0.
func Alone(i int) Selection { return Selection{alone: true, job: i} }

// Jobs lists the job indices s selects of job's scenario.
func (s Selection) Jobs(job scenario.Job) []int {
	if s.alone {
		return []int{s.job}
	}
	sel := make([]int, Jobs(job))
	for i := range sel {
		sel[i] = i
	}
	return sel
}

// IsAlone reports whether s is one job alone.
func (s Selection) IsAlone() bool { return s.alone }

// Jobs is how many jobs job's scenario runs together.
func Jobs(job scenario.Job) int {
	if job.Spec == nil {
		return 1
	}
	return 1 + len(job.Spec.Jobs)
}

// Options tune CompileOptions.
type Options struct {
	Select Selection
	// Counts holds, by job index, what workload.Count said of the
	// collective jobs (e.g. for a memory estimate): their build then does
	// not count them again. A missing entry, or one with Copies 0, is
	// counted by the build.
	Counts []workload.Counts
	// Dists caches the size distributions read (nil: a new cache).
	Dists SizeDists
	// Conns is how many connections to expect (e.g. a memory estimate's
	// count), to size Plan.Conns and the compile's map of them at once; 0:
	// grown as they come.
	Conns int64
}

// Compile compiles every job of job's scenario together on layout.
func Compile(job scenario.Job, layout Layout) (*Plan, error) {
	return CompileOptions(job, layout, Options{})
}

// CompileOptions compiles the jobs o selects on layout.
func CompileOptions(job scenario.Job, layout Layout, o Options) (*Plan, error) {
	spec := job.Spec
	if spec == nil {
		return nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	if o.Dists == nil {
		o.Dists = SizeDists{}
	}
	sel := o.Select.Jobs(job)
	var dags []*workload.DAG
	var delays []sim.Time
	var parts []Part
	for _, i := range sel {
		var counts *workload.Counts
		if i < len(o.Counts) {
			counts = &o.Counts[i]
		}
		d, err := jobDAG(job, i, layout, o.Dists, counts)
		if err != nil {
			if len(sel) > 1 || i > 0 {
				return nil, fmt.Errorf("job %q: %w", scenario.JobName(spec, i), err)
			}
			return nil, err
		}
		var start sim.Time
		if i > 0 && !o.Select.alone {
			start = spec.Jobs[i-1].Start
		}
		dags, delays = append(dags, d), append(delays, start)
		parts = append(parts, Part{Index: i, Name: scenario.JobName(spec, i), Kind: scenario.JobWorkload(spec, i).Kind, Start: start, DAG: d})
	}
	dag := dags[0]
	if len(dags) > 1 {
		var offs []int32
		dag, offs = workload.Combine(dags, delays)
		for k := range parts {
			parts[k].Lo = offs[k]
		}
	}
	for k := range parts {
		parts[k].Hi = parts[k].Lo + int32(len(dags[k].Msgs))
	}
	p := &Plan{Job: job, Layout: layout, DAG: dag, Parts: parts, Dists: o.Dists,
		PerMessage: scenario.TransportOf(spec).PerMessage}
	p.connect(o.Conns)
	return p, nil
}

// connKey is a connection of connect: a job's (part), its hosts, the
// channel, and the pool member (TCP's pool policy).
type connKey struct{ part, src, dst, ch, k int32 }

// ConnKeyBytes is the size of the key connect maps connections by (for
// memory estimates).
const ConnKeyBytes = int64(unsafe.Sizeof(connKey{}))

// connect assigns every message its connection: one per (part, src, dst,
// channel) — or, with TCP's pool policy, up to pool_size of them used
// round-robin — numbered in the order of their first message, each with
// its 5-tuple: its number at both ends among the connections its
// endpoints had before. expect sizes Conns and the map of connections (0:
// grown as they come).
func (p *Plan) connect(expect int64) {
	expect = min(max(expect, 0), int64(len(p.DAG.Msgs)))
	connOf := make(map[connKey]int32, expect)
	next := map[connKey]int32{} // per (part, src, dst, ch): the pool's next connection
	pool := int32(scenario.TransportOf(p.Job.Spec).PoolSize(p.Job.Spec.Transport))
	if expect > 0 {
		p.Conns = make([]Conn, 0, expect)
	}
	var from, to []int32 // per endpoint: connections leaving and arriving so far
	part := int32(0)
	d := p.DAG
	p.Conn = make([]int32, len(d.Msgs))
	for i, m := range d.Msgs {
		for int(part) < len(p.Parts)-1 && int32(i) >= p.Parts[part].Hi {
			part++
		}
		if m.Marker {
			p.Conn[i] = -1
			continue
		}
		k := connKey{part, m.Src, m.Dst, m.Channel, 0}
		if pool > 1 {
			base := k
			k.k = next[base]
			next[base] = (k.k + 1) % pool
		}
		c, ok := connOf[k]
		if !ok {
			c = int32(len(p.Conns))
			connOf[k] = c
			if int(m.Src) >= len(from) {
				from = append(from, make([]int32, int(m.Src)+1-len(from))...)
			}
			if int(m.Dst) >= len(to) {
				to = append(to, make([]int32, int(m.Dst)+1-len(to))...)
			}
			p.Conns = append(p.Conns, Conn{Src: m.Src, Dst: m.Dst, SQP: from[m.Src], DQP: to[m.Dst]})
			from[m.Src]++
			to[m.Dst]++
		}
		p.Conn[i] = c
	}
}

// SizeDists reads each size distribution once (the workload draws from
// it, Homa derives its priorities from it).
type SizeDists map[string]*workload.SizeDist

// Get is distribution name, resolved as scenario.ResolveSizeDist does
// (relative to dir), read on the first call.
func (m SizeDists) Get(name, dir string) (*workload.SizeDist, error) {
	if d, ok := m[name]; ok {
		return d, nil
	}
	d, err := scenario.ResolveSizeDist(name, dir)
	if err != nil {
		return nil, fmt.Errorf("workload.size_dist: %w", err)
	}
	m[name] = d
	return d, nil
}
