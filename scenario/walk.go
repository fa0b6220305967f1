package scenario

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"fabriclab/internal/inputfile"
	"fabriclab/units"
)

// The YAML library decodes, but its errors for our unit types carry no
// position and its type errors name Go fields, not YAML keys. So before
// decoding, a walker checks the syntax tree against the Go types: every key
// must exist, every value must have the right shape, and every unit must
// parse. Its errors name the dotted key and point at the value. It also
// records where each key was written, so that validation can point at it.

var (
	rateType     = reflect.TypeFor[units.Rate]()
	sizeType     = reflect.TypeFor[units.Size]()
	durationType = reflect.TypeFor[units.Duration]()
	pickType     = reflect.TypeFor[Pick]()
	responseType = reflect.TypeFor[ResponseSize]()
)

// maxNodes bounds the work on one document: aliases share subtrees, so a
// small file can otherwise describe an exponentially large one.
const maxNodes = 100000

type walker struct {
	file string
	// set is the --set key when walking an override built from the command
	// line; every location is then that override (flag names the option:
	// "" for --set, "--sweep").
	set, flag string
	// only, when set, limits the recorded locations to that key and what
	// is below it (a sweep value hung under its dotted key).
	only string
	locs map[string]loc
	left int // node budget
	// savedRun: a run saved earlier is read again (Options.SavedRun); a
	// size given twice, accepted then, is taken.
	savedRun bool
}

func newWalker(file string) *walker {
	return &walker{file: file, locs: map[string]loc{}, left: maxNodes}
}

func (w *walker) loc(n ast.Node) loc {
	if w.set != "" {
		return loc{set: w.set, flag: w.flag}
	}
	if n == nil {
		return loc{}
	}
	return tokenLoc(n.GetToken())
}

func (w *walker) errf(n ast.Node, key, format string, args ...any) *Error {
	return w.loc(n).err(w.file, "", key, fmt.Sprintf(format, args...))
}

// rec remembers where path was written. In --set mode only the overridden
// key and what is below it are recorded, so errors elsewhere keep pointing
// into the file.
func (w *walker) rec(path string, n ast.Node) {
	scope := w.set
	if w.only != "" {
		scope = w.only
	}
	if scope != "" && path != scope && !strings.HasPrefix(path, scope+".") && !strings.HasPrefix(path, scope+"[") {
		return
	}
	w.locs[path] = w.loc(n)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// entries returns the key/value pairs of a mapping node.
func (w *walker) entries(n ast.Node, key ast.Node, path string) ([]*ast.MappingValueNode, error) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, nil
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, nil
	}
	at := n
	if at == nil {
		at = key
	}
	what := "the file"
	if path != "" {
		what = "this key"
	}
	return nil, w.errf(at, path, "%s needs a mapping of keys, got %s", what, describe(n))
}

// keyName returns the text of a mapping key; only plain names are keys.
func (w *walker) keyName(mv *ast.MappingValueNode, path string) (string, error) {
	if s, ok := mv.Key.(*ast.StringNode); ok && s.Value != "" {
		return s.Value, nil
	}
	return "", w.errf(mv.Key, path, "keys must be plain names, got %s", describe(mv.Key))
}

// once reports a key written twice in one mapping (the parser is told to
// allow duplicates so that this message, which names the key, is the one
// users see).
func (w *walker) once(seen map[string]ast.Node, mv *ast.MappingValueNode, path, name string) error {
	if first, ok := seen[name]; ok {
		msg := "key is given twice"
		if l := tokenLoc(first.GetToken()); l.line > 0 && w.set == "" {
			msg = fmt.Sprintf("key is given twice (first at line %d)", l.line)
		}
		return w.errf(mv.Key, join(path, name), "%s", msg)
	}
	seen[name] = mv.Key
	return nil
}

// field finds the struct field with yaml key name.
func field(t reflect.Type, name string) (reflect.StructField, bool) {
	f, ok := fieldsOf(t)[name]
	return f, ok
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.StructField

func fieldsOf(t reflect.Type) map[string]reflect.StructField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.StructField)
	}
	m := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" && opt == "inline" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range fieldsOf(f.Type) {
				m[k] = v
			}
			continue
		}
		if key, ok := yamlKey(f); ok {
			m[key] = f
		}
	}
	fieldCache.Store(t, m)
	return m
}

// yamlKey is the key a scenario file gives field f by, if any (an
// exported field with a yaml name other than "-").
func yamlKey(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name, name != "" && name != "-" && f.IsExported()
}

// unknownKey explains an unknown key and suggests the closest known one.
func (w *walker) unknownKey(mv *ast.MappingValueNode, t reflect.Type, path, name string, known []string) error {
	if known == nil {
		for k := range fieldsOf(t) {
			known = append(known, k)
		}
	}
	sort.Strings(known)
	msg := fmt.Sprintf("unknown key %q", name)
	if s := closest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	msg += "; known keys here: " + strings.Join(known, ", ")
	return w.errf(mv.Key, join(path, name), "%s", msg)
}

// mapping walks the entries of a mapping onto struct type t.
func (w *walker) mapping(n, key ast.Node, t reflect.Type, path string) error {
	es, err := w.entries(n, key, path)
	if err != nil {
		return err
	}
	seen := map[string]ast.Node{}
	for _, mv := range es {
		name, err := w.keyName(mv, path)
		if err != nil {
			return err
		}
		if err := w.once(seen, mv, path, name); err != nil {
			return err
		}
		f, ok := field(t, name)
		if !ok {
			return w.unknownKey(mv, t, path, name, nil)
		}
		if err := w.walk(mv.Value, mv.Key, f.Type, join(path, name)); err != nil {
			return err
		}
	}
	return nil
}

// walk checks node n (written under mapping key key) against type t.
func (w *walker) walk(n, key ast.Node, t reflect.Type, path string) error {
	if w.left--; w.left < 0 {
		return w.errf(n, path, "document too large (more than %d values after expanding aliases)", maxNodes)
	}
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode, *ast.NullNode, nil:
		if key != nil {
			w.rec(path, key)
		} else {
			w.rec(path, n)
		}
	default:
		w.rec(path, n)
	}
	if _, ok := n.(*ast.TagNode); ok {
		return w.errf(n, path, "YAML tags (!!type) are not supported; write the plain value")
	}
	if n == nil || n.Type() == ast.NullType {
		at := key
		if at == nil {
			at = n
		}
		switch t.Kind() {
		case reflect.Ptr, reflect.Slice, reflect.String:
			return nil // nil override (preset value), empty list, empty text
		case reflect.Struct:
			return w.errf(at, path, "is empty; give its keys or remove it to keep the defaults")
		}
		return w.errf(at, path, "has no value")
	}
	switch t {
	case rateType:
		s, err := w.scalar(n, path, "a rate like 400Gbps")
		if err != nil {
			return err
		}
		if _, err := units.ParseRate(s); err != nil {
			return w.errf(n, path, "%v", err)
		}
		detach(n)
		return nil
	case sizeType:
		s, err := w.scalar(n, path, "a size like 64KiB or 8MB")
		if err != nil {
			return err
		}
		if _, err := units.ParseSize(s); err != nil {
			return w.errf(n, path, "%v", err)
		}
		detach(n)
		return nil
	case responseType:
		s, err := w.scalar(n, path, "a size like 64KiB, or same")
		if err != nil {
			return err
		}
		if s != "same" {
			if _, err := units.ParseSize(s); err != nil {
				return w.errf(n, path, "%v (or same: as long as the request)", err)
			}
		}
		detach(n)
		return nil
	case durationType:
		s, err := w.scalar(n, path, "a duration like 1us")
		if err != nil {
			return err
		}
		if _, err := units.ParseDuration(s); err != nil {
			return w.errf(n, path, "%v", err)
		}
		detach(n)
		return nil
	}
	if t == pickType {
		return w.pick(n, path)
	}
	switch t.Kind() {
	case reflect.Ptr:
		return w.walk(n, key, t.Elem(), path)
	case reflect.Struct:
		return w.mapping(n, key, t, path)
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return w.errf(n, path, "needs a list like [a, b], got %s", describe(n))
		}
		if most, why := listLimit(t, path); most > 0 && len(seq.Values) > most {
			return w.errf(n, path, "lists %d entries, at most %d%s", len(seq.Values), most, why)
		}
		for i, v := range seq.Values {
			if err := w.walk(v, nil, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		if t == reflect.TypeFor[[]units.Size]() && !w.savedRun {
			return w.uniqueSizes(seq, path)
		}
		return nil
	case reflect.Int, reflect.Int64:
		in, ok := n.(*ast.IntegerNode)
		if !ok {
			return w.errf(n, path, "%s", wholeNumberError(n, false))
		}
		if u, ok := in.Value.(uint64); ok && u > math.MaxInt64 {
			return w.errf(n, path, "%s is too large (max 2^63−1 = %d)", numberText(in.GetToken().Value), int64(math.MaxInt64))
		}
		return nil
	case reflect.Uint64:
		in, ok := n.(*ast.IntegerNode)
		if !ok {
			return w.errf(n, path, "%s", wholeNumberError(n, true))
		}
		if i, ok := in.Value.(int64); ok && i < 0 {
			return w.errf(n, path, "must not be negative")
		}
		return nil
	case reflect.Float64:
		switch v := n.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			return nil
		case *ast.InfinityNode, *ast.NanNode:
			return w.errf(n, path, "needs a finite number, got %s", describe(n))
		case *ast.StringNode:
			// The YAML library reads 1e-3 (an exponent without a dot) as
			// text, yet decodes it into a float: accept the plain forms
			// it decodes, and let validation judge the range.
			if tk := v.GetToken(); tk != nil && tk.Type == token.StringType && floatRE.MatchString(v.Value) {
				if _, err := strconv.ParseFloat(v.Value, 64); err != nil {
					return w.errf(n, path, "%s is out of range for a number", v.Value)
				}
				return nil
			}
		}
		return w.errf(n, path, "needs a number, got %s", described(n))
	case reflect.Bool:
		if _, ok := n.(*ast.BoolNode); !ok {
			return w.errf(n, path, "needs true or false, got %s", described(n))
		}
		return nil
	case reflect.String:
		s, err := w.scalar(n, path, "text")
		if err != nil {
			return err
		}
		return w.text(n, path, s)
	}
	return w.errf(n, path, "cannot be set from YAML")
}

// maxSizes bounds a list of data sizes (every size is a row of the results,
// for every variant).
const maxSizes = 4096

// maxFailures bounds topology.failures (each failure recomputes the routes).
const maxFailures = 1024

// listLimit is the most entries a list of type t at path may have, checked
// before its entries are (0: no limit of its own, the node budget applies),
// and why when it is not obvious.
func listLimit(t reflect.Type, path string) (int, string) {
	switch t {
	case reflect.TypeFor[[]JobSpec]():
		return maxJobs - 1, fmt.Sprintf(" (%d jobs with the top-level workload)", maxJobs)
	case reflect.TypeFor[[]units.Size]():
		return maxSizes, ""
	case reflect.TypeFor[[]Failure]():
		return maxFailures, ""
	case reflect.TypeFor[[]TierForwarding]():
		most := 0
		for _, tiers := range topologyTiers {
			most = max(most, len(tiers))
		}
		return most, " (a tier is given once)"
	}
	if strings.HasSuffix(path, "placement_hosts") {
		return maxHosts, " (the most hosts a topology has)"
	}
	return 0, ""
}

// uniqueSizes refuses a size given twice in a list of sizes (checked), by
// value: 64KiB and 65536 are one size, which would run twice.
func (w *walker) uniqueSizes(seq *ast.SequenceNode, path string) error {
	first := map[units.Size]int{}
	texts := make([]string, len(seq.Values))
	name := path[strings.LastIndexByte(path, '.')+1:]
	for i, v := range seq.Values {
		s, err := w.scalar(v, path, "a size")
		if err != nil {
			return err
		}
		size, err := units.ParseSize(s)
		if err != nil {
			return w.errf(v, fmt.Sprintf("%s[%d]", path, i), "%v", err)
		}
		texts[i] = s
		j, ok := first[size]
		if !ok {
			first[size] = i
			continue
		}
		at := fmt.Sprintf("%s[%d]", name, j)
		if l := w.loc(seq.Values[j]); l.line > 0 {
			at += fmt.Sprintf(", line %d, column %d", l.line, l.col)
		}
		msg := fmt.Sprintf("%q is given twice (%s); give each size once", s, at)
		if s != texts[j] {
			msg = fmt.Sprintf("%q is %v, as is %q (%s); give each size once", s, size, texts[j], at)
		}
		return w.errf(v, fmt.Sprintf("%s[%d]", path, i), "%s", msg)
	}
	return nil
}

// text checks text that is printed as it is: names (on one line, in
// tables and in "# variant:" lines) and descriptions (several lines may be
// fine, terminal control sequences are not).
func (w *walker) text(n ast.Node, path, s string) error {
	switch {
	case path == "name":
		if !printableName(s) {
			return w.errf(n, path, "the scenario name must be one line of printable text, got %q", strings.TrimSpace(s))
		}
	case isJobName(path):
		if !printableName(s) {
			return w.errf(n, path, "a job name must be one line of printable text, got %q", strings.TrimSpace(s))
		}
	case path == "description":
		if i := strings.IndexFunc(s, controlChar); i >= 0 {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return w.errf(n, path, "must not contain control characters (found %q); only line breaks and tabs may be used", r)
		}
	}
	return nil
}

// printableName: s, without the spaces around it (which are trimmed), is
// printable text: no control characters (line breaks and tabs included),
// no invisible formatting.
func printableName(s string) bool {
	return strings.IndexFunc(strings.TrimSpace(s), func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// controlChar: a C0 control but line feed and tab, DEL, or a C1 control.
func controlChar(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0
}

// isJobName: path is jobs[N].name.
func isJobName(path string) bool {
	rest, ok := strings.CutPrefix(path, "jobs[")
	if !ok {
		return false
	}
	i := strings.IndexByte(rest, ']')
	return i > 0 && rest[i+1:] == ".name" && strings.Trim(rest[:i], "0123456789") == ""
}

// detach gives a scalar node a token of its own, unlinked from the others.
// The YAML library decodes a value of a type with UnmarshalText (the
// units) by formatting its node, which walks every token of the document
// (and copies the newlines of every comment) each time: a list of sizes
// would cost its length times the file.
func detach(n ast.Node) {
	own := func(tk *token.Token) *token.Token {
		if tk == nil || tk.Prev == nil && tk.Next == nil {
			return tk
		}
		c := *tk
		c.Prev, c.Next = nil, nil
		return &c
	}
	switch v := n.(type) {
	case *ast.StringNode:
		v.Token = own(v.Token)
	case *ast.IntegerNode:
		v.Token = own(v.Token)
	case *ast.FloatNode:
		v.Token = own(v.Token)
	case *ast.BoolNode:
		v.Token = own(v.Token)
	case *ast.LiteralNode: // its header and its text, linked to each other
		if v.Start == nil || v.Start.Position == nil || v.Value == nil || v.Value.Token == nil {
			return
		}
		start, text := own(v.Start), own(v.Value.Token)
		start.Next, text.Prev = text, start
		// Alone on its line, the header would make the formatter strip
		// its column's worth of indentation from the text; at column 1
		// it strips none. (Its place is recorded already: w.rec.)
		pos := *start.Position
		pos.Column = 1
		start.Position = &pos
		v.Start, v.Value.Token = start, text
	}
}

// floatRE is a plain decimal number with an exponent, the form the YAML
// library leaves as text.
var floatRE = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+$`)

// intRE is an integer literal, which the YAML library leaves as text when it
// does not fit in 64 bits.
var intRE = regexp.MustCompile(`^[-+]?([0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+)$`)

// wholeNumberError explains a value where a whole number is expected, naming
// the range when the value is a whole number that does not fit. A quoted
// number is text, refused as any other text is (numbers are written
// without quotes, as in the YAML library's own reading).
func wholeNumberError(n ast.Node, unsigned bool) string {
	if s, ok := n.(*ast.StringNode); ok && plain(n) && intRE.MatchString(s.Value) {
		v := numberText(s.Value)
		switch {
		case strings.HasPrefix(s.Value, "-") && unsigned:
			return "must not be negative"
		case strings.HasPrefix(s.Value, "-"):
			return fmt.Sprintf("%s is too small (min −2^63 = %d)", v, int64(math.MinInt64))
		case unsigned:
			return fmt.Sprintf("%s is too large (max 2^64−1 = %d)", v, uint64(math.MaxUint64))
		default:
			return fmt.Sprintf("%s is too large (max 2^63−1 = %d)", v, int64(math.MaxInt64))
		}
	}
	return "needs a whole number, got " + described(n)
}

// numberText shows a whole number from the file whole up to
// inputfile.TokenBytes, else by its length.
func numberText(v string) string {
	if len(v) <= inputfile.TokenBytes {
		return v
	}
	sign := ""
	if strings.HasPrefix(v, "-") {
		sign = "negative "
	}
	return fmt.Sprintf("a %snumber of %d digits", sign, len(strings.TrimLeft(v, "+-")))
}

// plain: n is a scalar written without quotes.
func plain(n ast.Node) bool {
	tk := n.GetToken()
	return tk != nil && tk.Type != token.DoubleQuoteType && tk.Type != token.SingleQuoteType
}

// described is describe(n), saying so when n is a number or true/false in
// quotes, which makes it text: the quotes are easy to miss in the message.
func described(n ast.Node) string {
	d := describe(n)
	if s, ok := n.(*ast.StringNode); ok && !plain(n) {
		v := strings.TrimSpace(s.Value)
		_, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err == nil || intRE.MatchString(v) || v == "true" || v == "false" {
			d += " (in quotes, so text: write it without quotes)"
		}
	}
	return d
}

// scalar returns the text of a scalar node.
func (w *walker) scalar(n ast.Node, path, want string) (string, error) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		if v.Value != nil {
			return v.Value.Value, nil
		}
		return "", nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, nil
		}
	}
	return "", w.errf(n, path, "needs %s, got %s", want, describe(n))
}

// describe names a node for messages: the value itself when it is a short
// scalar, else its kind.
func describe(n ast.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "nothing"
	case *ast.TagNode:
		return "a tagged value"
	case *ast.AnchorNode, *ast.AliasNode:
		return "an anchor"
	}
	if tk := n.GetToken(); tk != nil && len(tk.Value) <= 40 && !strings.ContainsAny(tk.Value, "\r\n") {
		return fmt.Sprintf("%q", tk.Value)
	}
	return "a " + strings.ToLower(n.Type().String())
}

// closest returns the known name within edit distance 2 of name, if any.
func closest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// pick checks a Pick: a whole number, "top N", or a list of names.
func (w *walker) pick(n ast.Node, path string) error {
	switch v := n.(type) {
	case *ast.IntegerNode:
		return w.walk(n, nil, reflect.TypeFor[int](), path)
	case *ast.StringNode:
		if _, ok := parseTop(v.Value); !ok {
			return w.errf(n, path, "needs a number, \"top N\" or a list, got %s", described(n))
		}
		return nil
	case *ast.SequenceNode:
		if len(v.Values) > maxPicked {
			return w.errf(n, path, "lists %d entries, at most %d", len(v.Values), maxPicked)
		}
		for i, e := range v.Values {
			if err := w.walk(e, nil, reflect.TypeFor[string](), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	return w.errf(n, path, "needs a number, \"top N\" or a list, got %s", describe(n))
}

// maxPicked bounds a telemetry pick's list (MaxTelemetryPorts and
// MaxTelemetryFlows, checked again with their own words by validation).
const maxPicked = 64
