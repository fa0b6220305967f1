package report

import (
	"fabriclab/internal/safetext"
	"fabriclab/metrics"
)

// forTerminal returns a copy of v whose free text (names, kinds, sweep
// values, errors) has its control characters escaped, so that a name read
// from a hostile file or database cannot move the cursor or forge a line of
// the table. v is not modified.
func forTerminal(v VariantResult) VariantResult {
	t := safetext.Terminal
	v.Name, v.Collective, v.Parent = t(v.Name), t(v.Collective), t(v.Parent)
	if v.Sweep != nil {
		p := make(Point, len(v.Sweep))
		for i, sv := range v.Sweep {
			p[i] = SweepValue{Key: t(sv.Key), Value: t(sv.Value)}
		}
		v.Sweep = p
	}
	rs := make([]metrics.SizeResult, len(v.Results))
	for i, r := range v.Results {
		r.Error, r.Algorithm = t(oneLine(r.Error)), t(r.Algorithm) // errors may wrap lines: they are printed as one
		if r.Jobs != nil {
			js := make([]metrics.JobResult, len(r.Jobs))
			for k, j := range r.Jobs {
				j.Name, j.Kind = t(j.Name), t(j.Kind)
				js[k] = j
			}
			r.Jobs = js
		}
		rs[i] = r
	}
	v.Results = rs
	return v
}

func outputForTerminal(o Output) Output {
	vs := make([]VariantResult, len(o.Variants))
	for i, v := range o.Variants {
		vs[i] = forTerminal(v)
	}
	o.Variants = vs
	return o
}
