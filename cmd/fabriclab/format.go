package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"fabriclab/report"
	"fabriclab/store"
)

// Table formats of run, show and nccl (--format).
const (
	formatTable = "table"      // fabriclab's tables, after the fabric summary
	formatNCCL  = "nccl-tests" // nccl-tests' columns and footer, for its parsers
)

const formatUsage = "print the results as `FORMAT`: table (fabriclab's tables, after a summary of the fabric) or nccl-tests (nccl-tests' columns and footer, for the scripts that parse them)"

// checkFormat refuses an unknown --format.
func checkFormat(cmd *cobra.Command, format string) error {
	switch format {
	case formatTable, formatNCCL:
		return nil
	}
	return usageErr(cmd, "unknown --format %q (table or nccl-tests)", format)
}

// writeRunTables is what run prints on stdout once its jobs are done: the
// fabric summary and the tables, or the nccl-tests format; for a run on
// the simulator (writeRunTablesOn names the engine).
func (a *app) writeRunTables(w io.Writer, p *plan, format string, out report.Output) error {
	return a.writeRunTablesOn(w, p, format, "", out)
}

// writeRunTablesOn is writeRunTables for the jobs run on engine, run's
// --engine once engineFor has read it: "" for the simulator, "hosts" for
// real hosts, which the nccl-tests format names even when no row says so
// (every row failed: an agent refused the token).
func (a *app) writeRunTablesOn(w io.Writer, p *plan, format, engine string, out report.Output) error {
	opt := ncclOptionsOf(p, "", "")
	opt.OnHosts = engine == store.EngineHosts
	return writeFormatted(w, format, planFabrics(p), nil, opt, out)
}

// writeFormatted writes out as format: for table, the fabric summary (or
// why there is none), a blank line and the tables; for nccl-tests, the
// nccl-tests blocks with opt.
func writeFormatted(w io.Writer, format string, fabrics []report.Fabric, fabricErr error, opt report.NCCLOptions, out report.Output) error {
	if format == formatNCCL {
		return report.WriteNCCLTests(w, out, opt)
	}
	switch {
	case len(fabrics) > 0:
		if err := report.WriteFabric(w, fabrics); err != nil {
			return err
		}
	case fabricErr != nil:
		if _, err := fmt.Fprintf(w, "# fabric: no summary (the saved scenario could not be read again: %s)\n", forTerm(oneLine(fabricErr.Error()))); err != nil {
			return err
		}
	}
	if len(fabrics) > 0 || fabricErr != nil {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return report.WriteTables(w, out)
}

// planFabrics is the fabric of each of the plan's variants (from its first
// job's scenario), nil when the plan has no scenarios (a test's plan).
func planFabrics(p *plan) []report.Fabric {
	var fs []report.Fabric
	for vi, v := range p.Variants {
		found := false
		for _, j := range p.Jobs {
			if j.VariantIndex == vi && j.Spec != nil {
				fs = append(fs, report.FabricOf(v.Name, j.Spec))
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return fs
}

// ncclOptionsOf is the nccl-tests format's options for the plan: each
// variant's warmup and root, with the data type and reduction given
// ("" for float and sum).
func ncclOptionsOf(p *plan, dtype, op string) report.NCCLOptions {
	opt := report.NCCLOptions{DataType: dtype, Op: op, Variants: map[string]report.NCCLVariant{}}
	if p == nil {
		return opt
	}
	for vi, v := range p.Variants {
		for _, j := range p.Jobs {
			if j.VariantIndex == vi && j.Spec != nil {
				opt.Variants[v.Name] = report.NCCLVariant{Warmup: j.Spec.Workload.Warmup, Root: j.Spec.Workload.Root}
				break
			}
		}
	}
	return opt
}

// writeSavedTables is what show prints after its "# run N" line: the
// run's command-line overrides, its fabric (re-read from the saved
// scenario text), and its tables; or the nccl-tests format. Then the jobs
// the run planned that have no result (its scenario expanded again, less
// the rows it saved), and why, when there are any: an interrupted sweep
// says which of its points never ran.
func (a *app) writeSavedTables(w io.Writer, out report.Output, m store.Meta, format string) error {
	if _, err := fmt.Fprintf(w, "# overrides: %s\n", forTerm(report.Overrides(out))); err != nil {
		return err
	}
	// The saved engine: a hosts run whose rows all failed is labelled as
	// one (older runs did not save it; their rows decide).
	opt := report.NCCLOptions{Variants: map[string]report.NCCLVariant{}, OnHosts: m.Engine == store.EngineHosts}
	var fabrics []report.Fabric
	f, err := report.SavedScenarioIn(m.ScenarioPaths(), m.ScenarioText, m.Sets, m.Sweeps)
	if err == nil {
		fabrics = report.FabricsOfFile(f)
		for _, v := range f.Variants {
			if v.Spec != nil {
				opt.Variants[v.Name] = report.NCCLVariant{Warmup: v.Spec.Workload.Warmup, Root: v.Spec.Workload.Root}
			}
		}
	}
	if err := writeFormatted(w, format, fabrics, err, opt, out); err != nil {
		return err
	}
	return writeMissing(w, format, store.Unsaved(m, out, f, err))
}

// writeMissing writes, after a run's tables, the jobs it planned that have
// no result (report.WriteUnsaved; nothing when none): after a blank line,
// or right under nccl-tests' footer, which ends in "#". run and show.
func writeMissing(w io.Writer, format string, u report.Unsaved) error {
	if u.None() {
		return nil
	}
	if format != formatNCCL {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return report.WriteUnsaved(w, u)
}

// runOverrides is the OVERRIDES cell of runs: the run's --set and --sweep
// options ("-" for none); --seed N is kept as --set seed=N.
func runOverrides(m store.Meta) string {
	s := report.OverrideFlags(m.Sets, m.Sweeps)
	if s == "" {
		return "-"
	}
	return forTerm(strings.ReplaceAll(s, "\t", " "))
}

// writeVariantTables writes one variant as writeRunTables writes it within
// the whole run, for output that streams variant by variant (run --queue
// --wait): with first, what comes before the first variant (the fabric
// summary and a blank line in the table format). Concatenated in variant
// order, with a blank line between variants, the pieces are what
// writeRunTables writes for those variants (without a sweep summary).
func (a *app) writeVariantTables(w io.Writer, p *plan, format string, v report.VariantResult, first bool) error {
	one := report.Output{Variants: []report.VariantResult{v}}
	if format == formatNCCL {
		return report.WriteNCCLTests(w, one, ncclOptionsOf(p, "", ""))
	}
	if fs := planFabrics(p); first && len(fs) > 0 {
		if err := report.WriteFabric(w, fs); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return report.WriteTables(w, one)
}
