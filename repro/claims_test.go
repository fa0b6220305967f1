package repro

// The claim language: one comparison per line, chained like a <= b <= c,
// between numbers, strings and references to the results of a command.
//
//	claim := side (op side)+           op: <= >= < > == !=
//	side  := number ['*' ref] | "string" | true | false | ref
//	ref   := [agg '('] variant '.' path [')']     agg: median min max mean
//
// variant is a variant's name (with a sweep: every point of it), or * for
// every result; path walks the result's JSON row (see eval below).

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A claim as parsed: sides[i] ops[i] sides[i+1] for every i.
type claim struct {
	text  string
	sides []side
	ops   []string
}

type side struct {
	text    string
	mult    float64 // k in "k * ref"; 1 otherwise
	num     float64 // a constant (ref == "" && !isStr)
	str     string
	isStr   bool
	agg     string // across results: median, min, max, mean ("": each result)
	variant string // name, parent of sweep points, or *
	path    string
}

// A value of a side for one result (label names the result when a side has
// several).
type value struct {
	label string
	num   float64
	str   string
	isStr bool
}

func (v value) String() string {
	if v.isStr {
		return strconv.Quote(v.str)
	}
	return fmt.Sprintf("%.4g", v.num)
}

var negated = map[string]string{"<=": ">", ">=": "<", "<": ">=", ">": "<=", "==": "!=", "!=": "=="}

func parseClaim(text string) (claim, error) {
	c := claim{text: text}
	s := strings.TrimSpace(text)
	for {
		sd, rest, err := parseSide(s)
		if err != nil {
			return c, err
		}
		c.sides = append(c.sides, sd)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		op := opAt(rest)
		if op == "" {
			return c, fmt.Errorf("want a comparison (<=, >=, <, >, ==, !=) at %q", rest)
		}
		c.ops = append(c.ops, op)
		s = strings.TrimSpace(rest[len(op):])
	}
	if len(c.ops) == 0 {
		return c, fmt.Errorf("no comparison")
	}
	return c, nil
}

func opAt(s string) string {
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// parseSide reads one side from the start of s and returns the rest.
func parseSide(s string) (side, string, error) {
	sd := side{mult: 1}
	start := s
	switch {
	case s == "":
		return sd, "", fmt.Errorf("missing value at the end")
	case s[0] == '"':
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return sd, "", fmt.Errorf("unterminated string %s", s)
		}
		sd.str, sd.isStr, sd.text = s[1:end+1], true, s[:end+2]
		return sd, s[end+2:], nil
	case strings.HasPrefix(s, "true") || strings.HasPrefix(s, "false"):
		w := word(s)
		if w == "true" || w == "false" {
			sd.num, sd.text = map[string]float64{"true": 1, "false": 0}[w], w
			return sd, s[len(w):], nil
		}
	case s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '.':
		w := word(s)
		n, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return sd, "", fmt.Errorf("bad number %q", w)
		}
		rest := strings.TrimSpace(s[len(w):])
		if !strings.HasPrefix(rest, "*") {
			sd.num, sd.text = n, w
			return sd, rest, nil
		}
		sd.mult = n
		s = strings.TrimSpace(rest[1:])
	}
	// A reference, maybe in an aggregate.
	for _, agg := range []string{"median", "min", "max", "mean"} {
		if strings.HasPrefix(s, agg+"(") {
			sd.agg, s = agg, s[len(agg)+1:]
			break
		}
	}
	ref := refAt(s)
	if ref == "" {
		return sd, "", fmt.Errorf("want a number or variant.metric at %q", s)
	}
	s = s[len(ref):]
	if sd.agg != "" {
		if !strings.HasPrefix(s, ")") {
			return sd, "", fmt.Errorf("missing ) after %s(%s", sd.agg, ref)
		}
		s = s[1:]
	}
	var ok bool
	if sd.variant, sd.path, ok = strings.Cut(ref, "."); !ok || sd.variant == "" || sd.path == "" {
		return sd, "", fmt.Errorf("want variant.metric, got %q", ref)
	}
	sd.text = strings.TrimSpace(start[:len(start)-len(s)])
	return sd, s, nil
}

// word is s up to the first space, comparison or parenthesis.
func word(s string) string {
	i := strings.IndexAny(s, " \t<>=!()*")
	if i < 0 {
		return s
	}
	return s[:i]
}

// refAt is the reference at the start of s: up to a space, a comparison,
// '*' or a parenthesis outside brackets ("*." starts the wildcard).
func refAt(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth > 0:
		case c == '*' && i == 0 && strings.HasPrefix(s, "*."):
		case strings.IndexByte(" \t<>=!()*", c) >= 0:
			return s[:i]
		}
	}
	return s
}

// A result of a command: a JSON row named after its variant.
type result struct {
	name, parent string
	row          map[string]any
}

// check evaluates c over results and returns one message per failure.
func (c claim) check(results []result) []string {
	vals := make([][]value, len(c.sides))
	for i, sd := range c.sides {
		v, err := sd.eval(results)
		if err != nil {
			return []string{err.Error()}
		}
		vals[i] = v
	}
	var fails []string
	for i, op := range c.ops {
		a, b := vals[i], vals[i+1]
		n := max(len(a), len(b))
		if len(a) != len(b) && len(a) != 1 && len(b) != 1 {
			return []string{fmt.Sprintf("%s has %d values and %s %d", c.sides[i].text, len(a), c.sides[i+1].text, len(b))}
		}
		for k := range n {
			x, y := a[min(k, len(a)-1)], b[min(k, len(b)-1)]
			ok, err := compare(x, op, y)
			if err != nil {
				return []string{err.Error()}
			}
			if ok {
				continue
			}
			msg := fmt.Sprintf("%s %s %s", x, negated[op], c.sides[i+1].show(y))
			if c.sides[i].mult != 1 {
				msg = fmt.Sprintf("%s %s %s", c.sides[i].show(x), negated[op], c.sides[i+1].show(y))
			}
			if l := cmp.Or(x.label, y.label); l != "" {
				msg = "for " + l + ": " + msg
			}
			fails = append(fails, msg)
		}
	}
	return fails
}

// describe is the claim with its sides' values, for the verbose log: a
// side with several values shows their count and range.
func (c claim) describe(results []result) string {
	var b strings.Builder
	for i, sd := range c.sides {
		if i > 0 {
			fmt.Fprintf(&b, " %s ", c.ops[i-1])
		}
		vs, err := sd.eval(results)
		switch {
		case err != nil:
			b.WriteString("?")
		case len(vs) == 1:
			b.WriteString(sd.show(vs[0]))
		case vs[0].isStr:
			fmt.Fprintf(&b, "[%d values]", len(vs))
		default:
			lo, hi := vs[0].num, vs[0].num
			for _, v := range vs {
				lo, hi = min(lo, v.num), max(hi, v.num)
			}
			fmt.Fprintf(&b, "[%d values %.4g…%.4g]", len(vs), lo, hi)
		}
	}
	return b.String()
}

// show is "k × v" for a side with a multiplier (v is the value before it).
func (sd side) show(v value) string {
	if sd.mult == 1 {
		return v.String()
	}
	return fmt.Sprintf("%.4g × %s", sd.mult, value{num: v.num / sd.mult})
}

func compare(x value, op string, y value) (bool, error) {
	if x.isStr || y.isStr {
		if x.isStr != y.isStr || (op != "==" && op != "!=") {
			return false, fmt.Errorf("cannot compare %s %s %s", x, op, y)
		}
		return (x.str == y.str) == (op == "=="), nil
	}
	switch op {
	case "<=":
		return x.num <= y.num, nil
	case ">=":
		return x.num >= y.num, nil
	case "<":
		return x.num < y.num, nil
	case ">":
		return x.num > y.num, nil
	case "==":
		return x.num == y.num, nil
	}
	return x.num != y.num, nil
}

// eval is the side's values: one for a constant or an aggregate, else one
// per selected result (labelled when there are several).
func (sd side) eval(results []result) ([]value, error) {
	if sd.variant == "" {
		return []value{{num: sd.num, str: sd.str, isStr: sd.isStr}}, nil
	}
	var vs []value
	var names []string
	for _, r := range results {
		names = append(names, r.name)
		if sd.variant != "*" && r.name != sd.variant && r.parent != sd.variant {
			continue
		}
		v, err := walk(r.row, sd.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", sd.text, r.name, err)
		}
		v.label = r.name
		v.num *= sd.mult
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: no variant %q (have: %s)", sd.text, sd.variant, strings.Join(names, ", "))
	}
	if sd.agg != "" {
		xs := make([]float64, len(vs))
		for i, v := range vs {
			if v.isStr {
				return nil, fmt.Errorf("%s: %s of strings", sd.text, sd.agg)
			}
			xs[i] = v.num
		}
		return []value{{num: aggregate(sd.agg, xs)}}, nil
	}
	if len(vs) == 1 {
		vs[0].label = ""
	}
	return vs, nil
}

// aggregate: the median is the upper one of an even count.
func aggregate(agg string, xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	switch agg {
	case "min":
		return s[0]
	case "max":
		return s[len(s)-1]
	case "median":
		return s[len(s)/2]
	case "sum", "mean":
		t := 0.0
		for _, x := range s {
			t += x
		}
		if agg == "mean" {
			t /= float64(len(s))
		}
		return t
	}
	panic(agg)
}

// walk follows a dotted path through a JSON value. A segment is an object
// key, an array index, or (on an array of objects) a key taken from every
// element; [field op value] filters an array (field%k takes it modulo k); a
// final min, max, mean, median, sum or count aggregates an array, and frac
// is the share of the elements its filters kept. Booleans are 1 and 0, an
// array of strings is joined with commas.
func walk(cur any, path string) (value, error) {
	total := -1 // the array's length before its filters (for frac)
	segs := splitPath(path)
	for i, seg := range segs {
		name, filters := seg, ""
		if j := strings.IndexByte(seg, '['); j >= 0 {
			name, filters = seg[:j], seg[j:]
		}
		arr, isArr := cur.([]any)
		if isArr && i == len(segs)-1 && filters == "" {
			switch name {
			case "count":
				return value{num: float64(len(arr))}, nil
			case "frac":
				if total < 0 {
					total = len(arr)
				}
				return value{num: float64(len(arr)) / float64(max(total, 1))}, nil
			case "min", "max", "mean", "median", "sum":
				xs, err := numbers(arr)
				if err != nil || len(xs) == 0 {
					return value{}, fmt.Errorf("%s of %d values: %v", name, len(xs), err)
				}
				return value{num: aggregate(name, xs)}, nil
			}
		}
		switch {
		case name == "":
		case isArr:
			if k, err := strconv.Atoi(name); err == nil {
				if k < 0 || k >= len(arr) {
					return value{}, fmt.Errorf("%s: index %d of %d", strings.Join(segs[:i+1], "."), k, len(arr))
				}
				cur, total = arr[k], -1
				break
			}
			out := make([]any, len(arr))
			for k, e := range arr {
				m, ok := e.(map[string]any)
				if out[k], ok = m[name]; !ok {
					return value{}, fmt.Errorf("%s: element %d has no %q", strings.Join(segs[:i], "."), k, name)
				}
			}
			cur = out
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return value{}, fmt.Errorf("%s is not an object", strings.Join(segs[:i], "."))
			}
			if cur, ok = m[name]; !ok {
				return value{}, fmt.Errorf("no %q in %s", name, strings.Join(append([]string{"the row"}, segs[:i]...), "."))
			}
			total = -1
		}
		for filters != "" {
			end := strings.IndexByte(filters, ']')
			if filters[0] != '[' || end < 0 {
				return value{}, fmt.Errorf("bad filter %q", filters)
			}
			arr, ok := cur.([]any)
			if !ok {
				return value{}, fmt.Errorf("filter %s on a non-array", filters[:end+1])
			}
			if total < 0 {
				total = len(arr)
			}
			kept, err := filter(arr, filters[1:end])
			if err != nil {
				return value{}, err
			}
			cur, filters = kept, filters[end+1:]
		}
	}
	switch v := cur.(type) {
	case float64:
		return value{num: v}, nil
	case bool:
		return value{num: map[bool]float64{true: 1}[v]}, nil
	case string:
		return value{str: v, isStr: true}, nil
	case []any:
		var ss []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return value{}, fmt.Errorf("%s is a list of %d values: end with .min, .max, .mean, .median, .sum, .count or .frac", path, len(v))
			}
			ss = append(ss, s)
		}
		return value{str: strings.Join(ss, ","), isStr: true}, nil
	case nil:
		return value{}, fmt.Errorf("%s is null", path)
	}
	return value{}, fmt.Errorf("%s is an object", path)
}

func splitPath(p string) []string {
	var segs []string
	depth, start := 0, 0
	for i, c := range p {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '.' && depth == 0:
			segs = append(segs, p[start:i])
			start = i + 1
		}
	}
	return append(segs, p[start:])
}

func numbers(arr []any) ([]float64, error) {
	xs := make([]float64, 0, len(arr))
	for _, e := range arr {
		switch v := e.(type) {
		case float64:
			xs = append(xs, v)
		case bool:
			xs = append(xs, map[bool]float64{true: 1}[v])
		default:
			return nil, fmt.Errorf("not a list of numbers")
		}
	}
	return xs, nil
}

// filter keeps the elements (objects) for which "field[%k] op value" holds.
func filter(arr []any, f string) ([]any, error) {
	i := strings.IndexAny(f, "<>=!")
	op := ""
	if i >= 0 {
		op = opAt(f[i:])
	}
	if op == "" {
		return nil, fmt.Errorf("filter [%s]: want field op value", f)
	}
	field, want := f[:i], value{str: f[i+len(op):], isStr: true}
	mod := 0.0
	if name, k, ok := strings.Cut(field, "%"); ok {
		m, err := strconv.ParseFloat(k, 64)
		if err != nil || m <= 0 {
			return nil, fmt.Errorf("filter [%s]: bad modulus %q", f, k)
		}
		field, mod = name, m
	}
	if n, err := strconv.ParseFloat(want.str, 64); err == nil {
		want = value{num: n}
	} else if want.str == "true" || want.str == "false" {
		want = value{num: map[string]float64{"true": 1}[want.str]}
	}
	var kept []any
	for k, e := range arr {
		m, _ := e.(map[string]any)
		got, err := walk(m, field)
		if err != nil {
			return nil, fmt.Errorf("filter [%s]: element %d: %v", f, k, err)
		}
		if mod > 0 && !got.isStr {
			got.num = math.Mod(got.num, mod)
		}
		ok, err := compare(got, op, want)
		if err != nil {
			return nil, fmt.Errorf("filter [%s]: %v", f, err)
		}
		if ok {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// The claim language on hand-made rows: what holds, and how a failure reads.
func TestClaimLanguage(t *testing.T) {
	row := func(cct float64, roots ...any) map[string]any {
		return map[string]any{"cct_s": cct, "complete": true, "explain": map[string]any{"roots": roots},
			"flows": []any{
				map[string]any{"dst": 8.0, "rate": 0.1, "role": "culprit"},
				map[string]any{"dst": 9.0, "rate": 0.2, "role": "victim"},
				map[string]any{"dst": 16.0, "rate": 0.1, "role": "culprit"},
				map[string]any{"dst": 10.0, "rate": 0.2, "role": "victim"},
			}}
	}
	results := []result{
		{name: "shared", row: row(2, "leaf0")},
		{name: "disjoint", row: row(1)},
		{name: "ecmp s=1", parent: "ecmp", row: row(3)},
		{name: "ecmp s=2", parent: "ecmp", row: row(1)},
		{name: "ecmp s=3", parent: "ecmp", row: row(2)},
	}
	for _, c := range []struct{ claim, fail string }{
		{"shared.cct_s <= 2.5 * disjoint.cct_s", ""},
		{"shared.cct_s<=1.5*disjoint.cct_s", "2 > 1.5 × 1"},
		{"0.09 <= shared.flows[dst%8==0].rate.max <= 0.11", ""},
		{"shared.flows[dst%8!=0].rate.min >= 0.3", "0.2 < 0.3"},
		{"shared.flows[rate<0.15].frac == 0.5", ""},
		{"shared.flows[dst%8==0][role!=culprit].count == 0", ""},
		{`shared.explain.roots == "leaf0"`, ""},
		{`disjoint.explain.roots != "leaf0"`, ""},
		{"*.complete == true", ""},
		{"median(ecmp.cct_s) == 2", ""},
		{"max(ecmp.cct_s) < 3", "3 >= 3"},
		{"ecmp.cct_s <= 2", "for ecmp s=1: 3 > 2"},
		{"nope.cct_s > 0", `nope.cct_s: no variant "nope" (have: shared, disjoint, ecmp s=1, ecmp s=2, ecmp s=3)`},
		{"shared.flows.rate > 0", "shared.flows.rate: shared: flows.rate is a list of 4 values: end with .min, .max, .mean, .median, .sum, .count or .frac"},
		{"shared.cct > 0", `shared.cct: shared: no "cct" in the row`},
	} {
		cl, err := parseClaim(c.claim)
		if err != nil {
			t.Errorf("%s: %v", c.claim, err)
			continue
		}
		fails := cl.check(results)
		if got := strings.Join(fails, "; "); got != c.fail {
			t.Errorf("%s: got %q, want %q", c.claim, got, c.fail)
		}
	}
	for _, bad := range []string{"shared.cct_s", "shared.cct_s <=", "2 * <= 3", "median(ecmp.cct_s <= 2", "cct_s > 1", `"a <= 1`} {
		if _, err := parseClaim(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}
