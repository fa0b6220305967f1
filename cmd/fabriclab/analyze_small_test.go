package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The histogram of a tier lists its non-zero entries (n×k: k links carry n
// flows), and ranges of them when many flow counts occur, so that its line
// stays short however many flows the links carry.
func TestHistogramText(t *testing.T) {
	for _, c := range []struct {
		h    []int
		want string
	}{
		{[]int{20, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1}, "0×20 5×3 10×1"},
		{[]int{0, 0, 4}, "2×4"},
		{[]int{3}, "0×3"},
		{nil, "-"},
	} {
		if got := histogramText(c.h); got != c.want {
			t.Errorf("histogramText(%v) = %q, want %q", c.h, got, c.want)
		}
	}
	// 1M flows over 64 links: counts near 15,625, all different, and 2 idle.
	h := make([]int, 16000)
	h[0] = 2
	for i := range 62 {
		h[15500+i*7]++
	}
	got := histogramText(h)
	if n := utf8.RuneCountInString(got); n > 200 || !strings.HasPrefix(got, "0×2 15500–") || !strings.HasSuffix(got, "–15927×5") {
		t.Errorf("%d characters: %q", n, got)
	}
	total := 0
	for _, e := range strings.Fields(got) {
		_, k, _ := strings.Cut(e, "×")
		n := 0
		for _, c := range k {
			n = 10*n + int(c-'0')
		}
		total += n
	}
	if total != 64 || len(strings.Fields(got)) > 1+histogramRanges {
		t.Errorf("%q: %d links in %d entries", got, total, len(strings.Fields(got)))
	}
}

// analyze's ECMP table prints the histogram so; the JSON keeps every
// bucket.
func TestAnalyzeHistogramLine(t *testing.T) {
	path := writeRepro3(t)
	a, stdout, stderr := newTestApp(nil, quickRun)
	a.load = newApp(nil, nil).load
	if code := a.execute(context.Background(), []string{"analyze", "--variant", "ecmp", path}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := stdout.String()
	if !strings.Contains(out, "HISTOGRAM (n×k: k links carry n flows)") || strings.Contains(out, " 0 0 ") {
		t.Errorf("the histogram is not n×k:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "leaf→spine ") && !strings.Contains(l, "0×") {
			t.Errorf("no idle links in %q", l)
		}
	}
	a, stdout, _ = newTestApp(nil, quickRun)
	a.load = newApp(nil, nil).load
	if code := a.execute(context.Background(), []string{"analyze", "--variant", "ecmp", "--json", "-", path}); code != 0 {
		t.Fatal(code)
	}
	var r struct{ Collisions []struct{ Histogram []int } }
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || len(r.Collisions) == 0 || len(r.Collisions[0].Histogram) < 2 {
		t.Fatalf("%v: %s", err, stdout)
	}
}

// A scenario named with control characters (its file's name by default)
// reaches the terminal escaped.
func TestAnalyzeEscapesTheName(t *testing.T) {
	path := writeRepro3(t)
	evil := filepath.Join(filepath.Dir(path), "e\x1b[31mvil.yaml")
	text, _ := os.ReadFile(path)
	if err := os.WriteFile(evil, []byte(strings.Replace(string(text), "name: repro3\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	a, stdout, stderr := newTestApp(nil, quickRun)
	a.load = newApp(nil, nil).load
	if code := a.execute(context.Background(), []string{"analyze", evil}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out := stdout.String(); strings.Contains(out, "\x1b") || !strings.Contains(out, `# analyze: e\x1b[31mvil, variant static`) {
		t.Errorf("%q", strings.SplitN(out, "\n", 2)[0])
	}
}
