package measure

import (
	"math"
	"sort"

	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
)

// anyToAny fills an any-to-any row: per endpoint pair what it completed
// within the duration and its rate against its full rate, the checkpoints,
// and the row's rates: aggregate throughput within the duration (algbw and
// busbw), the duration as the ideal time and the pairs' mean share of
// their full rate as % of ideal.
func anyToAny(p *plan.Plan, pt plan.Part, t *Trace, r *metrics.SizeResult) {
	d := pt.DAG
	w := scenario.JobWorkload(p.Job.Spec, pt.Index)
	dur := d.Until
	if dur <= 0 {
		return
	}
	dt := sim.Time(scenario.CheckpointInterval(w))
	k := int((dur + dt - 1) / dt)
	type key struct{ c, s int }
	index := map[key]int{}
	var pairs []key
	// The executor's clock: the job's time 0, which the cut at Until
	// counts from too (not the first write, which real hosts start a
	// little later).
	first := pt.Start
	type counts struct{ n, bytes int64 }
	cps := make([][]counts, k+1) // interval → pair
	var within []counts
	for i := pt.Lo; i < pt.Hi; i++ {
		m := &p.DAG.Msgs[i]
		c, _ := p.Layout.Host(m.Src)
		s, _ := p.Layout.Host(m.Dst)
		kk := key{c, s}
		j, ok := index[kk]
		if !ok {
			j = len(pairs)
			index[kk] = j
			pairs = append(pairs, kk)
			within = append(within, counts{})
			for x := range cps {
				cps[x] = append(cps[x], counts{})
			}
		}
		en := t.End[i]
		if en < 0 {
			continue
		}
		at := en - first
		// Interval x holds the completions in (x·dt, (x+1)·dt]; those after
		// the duration go to the last, partial one.
		x := k
		if at <= dur {
			x = min(max(int((at+dt-1)/dt)-1, 0), k-1)
			within[j].n++
			within[j].bytes += m.Bytes
		}
		cps[x][j].n++
		cps[x][j].bytes += m.Bytes
	}
	// Pairs in (client, server) order.
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		pa, pb := pairs[order[a]], pairs[order[b]]
		if pa.c != pb.c {
			return pa.c < pb.c
		}
		return pa.s < pb.s
	})
	clients, servers := map[int]bool{}, map[int]bool{}
	for _, pr := range pairs {
		clients[pr.c], servers[pr.s] = true, true
	}
	full := math.Inf(1)
	for _, pr := range pairs {
		cr := float64(t.Bounds.NICRate(pr.c)) / float64(max(len(servers), 1))
		sr := float64(t.Bounds.NICRate(pr.s)) / float64(max(len(clients), 1))
		full = math.Min(full, math.Min(cr, sr))
	}
	e := &metrics.Endpoints{Pairs: len(pairs), FullRateGbps: full / 1e9, MinGbps: math.Inf(1)}
	var sum, sumSq, total float64
	for _, j := range order {
		pr := pairs[j]
		gbps := float64(within[j].bytes) * 8 / dur.Seconds() / 1e9
		res := metrics.EndpointResult{Client: pr.c, Server: pr.s, Completions: within[j].n, Bytes: within[j].bytes, Gbps: gbps}
		if full > 0 && !math.IsInf(full, 1) {
			res.PctFull = 100 * gbps * 1e9 / full
		}
		e.PerPair = append(e.PerPair, res)
		e.MinGbps, e.MaxGbps = math.Min(e.MinGbps, gbps), math.Max(e.MaxGbps, gbps)
		sum += gbps
		sumSq += gbps * gbps
		total += float64(within[j].bytes)
	}
	if len(pairs) == 0 {
		e.MinGbps = 0
	} else {
		e.MeanGbps = sum / float64(len(pairs))
		if e.MinGbps > 0 {
			e.Spread = e.MaxGbps / e.MinGbps
		}
		if sumSq > 0 {
			e.Jain = sum * sum / (float64(len(pairs)) * sumSq)
		}
	}
	r.Endpoints = e
	for x := 0; x <= k; x++ {
		ts := (sim.Time(x+1) * dt).Seconds()
		if x == k {
			ts = (t.Now - first).Seconds()
		} else if x == k-1 {
			ts = dur.Seconds()
		}
		cp := metrics.Checkpoint{TS: ts}
		for _, j := range order {
			cp.Endpoints = append(cp.Endpoints, metrics.EndpointCount{Client: pairs[j].c, Server: pairs[j].s,
				Completions: cps[x][j].n, Bytes: cps[x][j].bytes})
		}
		r.Checkpoints = append(r.Checkpoints, cp)
	}
	if t.Done() && t.Cut == 0 && r.Error == "" {
		// Every chain ran to its end before the duration did: the pairs
		// completed more than the declared host rate allows (the chains
		// are sized from it), so the run says nothing about the rest of
		// the duration.
		r.Error = "the any-to-any writes ran out before the duration ended: the fabric carried more than topology.host_link.rate allows; declare the real rate"
	}
	r.IdealS = dur.Seconds()
	r.RoutedIdealS, r.CollectiveIdealS = r.IdealS, r.IdealS
	if r.Complete {
		r.AlgBWGBps = total / dur.Seconds() / 1e9
		r.BusBWGBps = r.AlgBWGBps
		if full > 0 && !math.IsInf(full, 1) {
			r.IdealPct = 100 * e.MeanGbps * 1e9 / full
			r.RoutedIdealPct, r.CollectiveIdealPct = r.IdealPct, r.IdealPct
		}
	}
}
