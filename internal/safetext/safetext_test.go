package safetext

import "testing"

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain name":                 "plain name",
		"ünïcödé ✓":                  "ünïcödé ✓",
		"\x1b]0;owned\a":             `\x1b]0;owned\a`,
		"a\r\n# variant: forged":     `a\r\n# variant: forged`,
		"tab\there":                  `tab\there`,
		"del\x7f":                    `del\x7f`,
		"c1\u009b2J":                 `c1\u009b2J`,
		"bad\xffutf8":                `bad\xffutf8`,
		"line\u2028sep":              `line\u2028sep`,
		"evil\u202egnp.exe":          `evil\u202egnp.exe`,
		"\x1b[2J\x1b[H clear screen": `\x1b[2J\x1b[H clear screen`,
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
		if HasControl(in) != (in != want) {
			t.Errorf("HasControl(%q) = %v", in, HasControl(in))
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "",
		"tuned-final":                    "tuned-final",
		`=HYPERLINK("http://x","click")`: `'=HYPERLINK("http://x","click")`,
		"+cmd|' /C calc'!A0":             "'+cmd|' /C calc'!A0",
		"-2+3":                           "'-2+3",
		"@SUM(1)":                        "'@SUM(1)",
		"\t=1":                           "'\t=1",
		"\r=1":                           "'\r=1",
		"a=1":                            "a=1",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}
