package scenario

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml/ast"

	"fabriclab/internal/inputfile"
)

// A sweep runs every variant at every point of a grid of values:
//
//	sweep:
//	  workload.qps: [1, 2, 4, 8]
//	  workload.algorithm: [direct, pairwise]
//
// Each key is a dotted scenario key, exactly as --set takes it, and each
// point applies its values like --set on a variant's spec: after the
// variant's own overrides and before the command line's --set (which still
// wins). The points of a variant are the cartesian product of the lists,
// the first key varying slowest; each becomes a variant of its own, named
// "VARIANT key=value key2=value2" ("key=value …" alone for a file without
// variants), with the key's last segment when that is unique in the sweep
// and the whole dotted key otherwise.

// maxPoints bounds the variants a sweep expands into (file variants ×
// points), so a typo cannot ask for millions of jobs.
const maxPoints = 1024

// SweepDim is one dimension of a sweep: a dotted key and the values it
// takes, in order, as written.
type SweepDim struct {
	Key    string
	Values []string
}

// SweepValue is the value a sweep point gives one key, as written.
type SweepValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type sweepDim struct {
	key    string
	parts  []string
	at     loc // where the key is written (or the --sweep option)
	values []sweepValue
}

type sweepValue struct {
	text string // as written, on one line
	o    *override
	at   loc
}

// pointValue is one coordinate of a point: dimension d at its value v.
type pointValue struct{ d, v int }

// decodeSweep reads the top-level sweep mapping (n may be nil: no sweep).
func (f *File) decodeSweep(parent *walker, key, n ast.Node) error {
	f.sweep = nil
	if n == nil || n.Type() == ast.NullType {
		return nil
	}
	w := f.newWalker()
	w.left = parent.left // one node budget for the whole file
	defer func() { parent.left = w.left }()
	es, err := w.entries(n, key, "sweep")
	if err != nil {
		return w.errf(n, "sweep", "needs a mapping of dotted keys to lists of values, e.g. {workload.qps: [1, 2, 4]}; got %s", describe(n))
	}
	seen := map[string]ast.Node{}
	for _, mv := range es {
		k, err := w.keyName(mv, "sweep")
		if err != nil {
			return err
		}
		if err := w.once(seen, mv, "sweep", k); err != nil {
			return err
		}
		dimErr := func(n ast.Node, format string, args ...any) error {
			e := w.errf(n, k, format, args...)
			e.Sweep = k
			return e
		}
		parts := strings.Split(k, ".")
		for _, p := range parts {
			if !validKeyPart(p) {
				return dimErr(mv.Key, "not a key: use a dotted scenario key as --set takes it, like workload.qps")
			}
		}
		if err := sweepable(parts[0]); err != nil {
			return dimErr(mv.Key, "%v", err)
		}
		d := sweepDim{key: k, parts: parts, at: w.loc(mv.Key)}
		seq, ok := mv.Value.(*ast.SequenceNode)
		if !ok || len(seq.Values) == 0 {
			at := mv.Value
			if at == nil || at.Type() == ast.NullType {
				at = mv.Key
			}
			got := describe(mv.Value)
			if ok {
				got = "an empty list"
			}
			return dimErr(at, "needs a non-empty list of values, e.g. [1, 2, 4], got %s", got)
		}
		if len(seq.Values) > maxPoints {
			return dimErr(mv.Value, "%d values is more than the limit of %d sweep points", len(seq.Values), maxPoints)
		}
		for _, vn := range seq.Values {
			vw := f.newWalker()
			vw.only, vw.left = k, w.left
			v, err := newSweepValue(vw, d, vn, valueText(vn))
			w.left = vw.left
			if err != nil {
				return err
			}
			d.values = append(d.values, v)
		}
		if err := d.checkValues(w); err != nil {
			return err
		}
		f.sweep = append(f.sweep, d)
	}
	return checkOverlap(f.sweep, w)
}

// sweepable says whether a top-level key may be swept.
func sweepable(top string) error {
	switch top {
	case "variants", "sweep":
		return fmt.Errorf("%s cannot be swept", top)
	case "name":
		return errors.New("the name cannot be swept: every point gets its own name from its values")
	}
	return nil
}

// newSweepValue checks one value of dimension d against the schema and
// makes it ready to apply.
func newSweepValue(w *walker, d sweepDim, n ast.Node, text string) (sweepValue, error) {
	o, err := newOverride(w, d.parts, n)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Sweep = d.key
		}
		return sweepValue{}, err
	}
	return sweepValue{text: text, o: o, at: w.loc(n)}, nil
}

// checkValues rejects a value given twice (two points with one name).
func (d *sweepDim) checkValues(w *walker) error {
	seen := map[string]bool{}
	for _, v := range d.values {
		if seen[v.text] {
			e := v.at.err(w.file, "", d.key, fmt.Sprintf("value %q is given twice", v.text))
			e.Sweep = d.key
			return e
		}
		seen[v.text] = true
	}
	return nil
}

// checkSame rejects two values written differently that give the same
// scenario (1 and 01, 100Gbps and 100G, 64KiB and 65536 in a list): on
// every variant the sweep expands, their points would run the same jobs.
// (checkValues has refused a value written twice.)
func (d *sweepDim) checkSame(file string, parents []rawVariant) error {
	sigs := make([][]byte, len(d.values))
	for _, p := range parents {
		for i, v := range d.values {
			spec := clone(p.spec)
			if err := v.o.apply(spec, map[string]loc{}); err != nil {
				return err
			}
			h := sha256.New()
			canon(h, reflect.ValueOf(spec).Elem())
			sigs[i] = h.Sum(sigs[i])
		}
	}
	first := map[string]int{}
	for i, sig := range sigs {
		j, ok := first[string(sig)]
		if !ok {
			first[string(sig)] = i
			continue
		}
		v, w := d.values[i], d.values[j]
		where := ""
		if w.at.line > 0 {
			where = fmt.Sprintf(" (line %d, column %d)", w.at.line, w.at.col)
		}
		e := v.at.err(file, "", d.key, fmt.Sprintf("value %q is the same as %q%s; a value cannot be given twice", v.text, w.text, where))
		e.Sweep = d.key
		return e
	}
	return nil
}

// canon writes the exported contents of v (pointers followed, nil told
// apart from a zero value) to h, so that equal scenarios write the same
// bytes.
func canon(h io.Writer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Ptr, reflect.Interface:
		if v.IsNil() {
			io.WriteString(h, "nil;")
			return
		}
		io.WriteString(h, "&")
		canon(h, v.Elem())
	case reflect.Struct:
		io.WriteString(h, "{")
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				canon(h, v.Field(i))
			}
		}
		io.WriteString(h, "}")
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			io.WriteString(h, "nil;")
			return
		}
		fmt.Fprintf(h, "[%d:", v.Len())
		for i := 0; i < v.Len(); i++ {
			canon(h, v.Index(i))
		}
		io.WriteString(h, "]")
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
		fmt.Fprintf(h, "map%d:", len(keys))
		for _, k := range keys {
			canon(h, k)
			canon(h, v.MapIndex(k))
		}
	case reflect.String:
		io.WriteString(h, strconv.Quote(v.String())+";")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprintf(h, "%d;", v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fmt.Fprintf(h, "%d;", v.Uint())
	case reflect.Float32, reflect.Float64:
		io.WriteString(h, strconv.FormatFloat(v.Float(), 'g', -1, 64)+";")
	case reflect.Bool:
		fmt.Fprintf(h, "%t;", v.Bool())
	default:
		fmt.Fprintf(h, "%v;", v.Kind())
	}
}

// checkOverlap rejects a key swept together with a key inside it
// (workload and workload.qps): which value would win is not obvious.
func checkOverlap(dims []sweepDim, w *walker) error {
	for i, a := range dims {
		for _, b := range dims[:i] {
			if strings.HasPrefix(a.key, b.key+".") || strings.HasPrefix(b.key, a.key+".") {
				e := a.at.err(w.file, "", a.key, fmt.Sprintf("overlaps the swept key %s; sweep one or the other", b.key))
				e.Sweep = a.key
				return e
			}
		}
	}
	return nil
}

// setsOffSweep refuses a --set of a key the sweep varies, of a key inside
// one, or of a mapping above one that gives it a value (a mapping merges,
// so one without it leaves the sweep alone): applied last, it would give
// every point its value, each point still named after its own (seed=1 and
// seed=2 both run with --seed 5).
func (f *File) setsOffSweep(sets []string) error {
	for _, s := range sets {
		key, _, _ := SplitOption(s)
		for _, d := range f.sweep {
			if OptionSets(s, d.key) {
				values := make([]string, len(d.values))
				for i, v := range d.values {
					values[i] = v.text
					if len(v.text) > inputfile.TokenBytes {
						values[i] = inputfile.Token(v.text)
					}
				}
				return &Error{File: f.Path, Set: key, Msg: fmt.Sprintf("the sweep varies %s (%s): every point would run with this value under its own name; drop the --set (or --seed), or sweep only the values wanted", d.key, strings.Join(values, ", "))}
			}
		}
	}
	return nil
}

// OptionSets reports whether the --set option (KEY=VALUE) sets the dotted
// key: the key itself, a key inside it, or a mapping above it that gives
// it a value (a mapping merges, so one without it leaves it alone).
func OptionSets(option, key string) bool {
	k, value, _ := SplitOption(option)
	if k == key || strings.HasPrefix(k, key+".") {
		return true
	}
	if rest, ok := strings.CutPrefix(key, k+"."); ok {
		return valueSets(value, strings.Split(rest, "."))
	}
	return false
}

// valueSets reports whether a --set value (a mapping) gives the key at
// path inside it; a value that does not parse is left to applySet's error.
func valueSets(value string, path []string) bool {
	n, err := parseValue(value)
	if err != nil {
		return false
	}
	for _, part := range path {
		if n = lookup(n, part); n == nil {
			return false
		}
	}
	return true
}

// valueText is how a value is shown in point names and outputs: a
// scalar's text as written (without quotes), anything else its YAML text,
// on one line.
func valueText(n ast.Node) string {
	var s string
	switch v := n.(type) {
	case *ast.StringNode:
		s = v.Value
	case *ast.LiteralNode:
		if v.Value != nil {
			s = v.Value.Value
		}
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			s = tk.Value
		}
	case *ast.NullNode:
		s = "null"
	default:
		s = n.String()
	}
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	}
	return s
}

// addSweeps applies the command line's --sweep options: "key=v1,v2,v3" or
// "key=[v1, v2]". A key the file sweeps gets the new values in its place;
// a new key is added at the end.
func (f *File) addSweeps(opts []string) error {
	given := map[string]bool{}
	for _, s := range opts {
		d, err := f.parseSweepOption(s)
		if err != nil {
			return err
		}
		if given[d.key] {
			// Two options for one key: the last would win unseen.
			return &Error{File: f.Path, Set: d.key, Flag: "--sweep", Msg: "is given twice; give all its values in one --sweep"}
		}
		given[d.key] = true
		replaced := false
		for i := range f.sweep {
			if f.sweep[i].key == d.key {
				f.sweep[i], replaced = d, true
			}
		}
		if !replaced {
			f.sweep = append(f.sweep, d)
		}
		w := f.newWalker()
		if err := checkOverlap(f.sweep, w); err != nil {
			return err
		}
		f.Sweeps = append(f.Sweeps, s)
	}
	return nil
}

func (f *File) parseSweepOption(s string) (sweepDim, error) {
	key, value, ok := SplitOption(s)
	w := f.newWalker()
	w.set, w.flag = key, "--sweep"
	if key == "" {
		w.set = s
		if s == "" {
			w.set = `""`
		}
		return sweepDim{}, w.errf(nil, "", "needs key=v1,v2,…, e.g. --sweep workload.qps=1,2,4")
	}
	if !ok {
		return sweepDim{}, w.errf(nil, key, "needs key=v1,v2,…, e.g. --sweep %s=V1,V2", key)
	}
	parts, err := keyParts(w, key, "--sweep")
	if err != nil {
		return sweepDim{}, err
	}
	if err := sweepable(parts[0]); err != nil {
		return sweepDim{}, w.errf(nil, key, "%v", err)
	}
	if strings.ContainsAny(value, "\r\n") {
		return sweepDim{}, w.errf(nil, key, "the values must be on one line")
	}
	// Each value is parsed on its own, so no text in it can change the key.
	var nodes []ast.Node
	var texts []string
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, "[") {
		n, err := parseValue(value)
		if err != nil {
			return sweepDim{}, yamlError(f.Path, w.loc(nil), key, err)
		}
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return sweepDim{}, w.errf(nil, key, "needs a list like [v1, v2], got %s", describe(n))
		}
		for _, v := range seq.Values {
			nodes, texts = append(nodes, v), append(texts, valueText(v))
		}
	} else {
		for _, item := range strings.Split(value, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				return sweepDim{}, w.errf(nil, key, "needs values separated by commas, e.g. --sweep %s=V1,V2 (write [V1, V2] for values with commas)", key)
			}
			n, err := parseValue(item)
			if err != nil {
				return sweepDim{}, yamlError(f.Path, w.loc(nil), key, err)
			}
			nodes, texts = append(nodes, n), append(texts, valueText(n))
		}
	}
	if len(nodes) == 0 {
		return sweepDim{}, w.errf(nil, key, "needs at least one value")
	}
	if len(nodes) > maxPoints {
		return sweepDim{}, w.errf(nil, key, "%d values is more than the limit of %d sweep points", len(nodes), maxPoints)
	}
	d := sweepDim{key: key, parts: parts, at: w.loc(nil)}
	for i, n := range nodes {
		if n, err = resolve(w, n); err != nil {
			return sweepDim{}, err
		}
		vw := f.newWalker()
		vw.set, vw.flag = key, "--sweep"
		v, err := newSweepValue(vw, d, n, texts[i])
		if err != nil {
			return sweepDim{}, err
		}
		d.values = append(d.values, v)
	}
	if err := d.checkValues(w); err != nil {
		return sweepDim{}, err
	}
	return d, nil
}

// SweepLabels are the names of the keys in point names (and the summary
// table's columns): the last segment of a key when no other swept key ends
// the same way, else the whole key.
func SweepLabels(keys []string) []string {
	last := func(k string) string { return k[strings.LastIndexByte(k, '.')+1:] }
	count := map[string]int{}
	for _, k := range keys {
		count[last(k)]++
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		if count[last(k)] == 1 {
			out[i] = last(k)
		}
	}
	return out
}

// expand replaces the file's variants by their sweep points (the variants
// themselves are kept as parents, for error messages). Without a sweep it
// does nothing.
func (f *File) expand() error {
	f.parents = nil
	if len(f.sweep) == 0 {
		return nil
	}
	parents := f.variants
	n := len(parents)
	for _, d := range f.sweep {
		n *= len(d.values) // each factor ≤ maxPoints, checked below before it can overflow
		if n > maxPoints {
			break
		}
	}
	if n > maxPoints {
		total := big.NewInt(int64(len(parents)))
		counts := []string{}
		if f.explicit {
			counts = append(counts, fmt.Sprintf("%d variants", len(parents)))
		}
		for _, d := range f.sweep {
			counts = append(counts, fmt.Sprint(len(d.values)))
			total.Mul(total, big.NewInt(int64(len(d.values))))
		}
		at := f.sweep[0].at
		if l, ok := f.baseLocs["sweep"]; ok {
			at = l
		}
		return at.err(f.Path, "", "sweep", fmt.Sprintf("%s = %d points is more than the limit of %d; sweep fewer values",
			strings.Join(counts, " × "), total, maxPoints))
	}
	for _, d := range f.sweep {
		if f.savedRun {
			break
		}
		if err := d.checkSame(f.Path, parents); err != nil {
			return err
		}
	}
	keys := make([]string, len(f.sweep))
	for i, d := range f.sweep {
		keys[i] = d.key
	}
	labels := SweepLabels(keys)
	names := map[string]bool{}
	points := make([]rawVariant, 0, n)
	for pi, pv := range parents {
		idx := make([]int, len(f.sweep)) // an odometer, the last key fastest
		for {
			rv := rawVariant{at: pv.at, spec: clone(pv.spec), locs: copyLocs(pv.locs), parent: pi}
			words := []string{}
			if f.explicit {
				words = append(words, pv.name)
			}
			for d, v := range idx {
				val := f.sweep[d].values[v]
				if err := val.o.apply(rv.spec, rv.locs); err != nil {
					return err
				}
				rv.point = append(rv.point, pointValue{d, v})
				words = append(words, labels[d]+"="+val.text)
			}
			rv.name = strings.Join(words, " ")
			if names[rv.name] {
				d := len(idx) - 1
				e := f.sweep[d].at.err(f.Path, "", "", "two sweep points have this name; make the values or variant names distinct")
				e.Sweep, e.Point = f.sweep[d].key, rv.name
				return e
			}
			names[rv.name] = true
			points = append(points, rv)
			d := len(idx) - 1
			for ; d >= 0; d-- {
				if idx[d]++; idx[d] < len(f.sweep[d].values) {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				break
			}
		}
	}
	f.parents, f.variants = parents, points
	return nil
}

// checkPoints validates every sweep point. A problem is put on the sweep
// value it comes from: the value itself when the failing key is the swept
// one, else the value that breaks the variant (the variant alone being
// valid). A problem of the variant itself is reported as without a sweep.
func (f *File) checkPoints() error {
	parentErr := map[int]error{}
	for _, rv := range f.variants {
		err := f.check(rv, "")
		if err == nil {
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			return err
		}
		for _, pv := range rv.point {
			d := f.sweep[pv.d]
			if at := d.values[pv.v].at; e.Line == at.line && e.Col == at.col && e.Set == at.set && e.Flag == at.flag {
				return f.pointError(e, rv, d, at, false)
			}
		}
		pe, ok := parentErr[rv.parent]
		if !ok {
			pe = f.check(f.parents[rv.parent], f.variantName(f.parents[rv.parent]))
			parentErr[rv.parent] = pe
		}
		if pe != nil {
			// The variant is wrong on its own: say so as without a sweep,
			// unless this point's problem is another one.
			var pe2 *Error
			if errors.As(pe, &pe2) && pe2.Key == e.Key {
				return pe
			}
			c := *e
			c.Variant = f.variantName(f.parents[rv.parent])
			return &c
		}
		// The variant is valid and the point is not: blame the first value
		// that breaks the variant on its own, else the last key's value.
		blame := rv.point[len(rv.point)-1]
		for _, pv := range rv.point {
			parent := f.parents[rv.parent]
			one := rawVariant{name: rv.name, at: parent.at, spec: clone(parent.spec), locs: copyLocs(parent.locs)}
			if err := f.sweep[pv.d].values[pv.v].o.apply(one.spec, one.locs); err != nil || f.check(one, "") != nil {
				blame = pv
				break
			}
		}
		d := f.sweep[blame.d]
		return f.pointError(e, rv, d, d.values[blame.v].at, true)
	}
	return nil
}

// pointError puts e on a sweep value at, naming the key and the point; see
// says where the failing key itself is written.
func (f *File) pointError(e *Error, rv rawVariant, d sweepDim, at loc, see bool) error {
	c := *e
	c.Line, c.Col, c.Set, c.Flag = at.line, at.col, at.set, at.flag
	c.Sweep, c.Point, c.Variant = d.key, rv.name, ""
	if see && (e.Line > 0 || e.Set != "") && (e.Line != at.line || e.Col != at.col || e.Set != at.set) {
		if e.Set != "" {
			flag := e.Flag
			if flag == "" {
				flag = "--set"
			}
			c.Msg = fmt.Sprintf("%s (see %s %s)", e.Msg, flag, e.Set)
		} else {
			c.Msg = fmt.Sprintf("%s (see %s:%d:%d)", e.Msg, e.File, max(e.Line, 1), max(e.Col, 1))
		}
	}
	return &c
}

// sweepValues is the point of rv as key/value pairs (nil without a sweep).
func (f *File) sweepValues(rv rawVariant) []SweepValue {
	if len(rv.point) == 0 {
		return nil
	}
	out := make([]SweepValue, len(rv.point))
	for i, pv := range rv.point {
		d := f.sweep[pv.d]
		out[i] = SweepValue{Key: d.key, Value: d.values[pv.v].text}
	}
	return out
}

// sweepDims is the exported form of the sweep.
func (f *File) sweepDims() []SweepDim {
	if len(f.sweep) == 0 {
		return nil
	}
	out := make([]SweepDim, len(f.sweep))
	for i, d := range f.sweep {
		out[i].Key = d.key
		for _, v := range d.values {
			out[i].Values = append(out[i].Values, v.text)
		}
	}
	return out
}
