package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"fabriclab/metrics"
)

// TelemetryCSVHeader is the columns of WriteTelemetryCSV: one row per
// sample and quantity (tidy data: what a plotting tool or a dataframe
// reads directly).
var TelemetryCSVHeader = []string{"variant", "size_bytes", "series", "name", "tier", "sample", "t_s", "quantity", "value"}

// ErrNoTelemetry is returned when a run recorded no telemetry.
var ErrNoTelemetry = errors.New("the run recorded no telemetry (set sim.telemetry, e.g. --set sim.telemetry.ports=8)")

// WriteTelemetryCSV writes every row's telemetry: per kept port its queue
// bytes (and per priority: queue_bytes_prioN), utilization %, paused (0/1), pause frames, ECN marks and drops;
// per followed flow its metric (rate_gbps, cwnd_bytes or granted_bytes)
// and delivered bytes. t_s is the end of the sample's interval (the run's
// end for the closing sample).
func WriteTelemetryCSV(w io.Writer, o Output) error {
	if !HasTelemetry(o) {
		return ErrNoTelemetry
	}
	o = Sorted(o)
	cw := csv.NewWriter(w)
	if err := cw.Write(TelemetryCSVHeader); err != nil {
		return err
	}
	for vi := range o.Variants {
		v := &o.Variants[vi]
		for ri := range v.Results {
			r := &v.Results[ri]
			t := r.Telemetry
			if t == nil {
				continue
			}
			at := func(k int) string {
				ts := float64(k+1) * t.IntervalS
				if k == t.Samples-1 && t.EndS > 0 {
					ts = t.EndS // the closing sample, at the run's end
				}
				return strconv.FormatFloat(ts, 'g', 9, 64)
			}
			row := func(series, name, tier string, k int, q string, val string) error {
				return cw.Write([]string{csvCell(v.Name), strconv.FormatInt(r.SizeBytes, 10), series, csvCell(name), csvCell(tier),
					strconv.Itoa(k), at(k), q, val})
			}
			for _, ps := range t.Ports {
				name := ps.Node + "->" + ps.Peer
				for _, q := range portQuantities(ps) {
					for k, val := range q.vals {
						if err := row("port", name, ps.Tier, k, q.name, val); err != nil {
							return err
						}
					}
				}
			}
			for _, fs := range t.Flows {
				name := strconv.Itoa(fs.ID) + " " + fs.Src + "->" + fs.Dst
				for j, val := range fs.Value {
					if err := row("flow", name, "", fs.First+j, fs.Metric, strconv.FormatFloat(val, 'g', -1, 64)); err != nil {
						return err
					}
				}
				for j, val := range fs.Delivered {
					if err := row("flow", name, "", fs.First+j, "delivered_bytes", strconv.FormatInt(val, 10)); err != nil {
						return err
					}
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// HasTelemetry reports whether any row of o recorded telemetry.
func HasTelemetry(o Output) bool {
	for _, v := range o.Variants {
		for _, r := range v.Results {
			if r.Telemetry != nil {
				return true
			}
		}
	}
	return false
}

type quantity struct {
	name string
	vals []string
}

// portQuantities are a port series' quantities as text, in column order
// (those sim.telemetry.what left out are absent).
func portQuantities(ps metrics.PortSeries) []quantity {
	ints := func(xs []int64) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strconv.FormatInt(x, 10)
		}
		return out
	}
	var qs []quantity
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			qs = append(qs, quantity{name, vals})
		}
	}
	add("queue_bytes", ints(ps.QueueBytes))
	for _, q := range ps.Priorities {
		add("queue_bytes_prio"+strconv.Itoa(q.Prio), ints(q.QueueBytes))
	}
	util := make([]string, len(ps.UtilPct))
	for i, u := range ps.UtilPct {
		util[i] = strconv.FormatFloat(u, 'g', -1, 64)
	}
	add("util_pct", util)
	paused := make([]string, len(ps.Paused))
	for i, p := range ps.Paused {
		paused[i] = strconv.Itoa(int(p))
	}
	add("paused", paused)
	add("pause_frames", ints(ps.PauseFrames))
	add("ecn_marks", ints(ps.ECNMarks))
	add("drops", ints(ps.Drops))
	return qs
}

// TelemetryRow is one result row's telemetry in WriteTelemetryJSON.
type TelemetryRow struct {
	Variant   string             `json:"variant"`
	SizeBytes int64              `json:"size_bytes"`
	Telemetry *metrics.Telemetry `json:"telemetry"`
}

// WriteTelemetryJSON writes the rows that recorded telemetry, each with
// its series as run --json has them.
func WriteTelemetryJSON(w io.Writer, o Output) error {
	o = Sorted(o)
	rows := []TelemetryRow{}
	for vi := range o.Variants {
		v := &o.Variants[vi]
		for ri := range v.Results {
			if t := v.Results[ri].Telemetry; t != nil {
				rows = append(rows, TelemetryRow{v.Name, v.Results[ri].SizeBytes, t})
			}
		}
	}
	if len(rows) == 0 {
		return ErrNoTelemetry
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}
