package main

import (
	"strings"
	"testing"

	"fabriclab/store"
)

// A bad run id gets one hint (see 'fabriclab runs'), not that and
// --help's too; a note with one argument says "1 argument".
func TestRunIDErrorOneHint(t *testing.T) {
	for _, args := range [][]string{{"rm", "abc"}, {"show", "abc"}, {"tag", "abc", "x"}, {"note", "abc", "x"}} {
		code, _, stderr := storeApp(t, nil, args...)
		want := `fabriclab: "abc" is not a run id (a positive number, see 'fabriclab runs')` + "\n"
		if code != exitUsage || stderr != want {
			t.Errorf("%v: exit %d, %q; want %q", args, code, stderr, want)
		}
	}
	code, _, stderr := storeApp(t, nil, "note", "12")
	if code != exitUsage || !strings.Contains(stderr, "got 1 argument (see") {
		t.Errorf("note 12: exit %d, %q", code, stderr)
	}
}

// A run missing one of its one row says "0 of 1 row saved".
func TestStatusTextSingular(t *testing.T) {
	m := store.Meta{Status: store.StatusFailed, Expected: 1, Rows: 0}
	if got := statusText(m); !strings.HasSuffix(got, "(0 of 1 row saved)") {
		t.Errorf("statusText = %q", got)
	}
	m = store.Meta{Status: store.StatusFailed, Expected: 3, Rows: 1}
	if got := statusText(m); !strings.HasSuffix(got, "(1 of 3 rows saved)") {
		t.Errorf("statusText = %q", got)
	}
}
