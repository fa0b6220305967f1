package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// tight limits that the shipped examples still fit: a real scenario nests
// fewer than 10 levels and holds a few hundred values.
var tight = textLimits{depth: 10, values: 1000, keys: 40}

// small limits, for tests and fuzzing to reach them with little text.
var small = textLimits{depth: 3, values: 40, keys: 3}

func exampleFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

// checkText runs both checks of the text with lim.
func checkText(name string, text []byte, lim textLimits) (scan, tokens *Error) {
	return prescan(name, text, lim), checkTokens(name, lexer.Tokenize(string(text)), lim)
}

func TestPrescanExamples(t *testing.T) {
	for p, b := range exampleFiles(t) {
		if n := testing.AllocsPerRun(10, func() { prescan(p, b, defaultTextLimits) }); n != 0 {
			t.Errorf("%s: prescan allocates %v times", p, n)
		}
		if scan, tokens := checkText(p, b, tight); scan != nil || tokens != nil {
			t.Errorf("%s: prescan %v, tokens %v", p, scan, tokens)
		}
		if scan, tokens := checkText(p, b, defaultTextLimits); scan != nil || tokens != nil {
			t.Errorf("%s: prescan %v, tokens %v", p, scan, tokens)
		}
	}
}

// TestPrescanText: brackets, colons and dashes inside quotes, comments,
// block scalars and plain text are not structure.
func TestPrescanText(t *testing.T) {
	deep := strings.Repeat("[", 10)
	for _, text := range []string{
		`a: "` + deep + `"`,
		`a: "\"` + deep + `"`,
		`a: "\x22` + deep + `"`,
		`a: "\u0022` + deep + `"`,
		"a: \"multi\n  line " + deep + "\n  \\\" still\"\nb: 1\n",
		`a: '` + deep + `'`,
		`a: 'it''s ` + deep + `'`,
		"a: 'multi\n  line " + deep + "'\n",
		"a: x" + deep,
		"a: x: y" + deep,                                 // the lexer's error, not ours
		"a: x\n  " + deep + "\n  \"" + deep + "\nb: 1\n", // plain text on three lines
		"a: 1 # " + deep + " {{{{\n# " + deep + "\n",
		"a: |\n  " + deep + "\n\n  {{{{: x\n  - - - -\nb: 1\n",
		"a: >-\n    " + deep + "\n   \n    " + deep + "\n",
		"- |\n  " + deep + "\n- x\n",
		"x:\n  - k: |2\n       " + deep + "\n      " + deep + "\n  - b\n",
		"--- |\n" + deep + "\n",
		"[a, \"" + deep + "\", '" + deep + "', b" + deep[:1] + "]",
		"{a: \"]]]]\", b: '}}}}'}",
		"k: {a:\"x, \"}\nb: [[1]]\n",
		"url: http://x.example/[a]\n",
		"a: &anchor" + deep + " 1\nb: *alias" + deep + "\n",
		"a: !tag" + deep + " 1\n",
	} {
		if scan, tokens := checkText("t.yaml", []byte(text), small); scan != nil || tokens != nil {
			t.Errorf("%q: prescan %v, tokens %v", text, scan, tokens)
		}
	}
}

// TestPrescanLimits: where each limit is crossed.
func TestPrescanLimits(t *testing.T) {
	for _, c := range []struct{ text, want, tokens string }{
		{"a:\n b:\n  c:\n   d:\n    e: 1\n", "t.yaml:5:5: nested too deeply (more than 3 levels)", ""},
		{"a: [[[[1]]]]\n", "t.yaml:1:7: nested too deeply (more than 3 levels)", ""},
		{"[[[[", "t.yaml:1:4: nested too deeply (more than 3 levels)", ""},
		{"a: {b: {c: {d: {e: 1}}}}\n", "t.yaml:1:16: nested too deeply (more than 3 levels)", ""},
		// The scan counts the entry's node a level, the tokens only the lists.
		{"- - - - - x\n", "t.yaml:1:7: nested too deeply (more than 3 levels)", "t.yaml:1:9: nested"},
		{"\"é\": [[[[\n", "t.yaml:1:9: nested too deeply (more than 3 levels)", ""},
		{"a: \"x\" [[[[1]]]]\n", "t.yaml:1:11: nested too deeply (more than 3 levels)", ""},
		{"a: |\n  x\nb: [[[[1]]]]\n", "t.yaml:3:7: nested too deeply (more than 3 levels)", ""},
		{"a: 1\nb: 2\nc: 3\nd: 4\n", "t.yaml:4:1: more than 3 keys in one mapping", ""},
		{"x:\n  - a: 1\n    b: 2\n    'c': 3\n    \"d\": 4\n", "t.yaml:5:5: more than 3 keys in one mapping", ""},
		{"a: 1\n# c\n\nb: 2\nc:\n  x: 1\n  y: 2\n  z: 3\nd: 4\n", "t.yaml:9:1: more than 3 keys in one mapping", ""},
		{"[" + strings.Repeat("1, ", 40) + "]", "t.yaml:1:119: more than 40 values", ""},
	} {
		scan, tokens := checkText("t.yaml", []byte(c.text), small)
		if c.tokens == "" {
			c.tokens = c.want
		}
		if scan == nil || !strings.HasPrefix(scan.Error(), c.want) {
			t.Errorf("%q: prescan %v, want %q", c.text, scan, c.want)
		}
		if tokens == nil || !strings.HasPrefix(tokens.Error(), c.tokens) {
			t.Errorf("%q: tokens %v, want %q", c.text, tokens, c.tokens)
		}
	}
	// Separate mappings, each within the limit.
	for _, text := range []string{
		"- a: 1\n  b: 2\n  c: 3\n- a: 1\n  b: 2\n  c: 3\n",
		"x:\n  a: 1\n  b: 2\n  c: 3\ny:\n  a: 1\n  b: 2\n  c: 3\n",
		"a: 1\nb: 2\nc: 3\n---\na: 1\nb: 2\nc: 3\n",
	} {
		if scan, tokens := checkText("t.yaml", []byte(text), small); scan != nil || tokens != nil {
			t.Errorf("%q: prescan %v, tokens %v", text, scan, tokens)
		}
	}
}

// TestCheckTokensKeys: keys of one mapping are counted at the column its
// keys start, anchors and tags included, as the parser groups them.
func TestCheckTokensKeys(t *testing.T) {
	for _, text := range []string{
		"&a a: 1\n&b b: 2\n&c c: 3\n&d d: 4\n",
		"!!str a: 1\n!!str b: 2\n!!str c: 3\n!!str d: 4\n",
		"? a\n: 1\n? b\n: 2\n? c\n: 3\n? d\n: 4\n",
		"\"a\nx\": 1\nb: 2\nc: 3\nd: 4\n",
		// Found by fuzzing: lines of ": x" are empty keys of their own,
		// and a sequence entry's keys no ',' parts are one mapping.
		"0\n: 0\n: 0\n: 0\n: 00:",
		"[   0: \n    0: \n    0: \n    0: 0]",
	} {
		err := checkTokens("t.yaml", lexer.Tokenize(text), small)
		if err == nil || !strings.Contains(err.Error(), "more than 3 keys") {
			t.Errorf("%q: %v", text, err)
		}
		if scan := prescan("t.yaml", []byte(text), small); scan == nil && strings.HasPrefix(text, "[") {
			t.Errorf("%q: the byte scan passed it", text)
		}
	}
	// Entries a ',' parts are mappings of their own.
	if scan, tokens := checkText("t.yaml", []byte("[a: 1, b: 2, c: 3, d: 4]"), small); scan != nil || tokens != nil {
		t.Errorf("single-key entries: prescan %v, tokens %v", scan, tokens)
	}
}

// parsedBounds are the largest block mapping (keys) and the deepest
// nesting of collections in a parsed document.
func parsedBounds(n ast.Node, depth int) (keys, deepest int) {
	deepest = depth
	visit := func(c ast.Node, d int) {
		k, dd := parsedBounds(c, d)
		keys, deepest = max(keys, k), max(deepest, dd)
	}
	switch v := n.(type) {
	case *ast.DocumentNode:
		visit(v.Body, depth)
	case *ast.MappingNode:
		if !v.IsFlowStyle {
			keys = len(v.Values)
		}
		for _, mv := range v.Values {
			visit(mv.Key, depth+1)
			visit(mv.Value, depth+1)
		}
	case *ast.MappingValueNode:
		keys = 1
		visit(v.Key, depth+1)
		visit(v.Value, depth+1)
	case *ast.SequenceNode:
		for _, x := range v.Values {
			visit(x, depth+1)
		}
	case *ast.AnchorNode:
		visit(v.Value, depth)
	case *ast.TagNode:
		visit(v.Value, depth)
	}
	return keys, deepest
}

// checkPrescan is what FuzzPrescan asserts of any text.
func checkPrescan(t *testing.T, text string) {
	const name = "fuzz.yaml"
	src := []byte(text)
	for _, lim := range []textLimits{defaultTextLimits, small} {
		scan, tokens := checkText(name, src, lim)
		for _, err := range []*Error{scan, tokens} {
			if err == nil {
				continue
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			if m := posRE.FindStringSubmatch(msg); m == nil || m[1] != name || err.Line < 1 || err.Col < 1 {
				t.Fatalf("error does not start with %s:line:col: %q", name, msg)
			}
		}
	}
	// The tokens are the guard: when they pass, the parser's tree is
	// within the limits (the nesting counted in the tree's own way, which
	// gives a block sequence inside a mapping a level of its own). And the
	// byte scan, which stops most input before the lexer allocates, is
	// never more lenient than the tokens on text that parses.
	tks := lexer.Tokenize(text)
	tokens := checkTokens(name, tks, small)
	file, err := parser.Parse(tks, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return
	}
	if tokens != nil {
		if prescan(name, src, small) == nil {
			t.Fatalf("the byte scan passed what the tokens refuse: %v", tokens)
		}
		return
	}
	for _, d := range file.Docs {
		if keys, depth := parsedBounds(d, 0); keys > small.keys || depth > 2*(small.depth+1) {
			t.Fatalf("tokens passed, but the parsed tree has a mapping of %d keys and depth %d", keys, depth)
		}
	}
}
