package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fabriclab/units"
)

func names(f *File) []string {
	var out []string
	for _, v := range f.Variants {
		out = append(out, v.Name)
	}
	return out
}

func TestSweepExpansion(t *testing.T) {
	// A file without variants: the points are the variants, first key slowest.
	f := mustParse(t, minimal+`
sweep:
  workload.qps: [1, 2, 4]
  workload.algorithm: [direct, "pairwise"]
`)
	want := []string{
		"qps=1 algorithm=direct", "qps=1 algorithm=pairwise",
		"qps=2 algorithm=direct", "qps=2 algorithm=pairwise",
		"qps=4 algorithm=direct", "qps=4 algorithm=pairwise",
	}
	if got := names(f); !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	for i, v := range f.Variants {
		qps, algo := []int{1, 2, 4}[i/2], []string{"direct", "pairwise"}[i%2]
		if v.Spec.Workload.QPs != qps || v.Spec.Workload.Algorithm != algo {
			t.Errorf("%s: qps %d algorithm %s", v.Name, v.Spec.Workload.QPs, v.Spec.Workload.Algorithm)
		}
		wantSweep := []SweepValue{{"workload.qps", []string{"1", "2", "4"}[i/2]}, {"workload.algorithm", algo}}
		if !reflect.DeepEqual(v.Sweep, wantSweep) || v.Parent != "" {
			t.Errorf("%s: sweep %v parent %q", v.Name, v.Sweep, v.Parent)
		}
		// Everything else is the base's.
		if v.Spec.Name != "t" || v.Spec.Topology.Spines != 4 || v.Spec.Workload.Ranks != 32 {
			t.Errorf("%s: spec %+v", v.Name, v.Spec)
		}
	}
	wantDims := []SweepDim{{"workload.qps", []string{"1", "2", "4"}}, {"workload.algorithm", []string{"direct", "pairwise"}}}
	if !reflect.DeepEqual(f.Sweep, wantDims) || !reflect.DeepEqual(f.Base.Sweep, wantDims) {
		t.Errorf("Sweep = %+v", f.Sweep)
	}
	// The base itself is not swept.
	if f.Base.Workload.QPs != 1 || f.Base.Workload.Algorithm != "direct" {
		t.Errorf("base = %+v", f.Base.Workload)
	}
	// Specs are not shared between points.
	if f.Variants[0].Spec == f.Variants[1].Spec || f.Variants[0].Spec == f.Base {
		t.Error("points share a spec")
	}

	// Jobs: variant (point) order, then size.
	jobs := f.Jobs()
	if len(jobs) != 6*4 {
		t.Fatalf("%d jobs, want 6 points × 4 sizes", len(jobs))
	}
	for i, j := range jobs {
		if j.VariantIndex != i/4 || j.SizeIndex != i%4 || j.Variant != want[i/4] || j.Spec != f.Variants[i/4].Spec {
			t.Errorf("job %d = %s #%d size %d", i, j.Variant, j.VariantIndex, j.SizeIndex)
		}
	}

	// With variants: each variant × each point, in variant order; the
	// sweep applies after the variant's own overrides.
	g := mustParse(t, minimal+`
variants:
  - name: pfc
    transport: {dcqcn: {preset: "off"}}
  - name: dcqcn
    workload: {qps: 16, message_size: 1MB}
sweep:
  workload.qps: [2, 8]
  seed: [1, 7]
`)
	want = []string{"pfc qps=2 seed=1", "pfc qps=2 seed=7", "pfc qps=8 seed=1", "pfc qps=8 seed=7",
		"dcqcn qps=2 seed=1", "dcqcn qps=2 seed=7", "dcqcn qps=8 seed=1", "dcqcn qps=8 seed=7"}
	if got := names(g); !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	for i, v := range g.Variants {
		parent := []string{"pfc", "dcqcn"}[i/4]
		if v.Parent != parent || v.Spec.Workload.QPs != []int{2, 8}[i/2%2] || v.Spec.Seed != []uint64{1, 7}[i%2] {
			t.Errorf("%s: parent %q qps %d seed %d", v.Name, v.Parent, v.Spec.Workload.QPs, v.Spec.Seed)
		}
		if (parent == "pfc") != (v.Spec.Transport.DCQCN.Preset == "off") || (parent == "dcqcn") != (v.Spec.Workload.MessageSize == units.MB) {
			t.Errorf("%s: the variant's own overrides are lost: %+v", v.Name, v.Spec)
		}
	}
	if jobs := g.Jobs(); len(jobs) != 8*4 || jobs[4].Seed != 7 || jobs[31].Variant != "dcqcn qps=8 seed=7" {
		t.Errorf("%d jobs", len(jobs))
	}
}

func TestSweepValues(t *testing.T) {
	// Keys that end the same way are named in full; values of every type
	// (units, booleans, mappings) apply like --set.
	f := mustParse(t, minimal+`
sweep:
  topology.host_link.rate: [100Gbps, 400G]
  topology.fabric_link.rate: [200Gbps]
  switch.pfc.enabled: [false]
  transport.dcqcn: [{preset: tuned-final, ai_rate: 1Gbps}]
  workload.sizes: [{list: [1MB]}]
`)
	if got, want := names(f)[0], "topology.host_link.rate=100Gbps topology.fabric_link.rate=200Gbps enabled=false dcqcn={preset: tuned-final, ai_rate: 1Gbps} sizes={list: [1MB]}"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	s := f.Variants[1].Spec
	if s.Topology.HostLink.Rate != 400*units.Gbps || s.Topology.FabricLink.Rate != 200*units.Gbps || s.Switch.PFC.Enabled ||
		s.Transport.DCQCN.Preset != "tuned-final" || *s.Transport.DCQCN.AIRate != units.Gbps {
		t.Errorf("spec = %+v", s)
	}
	// A sweep of the sizes replaces the inherited from/to, as a variant would.
	if sz := s.Workload.Sizes; sz.From != 0 || sz.To != 0 || !reflect.DeepEqual(sz.List, []units.Size{units.MB}) || len(f.Jobs()) != 2 {
		t.Errorf("sizes = %+v, %d jobs", s.Workload.Sizes, len(f.Jobs()))
	}
	// A point may repair a base that is invalid on its own.
	g := mustParse(t, "topology: {hosts: 32, hosts_per_leaf: 8}\nworkload: {kind: alltoall, qps: 0, sizes: {list: [1MB]}}\nsweep: {workload.qps: [1, 2]}\n")
	if len(g.Variants) != 2 {
		t.Errorf("%d variants", len(g.Variants))
	}
	// An empty sweep is no sweep.
	for _, text := range []string{minimal + "sweep:\n", minimal + "sweep: {}\n"} {
		h := mustParse(t, text)
		if names(h)[0] != "base" || h.Variants[0].Sweep != nil || h.Sweep != nil {
			t.Errorf("%q: %q", text, names(h))
		}
	}
}

// --set wins over the variants and reaches every point of the sweep; it
// may not set a key the sweep varies.
func TestSweepAndSets(t *testing.T) {
	const text = minimal + "sweep:\n  workload.qps: [1, 2]\n  nic.burst: [1, 4]\nvariants:\n  - name: a\n  - name: b\n    workload: {qps: 3}\n    nic: {mtu: 1KiB}\n"
	f, err := ParseOptions("t.yaml", []byte(text), Options{Sets: []string{"nic.mtu=2KiB", "seed=5"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Variants) != 8 {
		t.Fatalf("%d variants", len(f.Variants))
	}
	for _, v := range f.Variants {
		if v.Spec.NIC.MTU != 2048 || v.Spec.Seed != 5 {
			t.Errorf("%s: mtu %d seed %d, want --set's 2KiB and 5", v.Name, v.Spec.NIC.MTU, v.Spec.Seed)
		}
		if want := 1 + 3*strings.Count(v.Name, "burst=4"); v.Spec.NIC.Burst != want {
			t.Errorf("%s: burst %d, want the sweep's %d", v.Name, v.Spec.NIC.Burst, want)
		}
	}
	// ApplySets after loading reaches every point too.
	g := mustParse(t, text)
	if err := ApplySets(g, []string{"nic.mtu=8KiB"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range g.Variants {
		if v.Spec.NIC.MTU != 8192 || v.Spec.NIC.Burst != 1+3*strings.Count(v.Name, "burst=4") {
			t.Errorf("%s: mtu %d burst %d", v.Name, v.Spec.NIC.MTU, v.Spec.NIC.Burst)
		}
	}
	// A --set of a swept key (or of one above or below it) is refused:
	// every point would run its value under its own name.
	for _, sets := range [][]string{{"nic.burst=2"}, {"seed=5", "nic={burst: 2}"}} {
		if err := ApplySets(g, sets); err == nil || !strings.Contains(err.Error(), "the sweep varies nic.burst (1, 4): every point would run with this value under its own name") {
			t.Errorf("%q: %v", sets, err)
		}
	}
	// A mapping above a swept key that does not give it merges and
	// leaves the sweep alone.
	if err := ApplySets(g, []string{"nic={mtu: 2KiB}"}); err != nil || g.Variants[3].Spec.NIC.MTU != 2048 || g.Variants[3].Spec.NIC.Burst != 4 {
		t.Errorf("nic={mtu: 2KiB}: %v, %s: %+v", err, g.Variants[3].Name, g.Variants[3].Spec.NIC)
	}
	// A run saved before the refusal reads again as it ran.
	if h, err := ParseOptions("t.yaml", []byte(text), Options{Sets: []string{"nic.burst=2"}, SavedRun: true}); err != nil || h.Variants[3].Spec.NIC.Burst != 2 {
		t.Errorf("saved run: %v", err)
	}
	for _, o := range []Options{{Sets: []string{"seed=5"}, Sweeps: []string{"seed=1,2"}}, {Sets: []string{"workload.qps=3"}}} {
		if _, err := ParseOptions("t.yaml", []byte(text), o); err == nil || !strings.Contains(err.Error(), "the sweep varies") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// A --set that breaks the variants is blamed like any --set, and leaves
	// the file as it was.
	err = ApplySets(g, []string{"switch.pfc.xoff=100KB"})
	if err == nil || !strings.HasPrefix(err.Error(), `--set switch.pfc.xoff: variant "a": switch.pfc.xon: 504KiB is above xoff 100KB`) {
		t.Errorf("err = %v", err)
	}
	if g.Variants[0].Spec.NIC.MTU != 2048 || g.Validate() != nil {
		t.Error("a failed ApplySets changed the file")
	}
	// --set cannot set the sweep.
	if _, err := ParseOptions("t.yaml", []byte(minimal), Options{Sets: []string{"sweep.seed=[1]"}}); err == nil || !strings.HasPrefix(err.Error(), "--set sweep.seed: a sweep is not set with --set; use --sweep") {
		t.Errorf("err = %v", err)
	}
}

func TestSweepOption(t *testing.T) {
	const text = minimal + "sweep:\n  workload.qps: [1, 2]\n  nic.burst: [1, 4]\n"
	f, err := ParseOptions("t.yaml", []byte(text), Options{Sweeps: []string{
		"workload.qps=3, 5,0x7",                 // replaces the file's values, in place
		"workload.algorithm=[direct, pairwise]", // a new key, at the end
		`transport.dcqcn.preset="off",tuned-final`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Variants); n != 3*2*2*2 {
		t.Fatalf("%d variants", n)
	}
	if got, want := names(f)[0], "qps=3 burst=1 algorithm=direct preset=off"; got != want {
		t.Errorf("first = %q, want %q", got, want)
	}
	if got, want := names(f)[len(f.Variants)-1], "qps=0x7 burst=4 algorithm=pairwise preset=tuned-final"; got != want {
		t.Errorf("last = %q, want %q", got, want)
	}
	last := f.Variants[len(f.Variants)-1].Spec
	if last.Workload.QPs != 7 || last.NIC.Burst != 4 || last.Workload.Algorithm != "pairwise" || last.Transport.DCQCN.Preset != "tuned-final" {
		t.Errorf("last spec = %+v", last)
	}
	if len(f.Sweeps) != 3 || f.Sweep[0].Key != "workload.qps" || !reflect.DeepEqual(f.Sweep[0].Values, []string{"3", "5", "0x7"}) {
		t.Errorf("Sweeps %q Sweep %+v", f.Sweeps, f.Sweep)
	}

	// A --sweep on a file without a sweep; --set still wins over it.
	g, err := ParseOptions("t.yaml", []byte(minimal), Options{Sweeps: []string{"seed=1,2"}, Sets: []string{"workload.qps=2"}})
	if err != nil || !reflect.DeepEqual(names(g), []string{"seed=1", "seed=2"}) || g.Variants[1].Spec.Seed != 2 || g.Variants[1].Spec.Workload.QPs != 2 {
		t.Errorf("names %q err %v", names(g), err)
	}

	// LoadOptions is the same through a file.
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := LoadOptions(p, Options{Sweeps: []string{"nic.burst=2"}}); err != nil || len(h.Variants) != 2 || h.Variants[1].Spec.NIC.Burst != 2 {
		t.Errorf("LoadOptions: %v", err)
	}

	bad := []struct{ sweep, want string }{
		{"workload.qps=1,0", `--sweep workload.qps: point "qps=0 burst=1": needs at least 1 queue pair per rank pair, got 0`},
		{"workload.qps=1,x", `--sweep workload.qps: needs a whole number, got "x"`},
		{"workload.qps=1,,2", "--sweep workload.qps: needs values separated by commas"},
		{"workload.qps=", "--sweep workload.qps: needs values separated by commas"},
		{"workload.qps=[]", "--sweep workload.qps: needs at least one value"},
		{"workload.qps=[1", "--sweep workload.qps: "},
		{"workload.qps=1,1", `--sweep workload.qps: value "1" is given twice`},
		{"workload.qpz=1", `--sweep workload.qpz: unknown key "qpz" (did you mean "qps"?)`},
		{"workload.qps", "--sweep workload.qps: needs key=v1,v2,…"},
		{"=1", "--sweep =1: needs key=v1,v2,…"},
		{"name=a,b", "--sweep name: the name cannot be swept"},
		{"variants=[]", "--sweep variants: variants cannot be set from the command line"},
		{"sweep.x=1", "--sweep sweep.x: sweep cannot be swept"},
		{"Workload.QPs=1", "--sweep Workload.QPs: not a key"},
		{"workload={qps: 3}", "--sweep workload: overlaps the swept key workload.qps"},
		{"seed=" + strings.Repeat("1,", 300) + "1", "--sweep seed: "},
		{"seed=" + strings.TrimSuffix(strings.Repeat("x,", 2000), ","), "--sweep seed: 2000 values is more than the limit of 1024 sweep points"},
	}
	for _, b := range bad {
		_, err := ParseOptions("t.yaml", []byte(text), Options{Sweeps: []string{b.sweep}})
		if err == nil || !strings.HasPrefix(err.Error(), b.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("--sweep %s: err = %v, want prefix %q", b.sweep, err, b.want)
		}
	}
	// Two options for one key: refused (the last one replaced the first,
	// unseen), as a key given twice in one option is.
	_, err = ParseOptions("t.yaml", []byte(text), Options{Sweeps: []string{"nic.overhead=64B,128B", "nic.overhead=96B"}})
	if err == nil || err.Error() != "--sweep nic.overhead: is given twice; give all its values in one --sweep" {
		t.Errorf("two --sweep of a key: %v", err)
	}
	// Many values of one key are fine until the points pass the limit.
	vals := make([]string, 300)
	for i := range vals {
		vals[i] = units.Size(i + 1).String()
	}
	_, err = ParseOptions("t.yaml", []byte(text), Options{Sweeps: []string{"nic.overhead=" + strings.Join(vals, ",")}})
	if err == nil || !strings.Contains(err.Error(), "sweep: 2 × 300 = 600 points") && !strings.Contains(err.Error(), "2 × 2 × 300 = 1200 points is more than the limit of 1024") {
		t.Errorf("too many points: %v", err)
	}
}

func TestSweepErrors(t *testing.T) {
	cases := []struct {
		name, key, text string
	}{
		{"invalid value", "workload.qps", minimal + "sweep:\n  workload.qps: [1, 2, 0] # <-\n"},
		{"bad value type", "workload.qps", minimal + "sweep:\n  workload.qps: [1, x] # <-\n"},
		{"bad unit", "nic.mtu", minimal + "sweep:\n  nic.mtu:\n    - 4KiB\n    - 4KBB # <-\n"},
		{"unknown key", "workload.qpz", minimal + "sweep:\n  workload.qpz: [1] # <-\n"},
		{"not a dotted key", "Workload", minimal + "sweep:\n  Workload: [1] # <-\n"},
		{"not a list", "workload.qps", minimal + "sweep:\n  workload.qps: 4 # <-\n"},
		{"empty list", "workload.qps", minimal + "sweep:\n  workload.qps: [] # <-\n"},
		{"no values", "workload.qps", minimal + "sweep:\n  workload.qps: # <-\n"},
		{"not a mapping", "sweep", minimal + "sweep: [workload.qps] # <-\n"},
		{"value twice", "workload.qps", minimal + "sweep:\n  workload.qps: [1, 2, 1] # <-\n"},
		{"key twice", "sweep.seed", minimal + "sweep:\n  seed: [1]\n  seed: [2] # <-\n"},
		{"sweep the name", "name", minimal + "sweep:\n  name: [a, b] # <-\n"},
		{"sweep the variants", "variants", minimal + "sweep:\n  variants: [a] # <-\n"},
		{"sweep the sweep", "sweep.seed", minimal + "sweep:\n  sweep.seed: [1] # <-\n"},
		{"overlap", "workload.qps", minimal + "sweep:\n  workload: [{qps: 2}]\n  workload.qps: [1] # <-\n"},
		{"in a variant", "variants[0].sweep", minimal + "variants:\n  - name: a\n    sweep: {seed: [1, 2]} # <-\n"},
		{"too many points", "sweep", minimal + "sweep: # <-\n  seed: [1, 2, 3, 4, 5, 6, 7, 8]\n  workload.qps: [1, 2, 3, 4, 5, 6, 7, 8]\n  nic.burst: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]\n"},
		{"too many with variants", "sweep", minimal + "variants:\n  - name: a\n  - name: b\nsweep: # <-\n  seed: [1, 2, 3, 4, 5, 6, 7, 8]\n  workload.qps: [1, 2, 3, 4, 5, 6, 7, 8]\n  nic.burst: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"},
		// A value that breaks another key is blamed on the value.
		{"breaks another key", "switch.pfc.xon", minimal + "sweep:\n  switch.pfc.xoff: [1MB, 100KB] # <-\n"},
		{"breaks a variant", "workload.algorithm", minimal + "variants:\n  - name: a\n  - name: b\n    workload: {algorithm: pairwise}\nsweep:\n  seed: [1, 2]\n  workload.kind: [alltoall, allreduce] # <-\n"},
		// A problem of the file itself is reported as without a sweep.
		{"file problem", "nic.mtu", minimal + "nic:\n  mtu: 1B # <-\nsweep:\n  workload.qps: [1, 2]\n"},
		{"variant problem", "nic.mtu", minimal + "variants:\n  - name: a\n    nic: {mtu: 1B} # <-\nsweep:\n  workload.qps: [1, 2]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.text))
			checkError(t, "s.yaml", c.text, err, c.key)
		})
	}

	// The exact forms.
	exact := []struct{ text, want string }{
		{minimal + "sweep:\n  workload.qps: [1, 2, 0]\n",
			`s.yaml:4:24: sweep workload.qps: point "qps=0": workload.qps: needs at least 1 queue pair per rank pair, got 0`},
		{minimal + "variants:\n  - name: a\nsweep:\n  workload.qps: [1, 0]\n",
			`s.yaml:6:21: sweep workload.qps: point "a qps=0": workload.qps: needs at least 1 queue pair per rank pair, got 0`},
		{minimal + "sweep:\n  workload.qps: [1, x]\n", `s.yaml:4:21: sweep workload.qps: needs a whole number, got "x"`},
		{minimal + "sweep:\n  seed: [1, 2, 3, 4, 5, 6, 7, 8]\n  workload.qps: [1, 2, 3, 4, 5, 6, 7, 8]\n  nic.burst: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]\n",
			"s.yaml:3:1: sweep: 8 × 8 × 17 = 1088 points is more than the limit of 1024; sweep fewer values"},
		{minimal + "variants:\n  - name: a\n  - name: b\nsweep:\n  seed: [1, 2, 3, 4, 5, 6, 7, 8]\n  workload.qps: [1, 2, 3, 4, 5, 6, 7, 8]\n  nic.burst: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n",
			"s.yaml:6:1: sweep: 2 variants × 8 × 8 × 9 = 1152 points is more than the limit of 1024; sweep fewer values"},
		{minimal + "switch:\n  pfc: {xon: 100KB}\nsweep:\n  switch.pfc.xoff: [1MB, 50KB]\n",
			`s.yaml:6:26: sweep switch.pfc.xoff: point "xoff=50KB": switch.pfc.xon: 100KB is above xoff 50KB; set xon at or below xoff (see s.yaml:4:14)`},
		{minimal + "variants:\n  - name: a\n    sweep: {seed: [1]}\n",
			"s.yaml:5:5: variants[0].sweep: a variant cannot have its own sweep; write sweep at the top level, where it applies to every variant"},
		{minimal + "nic: {mtu: 1B}\nsweep: {workload.qps: [1, 2]}\n", "s.yaml:3:12: nic.mtu: must be between 64B and 64KiB, got 1B"},
		{minimal + "variants:\n  - name: a\n    nic: {mtu: 1B}\nsweep: {workload.qps: [1, 2]}\n", `s.yaml:5:16: variant "a": nic.mtu: must be between 64B and 64KiB, got 1B`},
	}
	for _, c := range exact {
		_, err := Parse("s.yaml", []byte(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("err =\n  %v\nwant\n  %s", err, c.want)
		}
	}
	// The error says which sweep value and point.
	_, err := Parse("s.yaml", []byte(minimal+"sweep:\n  workload.qps: [1, 0]\n"))
	var e *Error
	if !errors.As(err, &e) || e.Sweep != "workload.qps" || e.Point != "qps=0" || e.Key != "workload.qps" || e.Line != 4 {
		t.Errorf("Error = %+v", e)
	}
}
