// Package measure turns an executed plan into results: the completion
// time, rates and % of ideal of every job, the flows' completion-time and
// slowdown distributions, iteration times, per-rank figures and a messages
// workload's offered and carried load. It reads three things and nothing
// else: the plan (package plan), the trace an engine recorded while it ran
// the plan (when each message started and was delivered, what it gave up
// on, the fabric's counters if it has a fabric), and the bounds the
// results are measured against (the alone completion time of a message,
// the ideal times), which come from the layout the engine ran on.
package measure

import (
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/sim"
	"fabriclab/units"
)

// Trace is what an engine recorded while it executed a plan.
type Trace struct {
	// Start and End are, per message of the plan's DAG, when it started
	// (was handed to the transport) and when it was delivered; −1 when it
	// never did.
	Start, End []sim.Time
	// Delivered is how many messages were delivered (markers included);
	// Cut how many a closed-loop workload's end cut (workload.DAG.Until):
	// they never started (Start −1) and are not part of the run.
	Delivered int
	Cut       int
	// Now is the time the run ended at; Events how many events the engine
	// executed (0 when it has none to count).
	Now    sim.Time
	Events uint64
	// Window is the payload the hosts had received halfway through and at
	// the end of a messages workload's arrival window (one such job
	// alone), −1 when not measured: the steady-state throughput is their
	// difference over the second half.
	Window [2]int64
	// Fabric is the fabric's side of the run; nil for an engine without a
	// fabric (its results leave the fabric's part empty).
	Fabric *Fabric
	// Bounds are the layout's bounds that results are measured against.
	Bounds Bounds
	// Hosts is what a real-hosts engine adds to the row (nil otherwise).
	Hosts *metrics.HostsRun
}

// Done reports whether every message was delivered.
func (t *Trace) Done() bool { return t.Delivered+t.Cut == len(t.End) }

// Fabric is what a fabric saw of a run.
type Fabric struct {
	// Totals sums every port's counters and the transport's, Ports lists
	// the ports worth reporting (with sim.port_counters; nil otherwise).
	Totals       metrics.Counters
	Ports        []metrics.PortCounters
	Conservation metrics.Conservation
	// Balance is how evenly the fabric's links were loaded, per tier, and
	// how much of the run its ports spent paused.
	Balance *metrics.Balance
	// Failures are the links' outages (topology.failures).
	Failures []metrics.LinkFailure
	// Explain explains a part's slow flows (sim.explain); nil when off.
	Explain Explainer
	// Telemetry is the busiest ports over time (sim.telemetry); nil when
	// off.
	Telemetry *metrics.Telemetry
}

// Explainer explains why a part's slow flows were slow. slowdowns holds
// the slowdown of each of the part's measured, delivered messages, by
// message index.
type Explainer interface {
	Explain(p plan.Part, slowdowns map[int]float64) *metrics.Explanation
}

// Bounds are the idle-layout figures results are measured against.
type Bounds interface {
	// AloneFCT is the completion time of a message of bytes from endpoint
	// src to dst alone on the idle layout.
	AloneFCT(src, dst int32, bytes int64) sim.Time
	// Ideal is the least time messages [lo, hi) of the plan's DAG can
	// take: the payload they force through the most loaded NIC or edge
	// uplink divided by its rate, or a late earliest start plus its own
	// serialization.
	Ideal(lo, hi int32) sim.Time
	// RoutedIdeal is the same bound with every message on the path its
	// 5-tuple hashes to; ok is false when paths do not follow from the
	// 5-tuple alone (a dynamic forwarding policy, or no fabric).
	RoutedIdeal(lo, hi int32) (t sim.Time, ok bool)
	// NICRate is endpoint id's NIC rate.
	NICRate(id int) units.Rate
}
