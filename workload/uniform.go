package workload

import (
	"fmt"

	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/units"
)

// UniformMessages is the expected number of messages of a uniform job:
// hosts × duration × load × rate / (8 × size).
func UniformMessages(hosts int, size int64, load float64, rate units.Rate, duration units.Duration) float64 {
	if size <= 0 {
		return 0
	}
	return float64(hosts) * duration.Seconds() * load * float64(rate) / (8 * float64(size))
}

// Uniform is background traffic: every host of hosts sends messages of size
// bytes to uniformly random other hosts of the list, with Poisson arrivals
// (exponential gaps) at load × rate of its link, from time 0 until duration.
// Messages have no dependencies, only start times; one connection per host
// pair. maxMsgs bounds the DAG (an error past it).
func Uniform(hosts []int, size int64, load float64, rate units.Rate, duration sim.Time, rng *sim.RNG, maxMsgs int) (*DAG, error) {
	n := len(hosts)
	if n < 2 {
		return nil, fmt.Errorf("uniform traffic needs at least 2 hosts, got %d", n)
	}
	if size <= 0 || load <= 0 || load > 1 || rate <= 0 || duration <= 0 {
		return nil, fmt.Errorf("uniform traffic needs size, load in (0, 1], rate and duration > 0")
	}
	d := &DAG{Collective: metrics.Uniform, Algorithm: "poisson", Ranks: n, Size: size, RankHost: append([]int(nil), hosts...)}
	want := min(PoissonReserve(UniformMessages(n, size, load, rate, duration)), int64(maxMsgs))
	d.Msgs = make([]Message, 0, want)
	d.DepCount = make([]int32, 0, want)
	// Mean gap between two messages of one host, in picoseconds.
	gap := float64(units.SerializationTime(units.Size(size), rate)) / load
	for i := 0; i < n; i++ {
		t := 0.0
		for {
			t += rng.ExpFloat64() * gap
			if t >= float64(duration) {
				break
			}
			j := rng.IntN(n - 1)
			if j >= i {
				j++
			}
			if len(d.Msgs) >= maxMsgs {
				return nil, fmt.Errorf("uniform traffic would send more than %d messages; shorten duration or use larger sizes", maxMsgs)
			}
			m := d.msg(i, j, size)
			m.At = sim.Time(t)
			d.Add(m)
		}
	}
	d.Finish()
	return d, nil
}
