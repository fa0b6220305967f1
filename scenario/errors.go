package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"

	"fabriclab/internal/inputfile"
)

// Error is one problem in a scenario, at one place. Its message is always a
// single line that starts with the place ("file:line:column: " or, for a
// command-line override, "--set key: "), names the key and says what is
// wrong, so that editors and CI logs can jump to it.
type Error struct {
	File      string // scenario file name as given to Load/Parse
	Line, Col int    // 1-based position; 0 when unknown
	// Set is the dotted key of the command-line option the value came from
	// (--set, or the option Flag names); when non-empty it replaces
	// File:Line:Col as the place.
	Set string
	// Flag is the option of Set: "" for --set, "--sweep" for a --sweep value.
	Flag string
	// Sweep is the swept key whose value is to blame and Point the name of
	// the sweep point whose scenario is wrong, when the problem comes from
	// a sweep ("sweep workload.qps: point \"qps=0\": …").
	Sweep, Point string
	// Variant names the variant whose resolved scenario is wrong ("" for the
	// base or for errors found while reading the file).
	Variant string
	Key     string // dotted key, e.g. topology.host_link.rate
	Msg     string
}

func (e *Error) Error() string {
	var b strings.Builder
	key := e.Key
	if e.Set != "" {
		flag := e.Flag
		if flag == "" {
			flag = "--set"
		}
		b.WriteString(flag + " ")
		b.WriteString(printable(capKey(e.Set)))
		if key == e.Set {
			key = ""
		}
	} else {
		line, col := e.Line, e.Col
		if line <= 0 {
			line, col = 1, 1
		}
		fmt.Fprintf(&b, "%s:%d:%d", e.File, line, col)
	}
	b.WriteString(": ")
	if e.Sweep != "" && !(e.Flag == "--sweep" && e.Set == e.Sweep) {
		b.WriteString("sweep ")
		b.WriteString(printable(capKey(e.Sweep)))
		b.WriteString(": ")
		if e.Point == "" && key == e.Sweep {
			key = ""
		}
	}
	switch {
	case e.Point != "":
		fmt.Fprintf(&b, "point %s: ", quoteName(e.Point))
	case e.Variant != "":
		fmt.Fprintf(&b, "variant %s: ", quoteName(e.Variant))
	}
	if key != "" {
		b.WriteString(printable(capKey(key)))
		b.WriteString(": ")
	}
	b.WriteString(capQuoted(oneLine(e.Msg)))
	return b.String()
}

// An error never echoes a long value or key of the file or the command
// line whole: like the errors about topology and flow files, it quotes at
// most inputfile.TokenBytes bytes of it, "…" marking the cut. The cut is
// made here, where every message is written, rather than where each one is
// worded: capQuoted cuts the quoted values of a message (the values a
// message echoes are quoted, %q; the few echoed unquoted are cut past
// maxWordBytes), capKey the segments of a dotted key that are not keys of
// the schema (an unknown key, written at any length).
// The names of variants and sweep points, which say which run is meant
// and are made of several values, keep up to maxNameBytes.

// maxNameBytes is the most of a variant's or sweep point's name an error
// shows.
const maxNameBytes = 64

// quoteName quotes a variant or point name, cut after maxNameBytes.
func quoteName(s string) string {
	if len(s) <= maxNameBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s, maxNameBytes)]) + "…"
}

// cutAt is the largest character boundary of s at or below n (n when s is
// not UTF-8 there).
func cutAt(s string, n int) int {
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		return n
	}
	return cut
}

// capQuoted cuts every Go-quoted string of msg longer than
// inputfile.TokenBytes (unquoted) as inputfile.Token does; a value already
// cut ("…" right after its quote) gets no second mark.
func capQuoted(msg string) string {
	if !strings.Contains(msg, `"`) {
		return cutWords(msg)
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.IndexByte(msg[i:], '"')
		if j < 0 {
			break
		}
		j += i
		q, err := strconv.QuotedPrefix(msg[j:])
		if err != nil {
			b.WriteString(cutWords(msg[i : j+1]))
			i = j + 1
			continue
		}
		b.WriteString(cutWords(msg[i:j]))
		i = j + len(q)
		s, err := strconv.Unquote(q)
		if err != nil || len(s) <= inputfile.TokenBytes || ownWords(s) {
			b.WriteString(q)
			continue
		}
		t := inputfile.Token(s)
		if strings.HasPrefix(msg[i:], "…") {
			t = strings.TrimSuffix(t, "…")
		}
		b.WriteString(t)
	}
	b.WriteString(cutWords(msg[i:]))
	return b.String()
}

// maxWordBytes bounds a word of a message outside quotes: a value that a
// message echoes unquoted (an alias's name, a path) is cut as a quoted one
// when it is longer than any word a message means to show whole.
const maxWordBytes = 256

// cutWords cuts the words of s longer than maxWordBytes to
// inputfile.TokenBytes and "…".
func cutWords(s string) string {
	if len(s) <= maxWordBytes {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if len(w) > maxWordBytes {
			words[i] = w[:cutAt(w, inputfile.TokenBytes)] + "…"
		}
	}
	return strings.Join(words, " ")
}

// ownWords: s is quoted by a message but not taken from its input: a dotted
// key of the schema (a suggestion, "did you mean …?") or the form of a line
// of a file the scenario names, which the readers of those files quote
// (topo, workload).
func ownWords(s string) bool {
	if lineForms[s] {
		return true
	}
	for _, w := range strings.Split(s, ".") {
		if !schemaKeys()[w] {
			return false
		}
	}
	return true
}

var lineForms = map[string]bool{
	"nodes switches links":         true, // ns-3 topology
	"a b rate delay error-rate":    true,
	"node,NAME,host[,,SERVER]":     true, // CSV topology
	"node,NAME,switch[,TIER]":      true,
	"link,A,B,RATE,DELAY":          true,
	"switch dst-host next-node":    true, // switch.routes_file
	"src dst bytes [start [path]]": true, // workload.file
}

// capKey cuts the words of a dotted key (or of a list of them, "a.b, c")
// that are longer than inputfile.TokenBytes and not keys of the schema.
func capKey(key string) string {
	if len(key) <= inputfile.TokenBytes {
		return key
	}
	sep := func(r rune) bool { return r == '.' || r == ',' || r == ' ' || r == '[' || r == ']' }
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := key[start:end]
		if len(w) > inputfile.TokenBytes && !schemaKeys()[w] {
			w = w[:cutAt(w, inputfile.TokenBytes)] + "…"
		}
		b.WriteString(w)
		start = -1
	}
	for i, r := range key {
		if sep(r) {
			flush(i)
			b.WriteRune(r)
		} else if start < 0 {
			start = i
		}
	}
	flush(len(key))
	return b.String()
}

// schemaKeys is every key name of the scenario schema.
var schemaKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{"name": true, "variants": true, "sweep": true}
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for k, f := range fieldsOf(t) {
			keys[k] = true
			visit(f.Type)
		}
	}
	visit(reflect.TypeFor[Scenario]())
	return keys
})

// printable quotes s when it is empty or holds characters that would break
// the one-line form (a YAML key may be any quoted string).
func printable(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// oneLine folds a message onto one line: multi-line errors break the
// "file:line:col: message" convention that tools parse.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

// loc is where a value came from: a file position or a command-line key
// (--set, or the option flag names).
type loc struct {
	line, col int
	set       string
	flag      string
}

func tokenLoc(tk *token.Token) loc {
	if tk == nil || tk.Position == nil {
		return loc{}
	}
	return loc{line: tk.Position.Line, col: tk.Position.Column}
}

func (l loc) err(file, variant, key, msg string) *Error {
	return &Error{File: file, Line: l.line, Col: l.col, Set: l.set, Flag: l.flag, Variant: variant, Key: key, Msg: msg}
}

// yamlError turns an error of the YAML library into an *Error, using the
// library's token when it has one and fallback otherwise. The library's own
// formatting adds a multi-line source excerpt, which we drop.
func yamlError(file string, fallback loc, key string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		l := tokenLoc(ye.GetToken())
		if fallback.set != "" {
			l = fallback
		} else if l.line == 0 {
			l = fallback
		}
		return l.err(file, "", key, ye.GetMessage())
	}
	return fallback.err(file, "", key, err.Error())
}
