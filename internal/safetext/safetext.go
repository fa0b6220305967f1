// Package safetext makes text from scenario files and databases safe for
// where it is written: a terminal (no control sequences) or a spreadsheet
// cell (no formula).
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal returns s with every control character (C0, DEL, C1) and every
// invalid UTF-8 byte written as a Go escape (\x1b, \r, \n, \u009b), so that a
// name or note read from a file can neither move the cursor, retitle the
// terminal nor start a line of its own. Printable text is unchanged.
func Terminal(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i]), 16))
		case isControl(r):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u0085'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// HasControl reports whether s holds a control character or invalid UTF-8:
// what Terminal would escape.
func HasControl(s string) bool { return !isPlain(s) }

func isPlain(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if isControl(r) {
			return false
		}
	}
	return true
}

func isControl(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029': // line and paragraph separators end lines too
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true // bidirectional controls reorder what the terminal shows
	}
	return false
}

// CSVCell neutralizes a text cell that a spreadsheet would read as a
// formula (OWASP's rule for CSV injection): a cell starting with = + - @,
// a tab or a carriage return gets a leading apostrophe, which spreadsheets
// show as text and hide. Only cells of free text (names, labels) go through
// it; numbers are written as numbers.
func CSVCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
