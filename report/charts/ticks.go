package charts

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// Log2Ticks marks powers of two on a log-scaled axis of byte sizes, labelled
// as the command line writes sizes (1KiB, 2MiB, 4GiB; SizeLabel). At most about eight are labelled; the
// powers in between get unlabelled minor ticks. With Sizes (up to ten), the
// labels go on those sizes instead: the sizes measured.
type Log2Ticks struct {
	Sizes []float64
}

var _ plot.Ticker = Log2Ticks{}

// Ticks implements plot.Ticker.
func (l Log2Ticks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 {
		min = 1
	}
	if max < min {
		max = min
	}
	lo := int(math.Floor(math.Log2(min)))
	hi := int(math.Ceil(math.Log2(max)))
	step := 1
	for (hi-lo)/step > 8 {
		step++
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		v := math.Ldexp(1, e)
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		t := plot.Tick{Value: v}
		if len(l.Sizes) > 0 && len(l.Sizes) <= 10 {
			if slices.Contains(l.Sizes, v) {
				t.Label = SizeLabel(int64(v))
			}
		} else if (e-lo)%step == 0 {
			t.Label = SizeLabel(int64(v))
		}
		ts = append(ts, t)
	}
	if len(l.Sizes) > 0 && len(l.Sizes) <= 10 { // sizes that are not powers of two
		for _, v := range l.Sizes {
			if v != math.Ldexp(1, int(math.Round(math.Log2(v)))) {
				ts = append(ts, plot.Tick{Value: v, Label: SizeLabel(int64(v))})
			}
		}
	}
	if len(ts) == 0 { // a single size between two powers of two
		ts = append(ts, plot.Tick{Value: min, Label: SizeLabel(int64(min))})
	}
	return ts
}

// intTicks marks whole numbers (ranks), at most about ten labelled.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	span := hi - lo
	step := 1.0
	for _, s := range []float64{1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256, 512, 1024} {
		step = s
		if span/s <= 10 {
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v+0, 'f', 0, 64)}) // +0: no "-0"
	}
	return ts
}

// countTicks marks counts (pauses, marks) at 1, 2 or 5 × 10^k steps, about
// five labelled, written short: 0, 500, 1K, 1.5K, 2M.
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: CountLabel(min)}}
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	if step < 1 {
		step = 1 // counts are whole
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: CountLabel(v)})
	}
	return ts
}

// CountLabel is a count as 0, 999, 1K, 1.5K, 20M, 3G (decimal multiples).
func CountLabel(v float64) string {
	units := []string{"", "K", "M", "G", "T"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if s == "-0" {
		s = "0"
	}
	return s + units[i]
}

// logTicks marks a log-scaled axis at 1…9 × 10^k: all labelled within a
// decade, 1, 2 and 5 up to three decades, powers of ten beyond (the others
// are minor ticks), so that a short range still has labels.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return []plot.Tick{{Value: max, Label: shortNum(max)}}
	}
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	// Every multiple labelled within a decade, 1, 2 and 5 up to three,
	// powers of ten beyond.
	label := func(m int) bool { return m == 1 || hi-lo <= 3 && (m == 2 || m == 5) || hi-lo <= 1 }
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		p := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if label(m) {
				t.Label = shortNum(v)
			}
			ts = append(ts, t)
		}
	}
	labelled := 0
	for _, t := range ts {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 { // within one decade: label the ends too
		ts = append(ts, plot.Tick{Value: min, Label: shortNum(min)}, plot.Tick{Value: max, Label: shortNum(max)})
	}
	return ts
}

// shortNum is v rounded to three significant digits, without an exponent
// (0.002, 50, 1000000).
func shortNum(v float64) string {
	x, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// niceTicks marks a linear axis (time, bytes, rates) at 1, 2 or 5 × 10^k
// steps, about five labelled (shortNum: 0, 0.5, 250), with unlabelled
// minor ticks halfway.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: shortNum(min)}}
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	var ts []plot.Tick
	for k := math.Ceil(min/step - 1e-9); k*step <= max+step*1e-9; k++ {
		v := k * step
		ts = append(ts, plot.Tick{Value: v, Label: shortNum(v + 0)}) // +0: no "-0"
		if h := v + step/2; h <= max {
			ts = append(ts, plot.Tick{Value: h})
		}
	}
	return ts
}

// log10Ticks marks a linear axis of log10(values) as logTicks marks a
// log-scaled axis of the values: at 1…9 × 10^k, labelled with the values.
type log10Ticks struct{}

func (log10Ticks) Ticks(min, max float64) []plot.Tick {
	ts := logTicks{}.Ticks(math.Pow(10, min), math.Pow(10, max))
	for i := range ts {
		ts[i].Value = math.Log10(ts[i].Value)
	}
	return ts
}
