package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"fabriclab/units"
)

// maxTableCheckpoints bounds the checkpoint columns of the endpoint table.
const maxTableCheckpoints = 20

// WriteEndpointsTable writes, for every any-to-any row of v, its endpoint
// pairs: the rate of each in every checkpoint interval, over the run and
// as a share of its full rate, then the spread and Jain's index — the
// view a hardware tester's per-endpoint counts give.
func WriteEndpointsTable(w io.Writer, v VariantResult) error {
	var b strings.Builder
	for _, r := range v.Results {
		e := r.Endpoints
		if e == nil || len(r.Checkpoints) == 0 {
			continue
		}
		scale, unit := 1e9, "Gb/s"
		if e.FullRateGbps < 1 {
			scale, unit = 1e6, "Mb/s"
		}
		rate := func(gbps float64) string { return fmt.Sprintf("%.1f", gbps*1e9/scale) }
		fmt.Fprintf(&b, "\n# endpoints: %s writes, full rate %s %s a pair; %s per checkpoint, over the run and %% of full\n",
			units.Size(r.SizeBytes), rate(e.FullRateGbps), unit, unit)
		// At most maxTableCheckpoints columns of checkpoints (the JSON and
		// the heatmaps have them all), then the end.
		cps := r.Checkpoints
		if len(cps) > maxTableCheckpoints+1 {
			fmt.Fprintf(&b, "# (the first %d of %d checkpoints; all are in the JSON)\n", maxTableCheckpoints, len(cps)-1)
		}
		head := []string{"client", "server"}
		prev := 0.0
		shown := func(k int) bool { return k < maxTableCheckpoints || k == len(cps)-1 }
		for k, cp := range cps {
			switch {
			case k == len(cps)-1:
				head = append(head, "end") // the writes in flight when the duration ended
			case shown(k):
				head = append(head, units.Duration(math.Round(cp.TS*1e12)).String())
			}
		}
		head = append(head, "run", "%full")
		rows := [][]string{head}
		for k, pp := range e.PerPair {
			row := []string{fmt.Sprint(pp.Client), fmt.Sprint(pp.Server)}
			prev = 0
			for x, cp := range cps {
				dt := cp.TS - prev
				prev = cp.TS
				if !shown(x) {
					continue
				}
				if k >= len(cp.Endpoints) || dt <= 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, rate(float64(cp.Endpoints[k].Bytes)*8/dt/1e9))
			}
			row = append(row, rate(pp.Gbps), fmt.Sprintf("%.0f", pp.PctFull))
			rows = append(rows, row)
		}
		alignRows(&b, rows, 1, nil)
		fmt.Fprintf(&b, "# %d pairs: min %s, mean %s, max %s %s; spread %.2f, Jain's index %.3f (end: the writes in flight when the duration ended)\n",
			e.Pairs, rate(e.MinGbps), rate(e.MeanGbps), rate(e.MaxGbps), unit, e.Spread, e.Jain)
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, b.String())
	return err
}
