package report

import (
	"fmt"
	"strconv"

	"fabriclab/internal/safetext"
	"fabriclab/metrics"
)

// A ResultColumn is one column of the results' CSV (WriteCSV) and, when
// SQL is set, of the store's results table (store.AddResult).
// ResultColumns lists them once for both.
type ResultColumn struct {
	// Name is the CSV header and the SQL column name.
	Name string
	// SQL is the column's type in the store's results table; "" when the
	// column is not stored as a SQL column (the whole result is stored as
	// JSON as well). A new stored column needs a new migration.
	SQL string
	// Measured, when set, says whether a row measured the figure: its CSV
	// cell is empty on a row that did not (the store keeps its NOT NULL 0
	// there, and the row's JSON says hosts or its engine). The fabric's
	// counters are the packet engine's only; the routed ideal follows the
	// simulated fabric's routes, which real hosts do not have.
	Measured func(r *metrics.SizeResult) bool
	// Row is the cell of a result's own row: r is a result of variant v
	// (v is nil in the store, which stores no variant column). A value is a
	// string, int, int64, uint64, float64, bool, or nil for an empty cell.
	Row func(v *VariantResult, r *metrics.SizeResult) any
	// CSVRow, when set, is the row's CSV cell instead of Row's.
	CSVRow func(r *metrics.SizeResult) any
	// Job is the cell of the CSV row of j, another job of r (r.Jobs[1:]);
	// nil leaves the cell empty there: the fabric-wide columns are on
	// main's row.
	Job func(v *VariantResult, r *metrics.SizeResult, j *metrics.JobResult) any
}

// ResultColumns are the result columns in CSV order. New CSV columns are only
// ever appended (README, "Output contract").
var ResultColumns = []ResultColumn{
	ofVariant("variant", func(v *VariantResult) any { return v.Name }),
	{Name: "size_bytes", SQL: "BIGINT",
		// Another job's row has the row's size, with its own ranks.
		Row: func(_ *VariantResult, r *metrics.SizeResult) any { return r.SizeBytes },
		Job: func(_ *VariantResult, r *metrics.SizeResult, _ *metrics.JobResult) any { return r.SizeBytes }},
	{Name: "ranks", SQL: "INTEGER",
		Row: func(_ *VariantResult, r *metrics.SizeResult) any { return r.Ranks },
		Job: func(_ *VariantResult, _ *metrics.SizeResult, j *metrics.JobResult) any { return j.Ranks }},
	ofTiming("cct_s", func(t *metrics.Timing) any { return t.CCTS }),
	ofTiming("algbw_gbps", func(t *metrics.Timing) any { return t.AlgBWGBps }),
	ofTiming("busbw_gbps", func(t *metrics.Timing) any { return t.BusBWGBps }),
	ofTiming("ideal_s", func(t *metrics.Timing) any { return t.IdealS }),
	ofTiming("ideal_pct", func(t *metrics.Timing) any { return t.IdealPct }),
	ofFabric("pfc_pauses", "BIGINT", func(f *metrics.FabricTotals) any { return f.PFCPauses }),
	ofFabric("ecn_marks", "BIGINT", func(f *metrics.FabricTotals) any { return f.ECNMarks }),
	ofFabric("drops", "BIGINT", func(f *metrics.FabricTotals) any { return f.Drops }),
	ofFabric("retransmits", "BIGINT", func(f *metrics.FabricTotals) any { return f.Retransmits }),
	ofFabric("cnps", "BIGINT", func(f *metrics.FabricTotals) any { return f.CNPs }),
	ofFabric("timeouts", "BIGINT", func(f *metrics.FabricTotals) any { return f.Timeouts }),
	{Name: "complete", SQL: "BOOLEAN",
		Row: func(_ *VariantResult, r *metrics.SizeResult) any { return r.Complete },
		Job: func(_ *VariantResult, _ *metrics.SizeResult, j *metrics.JobResult) any { return j.Complete }},
	ofRouted("routed_ideal_s", func(f *metrics.FabricTotals) any { return f.RoutedIdealS }),
	ofRouted("routed_ideal_pct", func(f *metrics.FabricTotals) any { return f.RoutedIdealPct }),
	ofVariant("sweep", func(v *VariantResult) any { return v.Sweep.String() }),
	ofJob("job", func(j *metrics.JobResult) any { return j.Name }),
	ofJob("alone_cct_s", func(j *metrics.JobResult) any { return j.AloneCCTS }),
	ofJob("interference", func(j *metrics.JobResult) any { return j.Interference }),
	// Why a failed job failed (a PFC deadlock, a build error): without it
	// its row would read as one stopped at the time limit. The store keeps
	// it as it is; CSV, which a terminal may show, has its control
	// characters escaped.
	{Name: "error", SQL: "TEXT",
		Row:    func(_ *VariantResult, r *metrics.SizeResult) any { return r.Error },
		CSVRow: func(r *metrics.SizeResult) any { return safetext.Terminal(r.Error) }},
}

// ofVariant is a CSV column of the variant, the same on every row of it.
func ofVariant(name string, get func(v *VariantResult) any) ResultColumn {
	return ResultColumn{Name: name,
		Row: func(v *VariantResult, _ *metrics.SizeResult) any { return get(v) },
		Job: func(v *VariantResult, _ *metrics.SizeResult, _ *metrics.JobResult) any { return get(v) }}
}

// ofTiming is a stored column of the Timing part, which a row and a job's
// entry share: each row has its own.
func ofTiming(name string, get func(t *metrics.Timing) any) ResultColumn {
	return ResultColumn{Name: name, SQL: "DOUBLE PRECISION",
		Row: func(_ *VariantResult, r *metrics.SizeResult) any { return get(&r.Timing) },
		Job: func(_ *VariantResult, _ *metrics.SizeResult, j *metrics.JobResult) any { return get(&j.Timing) }}
}

// ofFabric is a stored column of the FabricTotals part: the whole fabric's,
// on the result's own row only.
func ofFabric(name, sql string, get func(f *metrics.FabricTotals) any) ResultColumn {
	return ResultColumn{Name: name, SQL: sql, Measured: (*metrics.SizeResult).FabricMeasured,
		Row: func(_ *VariantResult, r *metrics.SizeResult) any { return get(&r.FabricTotals) }}
}

// ofRouted is a routed-ideal column: as ofFabric, but the flow engine
// works it out as the packet engine does (the same routes); only real
// hosts leave it empty.
func ofRouted(name string, get func(f *metrics.FabricTotals) any) ResultColumn {
	c := ofFabric(name, "DOUBLE PRECISION", get)
	c.Measured = func(r *metrics.SizeResult) bool { return r.Hosts == nil }
	return c
}

// ofJob is a CSV column of the job a row is about: main (r.Jobs[0]) on the
// result's own row, empty with one job.
func ofJob(name string, get func(j *metrics.JobResult) any) ResultColumn {
	return ResultColumn{Name: name,
		Row: func(_ *VariantResult, r *metrics.SizeResult) any {
			if len(r.Jobs) == 0 {
				return nil
			}
			return get(&r.Jobs[0])
		},
		Job: func(_ *VariantResult, _ *metrics.SizeResult, j *metrics.JobResult) any { return get(j) }}
}

// CSVHeader is the first row WriteCSV writes.
var CSVHeader = csvHeader()

func csvHeader() []string {
	var h []string
	for _, c := range ResultColumns {
		h = append(h, c.Name)
	}
	return h
}

// CSVValue is column c's cell value for result r of variant v in CSV:
// empty for a figure the row did not measure (Measured).
func (c ResultColumn) CSVValue(v *VariantResult, r *metrics.SizeResult) any {
	if c.Measured != nil && !c.Measured(r) {
		return nil
	}
	if c.CSVRow != nil {
		return c.CSVRow(r)
	}
	return c.Row(v, r)
}

// csvCell writes a column's value: numbers as numbers (floats in the
// shortest form that reads back exactly), nil as an empty cell, and text
// neutralized against formula injection (safetext.CSVCell).
func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return safetext.CSVCell(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	panic(fmt.Sprintf("report: a column value of type %T", v))
}
