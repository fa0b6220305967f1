package lab

import (
	"math"
	"sort"

	"fabriclab/workload"
)

// fluidCCT evaluates the α–β model on a DAG when sends overlap: every
// message moves its wire bytes as a fluid flow whose rate is the max-min
// fair share of its sender's egress and its receiver's ingress (each at the
// NIC rate), then arrives α later (the last packet's store-and-forward and
// the links' propagation, as in T(b)). A message starts when its
// dependencies have arrived and the messages posted before it on the same
// queue pair (same source, destination and channel) have been sent: a QP
// sends its messages in order. For algorithms whose steps do not overlap this
// is exactly the sum of T(b) over the steps; for pipelined ones (the double
// binary tree) it is the same cost model with the sharing worked out, the
// sharing an ideal transport gives (see closedFabric).
func fluidCCT(ab alphaBeta, d *workload.DAG) float64 {
	n := len(d.Msgs)
	rate := float64(ab.rate) / 8 // bytes per second
	remaining := make([]float64, n)
	deps := append([]int32(nil), d.DepCount...)
	type arrival struct {
		at float64
		i  int32
	}
	var (
		now      float64
		active   []int32
		arrivals []arrival
		cct      float64
	)
	var start func(i int32)
	finish := func(i int32, at float64) {
		cct = math.Max(cct, at)
		for _, j := range d.Successors(i) {
			deps[j]--
			if deps[j] == 0 {
				start(j)
			}
		}
	}
	type qpKey struct{ src, dst, ch int32 }
	queued := map[qpKey][]int32{} // per QP: the message sending, then those waiting
	start = func(i int32) {
		m := d.Msgs[i]
		if m.Marker {
			finish(i, now)
			return
		}
		w, _ := ab.wire(m.Bytes)
		remaining[i] = float64(w)
		k := qpKey{m.Src, m.Dst, m.Channel}
		queued[k] = append(queued[k], i)
		if len(queued[k]) == 1 {
			active = append(active, i)
		}
	}
	for i := range d.Msgs {
		if deps[i] == 0 {
			start(int32(i))
		}
	}
	for len(active) > 0 || len(arrivals) > 0 {
		// Max-min fair rates by progressive filling over egress/ingress.
		rates := maxMin(d, active, rate)
		next := math.Inf(1)
		for k, i := range active {
			next = math.Min(next, remaining[i]/rates[k])
		}
		sort.Slice(arrivals, func(a, b int) bool { return arrivals[a].at < arrivals[b].at })
		if len(arrivals) > 0 && arrivals[0].at-now <= next {
			a := arrivals[0]
			arrivals = arrivals[1:]
			dt := a.at - now
			for k, i := range active {
				remaining[i] -= rates[k] * dt
			}
			now = a.at
			finish(a.i, now)
			continue
		}
		now += next
		var successors []int32 // the next message of each QP that finished sending
		kept := active[:0]
		for k, i := range active {
			remaining[i] -= rates[k] * next
			if remaining[i] <= 1e-6 {
				m := d.Msgs[i]
				arrivals = append(arrivals, arrival{now + ab.T(m.Bytes) - ab.W(m.Bytes), i})
				k := qpKey{m.Src, m.Dst, m.Channel}
				if q := queued[k][1:]; len(q) > 0 {
					queued[k] = q
					successors = append(successors, q[0])
				} else {
					delete(queued, k)
				}
			} else {
				kept = append(kept, i)
			}
		}
		active = append(kept, successors...)
	}
	return cct
}

// maxMin gives each active message its max-min fair rate when every host
// can send and receive at most capacity.
func maxMin(d *workload.DAG, active []int32, capacity float64) []float64 {
	rates := make([]float64, len(active))
	frozen := make([]bool, len(active))
	type res struct{ host, dir int32 }
	left := map[res]float64{}
	users := map[res][]int{}
	for k, i := range active {
		m := d.Msgs[i]
		for _, r := range []res{{m.Src, 0}, {m.Dst, 1}} {
			if _, ok := left[r]; !ok {
				left[r] = capacity
			}
			users[r] = append(users[r], k)
		}
	}
	for {
		// The tightest resource among those with unfrozen users.
		best, share := res{}, math.Inf(1)
		for r, us := range users {
			cnt := 0
			for _, k := range us {
				if !frozen[k] {
					cnt++
				}
			}
			if cnt > 0 {
				if s := left[r] / float64(cnt); s < share || (s == share && (r.host < best.host || r.host == best.host && r.dir < best.dir)) {
					best, share = r, s
				}
			}
		}
		if math.IsInf(share, 1) {
			return rates
		}
		for _, k := range users[best] {
			if frozen[k] {
				continue
			}
			frozen[k] = true
			rates[k] = share
			m := d.Msgs[active[k]]
			for _, r := range []res{{m.Src, 0}, {m.Dst, 1}} {
				left[r] -= share
			}
		}
	}
}
