package lab

// The memory estimate sim.memory_limit is checked against, worked out
// before anything is allocated.
//
// A build holds, per message, the DAG (the Message, its DepCount, its
// iteration index, its successors in CSR form), the per-message arrays of
// the plan, the executor and the simulator, and what Result adds (the FCT
// and slowdown lists, the flow records); per connection, the plan's entry,
// the connection map entry and the transport's state at both ends; per
// message released at the start, its place in the executor's list, its
// queue entry in the transport, or its scheduler event when it starts
// later; plus the fabric (ports, NICs, route tables) and, for a flow list,
// the parsed list. The per-item sizes are read from the real types
// (unsafe.Sizeof, or reflect for the transports' unexported structs), so
// they follow the code; the item counts come from workload.Count (which
// runs a collective's algorithm over one copy, transfer by transfer,
// without making its messages) or from the job's settings. Nothing here
// walks the messages (a parsed flow list is walked once, to count the flows
// that start late).
//
// The estimate is the largest of the build's phases: while a job's DAG is
// being built (its edge list and Finish's scratch alive beside the CSR),
// while the jobs' DAGs are combined (for jobs:), and once the simulation is
// set up with its result computed. It stands for the peak live heap; the
// Go runtime's RSS is that plus the garbage collector's slack, which the
// process's GOMEMLIMIT (not set here) bounds.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/transport/homa"
	"fabriclab/transport/roce"
	"fabriclab/transport/tcp"
	"fabriclab/transport/uet"
	"fabriclab/units"
	"fabriclab/workload"
)

// MemoryEstimate is what a build of a job is expected to hold at its peak.
type MemoryEstimate struct {
	// Bytes is the estimated peak heap of the build (and of Result).
	Bytes int64
	// Fabric is its share of the topology: ports, switches, NICs and the
	// route tables.
	Fabric int64
	// Messages, Edges and Conns are the DAG's messages, dependencies and
	// connections over all jobs.
	Messages, Edges, Conns int64
	// Jobs is every job of the build, in order.
	Jobs []JobMemory
}

// JobMemory is one job's part of a MemoryEstimate.
type JobMemory struct {
	Index int    // 0 = workload, i = jobs[i−1]
	Name  string // "main" or the job's name
	Kind  string
	// Counts is the job's DAG (workload.Count for a collective; worked out
	// from the settings otherwise: expected values for Poisson traffic).
	Counts workload.Counts
	// Bytes is what the job's messages cost at the peak (its DAG,
	// connections, per-message state and records); the total adds the
	// fabric and the phases' overlap.
	Bytes int64
	// Err is why the job could not be estimated (the build reports it);
	// the job then counts for nothing.
	Err error

	timed int64 // roots with a later start: scheduler events
	flows int64 // measured flows: records and FCT lists
	dag   int64 // its DAG once built
	build int64 // the extra while it is being built
	held  int64 // the parsed flow list the Job holds
	why   string
	fix   []string // scenario keys to change, as "raise x" / "lower y"
}

// EstimateMemory estimates the peak heap of Build(job): every job of its
// scenario together. It reads the flow list file of a hand-made Job of kind
// flows (to count its lines) and the size distribution of kind messages,
// nothing else. A job it cannot count (a bad placement, algorithm or file)
// counts for nothing, and the first such job's error is returned with the
// estimate: Build refuses that job with the same error.
func EstimateMemory(job scenario.Job) (MemoryEstimate, error) {
	if job.Spec == nil {
		return MemoryEstimate{}, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	e := estimateMemory(job, plan.Together.Jobs(job), sizeDists{})
	for _, j := range e.Jobs {
		if j.Err != nil {
			return e, j.Err
		}
	}
	return e, nil
}

// checkMemory refuses a job whose fabric would need more than limit bytes
// (sim.memory_limit; 0 = no check), so that a scenario too big for the
// machine fails with a sentence instead of the Go runtime's out-of-memory
// crash. (The messages' share is MemoryEstimate.Check's.)
func checkMemory(limit, need int64, what string) error {
	if limit > 0 && need > limit {
		return fmt.Errorf("this job needs about %s for %s, more than sim.memory_limit=%s; use fewer topology hosts or switches, or raise sim.memory_limit",
			gib(need), what, limitText(limit))
	}
	return nil
}

// Check refuses an estimate above limit (0: no check), or a job with more
// messages than a DAG holds (workload.MaxMessages), with the scenario keys
// that change it: what Build does with sim.memory_limit before allocating
// (after checkMemory on the route tables), for a caller such as a
// validate command to do the same without building.
func (e MemoryEstimate) Check(limit int64) error {
	var big, over *JobMemory
	for k := range e.Jobs {
		j := &e.Jobs[k]
		if j.Err != nil {
			continue
		}
		if big == nil || j.Bytes > big.Bytes {
			big = j
		}
		if over == nil && (j.Counts.Partial || j.Counts.Messages > workload.MaxMessages || j.Counts.Edges > math.MaxInt32) {
			over = j
		}
	}
	cap := fmt.Sprintf("a job may have at most %s messages", commas(workload.MaxMessages))
	if limit > 0 && e.Bytes > limit {
		if big == nil || big.Bytes < e.Fabric {
			return checkMemory(limit, e.Bytes, "the fabric and its route tables")
		}
		what := big.why
		if len(e.Jobs) > 1 {
			what = fmt.Sprintf("%s messages in all; job %q: %s", commas(e.Messages), big.Name, big.why)
		}
		fix := advice(big.fix, big != over)
		if big == over {
			fix += " (" + cap + ")"
		}
		return fmt.Errorf("this job needs about %s (%s), more than sim.memory_limit=%s; %s",
			gib(e.Bytes), what, limitText(limit), fix)
	}
	if over != nil {
		who := "this job"
		if len(e.Jobs) > 1 {
			who = fmt.Sprintf("job %q", over.Name)
		}
		return fmt.Errorf("%s has too many messages (%s), more than the %s a job may have; %s",
			who, over.why, commas(workload.MaxMessages), advice(over.fix, false))
	}
	return nil
}

// advice joins "raise a", "lower b", "lower c" into "raise a, lower b or c",
// and ", or raise sim.memory_limit" when that helps.
func advice(fix []string, limit bool) string {
	var verbs []string
	objs := map[string][]string{}
	for _, f := range fix {
		v, o, _ := strings.Cut(f, " ")
		if objs[v] == nil {
			verbs = append(verbs, v)
		}
		objs[v] = append(objs[v], o)
	}
	var parts []string
	for _, v := range verbs {
		o := objs[v]
		s := v + " " + o[0]
		if len(o) > 1 {
			s = v + " " + strings.Join(o[:len(o)-1], ", ") + " or " + o[len(o)-1]
		}
		parts = append(parts, s)
	}
	if limit {
		parts = append(parts, "raise sim.memory_limit")
	}
	switch n := len(parts); n {
	case 0:
		return "make it smaller"
	case 1:
		return parts[0]
	case 2:
		if strings.Contains(parts[0]+parts[1], " or ") {
			return parts[0] + ", or " + parts[1]
		}
		return parts[0] + " or " + parts[1]
	default:
		return strings.Join(parts[:n-1], ", ") + ", or " + parts[n-1]
	}
}

// gib writes bytes in GiB, with two decimals below 10 GiB.
func gib(b int64) string {
	g := float64(b) / float64(units.GiB)
	if g < 10 {
		return fmt.Sprintf("%.2f GiB", g)
	}
	return fmt.Sprintf("%.1f GiB", g)
}

// limitText is sim.memory_limit as written, and in GiB when it is not a
// whole number of them.
func limitText(limit int64) string {
	s := units.Size(limit).String()
	if !strings.HasSuffix(s, "GiB") {
		s += " (" + gib(limit) + ")"
	}
	return s
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// estimateMemory estimates a build of the jobs sel of job (see
// MemoryEstimate). dists caches the size distributions it reads, for the
// build to reuse.
func estimateMemory(job scenario.Job, sel []int, dists sizeDists) MemoryEstimate {
	spec := job.Spec
	c := memCosts()
	ts := TopoSpec(spec)
	hosts, _ := topo.NumHosts(ts)
	e := MemoryEstimate{Fabric: fabricBytes(ts, spec.Transport.Kind, hosts)}
	var dags, peakBuild, flowsMax, records, buckets, lists int64
	var posted, timed int64
	for _, i := range sel {
		j := estimateJob(job, i, hosts, dists)
		j.clamp()
		if j.Err == nil {
			cn := j.Counts
			e.Messages += cn.Messages
			e.Edges += cn.Edges
			e.Conns += cn.Conns
			timed += j.timed
			posted += cn.Roots - j.timed
			// Built in order: the earlier jobs' DAGs are alive.
			peakBuild = max(peakBuild, dags+j.dag+j.build)
			dags += j.dag
			lists += j.held
			flowsMax = max(flowsMax, j.flows)
			if spec.Sim.RecordFlows {
				// Appended one by one, the last regrowth holding both arrays;
				// the FCT curve keeps every FCT.
				records += growPeak(j.flows, c.record) + j.flows*c.float
			}
			// The summary appends every finished flow's size and slowdown
			// (for the size buckets) one by one: at the last regrowth of
			// one, both arrays of it and the other.
			buckets = max(buckets, growPeak(j.flows, c.float)+appendCap(j.flows, c.float)*c.float)
		}
		e.Jobs = append(e.Jobs, j)
	}
	m, edges := e.Messages, e.Edges
	final := dags
	if len(sel) > 1 {
		// Combine copies every job's DAG into one, the jobs' own staying
		// (their metadata is read by the summaries).
		joint := dagBytes(m, edges, false, c)
		peakBuild = max(peakBuild, dags+joint+finishBytes(m, edges, c))
		final += joint
	}
	// Set up: the per-message arrays (the plan's connection, the
	// executor's and the simulator's), the connections (the plan's, their
	// map, the transport's), the queue entries of the messages released
	// at once, the scheduler events of the others (appended one by one:
	// the last regrowth holds the old array too), explain mode's
	// per-message record (the plan's connections and their map are sized
	// from the estimate's count). While the roots start, the executor's
	// list of them. Then Result's lists beside all that.
	run := final + m*c.labMsg
	tr := c.transport(spec.Transport.Kind, spec)
	conns := e.Conns
	if pool := scenario.TransportOf(spec).PoolSize(spec.Transport); pool > 1 {
		run += mapBytes(conns, c.connEntry) // the pool's next connection per pair
		conns = min(conns*int64(pool), m)
	}
	run += mapBytes(conns, c.connEntry) + conns*c.planConn + tr.bytes(conns, posted, int64(max(hosts, 1)))
	if spec.Switch.Forwarding == "te" {
		// Traffic engineering: a pin per connection on every switch of
		// its path (teSwitches at most on the tree fabrics), and the
		// controller's per-connection demand while it plans.
		run += mapBytes(conns*teSwitches, c.pinEntry) + conns*teDemandBytes
	}
	events := appendCap(timed, c.event) * c.event
	run += events
	if spec.Sim.Explain {
		run += m * c.explainMsg
		records += mapBytes(flowsMax, c.slowEntry) // the slowdowns by message
	}
	connect := run + growPeak(timed, c.event) - events + (posted+timed)*c.release
	ports := fabricPorts(ts, hosts)
	telemetry := telemetryBytes(spec, ports)
	run += flowsMax*2*c.float + buckets + records + telemetry
	e.Bytes = e.Fabric + lists + max(peakBuild, connect, run)
	if p := int64(spec.Sim.Partitions); p > 1 {
		// Every part is a whole simulation (partition.go), but samples
		// only the ports it owns: all parts' samples are the fabric's
		// once, and their merge (mergeTelemetry) copies them.
		sampled, n, sample := telemetrySamples(spec, ports)
		e.Bytes = p*(e.Fabric+lists+max(peakBuild, connect, run-telemetry)) + telemetry + sampled*n*sample
		e.Fabric *= p
	}
	for k := range e.Jobs {
		j := &e.Jobs[k]
		if j.Err != nil || m == 0 {
			continue
		}
		// Its share: its DAG(s) and its part of the per-message and
		// per-connection costs.
		share := float64(j.Counts.Messages) / float64(m)
		j.Bytes = j.dag + j.held + int64(share*float64(run-dags))
	}
	return e
}

// teSwitches is how many switches a path crosses at most on the tree
// fabrics (a three-tier fat-tree: edge, aggregation, core, aggregation,
// edge); teDemandBytes what the TE controller keeps per connection (its
// demand record: index, bytes, NIC, a slice header of shared paths).
const (
	teSwitches    = 5
	teDemandBytes = 48
)

// maxCount bounds the counts of a job (far beyond any machine: such a job
// is refused anyway), so that the byte arithmetic stays in range.
const maxCount = 1 << 40

// clamp bounds j's counts by maxCount, and zeroes the negative ones of a
// job that makes no sense (its build reports why).
func (j *JobMemory) clamp() {
	for _, v := range []*int64{&j.Counts.Messages, &j.Counts.Markers, &j.Counts.Edges, &j.Counts.Roots,
		&j.Counts.Conns, &j.Counts.PerCopy, &j.timed, &j.flows, &j.dag, &j.build, &j.held} {
		*v = min(max(*v, 0), maxCount)
	}
	if j.Counts.Messages == maxCount {
		j.Counts.Partial = true
	}
}

// estimateJob counts job i of job's scenario (0 = the workload) on a
// topology of hosts hosts.
func estimateJob(job scenario.Job, i, hosts int, dists sizeDists) JobMemory {
	spec := job.Spec
	c := memCosts()
	w := scenario.JobWorkload(spec, i)
	j := JobMemory{Index: i, Name: scenario.JobName(spec, i), Kind: w.Kind}
	p := "workload."
	if i > 0 {
		p = fmt.Sprintf("jobs[%d].", i-1)
	}
	seed := scenario.JobSeed(job.Seed, i)
	size := plan.JobSize(job, i)
	ranks := w.Ranks
	if ranks == 0 {
		ranks = hosts - w.HostOffset
	}
	cn := &j.Counts
	kind, known := scenario.LookupWorkloadKind(w.Kind)
	switch {
	case !known:
		j.Err = fmt.Errorf("unknown workload kind %q", w.Kind)
		return j
	case kind.Collective:
		rankHost, err := scenario.JobHosts(w, spec.Topology, seed)
		if err != nil {
			j.Err = fmt.Errorf("workload.placement: %w", err)
			return j
		}
		// Servers are consecutive gpus_per_server hosts on every topology
		// (topo builds them so): what rail-aware all-to-all needs.
		g := max(spec.Topology.GPUsPerServer, 1)
		server, rail := make([]int, len(rankHost)), make([]int, len(rankHost))
		for r, h := range rankHost {
			server[r], rail[r] = h/g, h%g
		}
		s := scenario.CollectiveSpec(w, seed, size, ranks, rankHost, server, rail)
		if *cn, err = workload.Count(s); err != nil {
			j.Err = err
			return j
		}
		j.flows = (cn.Messages - cn.Markers) / max(cn.Copies, 1) * int64(max(w.Iterations, 1))
		j.dag = dagBytes(cn.Messages, cn.Edges, cn.Copies > 1, c) + cn.Copies*c.iterSpan
		j.build = finishBytes(cn.Messages, cn.Edges, c)
		j.why = collectiveWhy(p, w, size, ranks, *cn)
		if w.MessageSize > 0 {
			j.fix = append(j.fix, "raise "+p+"message_size")
		}
		if w.Iterations > 1 {
			j.fix = append(j.fix, "lower "+p+"iterations")
		}
		if w.Warmup > 0 {
			j.fix = append(j.fix, "lower "+p+"warmup")
		}
		if w.QPs > 1 {
			j.fix = append(j.fix, "lower "+p+"qps")
		}
		if len(j.fix) == 0 {
			j.fix = []string{"use fewer " + p + "ranks", "use a smaller " + p + "sizes"}
		}
		return j
	case w.Kind == "permutation" || w.Kind == "incast":
		n := int64(ranks)
		if w.Kind == "incast" {
			n = int64(w.Senders)
		}
		*cn = workload.Counts{Messages: n, Roots: n, Conns: n, PerCopy: n, Copies: 1}
		j.why = fmt.Sprintf("%s flows", commas(n))
		j.fix = []string{"use fewer hosts"}
	case w.Kind == "uniform":
		ex := workload.UniformMessages(ranks, size, w.Load, spec.Topology.HostLink.Rate, w.Duration)
		n := int64(ex + 0.5)
		*cn = workload.Counts{Messages: n, Roots: n, Conns: distinctPairs(ranks, ex), PerCopy: n, Copies: 1}
		j.timed = n
		// Uniform allocates for the Poisson bound up front.
		j.dag = dagBytes(workload.PoissonReserve(ex), 0, false, c)
		j.why = fmt.Sprintf("about %s messages: %d hosts at %sload %g for %sduration %v, %v each", commas(n), ranks, p, w.Load, p, w.Duration, units.Size(size))
		j.fix = []string{"lower " + p + "load", "lower " + p + "duration", "raise " + p + "sizes"}
		j.flows = n
		return j
	case w.Kind == "messages":
		dist, err := dists.get(w.SizeDist, job.Dir)
		if err != nil {
			j.Err = err
			return j
		}
		nic := spec.NIC
		ps := workload.PoissonSpec{Load: w.Load, Rate: spec.Topology.HostLink.Rate, Payload: int64(nic.MTU), Header: int64(nic.Overhead), Sizes: dist}
		ex := ps.PoissonRate() * float64(ranks) * w.Duration.Seconds()
		n := int64(ex + 0.5)
		resp := int64(0)
		if w.ResponseSize.RPC() {
			resp = 1
		}
		pairs := distinctPairs(ranks, ex*float64(1+resp))
		if w.Pattern == "permutation" {
			pairs = int64(ranks) * (1 + resp)
		}
		*cn = workload.Counts{Messages: n * (1 + resp), Edges: n * resp, Roots: n, Conns: pairs, PerCopy: n * (1 + resp), Copies: 1}
		j.timed = n
		// Messages sizes its message array for the arrivals (a response
		// each grows it) and holds the arrival list while it builds.
		j.dag = growCap(n, cn.Messages, c.msg)*c.msg + appendCap(cn.Messages, c.depCount)*c.depCount + csrBytes(cn.Messages, cn.Edges, c)
		j.build = workload.PoissonReserve(ex)*c.arrival + appendCap(cn.Edges, c.dep)*c.dep + finishScratch(cn.Messages, cn.Edges, c)
		if resp > 0 { // the last regrowth of the message array holds both
			j.build += (growCap(n, cn.Messages, c.msg) - growCap(n, cn.Messages*4/5, c.msg)) * c.msg
		}
		j.why = fmt.Sprintf("about %s messages: %d hosts at %sload %g for %sduration %v, %s on average (%ssize_dist %s)",
			commas(n), ranks, p, w.Load, p, w.Duration, units.Size(int64(dist.Mean()+0.5)), p, w.SizeDist)
		if resp > 0 {
			j.why += ", each answered (" + p + "response_size)"
		}
		j.fix = []string{"lower " + p + "load", "lower " + p + "duration"}
		j.flows = cn.Messages
		return j
	case w.Kind == "any-to-any":
		hs := make([]int, ranks)
		as := scenario.AnyToAnySpec(w, spec.Topology, hs, size)
		n := int64(workload.AnyToAnyMessages(as) + 0.5)
		slots := int64(len(as.Clients) * len(as.Servers) * as.Depth)
		*cn = workload.Counts{Messages: n, Edges: max(n-slots, 0), Roots: slots, Conns: int64(len(as.Clients) * len(as.Servers)), PerCopy: n, Copies: 1}
		j.why = fmt.Sprintf("about %s writes: %d clients × %d servers × %sdepth %d, each slot a chain of the writes of %v it could complete in %sduration %v",
			commas(n), len(as.Clients), len(as.Servers), p, as.Depth, units.Size(size), p, w.Duration)
		j.fix = []string{"raise " + p + "sizes", "lower " + p + "duration", "lower " + p + "depth"}
		j.flows = n
		j.dag = dagBytes(cn.Messages, cn.Edges, false, c)
		return j
	case w.Kind == "flows":
		list := job.FlowList
		if i > 0 {
			list = nil // an extra job reads its own file
		}
		n, timed, err := flowCount(list, job.Dir, w)
		if err != nil {
			j.Err = err
			return j
		}
		*cn = workload.Counts{Messages: n, Roots: n, Conns: n, PerCopy: n, Copies: 1}
		j.timed = timed
		if list != nil {
			j.held = int64(cap(list)) * c.flowSpec // read with the scenario, held by the Job
		} else {
			j.build = growPeak(n, c.flowSpec) // parsed by the build, appended one by one
		}
		j.why = fmt.Sprintf("%s flows in %sfile %s", commas(n), p, w.File)
		j.fix = []string{"use a shorter " + p + "file"}
	default:
		j.Err = fmt.Errorf("the memory estimate does not know workload kind %q", w.Kind)
		return j
	}
	j.flows = cn.Messages
	j.dag = dagBytes(cn.Messages, cn.Edges, false, c)
	return j
}

// collectiveWhy is how a collective job's messages come about, with the
// scenario keys: "508,927,968 messages: alltoall/direct on 32 ranks of
// workload.sizes 64MiB in workload.message_size 4KiB pieces over
// workload.qps 1, 508,896 a copy × workload.iterations 1000".
func collectiveWhy(p string, w scenario.Workload, size int64, ranks int, c workload.Counts) string {
	var b strings.Builder
	more := ""
	if c.Partial {
		more = "more than "
	}
	fmt.Fprintf(&b, "%s%s messages: %s", more, commas(c.Messages), w.Kind)
	if w.Algorithm != "" {
		b.WriteString("/" + w.Algorithm)
	}
	fmt.Fprintf(&b, " on %d ranks of %ssizes %v", ranks, p, units.Size(size))
	if w.MessageSize > 0 {
		fmt.Fprintf(&b, " in %smessage_size %v pieces", p, w.MessageSize)
	}
	fmt.Fprintf(&b, " over %sqps %d", p, max(w.QPs, 1))
	if c.Copies > 1 {
		fmt.Fprintf(&b, ", %s%s a copy × ", more, commas(c.PerCopy))
		if w.Warmup > 0 {
			fmt.Fprintf(&b, "(%siterations %d + %swarmup %d)", p, w.Iterations, p, w.Warmup)
		} else {
			fmt.Fprintf(&b, "%siterations %d", p, w.Iterations)
		}
	}
	return b.String()
}

// flowCount is a flow list's length and how many of its flows start
// later than 0: from the parsed list, or (nil: the build reads the file)
// by counting the lines of the file, each counted as starting later.
func flowCount(list []workload.FlowSpec, dir string, w scenario.Workload) (n, timed int64, err error) {
	if list != nil {
		for _, f := range list {
			if f.Start > 0 {
				timed++
			}
		}
		return int64(len(list)), timed, nil
	}
	path := w.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := inputfile.Open(path, inputfile.Limit) // as the build reads it: a regular file of bounded size
	if err != nil {
		return 0, 0, fmt.Errorf("workload.file: %w", err)
	}
	defer f.Close()
	n, err = countLines(f)
	return n, n, err
}

// countLines counts the lines of r (a last line without a newline too).
func countLines(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 64<<10)
	var n int64
	last := byte('\n')
	for {
		k, err := br.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// distinctPairs is the expected number of distinct ordered host pairs
// among draws uniformly random pairs of n hosts.
func distinctPairs(n int, draws float64) int64 {
	pairs := float64(n) * float64(n-1)
	if pairs <= 0 || draws <= 0 {
		return 0
	}
	return int64(math.Ceil(pairs * -math.Expm1(-draws/pairs)))
}

// dagBytes is a built DAG of m messages and e edges: the messages and
// their dependency counts (and iteration indices), and the CSR successor
// lists when there are edges.
func dagBytes(m, e int64, iters bool, c *costs) int64 {
	b := m * (c.msg + c.depCount)
	if iters {
		b += m * c.iteration
	}
	return b + csrBytes(m, e, c)
}

func csrBytes(m, e int64, c *costs) int64 {
	if e == 0 {
		return 0
	}
	return (m+1)*c.row + e*c.succ
}

// finishBytes is what a DAG holds beyond its final arrays while Finish
// builds the CSR: the edge list and the placement cursor.
func finishBytes(m, e int64, c *costs) int64 {
	if e == 0 {
		return 0
	}
	return e*c.dep + finishScratch(m, e, c)
}

func finishScratch(m, e int64, c *costs) int64 {
	if e == 0 {
		return 0
	}
	return m * c.row
}

// mapBytes is a Go map of n entries of entry bytes (key, value and the
// control byte): its tables hold between 7/16 and 7/8 of their slots,
// about 2/3 on average.
func mapBytes(n, entry int64) int64 { return n * entry * 3 / 2 }

// growPeak is the bytes a slice appended to n elements of elem bytes one
// by one holds at its last regrowth: the new array and the old.
func growPeak(n, elem int64) int64 {
	c := appendCap(n, elem)
	if c == 0 {
		return 0
	}
	return (c + appendCap(c*4/5, elem)) * elem
}

// appendCap is growCap from an empty slice.
func appendCap(n, elem int64) int64 { return growCap(0, n, elem) }

// growCap is the capacity a slice of elem-byte elements of capacity c
// reaches when grown by append one element at a time to n: doubling up to
// 256 elements, then by a quarter plus 192, each step rounded up to an
// allocation size class.
func growCap(c, n, elem int64) int64 {
	if n <= 0 || elem <= 0 {
		return 0
	}
	for c < n {
		switch {
		case c == 0:
			c = 1
		case c < 256:
			c *= 2
		default:
			c += (c + 3*256) / 4
		}
		c = sizeClass(c*elem) / elem
	}
	return c
}

// sizeClass approximates the Go allocator's rounding of a request: eight
// classes per power of two (16-byte steps below 128 bytes), whole pages
// above 32 KiB.
func sizeClass(b int64) int64 {
	switch {
	case b <= 8:
		return 8
	case b <= 128:
		return (b + 15) &^ 15
	case b > 32<<10:
		return (b + 8191) &^ 8191
	}
	step := int64(1) << (bits.Len64(uint64(b-1)) - 4)
	return (b + step - 1) &^ (step - 1)
}

// fabricBytes estimates the topology: its ports (two per link; about one
// link per host per tier of switches, or a topology file's own links),
// switches, NICs and route tables.
func fabricBytes(ts topo.Spec, transport string, hosts int) int64 {
	c := memCosts()
	h := int64(hosts)
	return topo.RouteTableBytes(ts) + fabricPorts(ts, hosts)*c.port + int64(topo.NumSwitches(ts))*c.sw + h*c.transport(transport, nil).nic
}

// fabricPorts is how many ports the fabric has (both ends of every link).
func fabricPorts(ts topo.Spec, hosts int) int64 {
	tiers := int64(2)
	if ts.Kind == "fat-tree" {
		tiers = 3
	}
	h := int64(hosts)
	ports := 2 * h * tiers
	if ts.Graph != nil {
		ports = 2 * int64(len(ts.Graph.Links)) // a topology file: its own links
	}
	if ts.ScaleUp.Rate > 0 {
		ports += 2 * h
	}
	return ports
}

// telemetryBytes is what sim.telemetry holds at its peak (telemetry.go):
// while the run goes on, every port's samples (queue and sent bytes, the
// pause flag, pause frames, ECN marks, drops, a queue per sampled
// priority) in arrays grown by appending, at most its bound of samples
// (halved beyond it), and the followed flows' samples; then the series
// Result makes of the kept ports, beside them.
func telemetryBytes(spec *scenario.Scenario, ports int64) int64 {
	o := spec.Sim.Telemetry
	if !o.On() {
		return 0
	}
	ports, n, sample := telemetrySamples(spec, ports)
	prios := int64(len(sampledPrios(spec)))
	kept := ports
	if o.Ports.Top > 0 {
		kept = min(kept, int64(o.Ports.Top))
	} else if len(o.Ports.List) > 0 {
		kept = min(kept, int64(len(o.Ports.List)))
	}
	series := 8 + 8 + 1 + 3*8 + 8*prios // queue, util, paused, frames/marks/drops, per-priority queues
	flows := int64(o.Flows.Top + len(o.Flows.List))
	return growPeak(ports*n, sample) + flows*3*growPeak(n, 8) + kept*n*series
}

// telemetrySamples are the ports sim.telemetry samples (of the fabric's
// ports), the most samples it holds and the bytes of a port's sample.
func telemetrySamples(spec *scenario.Scenario, ports int64) (sampled, n, sample int64) {
	o := spec.Sim.Telemetry
	if !o.On() {
		return 0, 0, 0
	}
	if o.Ports.IsZero() {
		ports = 0
	}
	n = int64(scenario.MaxTelemetrySamples/max(ports, scenario.MaxTelemetryFlows)) &^ 1
	if lim := o.Samples(spec.Sim.TimeLimit); lim > 0 {
		n = min(n, lim+1)
	}
	// queue, sent, paused, frames/marks/drops, a queue per priority
	return ports, n, 8 + 8 + 1 + 3*4 + 4*int64(len(sampledPrios(spec)))
}

// costs are the bytes of each item a build holds, from the real types.
type costs struct {
	msg, depCount, iteration, iterSpan int64 // a DAG's per-message arrays
	row, succ, dep                     int64 // CSR row start, successor, edge (until Finish)
	labMsg                             int64 // the per-message arrays of the plan, the executor and Sim
	planConn, release                  int64 // a plan's connection, an executor's released message
	connEntry, slowEntry, pinEntry     int64 // map entries (key, value, control byte)
	event                              int64 // a scheduler event
	flowSpec, arrival                  int64
	record, float                      int64 // a flow record, an FCT or slowdown
	explainMsg                         int64
	port, sw                           int64
	roce, tcp, homa, uet               transportCosts
	hpcc                               int64    // a RoCE QP's HPCC state, with HPCC on
	missing                            []string // fields not found (the fallbacks were used)
}

// transportCosts are a transport's items: per host (the NIC); per
// connection, its objects at both ends (conn), its slots in the sending
// and receiving NICs' lists (send, recv: appended), its handle in the
// lab's connection layer (handle: one list) and in its NIC's round-robin
// once it has data (active: a power-of-two ring); per message posted at
// the start, its queue entries.
type transportCosts struct{ nic, conn, send, recv, handle, active, posted int64 }

// bytes is conns connections spread over hosts NICs with posted messages
// posted at once.
func (t transportCosts) bytes(conns, posted, hosts int64) int64 {
	if conns == 0 {
		return posted * t.posted
	}
	per := (conns + hosts - 1) / hosts
	b := conns*t.conn + posted*t.posted
	b += hosts * (appendCap(per, t.send)*t.send + appendCap(per, t.recv)*t.recv)
	b += growPeak(conns, t.handle)
	if t.active > 0 && posted > 0 {
		live := (min(conns, posted) + hosts - 1) / hosts
		b += hosts * int64(max(8, 1<<bits.Len64(uint64(live-1)))) * t.active
	}
	return b
}

// transport is the costs of spec's transport (spec nil: its kind's
// alone, for the NICs).
func (c *costs) transport(kind string, spec *scenario.Scenario) transportCosts {
	if t, ok := transports[kind]; ok {
		return t.costs(c, spec)
	}
	return c.roce
}

// roceCosts is RoCE's costs for spec: with HPCC each send QP has its
// HPCC state too (its own object; a QP of the other runs has none).
func (c *costs) roceCosts(spec *scenario.Scenario) transportCosts {
	t := c.roce
	if spec != nil && scenario.HPCCParams(spec).Enabled {
		t.conn += c.hpcc
	}
	return t
}

// uetCosts is UET's costs for spec: with REPS each connection that has had
// a packet acknowledged clean keeps a ring of transport.uet.entropies
// values (made at that first ACK, during the run: 256 KiB a connection at
// the 65,536 allowed).
func (c *costs) uetCosts(spec *scenario.Scenario) transportCosts {
	t := c.uet
	if spec != nil {
		if cfg := scenario.UETConfig(spec); cfg.LB == uet.REPS {
			t.conn += sizeClass(int64(max(cfg.Entropies, 1)) * int64(unsafe.Sizeof(uint32(0))))
		}
	}
	return t
}

var memCosts = sync.OnceValue(func() *costs {
	c := &costs{}
	sz := func(t reflect.Type, path string, fallback int64) int64 {
		ft := fieldPath(t, path)
		if ft == nil {
			c.missing = append(c.missing, t.String()+"."+path)
			return fallback
		}
		return int64(ft.Size())
	}
	var d workload.DAG
	c.msg = int64(unsafe.Sizeof(workload.Message{}))
	c.depCount = int64(unsafe.Sizeof(d.DepCount[0]))
	c.iteration = int64(unsafe.Sizeof(d.Iteration[0]))
	c.iterSpan = int64(unsafe.Sizeof(workload.IterSpan{}))
	dag := reflect.TypeFor[workload.DAG]()
	c.row = sz(dag, "succStart[]", 4)
	c.succ = sz(dag, "succ[]", 4)
	c.dep = sz(dag, "deps[]", 8)
	var s Sim
	var p plan.Plan
	c.labMsg = int64(unsafe.Sizeof(p.Conn[0])+unsafe.Sizeof(s.start[0])+unsafe.Sizeof(s.end[0])) +
		sz(reflect.TypeFor[workload.Executor](), "remaining[]", 4)
	c.planConn = int64(unsafe.Sizeof(p.Conns[0]))
	c.release = sz(reflect.TypeFor[workload.Executor](), "out[]", 4)
	c.connEntry = plan.ConnKeyBytes + int64(unsafe.Sizeof(int32(0))) + 1
	c.slowEntry = int64(unsafe.Sizeof(int(0))+unsafe.Sizeof(float64(0))) + 1
	c.pinEntry = int64(4*unsafe.Sizeof(int32(0))+unsafe.Sizeof((*fabric.Port)(nil))) + 1 // a switch's pin: 5-tuple key, port
	st := reflect.TypeFor[sim.Scheduler]()
	// A pending event: its slot (the handler, and its entry while in a
	// calendar bucket) and, for one beyond the calendar's horizon (timed
	// roots, timers), its entry in the far heap (both appended: the growth
	// is counted by the callers).
	c.event = sz(st, "q.slots[]", 48) + sz(st, "q.far.h[]", 16)
	c.flowSpec = int64(unsafe.Sizeof(workload.FlowSpec{}))
	c.arrival = int64(unsafe.Sizeof(workload.Arrival{}))
	c.record = int64(unsafe.Sizeof(metrics.FlowRecord{}))
	c.float = int64(unsafe.Sizeof(float64(0)))
	c.explainMsg = int64(unsafe.Sizeof([maxHops]stay{}) + unsafe.Sizeof(uint8(0)))
	c.port = sizeClass(int64(unsafe.Sizeof(fabric.Port{})))
	c.sw = sizeClass(int64(unsafe.Sizeof(fabric.Switch{})))
	ptr := int64(unsafe.Sizeof(uintptr(0)))

	// RoCE: the sender's QP (its own object, a pointer in its NIC's list
	// and in the round-robin), the receiver's QP, the lab's handle; a
	// posted message is an entry in its QP's queue.
	rn := reflect.TypeFor[roce.NIC]()
	c.roce = transportCosts{
		nic:    sizeClass(int64(rn.Size())),
		conn:   sizeClass(sz(rn, "send[]*", 352)),
		send:   ptr,
		recv:   sz(rn, "recv[]", 104),
		handle: int64(unsafe.Sizeof(roce.QP{})),
		active: sz(rn, "active.buf[]", 8),
		posted: sizeClass(sz(rn, "send[]*.msgs[]", 32)),
	}
	c.hpcc = sizeClass(int64(unsafe.Sizeof(roce.HPCC{})))
	// TCP: both halves and their state machines; a posted message is
	// framed at both ends.
	tn := reflect.TypeFor[tcp.NIC]()
	c.tcp = transportCosts{
		nic: sizeClass(int64(tn.Size())),
		conn: sizeClass(sz(tn, "send[]*", 56)) + sizeClass(int64(unsafe.Sizeof(tcp.Sender{}))) +
			sizeClass(sz(tn, "recv[]*", 48)) + sizeClass(int64(unsafe.Sizeof(tcp.Receiver{}))),
		send:   ptr,
		recv:   ptr,
		handle: int64(unsafe.Sizeof(tcp.Conn{})),
		active: sz(tn, "active.buf[]", 8),
		posted: sizeClass(sz(reflect.TypeFor[tcp.Sender](), "msgs[]", 16)) + sizeClass(sz(reflect.TypeFor[tcp.Receiver](), "msgs[]", 16)),
	}
	// UET: the sending half (its state machine inside) with its three PSN
	// sets' words, the receiving half (in its NIC's list) with its set's,
	// the lab's handle; a posted message is an entry at both ends (the
	// sets grow with the window: a word each counted, 64 PSNs).
	un := reflect.TypeFor[uet.NIC]()
	word := sizeClass(int64(unsafe.Sizeof(uint64(0))))
	c.uet = transportCosts{
		nic:    sizeClass(int64(un.Size())),
		conn:   sizeClass(sz(un, "send[]*", 320)) + 4*word,
		send:   ptr,
		recv:   sz(un, "recv[]", 120),
		handle: int64(unsafe.Sizeof(uet.Conn{})),
		active: sz(un, "active.buf[]", 8),
		posted: sizeClass(sz(un, "send[]*.msgs[]", 24)) + sizeClass(sz(un, "recv[].msgs[]", 32)),
	}
	// Homa: no connections; a posted message is its outbound record, its
	// slots in the id table (at most half full), the send queue and the
	// timer heap.
	he := reflect.TypeFor[homa.Endpoint]()
	c.homa = transportCosts{
		nic:    sizeClass(int64(reflect.TypeFor[homa.NIC]().Size())) + sizeClass(int64(he.Size())),
		posted: sizeClass(sz(he, "sendq[]*", 120)) + 3*sz(he, "outs.slots[]", 32) + ptr + sz(he, "timers[]", 24),
	}
	return c
})

// fieldPath follows a path of field names from struct type t: "a.b" is
// field b of field a; after a name, "[]" takes an element of a slice or
// array and "*" what a pointer points to. Nil when a field is not there.
func fieldPath(t reflect.Type, path string) reflect.Type {
	for _, seg := range strings.Split(path, ".") {
		name, ops := seg, ""
		if i := strings.IndexAny(seg, "[*"); i >= 0 {
			name, ops = seg[:i], seg[i:]
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return nil
		}
		t = f.Type
		for ops != "" {
			switch k := t.Kind(); {
			case strings.HasPrefix(ops, "[]") && (k == reflect.Slice || k == reflect.Array):
				t, ops = t.Elem(), ops[2:]
			case strings.HasPrefix(ops, "*") && k == reflect.Pointer:
				t, ops = t.Elem(), ops[1:]
			default:
				return nil
			}
		}
	}
	return t
}
