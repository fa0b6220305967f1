package main

import (
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/report"
	"fabriclab/report/charts"
	"fabriclab/store"
)

func (a *app) reportCmd() *cobra.Command {
	var db, outPath, pngDir string
	cmd := &cobra.Command{
		Use:   "report RUN...",
		Short: "Write saved runs as a self-contained HTML report with charts",
		Long: `report writes one HTML file with charts of the saved runs. At the top: the
runs with their seed and command-line overrides (--set, --sweep) and a summary
of each run's fabric (topology, hosts, rates, spines and oversubscription,
forwarding, PFC and ECN thresholds, transport and congestion control). Then
bus bandwidth (with a dashed line at the NIC rate), percent of ideal and CCT
(log scale) against data size, the sorted flow completion times (log scale)
and their CDF (log scale, steps), per-rank completion times (points; ranks
that received nothing are left out), the rank-to-rank bandwidth heatmaps (one
colour scale for those of the same rank count), PFC pause frames and ECN marks
(each on its own chart; per switch tier with sim.port_counters), for rows
with sim.telemetry the queue depth of the kept ports over time, the followed
flows' rate (or window, or grants), a PFC pause timeline per port and
utilization per tier, and the scenario. Every chart is followed by the numbers it draws; legends sit below
the plots. With several runs their variants are drawn side by side as "run
N: variant". The file has inline SVG only: no JavaScript, no network, it
opens offline. Charts whose data the runs did not record are replaced by a
sentence saying what to enable. --png DIR also writes each chart as a PNG.`,
		Example: `  fabriclab report 12 -o report.html
  fabriclab report 12 13 -o compare.html --png charts/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr(cmd, "report needs at least one run id")
			}
			for _, s := range args {
				if _, err := store.ParseID(s); err != nil {
					// One hint: the message points to 'fabriclab runs'.
					return &exitErr{exitUsage, strings.TrimPrefix(err.Error(), "store: ")}
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if outPath == "" {
				return usageErr(cmd, "report needs -o FILE")
			}
			outputs := [][2]string{{"-o", outPath}}
			if err := checkClobber(outputs, guardDB(db)); err != nil {
				return err
			}
			var srcs []charts.Source
			err := readStore(db, func(st *store.Store) error {
				for _, s := range args {
					id, _ := store.ParseID(s)
					out, m, err := st.Run(id)
					if err != nil {
						return err
					}
					if err := checkClobber(outputs, savedRunGuards(m, outputs)); err != nil {
						return err
					}
					srcs = append(srcs, charts.SavedRun(m, out))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if err := writeReport(a.stdout, outPath, pngDir, srcs); err != nil {
				return &exitErr{exitError, oneLine(err.Error())}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "write the HTML report to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&pngDir, "png", "", "also write each chart as a PNG into `DIR`")
	return cmd
}

// writeReport writes the HTML report of srcs to path (- for stdout) and,
// with pngDir, the charts as PNGs.
// A PNG that cannot be written does not cost the HTML report: it is
// written and the error returned after it.
func writeReport(stdout io.Writer, path, pngDir string, srcs []charts.Source) error {
	var pngErr error
	err := writeTo(stdout, path, func(w io.Writer) error {
		err := charts.Write(w, srcs, charts.Options{PNGDir: pngDir})
		if pe, ok := errors.AsType[*charts.PNGError](err); ok {
			pngErr = pe
			return nil
		}
		return err
	})
	return errors.Join(err, pngErr)
}

// runReport is run --report: the report of the run just made, with the
// scenario file's text and the planned jobs it has no result for (its
// status is read from its rows).
func runReport(stdout io.Writer, path, pngDir string, out report.Output, text []byte, missing report.Unsaved) error {
	return writeReport(stdout, path, pngDir, []charts.Source{{Output: out, ScenarioText: string(text), Unsaved: missing}})
}
