package scenario

import (
	"fmt"
	"unicode/utf8"

	"github.com/goccy/go-yaml/token"

	"fabriclab/internal/inputfile"
)

// The YAML library's cost is not linear in its input: a block mapping is
// parsed one recursive call per key, appending the rest of the mapping at
// every level (1.5 M keys overflow the stack, 16,000 keys allocate 1 GB),
// and every level of flow nesting copies the path of the levels above it
// ([ × 100,000 needs 15 GB). Its lexer allocates about 300 bytes per token
// and 50 per byte of a scalar. So the text is bounded before the library
// sees it, in three steps, each refusing with a file:line:col error at the
// place where a limit is crossed:
//
//  1. its size (Options.MaxBytes, DefaultMaxBytes by default);
//  2. prescan, a single pass over the bytes that allocates nothing: the
//     nesting depth (block indentation and open brackets), the values
//     (keys, scalars, list entries) and the keys of each block mapping;
//  3. checkTokens, the same limits on the lexer's tokens, before the
//     parser runs. The lexer is the authority on what is text and what is
//     structure, and it has quirks (a ':' without a space separates a key
//     inside {…}, "<<:" is a merge key even inside text, a line starting
//     with "-" can turn a plain scalar into a block of text…). The byte
//     scan follows them (FuzzPrescan checks that it is never more lenient
//     than the tokens on text that parses); should it ever be misled, the
//     tokens still stop the parser, after a linear pass over at most
//     MaxBytes.
//
// A real scenario is a few kilobytes, nests fewer than 10 levels and holds
// a few hundred values; the limits leave a wide margin.

// DefaultMaxBytes is the largest scenario file read unless Options.MaxBytes
// says otherwise. The shipped examples are under 3 KB; at this size the
// library's worst case (one long block scalar) parses in about 0.2 s,
// allocating 100 MB (16 MiB would take 2 s and 1.6 GB).
const DefaultMaxBytes = 1 << 20

const (
	// maxValues bounds the keys, scalars and list entries of a file. It is
	// half the walker's budget (maxNodes), which counts values but not
	// keys, so without aliases the walker never runs out: its budget is
	// left for what aliases expand.
	maxValues = maxNodes / 2
	// maxKeys bounds the keys of one block mapping: the parser's work
	// grows with their square, so that a file within maxValues costs up
	// to 70 MB with 256 keys a mapping, 145 MB with 1000. The largest
	// mapping of the schema (workload) has 23 keys.
	maxKeys = 256
)

// textLimits are the limits of prescan and checkTokens; tests shrink them.
type textLimits struct{ depth, values, keys int }

var defaultTextLimits = textLimits{depth: maxDepth, values: maxValues, keys: maxKeys}

func depthMsg(l textLimits) string {
	return fmt.Sprintf("nested too deeply (more than %d levels)", l.depth)
}

func valuesMsg(l textLimits) string {
	return fmt.Sprintf("more than %d values (keys, scalars and list entries); a scenario has a few hundred, an agents file about 4 per host", l.values)
}

func keysMsg(l textLimits) string {
	return fmt.Sprintf("more than %d keys in one mapping", l.keys)
}

// sizeError refuses a file of size bytes (-1: unknown, it grew while being
// read) over limit.
func sizeError(file string, size, limit int64) *Error {
	what := "the file is " + byteCount(size)
	if size < 0 {
		what = "the file is"
	}
	return &Error{File: file, Msg: fmt.Sprintf("%s, larger than the limit of %s (raise it with --max-scenario-size)", what, byteCount(limit))}
}

// byteCount writes n in the largest binary unit, exactly when it is a
// multiple ("16 MiB") and to one decimal otherwise ("17.2 MiB").
func byteCount(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d %s", n/u.size, u.name)
			}
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// prescan checks the raw text against lim before it is parsed.
func prescan(file string, src []byte, lim textLimits) *Error {
	src = inputfile.TrimBOM(src) // as the lexer gets it
	s := prescanner{src: src, file: file, lim: lim, line: 1, nodeLine: 1, delim: -1}
	for s.err == nil && s.i < len(src) {
		at := s.i
		s.startLine()
		if s.i == at { // never: every line is read; but never loop either
			s.skipComment()
			if s.i < len(src) {
				s.newline()
			}
		}
	}
	return s.err
}

// level is an open collection: a block one at an indentation (col, as the
// lexer counts columns, from 0) or a flow one ('[' or '{').
type level struct {
	col  int
	kind byte // 'b' block, 's' a list at the indentation of a mapping's keys, '[' or '{'
	keys int  // keys of a block mapping at col
}

// prescanner reads text the way the YAML library's lexer does where it
// matters, that is where text ends and structure starts: quotes, block
// scalars, comments and the lines a plain scalar goes on over.
type prescanner struct {
	src  []byte
	file string
	lim  textLimits
	err  *Error

	i               int  // next byte
	line, lineStart int  // of byte i
	indent          int  // of the line (0 after a line break in a scalar)
	directive       bool // the line is a directive (%…)
	tabs            int  // in the indentation of the line

	lv [maxDepth + 2]level
	n  int // levels in use; flow ones are on top
	// flows counts the open brackets; flowSeqs and flowMaps count them as
	// the lexer does: "[" and "]", "{" and "}", whatever their nesting.
	flows, flowSeqs, flowMaps int
	values                    int

	// delim is the column of the last key, "- " or "?" (-1: none since
	// the document started), as the lexer keeps it: a line indented no
	// further ends a plain scalar, and a block scalar's text is indented
	// further.
	delim int
	// plain: the last line ended inside a plain scalar, which a following
	// line indented beyond delim continues.
	plain bool
	// scalarCol is the column of the last node when it is a plain or
	// quoted scalar (-1 otherwise): a key if a separator follows.
	scalarCol int
	// Where the current node starts, for errors about keys; keyed: a node
	// (a key, if a separator follows) started since the last separator.
	nodeAt, nodeLine, nodeLineStart int
	keyed                           bool
	// valued: that node started on the line of the last separator
	// (colonLine), so it is a value, and a ':' first on the next line is
	// an empty key of its own, not that node's separator.
	valued    bool
	colonLine int
	// unnamed: an "&" or "*" without a name, which the next token gives,
	// on this line or another.
	unnamed bool
}

func (s *prescanner) errAt(at, line, lineStart int, msg string) {
	if s.err == nil {
		s.err = &Error{File: s.file, Line: line, Col: utf8.RuneCount(s.src[lineStart:at]) + 1, Msg: msg}
	}
}

func (s *prescanner) fail(msg string) { s.errAt(s.i, s.line, s.lineStart, msg) }

// value counts a node starting at byte i.
func (s *prescanner) value() {
	if s.values++; s.values > s.lim.values {
		s.fail(valuesMsg(s.lim))
	}
}

// push opens a level at byte i. The first level (the document) is not
// counted as nesting.
func (s *prescanner) push(col int, kind byte) {
	if s.n > s.lim.depth {
		s.fail(depthMsg(s.lim))
		return
	}
	s.lv[s.n] = level{col: col, kind: kind}
	s.n++
}

func (s *prescanner) newline() {
	if s.src[s.i] == '\r' && s.i+1 < len(s.src) && s.src[s.i+1] == '\n' {
		s.i++
	}
	s.i++
	s.line++
	s.lineStart = s.i
	s.indent, s.directive, s.tabs = 0, false, 0
}

// col is the column of byte i on its line, as the lexer counts it.
func (s *prescanner) col(i int) int { return i - s.lineStart - s.tabs }

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func isBreak(b byte) bool { return b == '\n' || b == '\r' }

// blankAt: byte j is a space, a line break or the end.
func (s *prescanner) blankAt(j int) bool {
	return j >= len(s.src) || isBlank(s.src[j]) || isBreak(s.src[j])
}

// entryAt: a "- " starts at byte i (the lexer takes a NUL for the end, too).
func (s *prescanner) entryAt(i int) bool {
	return s.src[i] == '-' && (s.blankAt(i+1) || s.src[i+1] == 0)
}

// mergeKey: a "<<" the lexer takes for a merge key starts at byte i:
// exactly two, then spaces, then ':' and a space or a line break.
func (s *prescanner) mergeKey(i int) bool {
	src := s.src
	if i+2 >= len(src) || src[i] != '<' || src[i+1] != '<' || src[i+2] == '<' {
		return false
	}
	j := i + 2
	for j < len(src) && src[j] == ' ' {
		j++
	}
	return j+1 < len(src) && src[j] == ':' && (src[j+1] == ' ' || isBreak(src[j+1]))
}

// docMarker: a "---" (start) or "..." (end) line starts at byte i.
func (s *prescanner) docMarker(i int) bool {
	if i+3 > len(s.src) {
		return false
	}
	c := s.src[i]
	return (c == '-' || c == '.') && s.src[i+1] == c && s.src[i+2] == c && s.blankAt(i+3)
}

// startLine reads the line starting at byte i.
func (s *prescanner) startLine() {
	src := s.src
	j := s.i
	for j < len(src) && isBlank(src[j]) {
		j++
	}
	switch {
	case j == len(src):
		s.i = j
		return
	case isBreak(src[j]): // blank: a plain scalar may go on after it
		s.i = j
		s.newline()
		return
	case src[j] == '#':
		s.i = j
		s.skipComment()
		return
	}
	tabs := 0
	for _, b := range src[s.i:j] {
		if b == '\t' {
			tabs++
		}
	}
	// The lexer leaves tabs out of the indentation (or refuses them).
	indent := j - s.i - tabs
	s.i, s.indent, s.tabs = j, indent, tabs
	if indent == 0 && s.flows == 0 && s.docMarker(j) {
		s.value()
		s.n = 0
		s.push(-1, 'b')
		if src[j] == '-' {
			s.delim = -1
		}
		s.i += 3
		s.plain, s.keyed = false, false
		s.scanLine()
		return
	}
	if s.plain && indent > s.delim && !s.mergeKey(j) {
		// The plain scalar of the line before goes on; a line of it
		// starting with "-" makes the rest, as far as it is indented, text.
		if src[j] == '-' {
			s.skipComment() // this line is text
			if s.i < len(src) {
				s.newline()
			}
			s.delim = indent - 1
			s.skipText(indent)
			return
		}
		s.plainText()
		s.scanLine()
		return
	}
	s.plain = false
	if s.flows > 0 || s.unnamed || src[j] == ':' && s.keyed && !s.valued && s.separator() {
		// Indentation means nothing inside brackets, nor for the ':' of a
		// key on the line before.
		s.scanLine()
		return
	}
	for s.n > 0 && (s.lv[s.n-1].col > indent || s.lv[s.n-1].col == indent && s.lv[s.n-1].kind == 's' && !s.entryAt(j)) {
		s.n--
	}
	if s.n == 0 || s.lv[s.n-1].col < indent {
		s.push(indent, 'b')
	}
	s.keyed = false
	s.scanLine()
}

// scanLine reads the rest of the line (and the lines a quoted or block
// scalar spans).
func (s *prescanner) scanLine() {
	src := s.src
	ws := true // after a blank or at the start of the line
	for s.err == nil && s.i < len(src) {
		c := src[s.i]
		switch {
		case isBreak(c):
			s.newline()
			return
		case isBlank(c):
			s.i++
			ws = true
			continue
		case c == '#' && ws:
			s.skipComment()
			continue
		}
		ws = false
		if s.flows > 0 {
			switch c {
			case ',':
				s.i++
				s.keyed, s.scalarCol = false, -1
				if s.n > 0 && s.lv[s.n-1].kind == '[' {
					s.lv[s.n-1].keys = 0 // the next entry's keys
				}
				continue
			case ']', '}':
				if s.closer(c) {
					s.closeFlow(c)
					continue
				}
			case '[', '{':
				s.openFlow(c)
				continue
			}
		}
		if c == ':' && s.separator() {
			if !s.keyed {
				// No node since the last separator: the key is empty, here.
				s.nodeAt, s.nodeLine, s.nodeLineStart = s.i, s.line, s.lineStart
			}
			if s.scalarCol >= 0 {
				s.delim = s.scalarCol
			}
			s.keyed, s.scalarCol = false, -1
			s.colonLine = s.line
			s.key()
			s.i++
			continue
		}
		// Plain text is read to its end by plainText, so anything else
		// starts a node, as it does for the lexer (after a quoted scalar
		// too).
		if s.node(c) {
			return // a block scalar ended at the start of a line
		}
	}
}

// separator: the ':' at byte i separates a key from its value.
func (s *prescanner) separator() bool {
	j := s.i + 1
	if s.blankAt(j) {
		return true
	}
	switch {
	case s.flowMaps > 0 && s.src[j] != '/': // the lexer's reading inside {…}
		return true
	case s.flows > 0:
		switch s.src[j] {
		case ',', '[', ']', '{', '}':
			return true
		}
	}
	return false
}

// key counts a key in the block mapping on top, or in an entry of the
// flow sequence on top: the parser makes one block mapping of an entry's
// keys when no ',' parts them ("[a: 1\n b: 2]").
func (s *prescanner) key() {
	if s.n == 0 || s.lv[s.n-1].kind == '{' || s.lv[s.n-1].kind == 's' {
		return
	}
	l := &s.lv[s.n-1]
	if l.keys++; l.keys > s.lim.keys {
		s.errAt(s.nodeAt, s.nodeLine, s.nodeLineStart, keysMsg(s.lim))
	}
}

// node reads a node starting with c at byte i; true when it read a block
// scalar, which ends at the start of a line.
func (s *prescanner) node(c byte) bool {
	if !s.keyed {
		s.nodeAt, s.nodeLine, s.nodeLineStart = s.i, s.line, s.lineStart
		s.keyed, s.valued = true, s.line == s.colonLine
	}
	col, at := s.col(s.i), s.i
	s.scalarCol = -1
	if s.unnamed { // the lexer's next token names the anchor or alias
		s.value()
		s.plainText()
		s.unnamed = false
		return false
	}
	switch c {
	case '[', '{':
		s.openFlow(c)
		return false
	case '<':
		if s.mergeKey(s.i) {
			s.nodeAt, s.nodeLine, s.nodeLineStart = s.i, s.line, s.lineStart
			s.value()
			s.i += 2
			s.scalarCol = col
			return false
		}
	case '"', '\'':
		s.value()
		s.quoted(c)
		s.scalarCol = col
		return false
	case '|', '>':
		if s.flows == 0 {
			s.value()
			s.blockScalar()
			return true
		}
	case '&', '!': // an anchor or a tag: the node follows
		s.value()
		s.skipWord()
		s.unnamed = c != '!' && s.i == at+1
		return false
	case '%':
		if s.indent == 0 { // a directive for the lexer: each word a node
			s.value()
			s.skipWord()
			s.directive = true
			return false
		}
	case '*':
		s.value()
		s.skipWord()
		s.unnamed = s.i == at+1
		return false
	case '-':
		if s.flows == 0 && s.entryAt(s.i) {
			s.value()
			s.entry()
			return false
		}
	case '?':
		if s.blankAt(s.i + 1) { // counted as a key here and at its ':'
			s.value()
			s.key()
			s.delim = col
			s.i++
			return false
		}
	}
	s.value()
	s.plainText()
	s.scalarCol = col
	return false
}

// entry reads "- " at byte i: what follows on the line is a node one level
// deeper.
func (s *prescanner) entry() {
	s.delim = s.col(s.i)
	switch top := s.lv[max(s.n-1, 0)]; {
	case s.n == 0 || top.col < s.delim: // a list after other text on the line
		s.push(s.delim, 's')
	case top.kind == 'b' && top.col == s.delim && top.keys > 0:
		s.push(s.delim, 's') // a list in a mapping, at the indentation of its keys
	}
	k := s.i + 1
	for k < len(s.src) && isBlank(s.src[k]) {
		k++
	}
	s.keyed = false
	if k < len(s.src) && !isBreak(s.src[k]) && s.src[k] != '#' {
		if col := s.col(k); s.n == 0 || s.lv[s.n-1].col < col {
			s.push(col, 'b') // an error points at the "-"
		}
	}
	s.i = k
}

func (s *prescanner) openFlow(c byte) {
	s.value()
	s.push(-1, c)
	s.flows++
	if c == '{' {
		s.flowMaps++
	} else {
		s.flowSeqs++
	}
	s.i++
	s.plain, s.keyed, s.scalarCol = false, false, -1
}

// closer: c closes a bracket ("]" inside "[", "}" inside "{"; else it is
// text).
func (s *prescanner) closer(c byte) bool {
	return c == ']' && s.flowSeqs > 0 || c == '}' && s.flowMaps > 0
}

// closeFlow closes the innermost bracket with c.
func (s *prescanner) closeFlow(c byte) {
	if c == '}' {
		s.flowMaps--
	} else {
		s.flowSeqs--
	}
	if s.n > 0 && s.lv[s.n-1].kind != 'b' {
		s.flows--
		s.n--
	}
	s.i++
	s.plain, s.scalarCol = false, -1
}

// plainText reads plain text up to the end of the line, a comment, a
// separator or (in brackets) a flow indicator.
func (s *prescanner) plainText() {
	src := s.src
	for ; s.i < len(src); s.i++ {
		switch c := src[s.i]; c {
		case '\n', '\r':
			s.plain = true
			return
		case ' ', '\t':
			if s.directive || s.i+1 < len(src) && src[s.i+1] == '#' {
				return
			}
		case ':':
			if s.separator() {
				s.plain = false
				return
			}
		case '<':
			if s.mergeKey(s.i) { // the lexer's merge key, even in text
				s.plain = false
				return
			}
		case ',', '[', '{':
			if s.flows > 0 {
				s.plain = false
				return
			}
		case ']', '}':
			if s.closer(c) {
				s.plain = false
				return
			}
		}
	}
}

// skipWord skips an anchor, alias or tag.
func (s *prescanner) skipWord() {
	for s.i++; s.i < len(s.src); s.i++ {
		c := s.src[s.i]
		if isBlank(c) || isBreak(c) {
			return
		}
		if s.flows > 0 && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
			return
		}
	}
}

// skipComment skips to the end of the line; a comment ends a plain scalar.
func (s *prescanner) skipComment() {
	for s.i < len(s.src) && !isBreak(s.src[s.i]) {
		s.i++
	}
	s.plain = false
}

// quoted skips a quoted scalar (byte i is its opening quote q), which may
// span lines.
func (s *prescanner) quoted(q byte) {
	src := s.src
	s.i++
	for s.i < len(src) {
		switch c := src[s.i]; {
		case isBreak(c):
			s.newline()
		case c == '\\' && q == '"':
			s.escape()
		case c == q:
			s.i++
			if q == '\'' && s.i < len(src) && src[s.i] == '\'' {
				s.i++ // '' is a quote inside single quotes
				continue
			}
			return
		default:
			s.i++
		}
	}
}

// escape skips a backslash escape in double quotes as the lexer does: it
// takes the characters of \x, \u and \U whatever they are.
func (s *prescanner) escape() {
	src := s.src
	s.i++
	if s.i >= len(src) {
		return
	}
	n := 1
	switch src[s.i] {
	case 'x':
		n = 3
	case 'u':
		n = 5
		if j := s.i; j+10 < len(src) {
			if hi := hexish(src[j+1 : j+5]); hi >= 0xD800 && hi <= 0xDBFF && src[j+5] == '\\' && src[j+6] == 'u' {
				if lo := hexish(src[j+7 : j+11]); lo >= 0xDC00 && lo <= 0xDFFF {
					n = 11 // a surrogate pair
				}
			}
		}
	case 'U':
		n = 9
	}
	for ; n > 0 && s.i < len(src); n-- {
		if isBreak(src[s.i]) {
			s.newline()
			continue
		}
		_, size := utf8.DecodeRune(src[s.i:])
		s.i += size
	}
}

// hexish reads hex digits the way the lexer does, without checking them.
func hexish(b []byte) int {
	v := 0
	for _, c := range b {
		d := int(c) - '0'
		switch {
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		}
		v = v<<4 + d
	}
	return v
}

// blockScalar skips a literal (|) or folded (>) scalar at byte i: its
// header line, then the lines indented more than the last key or "- "
// (as far as the first of them is, or as an indentation indicator says),
// blank lines included.
func (s *prescanner) blockScalar() {
	src := s.src
	if s.col(s.i) == 0 {
		s.delim = max(s.delim, 0)
	}
	indent := -1
	for s.i++; s.i < len(src) && (src[s.i] >= '1' && src[s.i] <= '9' || src[s.i] == '+' || src[s.i] == '-'); s.i++ {
		if c := src[s.i]; c >= '1' && c <= '9' {
			indent = s.delim + int(c-'0')
		}
	}
	s.skipComment() // the rest of the header line
	if s.i == len(src) {
		return
	}
	s.newline()
	s.skipText(indent)
}

// skipText skips the lines of a block scalar from byte i, the start of a
// line: every line indented at least indent (-1: as far as its first
// non-blank line, which must be indented more than delim) and blank
// lines. The lexer then takes the lines of the text as the column left of
// which the next ones end it.
func (s *prescanner) skipText(indent int) {
	src := s.src
	for s.i < len(src) {
		start := s.i
		j := start
		for j < len(src) && src[j] == ' ' {
			j++
		}
		k := j
		for k < len(src) && isBlank(src[k]) {
			k++
		}
		if k == len(src) {
			s.i = k
			return
		}
		if isBreak(src[k]) {
			s.i = k
			s.newline()
			continue
		}
		n := j - start
		if n == 0 && s.docMarker(start) {
			s.plain = false
			return
		}
		if indent < 0 {
			if n <= s.delim {
				return
			}
			indent = n
		}
		if n < indent {
			return
		}
		s.delim = indent - 1
		for s.i = k; s.i < len(src) && !isBreak(src[s.i]); s.i++ {
		}
		if s.i < len(src) {
			s.newline()
		}
	}
}

// checkTokens checks the lexer's tokens against lim: the nesting (block
// mappings and sequences by column, brackets), the values (every token but
// separators, ends and comments) and the keys of each block mapping (keys
// at one column with no token left of it in between, as the parser groups
// them).
func checkTokens(file string, tks token.Tokens, lim textLimits) *Error {
	type block struct {
		col, keys int
		seq       bool
	}
	var st [maxDepth + 2]block
	// flows are the open brackets; keys counts the keys of a sequence's
	// entry since its last ','.
	type flowLevel struct {
		seq  bool
		keys int
	}
	var flows [maxDepth + 2]flowLevel
	n, flow, values := 0, 0, 0
	// A node starts after a separator, "- " or "?", or first on a line;
	// anchors and tags hold the start for the node they precede on the line.
	// The token after "&" or "*" is its name, wherever it is.
	starts, hold, name := true, false, false
	keyLine, keyCol := 0, 0
	// valueNode: the node at keyLine:keyCol follows a ':' on its line
	// (colonLine: the last ':''s).
	valueNode, colonLine := false, 0
	prevLine := 0
	fail := func(line, col int, msg string) *Error {
		return &Error{File: file, Line: line, Col: col, Msg: msg}
	}
	// key counts a key starting at keyLine:keyCol in the mapping there.
	key := func() *Error {
		for n > 0 && (st[n-1].col > keyCol || st[n-1].col == keyCol && st[n-1].seq) {
			n--
		}
		if n > 0 && st[n-1].col == keyCol {
			if st[n-1].keys++; st[n-1].keys > lim.keys {
				return fail(keyLine, keyCol, keysMsg(lim))
			}
			return nil
		}
		if n > lim.depth {
			return fail(keyLine, keyCol, depthMsg(lim))
		}
		st[n] = block{col: keyCol, keys: 1}
		n++
		return nil
	}
	for _, tk := range tks {
		if tk == nil || tk.Position == nil || tk.Type == token.CommentType {
			continue
		}
		line, col := tk.Position.Line, tk.Position.Column
		switch tk.Type {
		case token.MappingValueType, token.CollectEntryType, token.SequenceEndType, token.MappingEndType, token.DocumentEndType:
		default:
			if values++; values > lim.values {
				return fail(line, col, valuesMsg(lim))
			}
		}
		first := line != prevLine
		prevLine = line
		if flow > 0 {
			switch tk.Type {
			case token.SequenceStartType, token.MappingStartType:
				if flow++; max(n-1, 0)+flow > lim.depth || flow > len(flows) {
					return fail(line, col, depthMsg(lim))
				}
				flows[flow-1] = flowLevel{seq: tk.Type == token.SequenceStartType}
			case token.SequenceEndType, token.MappingEndType:
				flow--
			case token.CollectEntryType:
				flows[flow-1].keys = 0
			case token.MappingValueType:
				// An entry of a sequence whose keys no ',' parts is one
				// block mapping to the parser ("[a: 1\n b: 2]").
				if f := &flows[flow-1]; f.seq {
					if f.keys++; f.keys > lim.keys {
						return fail(line, col, keysMsg(lim))
					}
				}
			}
			continue
		}
		if name {
			name = false
			continue
		}
		for n > 0 && st[n-1].col > col {
			n--
		}
		node := starts && !hold || first
		switch tk.Type {
		case token.SequenceEntryType:
			if n == 0 || st[n-1].col != col || !st[n-1].seq {
				if n > lim.depth {
					return fail(line, col, depthMsg(lim))
				}
				st[n] = block{col: col, seq: true}
				n++
			}
			starts, hold = true, false
		case token.MappingKeyType:
			// "? key" is counted here (the parser takes a "?" without a
			// ':' as a key too); the key after it starts a node of its own.
			keyLine, keyCol = line, col
			if err := key(); err != nil {
				return err
			}
			starts, hold = true, false
		case token.AnchorType, token.TagType, token.AliasType:
			if node {
				keyLine, keyCol = line, col
				valueNode = line == colonLine
			}
			starts, hold = false, tk.Type != token.AliasType
			name = tk.Type != token.TagType
		case token.MappingValueType:
			// No key: it is empty, here. So it is too for a ':' first
			// on its line after the value of a ':' on that value's line
			// (the parser takes ": x" lines for keys of their own).
			if starts && !hold || first && valueNode {
				keyLine, keyCol = line, col
			}
			colonLine = line
			if err := key(); err != nil {
				return err
			}
			starts, hold = true, false
		case token.DocumentHeaderType, token.DocumentEndType:
			n = 0
			starts, hold = true, false
		default:
			if node {
				keyLine, keyCol = line, col
				valueNode = line == colonLine
			}
			starts, hold = false, false
			if tk.Type == token.SequenceStartType || tk.Type == token.MappingStartType {
				if flow = 1; max(n-1, 0)+flow > lim.depth {
					return fail(line, col, depthMsg(lim))
				}
				flows[0] = flowLevel{seq: tk.Type == token.SequenceStartType}
			}
		}
	}
	return nil
}

// PrescanYAML checks YAML text of another kind of file (e.g. an agents
// file) against the scenario's nesting and key limits and maxValues values
// before a YAML parser sees it: the parser's cost is not linear in its input, and a
// few kilobytes of brackets can cost gigabytes.
func PrescanYAML(file string, src []byte, maxValues int) error {
	lim := defaultTextLimits
	lim.values = max(maxValues, 1)
	if e := prescan(file, src, lim); e != nil {
		return e
	}
	return nil
}
