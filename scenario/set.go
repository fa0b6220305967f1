package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ApplySets applies command-line overrides "key=value" (dotted keys, YAML
// values: transport.dcqcn.preset=off, topology.host_link.rate=100Gbps,
// workload.sizes.list=[1MB,2MB]) to the base and to every variant, after
// the variants' own overrides, so --set wins. It then validates; on any
// error the file is left as it was. Errors name the override: "--set key: …".
func ApplySets(f *File, sets []string) error {
	if len(sets) == 0 {
		return nil
	}
	if err := f.setsOffSweep(sets); err != nil {
		return err
	}
	saved := *f
	valid := f.Validate() == nil
	if err := f.applySets(sets); err != nil {
		*f = saved
		return err
	}
	f.finalize()
	if err := f.checkSizesAlone(); err != nil {
		*f = saved
		return err
	}
	if err := f.Validate(); err != nil {
		*f = saved
		return blameSets(err, sets, valid)
	}
	return nil
}

// SplitOption splits a --set or --sweep option "key=value" into its key
// (spaces trimmed) and value; ok is false without "=" or a key.
func SplitOption(opt string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(opt, "=")
	key = strings.TrimSpace(key)
	return key, value, ok && key != ""
}

// blameSets: when the file was valid before the overrides, a problem found
// after them is theirs, even if it shows on a key they did not touch (say
// --set switch.pfc.xoff below the file's xon). The error then names the
// overrides first and the file position last.
func blameSets(err error, sets []string, validBefore bool) error {
	var e *Error
	if len(sets) == 0 || !validBefore || !errors.As(err, &e) || e.Set != "" {
		return err
	}
	keys := make([]string, 0, len(sets))
	for _, s := range sets {
		k, _, _ := SplitOption(s)
		keys = append(keys, k)
	}
	c := *e
	c.Set = strings.Join(keys, ", ")
	line, col := max(e.Line, 1), max(e.Col, 1)
	c.Msg = fmt.Sprintf("%s (see %s:%d:%d)", e.Msg, e.File, line, col)
	return &c
}

func (f *File) applySets(sets []string) error {
	for _, s := range sets {
		if err := f.applySet(s); err != nil {
			return err
		}
		f.Sets = append(f.Sets, s)
	}
	return nil
}

func (f *File) applySet(s string) error {
	key, value, ok := SplitOption(s)
	w := f.newWalker()
	w.set = key
	if key == "" {
		w.set = s
		if s == "" {
			w.set = `""`
		}
		return w.errf(nil, "", "needs key=value, e.g. --set transport.dcqcn.preset=off")
	}
	if !ok {
		return w.errf(nil, key, "needs key=value, e.g. --set %s=VALUE", key)
	}
	parts, err := keyParts(w, key, "--set")
	if err != nil {
		return err
	}
	if strings.ContainsAny(value, "\r\n") {
		return w.errf(nil, key, "the value must be on one line")
	}
	// The value is parsed on its own, then hung under the key path, so no
	// text in it can change which key is set.
	valNode, err := parseValue(value)
	if err != nil {
		return yamlError(f.Path, loc{set: key}, key, err)
	}
	if valNode, err = resolve(w, valNode); err != nil {
		return err
	}
	o, err := newOverride(w, parts, valNode)
	if err != nil {
		return err
	}
	raw := clone(f.raw)
	baseLocs := copyLocs(f.baseLocs)
	if err := o.apply(raw, baseLocs); err != nil {
		return err
	}
	variants, err := f.applyTo(f.variants, raw, o)
	if err != nil {
		return err
	}
	parents, err := f.applyTo(f.parents, raw, o)
	if err != nil {
		return err
	}
	f.raw, f.baseLocs, f.variants, f.parents = raw, baseLocs, variants, parents
	return nil
}

// keyParts splits and checks a dotted key given on the command line (by
// option, for the messages).
func keyParts(w *walker, key, option string) ([]string, error) {
	parts := strings.Split(key, ".")
	for _, p := range parts {
		if !validKeyPart(p) {
			return nil, w.errf(nil, key, "not a key: use dotted lower-case names like topology.host_link.rate")
		}
	}
	switch parts[0] {
	case "variants":
		return nil, w.errf(nil, key, "variants cannot be set from the command line")
	case "sweep":
		if option == "--set" {
			return nil, w.errf(nil, key, "a sweep is not set with --set; use --sweep key=v1,v2,…")
		}
	}
	return parts, nil
}

// applyTo returns vs with the override applied to every spec: a variant
// that shares the base spec (a file without variants) gets the new base
// raw, the others a changed copy.
func (f *File) applyTo(vs []rawVariant, raw *Scenario, o *override) ([]rawVariant, error) {
	if vs == nil {
		return nil, nil
	}
	out := make([]rawVariant, len(vs))
	for i, rv := range vs {
		rv.locs = copyLocs(rv.locs)
		if rv.spec == f.raw {
			rv.spec = raw
			for p, l := range o.w.locs {
				rv.locs[p] = l
			}
		} else {
			rv.spec = clone(rv.spec)
			if err := o.apply(rv.spec, rv.locs); err != nil {
				return nil, err
			}
		}
		out[i] = rv
	}
	return out, nil
}

// override is a value hung under a dotted key ({p0: {p1: value}}) and
// checked against the schema: a --set or one value of a sweep. Applying it
// decodes it onto a spec, over what the spec had.
type override struct {
	w    *walker // its errors; w.locs is where the value was written
	root *ast.MappingNode
	kept []*ast.MappingValueNode
}

func newOverride(w *walker, parts []string, value ast.Node) (*override, error) {
	root := buildPath(parts, value)
	kept := root.Values
	fld, ok := field(reflect.TypeFor[Scenario](), parts[0])
	if !ok || parts[0] == "variants" || parts[0] == "sweep" {
		return nil, w.unknownKey(kept[0], reflect.TypeFor[Scenario](), "", parts[0], nil)
	}
	if err := w.walk(kept[0].Value, kept[0].Key, fld.Type, parts[0]); err != nil {
		return nil, err
	}
	return &override{w: w, root: root, kept: kept}, nil
}

// apply decodes the override onto spec and records its locations in locs.
func (o *override) apply(spec *Scenario, locs map[string]loc) error {
	if err := decodeOnto(o.w, spec, o.root, o.kept, locs); err != nil {
		return err
	}
	for p, l := range o.w.locs {
		locs[p] = l
	}
	return nil
}

func copyLocs(m map[string]loc) map[string]loc {
	c := make(map[string]loc, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func validKeyPart(p string) bool {
	if p == "" {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// parseValue parses one YAML value; empty text is null. A value from the
// command line is bounded as a scenario file is (size, then the pre-scan
// and the lexer's tokens) before the parser sees it.
func parseValue(value string) (ast.Node, error) {
	if int64(len(value)) > DefaultMaxBytes {
		return nil, fmt.Errorf("the value is %s, larger than the %s a scenario file may be", byteCount(int64(len(value))), byteCount(DefaultMaxBytes))
	}
	if err := prescan("", []byte(value), defaultTextLimits); err != nil {
		return nil, errors.New(err.Msg)
	}
	tokens := lexer.Tokenize(value)
	if err := checkTokens("", tokens, defaultTextLimits); err != nil {
		return nil, errors.New(err.Msg)
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return nil, err
	}
	var body ast.Node
	for _, d := range file.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			return nil, fmt.Errorf("the value must be a single YAML value")
		}
		body = d.Body
	}
	if _, ok := body.(*ast.CommentGroupNode); ok || body == nil {
		return ast.Null(token.New("null", "null", &token.Position{Line: 1, Column: 1})), nil
	}
	return body, nil
}

// buildPath makes the mapping {p0: {p1: {…: value}}}.
func buildPath(parts []string, value ast.Node) *ast.MappingNode {
	var n ast.Node = value
	var m *ast.MappingNode
	for i := len(parts) - 1; i >= 0; i-- {
		tk := value.GetToken()
		key := ast.String(tokenFor(parts[i], tk))
		m = ast.Mapping(tokenFor(":", tk), false, ast.MappingValue(tokenFor(":", tk), key, n))
		n = m
	}
	return m
}

// tokenFor makes a string token at the position of tk (the library reports
// unknown keys only for nodes that have a token).
func tokenFor(value string, tk *token.Token) *token.Token {
	pos := &token.Position{Line: 1, Column: 1}
	if tk != nil && tk.Position != nil {
		p := *tk.Position
		pos = &p
	}
	return &token.Token{Type: token.StringType, Value: value, Origin: value, Position: pos}
}
