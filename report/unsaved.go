package report

import (
	"fmt"
	"io"
	"strings"

	"fabriclab/internal/safetext"
	"fabriclab/units"
)

// UnsavedJob is a job a saved run planned (a variant or sweep point at one
// data size) that has no result row.
type UnsavedJob struct {
	Variant   string
	SizeBytes int64
}

// Unsaved is what a saved run planned but has no result for: the jobs
// that never ran or whose row was never written (store.Unsaved). A job
// that failed has its row, with its error, and is not here.
type Unsaved struct {
	// Planned is how many jobs the run planned (variants × sweep points ×
	// sizes); 0 when unknown.
	Planned int
	// Missing is how many of them have no result row.
	Missing int
	// Jobs are those jobs, in the run's order, when the plan could be
	// rebuilt from the saved scenario; nil otherwise (NoPlan says why).
	Jobs []UnsavedJob
	// Why is what the run's status says of them ("" when it says nothing).
	Why string
	// NoPlan is why Jobs is nil although Missing > 0, and Empty then names
	// the variants that have no row at all (all that is known of which).
	NoPlan string
	Empty  []string
}

// None reports whether nothing is known to be missing.
func (u Unsaved) None() bool {
	return u.Missing <= 0 && len(u.Jobs) == 0 && len(u.Empty) == 0
}

// WriteUnsaved writes, after a saved run's tables, the jobs it planned
// that have no result, grouped by variant in the run's order:
//
//	# missing: 2 of 3 planned jobs have no result (interrupted: …)
//	#   pfc: 4MiB, 16MiB
//
// When the plan could not be rebuilt it says how many, why not which,
// and the variants without any row. It writes nothing when nothing is
// missing.
func WriteUnsaved(w io.Writer, u Unsaved) error {
	if u.None() {
		return nil
	}
	t := func(s string) string { return safetext.Terminal(oneLine(s)) }
	var b strings.Builder
	n := max(u.Missing, len(u.Jobs))
	switch {
	case n > 0 && u.Planned > 0:
		fmt.Fprintf(&b, "# missing: %d of %d planned jobs have no result", n, u.Planned)
	case n > 0:
		fmt.Fprintf(&b, "# missing: %d planned jobs have no result", n)
	default:
		b.WriteString("# missing: some planned jobs have no result")
	}
	if u.Why != "" {
		fmt.Fprintf(&b, " (%s)", t(u.Why))
	}
	if u.Jobs == nil && u.NoPlan != "" {
		fmt.Fprintf(&b, "; which ones is unknown: %s", t(u.NoPlan))
	}
	b.WriteByte('\n')
	for i := 0; i < len(u.Jobs); {
		v := u.Jobs[i].Variant
		var sizes []string
		for ; i < len(u.Jobs) && u.Jobs[i].Variant == v; i++ {
			sizes = append(sizes, units.Size(u.Jobs[i].SizeBytes).String())
		}
		fmt.Fprintf(&b, "#   %s: %s\n", t(v), strings.Join(sizes, ", "))
	}
	if u.Jobs == nil && len(u.Empty) > 0 {
		names := make([]string, len(u.Empty))
		for i, v := range u.Empty {
			names[i] = t(v)
		}
		fmt.Fprintf(&b, "#   no result at all: %s\n", strings.Join(names, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
