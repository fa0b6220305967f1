package workload

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fabriclab/sim"
)

// sdShared is shared/data/workloads seen from this package's directory.
const sdShared = "../../shared/data/workloads"

// sdFiles lists the data files of the shared folder (everything but the
// README), skipping the test when the folder is not there.
func sdFiles(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(sdShared)
	if err != nil {
		t.Skipf("shared workloads folder not found: %v", err)
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() && e.Name() != "README.md" {
			files = append(files, e.Name())
		}
	}
	if len(files) < 15 {
		t.Fatalf("expected the 15 shared CDF files, found %d: %v", len(files), files)
	}
	return files
}

func sdLoad(t testing.TB, name string) *SizeDist {
	t.Helper()
	d, err := LoadSizeDist(name, sdShared)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sdStratified is a rand.Source whose i-th Float64 falls in the i-th of n
// equal strata of [0,1) (jittered inside it): n draws then cover the CDF
// evenly, so the sample mean goes through the real Sample code but with
// almost none of the noise a heavy tail gives plain draws.
type sdStratified struct {
	i, n   uint64
	jitter *rand.PCG
}

func (s *sdStratified) Uint64() uint64 {
	v := float64(s.jitter.Uint64()>>11) / (1 << 53)
	u := (float64(s.i%s.n) + v) / float64(s.n)
	s.i++
	return uint64(u * (1 << 53)) // Rand.Float64 keeps the low 53 bits / 2^53
}

// sdMeanOf draws n samples and returns their mean and the standard error
// of that mean.
func sdMeanOf(d *SizeDist, rng *sim.RNG, n int) (mean, se float64) {
	var s, s2 float64
	for range n {
		v := float64(d.Sample(rng))
		s += v
		s2 += v * v
	}
	mean = s / float64(n)
	return mean, math.Sqrt(max(s2/float64(n)-mean*mean, 0) / float64(n))
}

// sdSecondMoment is E[X²] from the table (and W1's uncapped tail), for the
// standard error a plain 10^6-draw mean can be held to.
func sdSecondMoment(d *SizeDist) float64 {
	pts := d.Points()
	m2, prevX, prevF := 0.0, 0.0, 0.0
	for i, p := range pts {
		df := p.P - prevF
		if d.Linear() && i > 0 {
			m2 += (prevX*prevX + prevX*p.Bytes + p.Bytes*p.Bytes) / 3 * df
		} else {
			m2 += p.Bytes * p.Bytes * df
		}
		prevX, prevF = p.Bytes, p.P
	}
	if t := d.Tail(); t != nil {
		k, s := t.Shape, t.Scale
		eg, eg2 := s/(1-k), 2*s*s/((1-k)*(1-2*k))
		m2 += (1 - prevF) * (prevX*prevX + 2*prevX*eg + eg2)
	}
	return m2
}

// TestSizeDistMeanOverAMillionDraws is issue 6's must-hold: every shared
// file and every short name, sampled 10^6 times with a fixed seed, gives a
// mean within 2% of the distribution's analytic mean (Mean; for W1 that
// includes the Pareto tail, 15 + E[min(G, 2^30−15)] on 53% of draws; the
// tail has k < ½, so a finite variance, and W1 meets 2% easily).
//
// Four tables are too heavy-tailed for 2% to be a fair bound on plain
// draws. Their standard error of the mean at 10^6 draws, from the table's
// own second moment, is W3 (Google_AllRPC and GoogleRPC2008) 2.2%, W2
// 1.7%, datamining.csv 0.96% and VL2 0.68%: a few rare huge messages (up
// to 15 MB against a 2.9 KB mean for W3) carry much of the mean, the sample
// mean is skewed low, and seed 1 really does give −6.3% on W3 and −3.8% on
// W2. Rather than hunt for a lucky seed, the plain check allows
// max(2%, 4 standard errors), which is 2% for every other table, and a
// second check feeds the same Sample code 10^6 stratified uniforms (one
// per 10^-6 slice of [0,1)); that removes the sampling noise and holds
// every table, heavy or not, to 0.5%.
func TestSizeDistMeanOverAMillionDraws(t *testing.T) {
	names := append(sdFiles(t), SizeDistNames()...)
	const n = 1_000_000
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := sdLoad(t, name)
			se := math.Sqrt((sdSecondMoment(d)-d.Mean()*d.Mean())/n) / d.Mean()
			tol := max(0.02, 4*se)
			m, _ := sdMeanOf(d, sim.NewRNG(1, "sizedist-mean"), n)
			errPlain := (m - d.Mean()) / d.Mean()
			strat := &sim.RNG{Rand: rand.New(&sdStratified{n: n, jitter: rand.NewPCG(1, 2)})}
			ms, _ := sdMeanOf(d, strat, n)
			errStrat := (ms - d.Mean()) / d.Mean()
			t.Logf("%-45s mean %12.1f B  plain %+6.3f%% (SE %.3f%%, tolerance %.1f%%)  stratified %+7.4f%%",
				name, d.Mean(), 100*errPlain, 100*se, 100*tol, 100*errStrat)
			if math.Abs(errPlain) > tol {
				t.Errorf("%s: empirical mean %.1f is %.2f%% from the analytic %.1f", name, m, 100*errPlain, d.Mean())
			}
			if math.Abs(errStrat) > 0.005 {
				t.Errorf("%s: stratified mean %.1f is %.3f%% from the analytic %.1f", name, ms, 100*errStrat, d.Mean())
			}
		})
	}
}

// The analytic means agree with the README's numbers (the authors' header
// line for step files, the trapezoid for interpolated ones).
func TestSizeDistAnalyticMeansMatchTheReadme(t *testing.T) {
	sdFiles(t)
	cases := []struct {
		file string
		mean float64
		tol  float64 // relative
	}{
		{"FacebookKeyValueMsgSizeDist.txt", 185.1, 0.001}, // README: tail included ≈ 185.1
		{"FacebookKeyValue_Sampled.txt", 187.51, 0.0001},  // the header says 187.77, see below
		{"Google_SearchRPC.txt", 440.79, 0.0001},
		{"Google_AllRPC.txt", 2927.35, 0.0001},
		{"Facebook_HadoopDist_All.txt", 127796.6, 0.0001},
		{"DCTCP_MsgSizeDist.txt", 1744.70 * 1442, 0.0001},
		{"DCTCP_MsgSizeDist_Original.txt", 1622.94 * 1442, 0.0001},
		{"Facebook_WebServerDist_IntraCluster.txt", 62874.27, 0.0001},
		{"Facebook_CacheFollowerDist_IntraCluster.txt", 692975.6, 0.0001},
		{"WebSearch_distribution.txt", 1711250, 0.0001},
		{"FbHdp_distribution.txt", 120421, 0.0001},
		{"AliStorage2019.txt", 40870, 0.0001},
		{"GoogleRPC2008.txt", 2892, 0.0002},
		{"VL2_CDF.txt", 12658199, 0.0001},
		{"datamining.csv", 5036535, 0.0001},
	}
	for _, c := range cases {
		d := sdLoad(t, c.file)
		if e := math.Abs(d.Mean()-c.mean) / c.mean; e > c.tol {
			t.Errorf("%s: mean %.2f, README %.2f", c.file, d.Mean(), c.mean)
		}
		h, ok := d.HeaderMean()
		if ok != !d.Linear() {
			t.Errorf("%s: header present %v but linear %v", c.file, ok, d.Linear())
		}
		// Step tables reproduce their authors' mean line, except the two W1
		// files: the tail file's line (185.0) rounds the tail, and the
		// sampled table's line (187.77) is 0.14% above its own rows' mean
		// (187.51), presumably the mean before it was cut at 100 KB.
		if ok && !strings.HasPrefix(c.file, "FacebookKeyValue") {
			if e := math.Abs(d.Mean()-h) / h; e > 1e-5 {
				t.Errorf("%s: mean %.3f but header %.3f", c.file, d.Mean(), h)
			}
		}
	}
	// RAMCloud and HomaModule count W5's packets as 1470 B: the README's
	// 2,564,709 B.
	d, err := LoadSizeDistOpts("w5", sdShared, LoadOptions{PacketPayload: 1470})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.Mean()-2564709) > 10 { // 1744.70 on the header line is rounded
		t.Errorf("w5 at 1470 B/packet: mean %.1f, want 2564709", d.Mean())
	}
}

func TestSizeDistQuantiles(t *testing.T) {
	sdFiles(t)
	// The README's step-sampling percentiles.
	cases := []struct {
		name          string
		p50, p90, p99 float64
	}{
		{"w1-sampled", 27, 503, 1876},
		{"w2", 269, 512, 3151},
		{"w3", 268, 1755, 31013},
		{"w4", 662, 120373, 3430822},
		{"w5", 49 * 1442, 3333 * 1442, 18667 * 1442},
	}
	for _, c := range cases {
		d := sdLoad(t, c.name)
		for _, q := range []struct{ p, want float64 }{{0.5, c.p50}, {0.9, c.p90}, {0.99, c.p99}} {
			if got := d.Quantile(q.p); got != q.want {
				t.Errorf("%s: Quantile(%g) = %g, want %g", c.name, q.p, got, q.want)
			}
		}
	}

	// Step: the first size whose F is at least p; a zero-mass row never.
	step, err := ParseSizeDist("step", strings.NewReader("2\n1 0\n1.5 0.5\n3 1\n"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ p, want float64 }{{0, 1.5}, {0.25, 1.5}, {0.5, 1.5}, {0.5000001, 3}, {1, 3}} {
		if got := step.Quantile(q.p); got != q.want {
			t.Errorf("step: Quantile(%g) = %g, want %g", q.p, got, q.want)
		}
	}
	if step.Mean() != 2.25 || step.CDF(2) != 0.5 || step.CDF(0.5) != 0 || step.CDF(3) != 1 {
		t.Errorf("step: mean %g, CDF(2) %g, CDF(0.5) %g, CDF(3) %g", step.Mean(), step.CDF(2), step.CDF(0.5), step.CDF(3))
	}
	if step.Min() != 2 || step.Max() != 3 { // 1.5 rounds to 2
		t.Errorf("step: min %d max %d", step.Min(), step.Max())
	}

	// Linear, in percent, with an atom at the first row.
	lin, err := ParseSizeDist("lin", strings.NewReader("100 20\n200 60\n1000 100\n"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ p, want float64 }{{0.1, 100}, {0.2, 100}, {0.4, 150}, {0.8, 600}, {1, 1000}} {
		if got := lin.Quantile(q.p); math.Abs(got-q.want) > 1e-9 {
			t.Errorf("lin: Quantile(%g) = %g, want %g", q.p, got, q.want)
		}
	}
	if want := 100*0.2 + 150*0.4 + 600*0.4; math.Abs(lin.Mean()-want) > 1e-9 {
		t.Errorf("lin: mean %g, want %g", lin.Mean(), want)
	}
	if got := lin.CDF(600); math.Abs(got-0.8) > 1e-12 {
		t.Errorf("lin: CDF(600) = %g", got)
	}

	// W1's tail: HomaSimulation's formula, the cap, and CDF inverting Quantile.
	w1 := sdLoad(t, "w1")
	k, s := W1Tail.Shape, W1Tail.Scale
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999999} {
		want := 15 + (math.Pow(0.53/(1-p), k)-1)*s/k
		if got := w1.Quantile(p); math.Abs(got-want) > 1e-6*want {
			t.Errorf("w1: Quantile(%g) = %g, want %g", p, got, want)
		}
	}
	if w1.Quantile(0.47) != 15 || w1.Max() != 1<<30 || w1.Min() != 1 {
		t.Errorf("w1: Quantile(0.47) %g, min %d, max %d", w1.Quantile(0.47), w1.Min(), w1.Max())
	}
	for _, name := range []string{"w1", "w4", "websearch", "datamining"} {
		d := sdLoad(t, name)
		prev := 0.0
		for p := 0.01; p < 1; p += 0.01 {
			x := d.Quantile(p)
			if x < prev {
				t.Errorf("%s: quantile decreases at %g", name, p)
			}
			prev = x
			if c := d.CDF(x); c < p-1e-9 {
				t.Errorf("%s: CDF(Quantile(%g)) = %g", name, p, c)
			}
		}
	}
}

func TestSizeDistIsDeterministic(t *testing.T) {
	sdFiles(t)
	d := sdLoad(t, "w4")
	draw := func(seed uint64) []int64 {
		r := sim.NewRNG(seed, "sizes")
		v := make([]int64, 1000)
		for i := range v {
			v[i] = d.Sample(r)
		}
		return v
	}
	a, b, c := draw(7), draw(7), draw(8)
	if !slices.Equal(a, b) {
		t.Error("same seed, different sizes")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same sizes")
	}
	for _, v := range a {
		if v < d.Min() || v > d.Max() {
			t.Errorf("sample %d outside [%d, %d]", v, d.Min(), d.Max())
		}
	}
}

func TestParseSizeDistErrors(t *testing.T) {
	tail := W1Tail
	cases := []struct {
		in   string
		tail bool
		want string
	}{
		{"", false, "t.txt: empty: no CDF rows"},
		{"# only a comment\n\n", false, "t.txt: empty: no CDF rows"},
		{"185.0\n", false, "t.txt:1: no CDF rows after the mean line"},
		{"abc\n", false, `t.txt:1: mean line: "abc" is not a number`},
		{"-3\n1 1\n", false, "t.txt:1: mean -3 is negative"},
		{"1 2 3\n", false, `t.txt:1: want "size probability" or a single mean on the first line, got 3 fields`},
		{"10\n1 0.5\n2\n", false, `t.txt:3: want "size probability", got 1 field`},
		{"0 0\n10 x\n", false, `t.txt:2: probability: "x" is not a number`},
		{"0 0\nNaN 1\n", false, `t.txt:2: size: "NaN" is not a finite number`},
		{"0 0\n1e999 1\n", false, `t.txt:2: size: "1e999" is out of range`},
		{"0 0\n-5 1\n", false, "t.txt:2: size -5 is negative"},
		{"0 0\n5 -0.1\n", false, "t.txt:2: probability -0.1 is negative"},
		{"0 0\n10 0.5\n5 1\n", false, "t.txt:3: size 5 is below the previous row's 10 (sizes must not decrease)"},
		{"0 0\n10 0.5\n20 0.4\n30 1\n", false, "t.txt:3: probability 0.4 is below the previous row's 0.5 (the CDF must not decrease)"},
		{"10\n1 0.5\n2 1.5\n", false, "t.txt:3: probability 1.5 is outside [0,1]"},
		{"0 0\n10 150\n", false, "t.txt:2: probability 150 is outside [0,1] (or [0,100] in a percent file)"},
		{"0 0\n10 1.5\n20 50\n", false, "t.txt:3: the CDF ends at 50; the last probability must be 1 (or 100 in a percent file)"},
		{"0 0\n10 0.5\n20 0.9\n", false, "t.txt:3: the CDF ends at 0.9; the last probability must be 1 (or 100 in a percent file)"},
		{"10\n1 0.5\n2 0.9\n", false, "t.txt:3: the CDF ends at 0.9; the last probability must be 1"},
		{"0 0\n1e16 1\n", false, "t.txt:2: size 1e16 is more than 2^50 bytes"},
		{"10\n1 0.5\n2 1\n", true, "t.txt:3: the table already reaches F = 1, there is no mass left for the Pareto tail"},
		{"0 0\n1 0.5\n", true, "t.txt: a Pareto tail needs a step table (mean line first)"},
		{"0 0\n" + strings.Repeat("9", 70000) + " 1\n", false, `t.txt:2: size: "9999999999999999"… is out of range`},
		{"0 0\n" + strings.Repeat("9", 2<<20) + " 1\n", false, "t.txt:2: line longer than 1 MiB"},
	}
	for _, c := range cases {
		var o ParseOptions
		if c.tail {
			o.Tail = &tail
		}
		_, err := ParseSizeDist("t.txt", strings.NewReader(c.in), o)
		if err == nil {
			t.Errorf("%q: no error, want %q", c.in, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %q\nwant %q", c.in, err, c.want)
		}
	}
	if _, err := ParseSizeDist("t.txt", strings.NewReader("0 0\n1 1\n"), ParseOptions{Unit: -1}); err == nil {
		t.Error("negative unit accepted")
	}
}

func TestLoadSizeDistResolves(t *testing.T) {
	files := sdFiles(t)
	byName := sdLoad(t, "W4") // short names ignore case
	byFile := sdLoad(t, "Facebook_HadoopDist_All.txt")
	byPath := sdLoad(t, filepath.Join(sdShared, "Facebook_HadoopDist_All.txt"))
	if byName.Mean() != byFile.Mean() || byFile.Mean() != byPath.Mean() || byName.Name() != "w4" {
		t.Errorf("w4 by name %g (%s), by file %g, by path %g", byName.Mean(), byName.Name(), byFile.Mean(), byPath.Mean())
	}
	for _, n := range SizeDistNames() {
		if f := SizeDistFile(n); !strings.Contains(strings.Join(files, "\n"), f) {
			t.Errorf("short name %s maps to %q, not a shared file", n, f)
		}
	}
	if _, err := LoadSizeDist("w9", sdShared); err == nil || !strings.Contains(err.Error(), "not a short name") {
		t.Errorf("unknown name: %v", err)
	}
	// A user copy of the W5 file elsewhere is still read in packets.
	dir := t.TempDir()
	src, _ := os.ReadFile(filepath.Join(sdShared, "DCTCP_MsgSizeDist.txt"))
	p := filepath.Join(dir, "DCTCP_MsgSizeDist.txt")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := sdLoad(t, p); math.Abs(d.Mean()-sdLoad(t, "w5").Mean()) > 1e-6 {
		t.Errorf("copied W5 mean %g", d.Mean())
	}
}

// MeanPackets is exact for the rounded samples: check it by hand on small
// tables and against stratified draws on every shared file.
func TestSizeDistMeanPackets(t *testing.T) {
	step, _ := ParseSizeDist("s", strings.NewReader("0\n1000 0.5\n3000 1\n"), ParseOptions{})
	if got := step.MeanPackets(1442); got != 2 {
		t.Errorf("step: %g packets, want 2", got)
	}
	// Uniform on [0, 2M]: 1 packet below M + ½ (rounding), 2 above.
	const M = 1442
	lin, _ := ParseSizeDist("l", strings.NewReader("0 0\n2884 1\n"), ParseOptions{})
	if got, want := lin.MeanPackets(M), (3*M-0.5)/(2*M); math.Abs(got-want) > 1e-12 {
		t.Errorf("linear: %g packets, want %g", got, want)
	}
	// W1's tail sum, shortened by Euler–Maclaurin, against every term.
	w1 := sdLoad(t, "w1")
	for _, pl := range []float64{1442, 4096} {
		brute := 1.0
		for j := 1.0; j*pl+0.5 <= W1Tail.Cap; j++ {
			brute += W1Tail.survival(j*pl + 0.5 - 15)
		}
		if got := W1Tail.meanPackets(15, pl); math.Abs(got-brute) > 1e-9 {
			t.Errorf("w1 tail at %g B: %.12f packets, term by term %.12f", pl, got, brute)
		}
	}
	rng := &sim.RNG{Rand: rand.New(&sdStratified{n: 1_000_000, jitter: rand.NewPCG(5, 6)})}
	var small float64
	for range 1_000_000 {
		small += float64((w1.Sample(rng) + 63) / 64)
	}
	if got, want := small/1e6, w1.MeanPackets(64); math.Abs(got/want-1) > 0.003 {
		t.Errorf("w1 at 64 B/packet: %g packets drawn, MeanPackets says %g", got, want)
	}
	const n = 1_000_000
	for _, name := range append(sdFiles(t), "w1") {
		d := sdLoad(t, name)
		rng := &sim.RNG{Rand: rand.New(&sdStratified{n: n, jitter: rand.NewPCG(3, 4)})}
		var s float64
		for range n {
			s += float64(max(1, (d.Sample(rng)+M-1)/M))
		}
		if got, want := s/n, d.MeanPackets(M); math.Abs(got-want)/want > 0.003 {
			t.Errorf("%s: %g packets per message drawn, MeanPackets says %g", name, got, want)
		}
	}
}

// FuzzParseSizeDist: no input panics, and whatever parses is a proper
// distribution (finite mean, monotone quantiles, samples inside [Min, Max]).
func FuzzParseSizeDist(f *testing.F) {
	if ents, err := os.ReadDir(sdShared); err == nil {
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(sdShared, e.Name())); err == nil && e.Name() != "README.md" {
				f.Add(b, strings.HasPrefix(e.Name(), "FacebookKeyValueMsg"))
			}
		}
	}
	f.Add([]byte("2\n1 0\n1.5 0.5\n3 1\n"), false)
	f.Add([]byte("100,20\r\n200,60\r\n1000,100\r\n"), false)
	f.Add([]byte("0 0\n10 0.5\n5 1\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, tail bool) {
		var o ParseOptions
		if tail {
			tl := W1Tail
			o.Tail = &tl
		}
		d, err := ParseSizeDist("fuzz", bytes.NewReader(data), o)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error not one line starting with the name: %q", err)
			}
			return
		}
		if m := d.Mean(); math.IsNaN(m) || math.IsInf(m, 0) || m < 0 {
			t.Fatalf("mean %g", m)
		}
		if d.Min() > d.Max() || d.Min() < 1 {
			t.Fatalf("min %d max %d", d.Min(), d.Max())
		}
		prev := math.Inf(-1)
		for p := 0.0; p <= 1; p += 1.0 / 64 {
			q := d.Quantile(p)
			if math.IsNaN(q) || q < prev {
				t.Fatalf("Quantile(%g) = %g after %g", p, q, prev)
			}
			prev = q
		}
		rng := sim.NewRNG(1, "fuzz")
		for range 64 {
			if v := d.Sample(rng); v < d.Min() || v > d.Max() {
				t.Fatalf("sample %d outside [%d, %d]", v, d.Min(), d.Max())
			}
		}
		if pk := d.MeanPackets(1500); math.IsNaN(pk) || pk < 1-1e-9 {
			t.Fatalf("mean packets %g", pk)
		}
	})
}
