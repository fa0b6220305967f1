package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
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
		b.WriteString(printable(e.Set))
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
		b.WriteString(printable(e.Sweep))
		b.WriteString(": ")
		if e.Point == "" && key == e.Sweep {
			key = ""
		}
	}
	switch {
	case e.Point != "":
		fmt.Fprintf(&b, "point %q: ", e.Point)
	case e.Variant != "":
		fmt.Fprintf(&b, "variant %q: ", e.Variant)
	}
	if key != "" {
		b.WriteString(printable(key))
		b.WriteString(": ")
	}
	b.WriteString(oneLine(e.Msg))
	return b.String()
}

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
