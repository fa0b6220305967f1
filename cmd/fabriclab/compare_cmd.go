package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/report"
	"fabriclab/store"
)

// compareArg is one RUN[:VARIANT] argument of compare; variant "" means
// every variant of the run.
type compareArg struct {
	id      int64
	variant string
}

func parseCompareArg(s string) (compareArg, error) {
	run, variant, hasVariant := strings.Cut(s, ":")
	id, err := store.ParseID(run)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "store: ")
		if hasVariant { // the error names the run part only
			msg = fmt.Sprintf("%q: %s", s, msg)
		}
		return compareArg{}, errors.New(msg)
	}
	if hasVariant && variant == "" {
		return compareArg{}, fmt.Errorf("%q: empty variant after ':' (RUN or RUN:VARIANT)", s)
	}
	return compareArg{id, variant}, nil
}

// compareColumns reads the runs the arguments name and returns one column
// per variant, named "N:variant", in argument order, and the header
// lines: one per run, with its seed and command-line overrides
// (report.RunLine).
func compareColumns(st *store.Store, args []compareArg) ([]report.Column, []string, error) {
	runs := map[int64]report.Output{}
	var cols []report.Column
	var header []string
	for _, a := range args {
		out, ok := runs[a.id]
		if !ok {
			var err error
			if out, _, err = st.Run(a.id); err != nil {
				return nil, nil, err
			}
			runs[a.id] = out
			header = append(header, report.RunLine(a.id, out))
		}
		found := false
		var names []string
		for _, v := range out.Variants {
			names = append(names, v.Name)
			if a.variant == "" || v.Name == a.variant {
				cols = append(cols, report.Column{Name: fmt.Sprintf("%d:%s", a.id, v.Name), Results: v.Results, Kind: v.Collective})
				found = true
			}
		}
		if !found {
			if a.variant == "" {
				return nil, nil, fmt.Errorf("run %d has no variants", a.id)
			}
			return nil, nil, fmt.Errorf("run %d has no variant %q (variants: %s)", a.id, a.variant, strings.Join(names, ", "))
		}
	}
	if len(cols) < 2 {
		return nil, nil, fmt.Errorf("nothing to compare: %s is a single variant; name another run or variant", cols[0].Name)
	}
	return cols, header, nil
}

func (a *app) compareCmd() *cobra.Command {
	var db, metric string
	var all bool
	cmd := &cobra.Command{
		Use:   "compare RUN[:VARIANT] RUN[:VARIANT]...",
		Short: "Compare saved runs side by side, with deltas against a baseline",
		Long: `compare prints one metric of saved runs side by side, one row per data size
(the union of the sizes; "-" where a column has none). The first column is the
baseline; every other column is followed by its delta against it: absolute and
in % for rates and times (busbw, algbw, cct), absolute for counters and
percentages (pfc, ecn, ideal_pct). RUN alone means every variant of the run,
RUN:VARIANT one; columns are named "N:variant". The tables follow one line
per run: its scenario, seed and command-line overrides (--set, --sweep).
Kinds without a bus bandwidth (incast, flow lists, …) show busbw as "-".`,
		Example: `  fabriclab compare 12 13
  fabriclab compare 12:pfc-only 12:tuned-final 13:tuned-final --metric cct
  fabriclab compare 12 13 --all`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr(cmd, "compare needs at least one RUN[:VARIANT]")
			}
			for _, s := range args {
				if _, err := parseCompareArg(s); err != nil {
					return usageErr(cmd, "%s", err)
				}
			}
			if _, ok := report.LookupMetric(metric); !ok {
				return usageErr(cmd, "unknown --metric %q (one of %s)", metric, report.MetricNames)
			}
			if all && cmd.Flags().Changed("metric") {
				return usageErr(cmd, "--all and --metric exclude each other")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cas := make([]compareArg, len(args))
			for i, s := range args {
				cas[i], _ = parseCompareArg(s)
			}
			ms := []string{metric}
			if all {
				ms = report.AllMetrics
			}
			return readStore(db, func(st *store.Store) error {
				cols, header, err := compareColumns(st, cas)
				if err != nil {
					return err
				}
				if _, err := io.WriteString(a.stdout, strings.Join(header, "")+report.KindsNote(cols)); err != nil {
					return err
				}
				for i, m := range ms {
					if i > 0 {
						if _, err := io.WriteString(a.stdout, "\n"); err != nil {
							return err
						}
					}
					if err := report.WriteCompare(a.stdout, cols, m); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().StringVar(&metric, "metric", "busbw", "the metric to compare: `M` one of "+report.MetricNames)
	cmd.Flags().BoolVar(&all, "all", false, "one table per metric: "+strings.Join(report.AllMetrics, ", "))
	return cmd
}
