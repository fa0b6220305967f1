package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"

	"fabriclab/internal/inputfile"
	"fabriclab/workload"
)

// File is a loaded scenario file: the base scenario, its variants resolved
// into full scenarios, and what is needed to point errors back at the text.
type File struct {
	// Path is the file name as given (used in error messages).
	Path string
	// Dir is the directory of the file; relative paths in the file (such as
	// workload.file) are relative to it.
	Dir string
	// Source is the text of the file.
	Source []byte
	// Base is the scenario written at the top level of the file, defaults
	// filled in. Base.Variants is the same slice as Variants.
	Base *Scenario
	// Variants are run in order; a file without variants has one, "base".
	// With a sweep they are the sweep points: every variant of the file at
	// every point, in that order (see sweep.go).
	Variants []Variant
	// Sweep is the sweep after the command line's --sweep options (nil
	// without one): its keys in order, first varying slowest.
	Sweep []SweepDim
	// Sets are the --set overrides applied, in order; Sweeps the --sweep
	// options.
	Sets, Sweeps []string

	// allowFile, when set (Options.AllowFile), is asked about every file
	// the scenario names before it is opened.
	allowFile func(path string) error
	// engine is Options.Engine: EngineHosts when the jobs run on real
	// hosts, EngineNone when no engine runs them, "" when the simulator
	// sim.engine picks does.
	engine string

	// Specs as decoded, before per-kind defaults are filled in; the exported
	// ones are rebuilt from these after every change (see finalize).
	raw      *Scenario
	baseLocs map[string]loc
	variants []rawVariant // the variants run: the file's, or their sweep points
	explicit bool         // the file has a variants list
	sweep    []sweepDim
	parents  []rawVariant // with a sweep: the file's variants the points expand

	read *readCache
	// savedRun is Options.SavedRun: the checks added since runs were
	// saved (a size or sweep value given twice by value) are not made.
	savedRun bool
}

// newWalker is a walker of the file's text and options.
func (f *File) newWalker() *walker {
	w := newWalker(f.Path)
	w.savedRun = f.savedRun
	return w
}

// readCache holds the files a scenario names (flow lists by path, size
// distributions by name), read once at validation time, so that
// jobs reuse them; a File may be shared by goroutines after loading.
type readCache struct {
	mu    sync.Mutex
	files map[string]*flowFile
	dists map[string]distEntry // size distributions (messages.go)
	lines map[string]int64     // flow lists' line counts, by path (validate.go)
	// checks holds the fabric and routing-table checks shared by the
	// variants (validate.go); it has a lock of its own.
	checks validation
}

type rawVariant struct {
	name string
	at   loc // where its name is written
	spec *Scenario
	locs map[string]loc // keys written in the variant (and --set), over the base
	// A sweep point: the index of its variant in File.parents and its
	// value of each swept key.
	parent int
	point  []pointValue
}

type flowFile struct {
	flows []workload.FlowSpec
	total int64
	err   error
}

// Load reads, decodes and validates a scenario file.
func Load(path string) (*File, error) {
	return LoadSets(path, nil)
}

// LoadSets is Load followed by ApplySets, validating once at the end (so an
// override may repair a file that is invalid on its own).
func LoadSets(path string, sets []string) (*File, error) {
	return LoadOptions(path, Options{Sets: sets})
}

// Options are the command line's changes to a scenario file.
type Options struct {
	// Sets are --set key=value overrides, applied last (they win over the
	// variants and the sweep).
	Sets []string
	// Sweeps are --sweep key=v1,v2,… (or key=[v1, v2]) options: each adds a
	// key to the file's sweep, or gives a key it sweeps new values.
	Sweeps []string
	// Unchecked reads the file as far as it decodes, without validating
	// it or reading the files it names: only to list those files
	// (ReferencedFiles) for a scenario that may no longer validate (a
	// size distribution gone). Nothing may run from such a File.
	Unchecked bool
	// SavedRun reads a run saved earlier again: a --set of a swept key,
	// refused now, was taken then (it won over the sweep) and is taken
	// again, so that the run's scenario still reads.
	SavedRun bool
	// MaxBytes is the largest scenario text accepted (--max-scenario-size);
	// 0 means DefaultMaxBytes. See prescan.go for the limits behind it.
	MaxBytes int64
	// AllowFile, when set, is asked about every file the scenario names
	// (flow lists, routes files, size distributions by path, topology
	// files), resolved, before it is opened: an error refuses it unread (a
	// server reads only the files it serves).
	AllowFile func(path string) error
	// Engine is what runs the jobs when the command line picks it over
	// sim.engine: EngineHosts (run and validate --engine hosts, lab up),
	// where no simulator runs and the refusals of the simulator's engines
	// (sim.engine flow's, sim.partitions', probes') are not made, or
	// EngineNone. "" is the simulator sim.engine picks, with all of them.
	Engine string
}

const (
	// EngineHosts is Options.Engine for jobs run on real hosts (--engine
	// hosts).
	EngineHosts = "hosts"
	// EngineNone is Options.Engine for a file whose jobs no engine runs:
	// analyze, which reads the fabric and the traffic, and a saved run
	// read back for show, report and the web UI, which was valid for
	// whatever engine ran it. No engine's refusals are made.
	EngineNone = "none"
)

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// LoadOptions reads a scenario file, applies o and validates once at the
// end.
func LoadOptions(path string, o Options) (*File, error) {
	data, err := readScenario(path, o.maxBytes())
	if err != nil {
		return nil, err
	}
	return parse(path, data, o)
}

// readScenario reads the file at path through internal/inputfile, which
// refuses before reading anything what is not a regular file (a named pipe
// would block, /dev/zero never ends) and never reads more than limit; a
// file larger than limit is refused first, naming the option that raises
// it.
func readScenario(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, sizeError(path, st.Size(), limit)
	}
	f, err := inputfile.Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if st != nil && st.Mode().IsRegular() {
		buf.Grow(int(st.Size()) + bytes.MinRead) // one read, no copy
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, sizeOrError(path, err, limit)
	}
	return buf.Bytes(), nil
}

// sizeOrError words a read error past the limit (the file grew since it
// was looked at) as the limit error.
func sizeOrError(path string, err error, limit int64) error {
	var e *inputfile.Error
	if errors.As(err, &e) && e.Err == nil {
		return sizeError(path, -1, limit)
	}
	return err
}

// Parse decodes and validates scenario text; name is used in error messages
// and its directory resolves relative paths.
func Parse(name string, data []byte) (*File, error) {
	return parse(name, data, Options{})
}

// ParseOptions is Parse with command-line options.
func ParseOptions(name string, data []byte, o Options) (*File, error) {
	return parse(name, data, o)
}

func parse(name string, data []byte, o Options) (*File, error) {
	if limit := o.maxBytes(); int64(len(data)) > limit {
		return nil, sizeError(name, int64(len(data)), limit)
	}
	if err := prescan(name, data, defaultTextLimits); err != nil {
		return nil, err
	}
	if o.Engine != "" && o.Engine != EngineHosts && o.Engine != EngineNone {
		return nil, fmt.Errorf("scenario: unknown engine %q (Options.Engine: %q, %q or empty)", o.Engine, EngineHosts, EngineNone)
	}
	sets := o.Sets
	f := &File{Path: name, Dir: filepath.Dir(name), Source: data, read: &readCache{files: map[string]*flowFile{}}, allowFile: o.AllowFile, engine: o.Engine, savedRun: o.SavedRun}
	if err := f.decode(); err != nil {
		return nil, err
	}
	if err := f.addSweeps(o.Sweeps); err != nil {
		return nil, err
	}
	if err := f.expand(); err != nil {
		return nil, err
	}
	if !o.SavedRun {
		if err := f.setsOffSweep(sets); err != nil {
			return nil, err
		}
	}
	valid := len(sets) == 0 || o.Unchecked || f.Validate() == nil
	if err := f.applySets(sets); err != nil {
		return nil, err
	}
	f.finalize()
	if err := f.checkJobCount(); err != nil {
		return nil, err
	}
	if o.Unchecked {
		return f, nil
	}
	if err := f.checkSizesAlone(); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, blameSets(err, sets, valid)
	}
	return f, nil
}

// Keys a variant may override: everything but the scenario name.
var variantKeys = []string{"description", "jobs", "nic", "probes", "seed", "sim", "switch", "topology", "transport", "workload"}

func (f *File) decode() error {
	w := f.newWalker()
	root, err := f.parseDoc(w)
	if err != nil {
		return err
	}
	if root == nil {
		return (loc{line: 1, col: 1}).err(f.Path, "", "", "file is empty: a scenario needs at least topology and workload")
	}
	base := Defaults()
	var variantsNode, sweepKey, sweepNode ast.Node
	var kept []*ast.MappingValueNode
	if root != nil {
		es, err := w.entries(root, nil, "")
		if err != nil {
			return err
		}
		seen := map[string]ast.Node{}
		for _, mv := range es {
			key, err := w.keyName(mv, "")
			if err != nil {
				return err
			}
			if err := w.once(seen, mv, "", key); err != nil {
				return err
			}
			switch key {
			case "variants":
				variantsNode = mv.Value
				w.rec(key, mv.Key)
				continue
			case "sweep":
				sweepKey, sweepNode = mv.Key, mv.Value
				w.rec(key, mv.Key)
				continue
			}
			fld, ok := field(reflect.TypeFor[Scenario](), key)
			if !ok {
				return w.unknownKey(mv, reflect.TypeFor[Scenario](), "", key, nil)
			}
			if err := w.walk(mv.Value, mv.Key, fld.Type, key); err != nil {
				return err
			}
			kept = append(kept, mv)
		}
	}
	if err := decodeOnto(w, base, root, kept, w.locs); err != nil {
		return err
	}
	if strings.TrimSpace(base.Name) == "" {
		base.Name = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
	}
	f.raw, f.baseLocs = base, w.locs
	if err := f.decodeVariants(w, variantsNode); err != nil {
		return err
	}
	return f.decodeSweep(w, sweepKey, sweepNode)
}

// parseDoc parses the text into a plain tree (see resolve); nil means an
// empty document. The lexer's tokens are checked (see checkTokens) before
// the parser, whose cost is not linear, sees them.
func (f *File) parseDoc(w *walker) (ast.Node, error) {
	tokens := lexer.Tokenize(string(inputfile.TrimBOM(f.Source)))
	if err := checkTokens(f.Path, tokens, defaultTextLimits); err != nil {
		return nil, err
	}
	file, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		e := yamlError(f.Path, loc{}, "", err)
		if strings.Contains(e.Msg, "\t") || strings.Contains(e.Msg, "tab character") {
			tabError(e, f.Source)
		}
		return nil, e
	}
	var body ast.Node
	for _, d := range file.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			return nil, w.errf(d.Body, "", "only one YAML document per file (found a second one)")
		}
		body = d.Body
	}
	switch body.(type) {
	case nil, *ast.CommentGroupNode, *ast.NullNode:
		return nil, nil // nothing but comments, "---" or "~"
	}
	return resolve(w, body)
}

// tabError rewrites a parser error caused by a tab, whose message shows the
// tab as an invisible character: YAML indents with spaces only. It points
// at the tab in the indentation of the error's line or, failing that, of
// the closest line above.
func tabError(e *Error, src []byte) {
	e.Msg = "a tab is used for indentation; YAML indents with spaces only (replace the tab with spaces)"
	lines := strings.Split(string(src), "\n")
	for n := min(e.Line, len(lines)); n >= 1; n-- {
		l := lines[n-1]
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if i := strings.IndexByte(indent, '\t'); i >= 0 {
			e.Line, e.Col = n, i+1
			return
		}
	}
	if e.Line >= 1 && e.Line <= len(lines) {
		if i := strings.IndexByte(lines[e.Line-1], '\t'); i >= 0 {
			e.Col = i + 1
		}
	}
	e.Msg = "a tab is used where YAML needs spaces (replace the tab with spaces)"
}

// decodeOnto decodes the checked entries of mapping root onto spec with the
// YAML library, strictly. Keys not written keep the value spec already has,
// which is how defaults, variants and --set layer. locs are the locations
// of spec, noted in by clearSizes.
func decodeOnto(w *walker, spec *Scenario, root ast.Node, kept []*ast.MappingValueNode, locs map[string]loc) error {
	if len(kept) == 0 {
		return nil
	}
	clearSizes(w, spec, kept, locs)
	m := ast.Mapping(kept[0].GetToken(), false, kept...)
	if err := yaml.NodeToValue(m, spec, yaml.DisallowUnknownField()); err != nil {
		return yamlError(w.file, w.loc(root), "", err)
	}
	return nil
}

// clearSizes makes the two forms of workload.sizes replace each other when
// layered: writing list drops an inherited from/to sweep and writing from or
// to drops an inherited list. Without this a variant could never switch
// form, because "from/to and list" together is an error. Switching from a
// list takes both ends, which may come from two layers (two --set options,
// a variant and a sweep); one written alone over a list is noted in locs
// (sizesAlone) and refused by checkSizesAlone if the other never comes,
// rather than as "from: must be more than 0, got 0B". So is factor alone
// over a list, which would change nothing.
func clearSizes(w *walker, spec *Scenario, kept []*ast.MappingValueNode, locs map[string]loc) {
	sizes := lookup(lookup(kept, "workload"), "sizes")
	if sizes == nil {
		return
	}
	var es []*ast.MappingValueNode
	switch m := sizes.(type) {
	case *ast.MappingNode:
		es = m.Values
	case *ast.MappingValueNode:
		es = []*ast.MappingValueNode{m}
	}
	given := map[string]*ast.MappingValueNode{}
	for _, mv := range es {
		given[keyString(mv)] = mv
	}
	if len(spec.Workload.Sizes.List) > 0 && given["list"] == nil && (given["from"] == nil || given["to"] == nil) {
		for _, k := range []string{"from", "to", "factor"} {
			if mv := given[k]; mv != nil {
				locs[sizesAlone+k] = w.loc(mv.Value)
				break
			}
		}
	}
	for k := range given {
		switch k {
		case "list":
			spec.Workload.Sizes.From, spec.Workload.Sizes.To = 0, 0
		case "from", "to":
			spec.Workload.Sizes.List = nil
		}
	}
}

// sizesAlone+KEY, in the locations of a spec, is where workload.sizes.KEY
// was written alone over a list (see clearSizes); not a key of the schema.
const sizesAlone = "workload.sizes (alone) "

// checkSizesAlone refuses a variant whose workload.sizes was a list until
// from, to or factor alone was written over it, without the rest of a
// from/to sweep.
func (f *File) checkSizesAlone() error {
	for _, rv := range f.variants {
		s := rv.spec.Workload.Sizes
		for _, k := range []string{"from", "to", "factor"} {
			at, ok := rv.locs[sizesAlone+k]
			if !ok {
				at, ok = f.baseLocs[sizesAlone+k]
			}
			if !ok {
				continue
			}
			msg := ""
			switch {
			case k == "factor" && len(s.List) > 0 && s.From == 0 && s.To == 0:
				msg = "the scenario gives workload.sizes as a list, which has no factor: set from and to with it (workload.sizes={from: …, to: …, factor: …}) or leave factor out"
			case k != "factor" && len(s.List) == 0 && (s.From == 0) != (s.To == 0):
				msg = "the scenario gives workload.sizes as a list, which " + k + " alone cannot change: set from and to together (workload.sizes={from: …, to: …}) or replace the list (workload.sizes.list=[…])"
			default:
				continue
			}
			variant := ""
			if _, own := rv.locs[sizesAlone+k]; own && f.explicit && len(rv.point) == 0 {
				variant = rv.name
			}
			e := at.err(f.Path, variant, "workload.sizes."+k, msg)
			for _, pv := range rv.point {
				if d := f.sweep[pv.d]; d.values[pv.v].at == at {
					e.Sweep, e.Point = d.key, rv.name
				}
			}
			return e
		}
	}
	return nil
}

// lookup finds key in a mapping given as entries or as a node.
func lookup(in any, key string) ast.Node {
	var es []*ast.MappingValueNode
	switch m := in.(type) {
	case []*ast.MappingValueNode:
		es = m
	case *ast.MappingNode:
		es = m.Values
	case *ast.MappingValueNode:
		es = []*ast.MappingValueNode{m}
	}
	for _, mv := range es {
		if keyString(mv) == key {
			return mv.Value
		}
	}
	return nil
}

func keyString(mv *ast.MappingValueNode) string {
	if s, ok := mv.Key.(*ast.StringNode); ok {
		return s.Value
	}
	return ""
}

func (f *File) decodeVariants(w *walker, n ast.Node) error {
	f.variants = nil
	f.explicit = false
	if n != nil && n.Type() != ast.NullType {
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return w.errf(n, "variants", "needs a list of variants (- name: …), got %s", describe(n))
		}
		// A sweep bounds the file's variants × its points by maxPoints;
		// without one the variants alone are bounded the same.
		if len(seq.Values) > maxPoints {
			return w.errf(n, "variants", "lists %d entries, at most %d", len(seq.Values), maxPoints)
		}
		f.explicit = len(seq.Values) > 0
		names := map[string]bool{}
		for i, vn := range seq.Values {
			rv, err := f.decodeVariant(w, i, vn, names)
			if err != nil {
				return err
			}
			f.variants = append(f.variants, rv)
		}
	}
	if !f.explicit {
		f.variants = []rawVariant{{name: "base", spec: f.raw, locs: map[string]loc{}}}
	}
	return nil
}

func (f *File) decodeVariant(parent *walker, i int, n ast.Node, names map[string]bool) (rawVariant, error) {
	w := f.newWalker()
	w.left = parent.left // one node budget for the whole file
	rv, err := f.decodeVariantNode(w, i, n, names)
	parent.left = w.left
	var e *Error
	if err != nil && errors.As(err, &e) && e.Variant == "" && !strings.HasPrefix(e.Key, "variants[") {
		// Name the variant, whose name may come after the bad key.
		if s, ok := lookup(n, "name").(*ast.StringNode); ok && s.Value != "" {
			e.Variant = s.Value
		}
	}
	return rv, err
}

func (f *File) decodeVariantNode(w *walker, i int, n ast.Node, names map[string]bool) (rawVariant, error) {
	path := fmt.Sprintf("variants[%d]", i)
	es, err := w.entries(n, nil, path)
	if err != nil {
		return rawVariant{}, err
	}
	rv := rawVariant{at: w.loc(n)}
	var kept []*ast.MappingValueNode
	seen := map[string]ast.Node{}
	hasName := false
	for _, mv := range es {
		key, err := w.keyName(mv, path)
		if err != nil {
			return rawVariant{}, err
		}
		if err := w.once(seen, mv, path, key); err != nil {
			return rawVariant{}, err
		}
		switch key {
		case "name":
			hasName = true
			s, err := w.scalar(mv.Value, join(path, key), "a name")
			if err != nil {
				return rawVariant{}, err
			}
			s = strings.TrimSpace(s)
			if s == "" {
				return rawVariant{}, w.errf(mv.Value, join(path, key), "a variant name must not be empty")
			}
			if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				return rawVariant{}, w.errf(mv.Value, join(path, key), "a variant name must be one line of printable text, got %q", s)
			}
			if names[s] {
				return rawVariant{}, w.errf(mv.Value, join(path, key), "variant %q is defined twice; names must be unique", s)
			}
			names[s] = true
			rv.name, rv.at = s, w.loc(mv.Value)
			continue
		case "variants":
			return rawVariant{}, w.errf(mv.Key, join(path, key), "variants cannot be nested")
		case "sweep":
			return rawVariant{}, w.errf(mv.Key, join(path, key), "a variant cannot have its own sweep; write sweep at the top level, where it applies to every variant")
		}
		fld, ok := field(reflect.TypeFor[Scenario](), key)
		if !ok {
			return rawVariant{}, w.unknownKey(mv, nil, path, key, append([]string{"name"}, variantKeys...))
		}
		if err := w.walk(mv.Value, mv.Key, fld.Type, key); err != nil {
			return rawVariant{}, err
		}
		kept = append(kept, mv)
	}
	if !hasName {
		return rawVariant{}, w.errf(n, path, "a variant needs a name (- name: …)")
	}
	rv.spec = clone(f.raw)
	if err := decodeOnto(w, rv.spec, n, kept, w.locs); err != nil {
		return rawVariant{}, err
	}
	rv.locs = w.locs
	return rv, nil
}

// finalize rebuilds the exported scenarios from the raw ones, filling in
// what depends on other keys (the algorithm of the workload kind, ranks = all
// hosts). Keeping raw specs lets a variant or --set change the kind or the
// topology without inheriting a value derived from the old one.
func (f *File) finalize() {
	f.Base = finalized(f.raw)
	f.Variants = make([]Variant, len(f.variants))
	for i, rv := range f.variants {
		v := Variant{Name: rv.name, Spec: finalized(rv.spec), Sweep: f.sweepValues(rv)}
		if v.Sweep != nil && f.explicit {
			v.Parent = f.parents[rv.parent].name
		}
		f.Variants[i] = v
	}
	f.Sweep = f.sweepDims()
	f.Base.Variants, f.Base.Sweep = f.Variants, f.Sweep
}

// allowed is the AllowFile check of a file the scenario names as name,
// resolved to path.
func (f *File) allowed(name, path string) error {
	if f.allowFile == nil {
		return nil
	}
	if err := f.allowFile(path); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

func finalized(raw *Scenario) *Scenario {
	s := clone(raw)
	s.Name = strings.TrimSpace(s.Name)
	s.Transport.DCQCN.Preset = strings.ToLower(strings.TrimSpace(s.Transport.DCQCN.Preset))
	finalizeWorkload(&s.Workload, s.Topology)
	for i := range s.Jobs {
		finalizeWorkload(&s.Jobs[i].Workload, s.Topology)
		s.Jobs[i].Name = strings.TrimSpace(s.Jobs[i].Name)
	}
	for i := range s.Probes {
		if s.Probes[i].Size == 0 {
			s.Probes[i].Size = defaultProbeLen
		}
	}
	return s
}

// clone deep-copies a scenario (pointers and slices included), so that a
// variant's decoding never writes through to the base.
func clone(s *Scenario) *Scenario {
	c := deepCopy(reflect.ValueOf(s)).Interface().(*Scenario)
	c.Variants, c.Sweep = nil, nil
	return c
}

func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Ptr:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return c
	}
	return v
}

// finalizeWorkload fills in the algorithm of the kind and the ranks: the
// kind's own count, the hosts of placement: list, or every host from
// host_offset on.
func finalizeWorkload(w *Workload, t Topology) {
	if w.Algorithm == "" {
		w.Algorithm = defaultAlgorithm(w.Kind)
	}
	if w.Ranks == 0 && w.HostOffset >= 0 {
		w.Ranks = max(jobRanks(*w, Hosts(t)), 0)
	}
}
