package measure

import (
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// Result is the row of an executed plan, complete or not: its first
// part's summary (the main job's) with the run's events and end time and,
// when the engine has a fabric, the whole fabric's counters. With several
// jobs, Jobs holds every job's summary (their alone CCTs are filled by
// engine.RunJob) and the row is incomplete, without rates, unless every
// job finished.
func Result(p *plan.Plan, t *Trace) metrics.SizeResult {
	r := Summary(p, p.Parts[0], t)
	r.Events = t.Events
	r.SimEndS = t.Now.Seconds()
	r.Hosts = t.Hosts
	r.Transport = scenario.TransportLabel(p.Job.Spec)
	if te := p.TE; te != nil {
		r.TE = &metrics.TEPlan{Method: te.Method, Connections: te.Conns, MaxLinkLoadS: te.MaxLoadS, Optimal: te.Optimal}
	}
	if t.Hosts != nil {
		r.Transport = "kernel TCP"
		// Real hosts: which path each flow took is the kernels' business,
		// so there is no routed bound to compare with.
		r.RoutedIdealS, r.RoutedIdealPct = 0, 0
	}
	if len(p.Parts) > 1 {
		for _, pt := range p.Parts {
			pr := r
			if pt.Index != p.Parts[0].Index {
				pr = Summary(p, pt, t)
			}
			r.Jobs = append(r.Jobs, metrics.Job(pt.Name, pt.Kind, pt.Start.Seconds(), pr))
		}
		if !t.Done() {
			// The run as a whole did not finish (another job hit the time
			// limit): the row is incomplete, without rates.
			r.Complete = false
			r.AlgBWGBps, r.BusBWGBps, r.IdealPct, r.RoutedIdealPct, r.CollectiveIdealPct = 0, 0, 0, 0, 0
		}
	}
	if f := t.Fabric; f != nil {
		r.Totals = f.Totals
		r.Ports = f.Ports
		r.PFCPauses = r.Totals.PFCPausesSent
		r.ECNMarks = r.Totals.ECNMarks
		r.Drops = r.Totals.Drops
		r.Retransmits = r.Totals.Retransmits
		r.CNPs = r.Totals.CNPs
		r.Timeouts = r.Totals.Timeouts
		r.Conservation = f.Conservation
		r.Balance = f.Balance
		r.Failures = f.Failures
		r.Telemetry = f.Telemetry
	}
	return r
}

// PartDone reports whether every message of part pt was delivered.
func PartDone(pt plan.Part, t *Trace) bool {
	if t.Done() {
		return true
	}
	for i := pt.Lo; i < pt.Hi; i++ {
		if t.End[i] < 0 {
			return false
		}
	}
	return true
}

// Summary is the flow-level summary of one job's messages: CCT (or the
// mean of its measured iterations), flows, FCT and slowdown distributions,
// per-rank figures, the ideals, and the rates derived from them.
func Summary(p *plan.Plan, pt plan.Part, t *Trace) metrics.SizeResult {
	d := pt.DAG
	all := p.DAG
	spec := p.Job.Spec
	var r metrics.SizeResult
	r.SizeBytes = d.Size
	r.Ranks = d.Ranks
	r.Algorithm = d.Algorithm
	r.Complete = PartDone(pt, t)
	first, last := sim.Time(-1), sim.Time(0)
	n := int(pt.Hi - pt.Lo)
	var rateSum, rateSq float64 // the flows' rates, for Jain's index
	var rates int
	fcts := make([]float64, 0, n)
	slows := make([]float64, 0, n)
	var bSizes []int64 // sizes and slowdowns of the finished messages for the size buckets
	var bSlows []float64
	rankDone := make([]sim.Time, d.Ranks)
	record := spec.Sim.RecordFlows
	var delivered int64
	var explain Explainer
	if t.Fabric != nil {
		explain = t.Fabric.Explain
	}
	var slowByMsg map[int]float64
	if explain != nil {
		slowByMsg = map[int]float64{}
	}
	for i := int(pt.Lo); i < int(pt.Hi); i++ {
		m := all.Msgs[i]
		st, en := t.Start[i], t.End[i]
		if st >= 0 && (first < 0 || st < first) {
			first = st
		}
		if en > last {
			last = en
		}
		if m.Marker || (d.Iteration != nil && d.Iteration[i-int(pt.Lo)] < 0) {
			continue // bookkeeping, or a warmup iteration: not a measured flow
		}
		if st < 0 && t.Cut > 0 && t.Done() {
			continue // cut by a closed loop's end (workload.DAG.Until): never part of the run
		}
		r.Flows++
		src, su := p.Layout.Host(m.Src)
		dst, _ := p.Layout.Host(m.Dst)
		if en < 0 {
			if record {
				r.Records = append(r.Records, metrics.FlowRecord{ID: i, Src: src, Dst: dst, ScaleUp: su,
					SrcRank: int(m.SrcRank), DstRank: int(m.DstRank), Bytes: m.Bytes, StartS: st.Seconds(), EndS: -1})
			}
			continue
		}
		delivered += m.Bytes
		if int(m.DstRank) < len(rankDone) && en > rankDone[m.DstRank] {
			rankDone[m.DstRank] = en
		}
		fct := (en - st).Seconds()
		if fct > 0 {
			rate := float64(m.Bytes) / fct
			rateSum, rateSq, rates = rateSum+rate, rateSq+rate*rate, rates+1
		}
		ideal := t.Bounds.AloneFCT(m.Src, m.Dst, m.Bytes).Seconds()
		slow := fct / ideal
		if slowByMsg != nil {
			slowByMsg[i] = slow
		}
		fcts = append(fcts, fct)
		slows = append(slows, slow)
		if d.Collective != metrics.Messages || all.DepCount[i] == 0 {
			// The size buckets are the messages' or RPC requests' (a
			// response's round trip is measured instead).
			bSizes, bSlows = append(bSizes, m.Bytes), append(bSlows, slow)
		}
		if record {
			r.Records = append(r.Records, metrics.FlowRecord{ID: i, Src: src, Dst: dst, ScaleUp: su,
				SrcRank: int(m.SrcRank), DstRank: int(m.DstRank), Bytes: m.Bytes, StartS: st.Seconds(),
				EndS: en.Seconds(), FCTS: fct, IdealS: ideal, Slowdown: slow, Done: true})
		}
	}
	if first < 0 {
		first = 0
	}
	if !r.Complete {
		last = t.Now
	}
	r.CCTS = (last - first).Seconds()
	// With iterations, CCT is the measured iterations' total time divided by
	// their number, as nccl-tests reports it (pipelined iterations overlap,
	// so this is less than the mean of their own spans, which
	// iteration_cct_s summarizes).
	if its, total := IterationTimes(pt, t); len(its) > 0 {
		r.IterationsS = its
		r.Iterations = len(its)
		r.IterCCT = metrics.Summarize(append([]float64(nil), its...))
		if r.Complete {
			r.CCTS = total / float64(len(its))
		}
	}
	if rates > 0 && rateSq > 0 {
		// Jain's index of the flows' rates (bytes / FCT): 1 when every
		// flow got the same rate, 1/n when one got everything.
		r.JainFlowRates = rateSum * rateSum / (float64(rates) * rateSq)
	}
	r.FCT = metrics.Summarize(fcts) // sorts fcts
	r.FCTCurveS = metrics.Curve(fcts, 200, record)
	if record || d.Ranks <= 128 {
		r.RankBWGBps = RankBandwidth(p, pt, t)
	}
	switch d.Collective {
	case metrics.Messages, metrics.Uniform, metrics.FlowList:
		w := scenario.JobWorkload(spec, pt.Index)
		r.SlowdownBySize = metrics.SlowdownBuckets(bSizes, bSlows, w.Buckets, w.BucketCount)
		if d.Collective == metrics.Messages {
			var sizes []int64
			var rtts []float64
			r.Load, sizes, rtts = messageLoad(p, pt, t, last)
			metrics.AttachRTT(r.SlowdownBySize, sizes, rtts)
		}
	}
	r.Slowdown = metrics.Summarize(slows) // sorts slows
	if explain != nil {
		r.Explain = explain.Explain(pt, slowByMsg)
	}
	r.RankDoneS = make([]float64, len(rankDone))
	for i, tm := range rankDone {
		r.RankDoneS[i] = tm.Seconds()
	}
	copies := float64(max(len(d.Iters), 1))
	r.IdealS = t.Bounds.Ideal(pt.Lo, pt.Hi).Seconds() / copies
	r.RoutedIdealS = r.IdealS
	if routed, ok := t.Bounds.RoutedIdeal(pt.Lo, pt.Hi); ok {
		// Paths follow from the 5-tuple alone: bound the busiest one.
		r.RoutedIdealS = routed.Seconds() / copies
	}
	r.CollectiveIdealS = CollectiveIdeal(pt, t.Bounds).Seconds()
	r.Finish(d.Collective)
	if (d.Collective == metrics.Uniform || d.Collective == metrics.Messages) && r.Complete && r.CCTS > 0 {
		r.AlgBWGBps = float64(delivered) / r.CCTS / 1e9 // aggregate throughput
	}
	if d.Collective == metrics.AnyToAny {
		anyToAny(p, pt, t, &r)
	}
	return r
}

// messageLoad is what a messages job offered and carried: payload per
// sending host over the arrival window, and over the run up to its last
// delivery, last (see metrics.MessageLoad).
// With RPCs it also returns each completed one's request size and round
// trip (for RTT by size).
func messageLoad(p *plan.Plan, pt plan.Part, t *Trace, last sim.Time) (ld *metrics.MessageLoad, rttSizes []int64, rtts []float64) {
	spec := p.Job.Spec
	dag := p.DAG
	w := scenario.JobWorkload(spec, pt.Index)
	ld = &metrics.MessageLoad{SizeDist: w.SizeDist, TargetLoad: w.Load, DurationS: w.Duration.Seconds(), Hosts: pt.DAG.Ranks}
	var payload, wire, done, late int64
	mtu, ovh := int64(spec.NIC.MTU), int64(spec.NIC.Overhead)
	complete := true
	half := w.Duration / 2
	for i := pt.Lo; i < pt.Hi; i++ {
		if dag.DepCount[i] > 0 {
			continue // a response: counted with its request
		}
		// A message, or a request and its response (offered at the
		// request's arrival: the fabric has to carry both).
		group := append([]int32{i}, dag.Successors(i)...)
		for _, j := range group {
			m := &dag.Msgs[j]
			ld.Messages++
			payload += m.Bytes
			if dag.Msgs[i].At-pt.Start >= half {
				late += m.Bytes
			}
			wire += workload.WireBytes(m.Bytes, mtu, ovh)
			if t.End[j] >= 0 {
				done += m.Bytes
			} else {
				complete = false
			}
		}
		if len(group) > 1 {
			ld.RPCs++
			if resp := group[1]; t.End[resp] >= 0 {
				rtts = append(rtts, (t.End[resp] - t.Start[i]).Seconds())
				rttSizes = append(rttSizes, dag.Msgs[i].Bytes)
			}
		}
	}
	if ld.Messages > 0 {
		ld.MeanBytes = float64(payload) / float64(ld.Messages)
	}
	if w.ResponseSize.RPC() {
		rtt := metrics.Summarize(append([]float64(nil), rtts...))
		ld.RTT = &rtt
	}
	hosts := float64(max(ld.Hosts, 1))
	if ld.DurationS > 0 {
		ld.OfferedGbps = float64(payload) * 8 / ld.DurationS / hosts / 1e9
		ld.OfferedLoad = float64(wire) * 8 / ld.DurationS / hosts / float64(spec.Topology.HostLink.Rate)
	}
	span := (last - pt.Start).Seconds()
	win := t.Window
	switch {
	case win[0] >= 0 && win[1] >= 0 && half > 0:
		// Steady state: what hosts received in the window's second half,
		// packet by packet, against what arrived in it (the first half
		// fills the network).
		ld.ThroughputGbps = float64(win[1]-win[0]) * 8 / half.Seconds() / hosts / 1e9
		ld.OfferedGbps = float64(late) * 8 / half.Seconds() / hosts / 1e9
	case span > 0:
		// Several jobs share the fabric: this job's completed messages
		// over its whole run.
		ld.ThroughputGbps = float64(done) * 8 / span / hosts / 1e9
	}
	ld.DrainS = max(span-ld.DurationS, 0)
	// Carried: all delivered, at the rate offered, without a backlog that
	// takes longer than the window itself to drain.
	ld.Carried = complete && ld.ThroughputGbps >= 0.9*ld.OfferedGbps && ld.DrainS <= ld.DurationS
	return ld, rttSizes, rtts
}

// IterationTimes is the span of every measured iteration of part pt that
// finished (first start to last delivery; nil when its DAG is a single
// copy) and the span of all of them together (consecutive iterations may
// overlap, as launches on one stream do).
func IterationTimes(pt plan.Part, t *Trace) (spans []float64, total float64) {
	measuredFirst, measuredLast := sim.Time(-1), sim.Time(-1)
	for _, it := range pt.DAG.Iters {
		if it.Index < 0 || len(pt.DAG.Iters) == 1 {
			continue
		}
		first, last := sim.Time(-1), sim.Time(-1)
		done := true
		for i := pt.Lo + it.Start; i < pt.Lo+it.End; i++ {
			st, en := t.Start[i], t.End[i]
			if st >= 0 && (first < 0 || st < first) {
				first = st
			}
			if en < 0 {
				done = false
				break
			}
			last = max(last, en)
		}
		if done && first >= 0 {
			spans = append(spans, (last - first).Seconds())
			if measuredFirst < 0 {
				measuredFirst = first
			}
			measuredLast = max(measuredLast, last)
		}
	}
	if measuredFirst >= 0 {
		total = (measuredLast - measuredFirst).Seconds()
	}
	return spans, total
}

// CollectiveIdeal is the algorithm-independent bound of a collective part:
// the time at which its bus bandwidth would equal the slowest
// participating NIC's rate (factor × S / rate). Traffic patterns have no
// such formula: their Ideal (per copy) is used.
func CollectiveIdeal(pt plan.Part, b Bounds) sim.Time {
	d := pt.DAG
	f := metrics.BusBWFactor(d.Collective, d.Ranks)
	if !isCollective(d.Collective) || f == 0 {
		return b.Ideal(pt.Lo, pt.Hi) / sim.Time(max(len(d.Iters), 1))
	}
	var rate units.Rate
	for _, h := range d.RankHost {
		if r := b.NICRate(h); rate == 0 || r < rate {
			rate = r
		}
	}
	bytes := units.Size(f * float64(d.Size))
	return units.SerializationTime(bytes, rate)
}

// isCollective reports whether c is one of the collective catalogue (the
// traffic patterns have no algorithm-independent bound).
func isCollective(c metrics.Collective) bool { return workload.Algorithms(string(c)) != nil }

// RankBandwidth is part pt's achieved bandwidth matrix between ranks.
func RankBandwidth(p *plan.Plan, pt plan.Part, t *Trace) [][]float64 {
	n := pt.DAG.Ranks
	bytes := make([]int64, n*n)
	first := make([]sim.Time, n*n)
	last := make([]sim.Time, n*n)
	for i := range first {
		first[i] = -1
	}
	for i := pt.Lo; i < pt.Hi; i++ {
		m := p.DAG.Msgs[i]
		warmup := pt.DAG.Iteration != nil && pt.DAG.Iteration[i-pt.Lo] < 0
		if m.Marker || warmup || t.End[i] < 0 || int(m.SrcRank) >= n || int(m.DstRank) >= n {
			continue
		}
		k := int(m.SrcRank)*n + int(m.DstRank)
		bytes[k] += m.Bytes
		if first[k] < 0 || t.Start[i] < first[k] {
			first[k] = t.Start[i]
		}
		last[k] = max(last[k], t.End[i])
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			k := i*n + j
			if span := (last[k] - first[k]).Seconds(); bytes[k] > 0 && span > 0 {
				out[i][j] = float64(bytes[k]) / span / 1e9
			}
		}
	}
	return out
}
