package scenario

import (
	"path/filepath"
	"sort"

	"fabriclab/workload"
)

// ReferencedFiles lists the files the scenario's variants read besides the
// scenario itself: flow lists (workload.file), size distributions given as
// paths or short names (workload.size_dist, resolved as the run resolves
// them), routing tables (switch.routes_file) and topology files
// (topology.file of kinds custom and ns3), for the workload and every job,
// each once, sorted. The CLI refuses to write an output over any of
// them.
func (f *File) ReferencedFiles() []string {
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" {
			return
		}
		seen[filepath.Clean(RelativeTo(f.Dir, p))] = true
	}
	addWorkload := func(w Workload) {
		add(w.File)
		if w.SizeDist == "" {
			return
		}
		// A short name stands for a file of the shared data folder.
		if file := workload.SizeDistFile(w.SizeDist); file != "" {
			if d := shortDistDir(file, f.Dir); d != "" {
				add(filepath.Join(d, file))
			}
			return
		}
		add(w.SizeDist)
	}
	specs := []*Scenario{f.Base}
	for _, v := range f.Variants {
		specs = append(specs, v.Spec)
	}
	for _, s := range specs {
		if s == nil {
			continue
		}
		add(s.Switch.RoutesFile)
		if readsFile(s.Topology.Kind) {
			add(s.Topology.File)
		}
		addWorkload(s.Workload)
		for _, j := range s.Jobs {
			addWorkload(j.Workload)
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// RelativeTo resolves a path a scenario names: as written when absolute,
// else relative to the scenario's directory dir.
func RelativeTo(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}
