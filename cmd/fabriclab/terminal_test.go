package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestTagsAndNamesCannotDriveTheTerminal: tags with control characters are
// refused, and names, tags and notes already in a database (written by an
// older fabriclab or by hand) are printed escaped (issue 10, item 11).
func TestTagsAndNamesCannotDriveTheTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	for _, args := range [][]string{
		{"run", "--db", db, "--tag", "ok\x1b]0;pwned\a", "x.yaml"},
		{"run", "--db", db, "--tag", "bell\a", "x.yaml"},
	} {
		if code, _, stderr := storeApp(t, testPlan(1, 1), args...); code != exitUsage || !strings.Contains(stderr, "one word of printable text") || strings.ContainsAny(stderr, "\x1b\a") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, stderr := storeApp(t, testPlan(1, 1), "run", "-q", "--db", db, "--note", "first\x1b[2J", "x.yaml"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := storeApp(t, nil, "tag", "1", "x\r# variant: forged", "--db", db); code != exitUsage {
		t.Errorf("tag with CR: exit %d, stderr %q", code, stderr)
	}
	// What a hostile or old database may hold.
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE runs SET name = ?, tags = ?, note = ?", "n\x1b]0;title\a", "t\x1b[31m", "line1\r\n# variant: forged\x1b[H"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, args := range [][]string{{"runs", "--db", db}, {"show", "1", "--db", db}} {
		code, out, stderr := storeApp(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(out, "\x1b\a\r") || strings.Contains("\n"+out, "\n# variant: forged") {
			t.Errorf("%v prints control characters or a forged line:\n%q", args, out)
		}
		if !strings.Contains(out, `n\x1b]0;title\a`) {
			t.Errorf("%v: the name is not shown escaped:\n%s", args, out)
		}
	}
}
