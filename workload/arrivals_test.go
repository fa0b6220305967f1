package workload

import (
	"math"
	"slices"
	"strings"
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

// arrSpec is a Poisson spec on the shared distribution name whose duration
// gives about msgs messages in all.
func arrSpec(t *testing.T, dist string, hosts, msgs int) PoissonSpec {
	t.Helper()
	s := PoissonSpec{Hosts: hosts, Load: 0.8, Rate: 10 * units.Gbps, Payload: 1442, Header: 58,
		Sizes: sdLoad(t, dist), Seed: 42}
	s.Duration = sim.Time(float64(msgs) / float64(hosts) / s.PoissonRate() * 1e12)
	return s
}

// The offered wire load, headers included, is the target. The windows are
// long enough (4×10^5 messages) that the load's standard error stays under
// 0.5% for these tables: sqrt(1 + cv²)/sqrt(n) with size cv ≤ 2.6.
// W1 is where headers matter most: 1.02 packets of 58 B on a 185 B mean
// is 24% of the wire bytes.
func TestPoissonOfferedLoadIsTheTarget(t *testing.T) {
	sdFiles(t)
	for _, dist := range []string{"w1", "w5", "websearch"} {
		s := arrSpec(t, dist, 16, 400_000)
		msgs, err := Poisson(s)
		if err != nil {
			t.Fatal(err)
		}
		var wire float64
		for _, m := range msgs {
			wire += float64(WireBytes(m.Bytes, s.Payload, s.Header))
		}
		load := wire * 8 / (float64(s.Hosts) * s.Duration.Seconds() * float64(s.Rate))
		t.Logf("%-10s %d messages, offered load %.4f (target %.2f, %+.2f%%)", dist, len(msgs), load, s.Load, 100*(load/s.Load-1))
		if math.Abs(load/s.Load-1) > 0.02 {
			t.Errorf("%s: offered load %.4f, want %.2f within 2%%", dist, load, s.Load)
		}
	}
}

// Each host's gaps are exponential with mean 1/λ: mean, coefficient of
// variation 1, and P(gap > mean) = 1/e.
func TestPoissonGapsAreExponential(t *testing.T) {
	sdFiles(t)
	s := arrSpec(t, "w4", 8, 400_000)
	msgs, err := Poisson(s)
	if err != nil {
		t.Fatal(err)
	}
	last := make([]sim.Time, s.Hosts)
	var gaps []float64
	for _, m := range msgs {
		gaps = append(gaps, float64(m.Time-last[m.Src]))
		last[m.Src] = m.Time
	}
	var sum, sum2 float64
	for _, g := range gaps {
		sum += g
		sum2 += g * g
	}
	n := float64(len(gaps))
	mean := sum / n
	cv := math.Sqrt(sum2/n-mean*mean) / mean
	want := 1e12 / s.PoissonRate()
	above := 0
	for _, g := range gaps {
		if g > want {
			above++
		}
	}
	t.Logf("%d gaps: mean %.0f ps (want %.0f), cv %.4f, P(gap > 1/λ) %.4f", len(gaps), mean, want, cv, float64(above)/n)
	if math.Abs(mean/want-1) > 0.01 {
		t.Errorf("mean gap %.0f ps, want %.0f", mean, want)
	}
	if math.Abs(cv-1) > 0.02 {
		t.Errorf("gap cv %.4f, want 1", cv)
	}
	if math.Abs(float64(above)/n-math.Exp(-1)) > 0.005 {
		t.Errorf("P(gap > mean) = %.4f, want %.4f", float64(above)/n, math.Exp(-1))
	}
}

func TestPoissonDestinationsAndOrder(t *testing.T) {
	sdFiles(t)
	s := arrSpec(t, "w2", 5, 100_000)
	msgs, err := Poisson(s)
	if err != nil {
		t.Fatal(err)
	}
	count := make([][]int, s.Hosts)
	for i := range count {
		count[i] = make([]int, s.Hosts)
	}
	for i, m := range msgs {
		if m.Dst == m.Src || m.Dst < 0 || m.Dst >= s.Hosts {
			t.Fatalf("message %d: %d → %d", i, m.Src, m.Dst)
		}
		if i > 0 && (m.Time < msgs[i-1].Time || m.Time == msgs[i-1].Time && m.Src < msgs[i-1].Src) {
			t.Fatalf("message %d out of order", i)
		}
		if m.Time < 0 || m.Time >= s.Duration || m.Bytes < 1 {
			t.Fatalf("message %d: %+v", i, m)
		}
		count[m.Src][m.Dst]++
	}
	// Uniform over the 4 other hosts: each pair gets a quarter of a host's
	// ~20000 messages (standard error under 1%).
	for i := range count {
		total := 0
		for _, c := range count[i] {
			total += c
		}
		for j, c := range count[i] {
			if i != j && math.Abs(float64(c)/float64(total)-0.25) > 0.02 {
				t.Errorf("host %d sends %d of %d to %d", i, c, total, j)
			}
		}
	}

	// A fixed pattern is followed, and a pattern that sends a host to itself
	// is refused.
	s = arrSpec(t, "w2", 4, 1000)
	perm := []int{2, 3, 1, 0}
	s.Dest = PermutationDest(perm)
	msgs, err = Poisson(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Dst != perm[m.Src] {
			t.Fatalf("%d → %d, pattern says %d", m.Src, m.Dst, perm[m.Src])
		}
	}
	s.Dest = PermutationDest([]int{1, 1, 3, 2})
	if _, err := Poisson(s); err == nil || !strings.Contains(err.Error(), "sent host 1 to 1") {
		t.Errorf("self-destination: %v", err)
	}
}

func TestPoissonIsDeterministic(t *testing.T) {
	sdFiles(t)
	s := arrSpec(t, "w5", 16, 20_000)
	a, _ := Poisson(s)
	b, _ := Poisson(s)
	if !slices.Equal(a, b) {
		t.Error("same spec, different arrivals")
	}
	s.Seed++
	if c, _ := Poisson(s); slices.Equal(a, c) {
		t.Error("different seeds, same arrivals")
	}
	s.Seed--
	// A count is the same stream cut earlier.
	s.Count = 1234
	c, err := Poisson(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 1234 || !slices.Equal(c, a[:1234]) {
		t.Errorf("count mode gave %d messages, not the first 1234 of the duration run", len(c))
	}
	s.Duration = 0
	if d, _ := Poisson(s); !slices.Equal(c, d) {
		t.Error("count without duration differs")
	}
}

func TestPoissonSpecErrors(t *testing.T) {
	sdFiles(t)
	good := arrSpec(t, "w1", 4, 1000)
	cases := []struct {
		edit func(*PoissonSpec)
		want string
	}{
		{func(s *PoissonSpec) { s.Hosts = 1 }, "at least 2 hosts"},
		{func(s *PoissonSpec) { s.Load = 0 }, "load > 0"},
		{func(s *PoissonSpec) { s.Load = math.NaN() }, "load > 0"},
		{func(s *PoissonSpec) { s.Rate = 0 }, "link rate"},
		{func(s *PoissonSpec) { s.Payload = 0 }, "payload > 0"},
		{func(s *PoissonSpec) { s.Header = -1 }, "header ≥ 0"},
		{func(s *PoissonSpec) { s.Sizes = nil }, "size distribution"},
		{func(s *PoissonSpec) { s.Duration = 0 }, "duration or a message count"},
		{func(s *PoissonSpec) { s.Count = -1 }, "negative"},
		{func(s *PoissonSpec) { s.Limit = 100 }, "more than the limit 100"},
		{func(s *PoissonSpec) { s.Duration, s.Count, s.Limit = 0, 101, 100 }, "more than the limit 100"},
	}
	for i, c := range cases {
		s := good
		c.edit(&s)
		if _, err := Poisson(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: %v, want %q", i, err, c.want)
		}
	}
	if _, err := Poisson(good); err != nil {
		t.Errorf("good spec: %v", err)
	}
}

func TestWireBytes(t *testing.T) {
	for _, c := range []struct{ b, want int64 }{{1, 59}, {1442, 1500}, {1443, 1443 + 116}, {2884, 2884 + 116}} {
		if got := WireBytes(c.b, 1442, 58); got != c.want {
			t.Errorf("WireBytes(%d) = %d, want %d", c.b, got, c.want)
		}
	}
}
