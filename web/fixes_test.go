package web

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/queue"
	"fabriclab/report"
	"fabriclab/store"
)

// The post-login redirect stays on this site: browsers drop tabs and
// newlines from a Location ("/\t/evil.example" is "//evil.example", another
// site) and read "\" as "/", and a path may decode to either.
func TestLoginNextStaysOnSite(t *testing.T) {
	for _, bad := range []string{
		"", "runs", "//evil.example/", "/\t/evil.example/x", "/\r/evil.example", "/\n/evil.example", "\t//evil.example",
		"/\\evil.example", "/\\/evil.example", "\\/evil.example", "/runs\\x", "/\x00/evil.example", "/\x7f/evil.example",
		"/%2F/evil.example", "/%2f%2fevil.example", "/%5Cevil.example", "/%09/evil.example", "/%0d%0a/evil.example",
		"https://evil.example/", "http:/evil.example", "/\u0085/evil.example", "/r\xffuns",
	} {
		if got := safeNext(bad); got != "/runs" {
			t.Errorf("safeNext(%q) = %q, want /runs", bad, got)
		}
	}
	for in, want := range map[string]string{
		"/runs/3":                            "/runs/3",
		"/runs?tag=a%20b&name=x":             "/runs?tag=a%20b&name=x",
		"/compare?run=2&run=1:pfc%20qps%3D1": "/compare?run=2&run=1:pfc%20qps%3D1", // order kept
		"/compare?run=1:a b":                 "/compare?run=1:a%20b",
		"/runs/caf\u00e9":                    "/runs/caf%C3%A9",
		"/./runs#frag":                       "/./runs",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
	g := newRig(t, Config{Token: []byte("0123456789abcdef-secret")})
	for _, next := range []string{"/\t/evil.example/x", "/\r\n/evil.example", "/%2F/evil.example", "/\\evil.example"} {
		code, _, h := g.post("/login", url.Values{"token": {"0123456789abcdef-secret"}, "csrf": {g.csrf()}, "next": {next}})
		if loc := h.Get("Location"); code != http.StatusSeeOther || loc != "/runs" {
			t.Errorf("login with next=%q: %d, Location %q", next, code, loc)
		}
	}
	code, body, _ := g.get("/login?next=" + url.QueryEscape("/\t/evil.example"))
	if m := regexp.MustCompile(`name="next" value="([^"]*)"`).FindStringSubmatch(body); code != 200 || m == nil || m[1] != "/runs" {
		t.Errorf("login page for next=/<TAB>/evil.example: %d, hidden field %q", code, m)
	}
	code, _, h := g.post("/login", url.Values{"token": {"0123456789abcdef-secret"}, "csrf": {g.csrf()}, "next": {"/runs?tag=x"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/runs?tag=x" {
		t.Errorf("login with next=/runs?tag=x: %d, Location %q", code, h.Get("Location"))
	}
}

// The scheme of an Authorization header is case-insensitive (RFC 9110).
func TestBearerSchemeAnyCase(t *testing.T) {
	g := newRig(t, Config{Token: []byte("0123456789abcdef-secret")})
	for h, want := range map[string]int{
		"Bearer 0123456789abcdef-secret":  200,
		"bearer 0123456789abcdef-secret":  200,
		"BEARER  0123456789abcdef-secret": 200,
		"bearer wrong-token-00000000000":  http.StatusSeeOther,
		"Basic 0123456789abcdef-secret":   http.StatusSeeOther,
		"bearer":                          http.StatusSeeOther,
	} {
		req, _ := http.NewRequest("GET", g.ts.URL+"/runs", nil)
		req.Header.Set("Authorization", h)
		resp, err := g.cli.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization: %s: %d, want %d", h, resp.StatusCode, want)
		}
	}
}

// A known path asked with another method is 405 with Allow (the catch-all
// route made it 404), before the CSRF check; an unknown one stays 404.
func TestWrongMethodIs405(t *testing.T) {
	g := newRig(t, Config{})
	for _, c := range []struct {
		method, path string
		form         url.Values
		allow        []string
	}{
		{"PUT", "/launch", nil, []string{"GET", "HEAD", "POST"}},
		{"POST", "/runs", url.Values{"csrf": {g.csrf()}}, []string{"GET", "HEAD"}},
		{"POST", "/runs", nil, []string{"GET", "HEAD"}},
		{"GET", "/launches/1/cancel", nil, []string{"POST"}},
		{"DELETE", "/runs/1", nil, []string{"GET", "HEAD"}},
	} {
		req, _ := http.NewRequest(c.method, g.ts.URL+c.path, strings.NewReader(c.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := g.cli.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		allow := strings.Split(resp.Header.Get("Allow"), ", ")
		slices.Sort(allow)
		if resp.StatusCode != http.StatusMethodNotAllowed || !slices.Equal(allow, c.allow) || !strings.Contains(string(b), `class="error"`) {
			t.Errorf("%s %s: %d, Allow %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	for _, p := range []string{"/nope", "/runs/1/x/y", "/launches"} {
		if code, body, _ := g.get(p); code != 404 || !strings.Contains(body, "no such page") {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	// The mux's redirects to a clean path stay (to a page, and to one that
	// is not: that one is then a 404).
	for p, loc := range map[string]string{"/runs/1/../../runs": "/runs", "/runs/../nope": "/nope"} {
		if code, _, h := g.get(p); code/100 != 3 || h.Get("Location") != loc {
			t.Errorf("an unclean path %s: %d %q", p, code, h.Get("Location"))
		}
	}
}

// A sweep point's variant has spaces in its name: each run parameter is
// one selection, and the page's text field quotes it.
func TestCompareSweepPoints(t *testing.T) {
	g := newRig(t, Config{})
	vs := []report.VariantResult{{Name: "pfc qps=1", Collective: "alltoall"}, {Name: "lossy qps=1", Collective: "alltoall"}, {Name: "pfc qps=2, x", Collective: "alltoall"}}
	id, err := g.st.BeginRun(store.Meta{Name: "sweep", ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Version: "test",
		Started: "2026-11-30T10:00:00Z", Expected: 3}, vs)
	if err != nil {
		t.Fatal(err)
	}
	for v := range vs {
		r := metrics.SizeResult{}
		r.SizeBytes, r.Ranks, r.Complete, r.CCTS, r.BusBWGBps, r.AlgBWGBps = 65536, 4, true, 1e-5, float64(v+1), 1
		if err := g.st.AddResult(id, v, 0, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.st.FinishRun(id, store.StatusDone, "2026-11-30T10:01:00Z"); err != nil {
		t.Fatal(err)
	}
	b := g.saveRun("other", nil, "", 5)
	field := regexp.MustCompile(`name="runs" value="([^"]*)"`)
	q := fmt.Sprintf("run=%d:pfc%%20qps=1&run=%d:lossy%%20qps=1&run=%d:pfc%%20qps%%3D2,%%20x&run=%d", id, id, id, b)
	code, body, _ := g.get("/compare?" + q)
	want := fmt.Sprintf("Columns: %d:pfc qps=1, %d:lossy qps=1, %d:pfc qps=2, x, %d:first, %d:second", id, id, id, b, b)
	if code != 200 || !strings.Contains(html.UnescapeString(body), want) {
		t.Fatalf("compare %s: %d\n%s", q, code, body)
	}
	m := field.FindStringSubmatch(body)
	if m == nil || html.UnescapeString(m[1]) != fmt.Sprintf("'%d:pfc qps=1' '%d:lossy qps=1' '%d:pfc qps=2, x' %d", id, id, id, b) {
		t.Fatalf("compare field %q", m)
	}
	// Resubmitting the field compares the same columns.
	code, body, _ = g.get("/compare?runs=" + url.QueryEscape(html.UnescapeString(m[1])))
	if code != 200 || !strings.Contains(html.UnescapeString(body), want) {
		t.Errorf("compare from the field: %d\n%s", code, body)
	}
	rep := regexp.MustCompile(`src="(/compare/report\?[^"]*)"`).FindStringSubmatch(body)
	if rep == nil {
		t.Fatal("no report frame")
	}
	if code, body, _ := g.get(html.UnescapeString(rep[1])); code != 200 || !strings.Contains(body, "<svg") {
		t.Errorf("the framed report %s: %d", rep[1], code)
	}
	// The field splits at spaces and commas, quotes aside; the runs page's
	// run=12,13 still lists runs.
	if code, body, _ := g.get(fmt.Sprintf("/compare?runs=%d,%%20%d:second", id, b)); code != 200 || !strings.Contains(body, fmt.Sprintf("%d:lossy qps=1, %d:pfc qps=2, x, %d:second<", id, id, b)) {
		t.Errorf("runs=%d, %d:second: %d", id, b, code)
	}
	if code, _, _ := g.get(fmt.Sprintf("/compare?run=%d,%d", id, b)); code != 200 {
		t.Errorf("run=%d,%d: %d", id, b, code)
	}
	for _, bad := range []string{"runs=" + url.QueryEscape("1:'open"), "run=" + url.QueryEscape("1 2:second"), "run=" + url.QueryEscape("x:y")} {
		if code, _, _ := g.get("/compare?" + bad); code != 400 {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	for in, want := range map[string][]string{
		`1 2:a`:                 {"1", "2:a"},
		`1,2:a , 3`:             {"1", "2:a", "3"},
		`'27:pfc qps=1' 28`:     {"27:pfc qps=1", "28"},
		`27:"pfc qps=1"`:        {"27:pfc qps=1"},
		`27:pfc\ qps=1`:         {"27:pfc qps=1"},
		`'1:it'\''s'`:           {"1:it's"},
		`"1:a \"b\" \\ c"`:      {`1:a "b" \ c`},
		``:                      nil,
		"\t 1 \n":               {"1"},
		quoteWord("1:a, 'b' c"): {"1:a, 'b' c"},
	} {
		if got, err := splitWords(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// With a job queue, a launch that submit would refuse (a flow list named by
// an absolute path, even one inside the examples) is refused on the launch
// page with nothing saved, as the local pool's launch refuses what a build
// would: it was taken (303) and saved as a failed run with no rows.
func TestQueueLaunchRefusesWhatSubmitWould(t *testing.T) {
	g := newRig(t, Config{})
	dsn := filepath.Join(filepath.Dir(g.s.cfg.ExamplesDir), "runs.db")
	q, err := queue.Open(context.Background(), dsn, "runs.db", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	g.s.cfg.Queue = q
	flows := filepath.Join(g.s.cfg.ExamplesDir, "flows.txt")
	if err := os.WriteFile(flows, []byte("0 1 1MB 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := "topology: {hosts: 4, hosts_per_leaf: 2}\nworkload: {kind: flows, file: %s}\n"
	code, body, _ := g.post("/launch", url.Values{"yaml": {fmt.Sprintf(yaml, flows)}, "csrf": {g.csrf()}})
	msg := regexp.MustCompile(`id="error">([^<]*)<`).FindStringSubmatch(body)
	if code != http.StatusUnprocessableEntity || msg == nil || !strings.Contains(msg[1], "is an absolute path") || strings.Contains(msg[1], g.s.cfg.ExamplesDir) {
		t.Errorf("an absolute flow list: %d\n%s", code, body)
	}
	if g.s.jobs.get(1) != nil {
		t.Error("the refused launch was queued")
	}
	if runs, err := g.st.Runs(store.Filter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs saved: %+v %v", runs, err)
	}
	// The same file named relative to the scenario is taken.
	if code, _, _ := g.post("/launch", url.Values{"yaml": {fmt.Sprintf(yaml, "flows.txt")}, "csrf": {g.csrf()}}); code != http.StatusSeeOther {
		t.Errorf("a relative flow list: %d", code)
	}
}

// A scenario over the size limit is refused in the server's words: serve
// has no --max-scenario-size to raise it.
func TestLaunchTooLargeSaysServersLimit(t *testing.T) {
	g := newRig(t, Config{})
	big := tinyScenario + "#" + strings.Repeat("x", 1<<20) + "\n"
	code, body, _ := g.post("/launch", url.Values{"yaml": {big}, "csrf": {g.csrf()}})
	if code != http.StatusUnprocessableEntity || strings.Contains(body, "raise it with") || !strings.Contains(body, "larger than the 1 MiB (1048576 bytes) a launch may be (the server&#39;s limit, which no option raises") {
		msg := regexp.MustCompile(`id="error">([^<]*)<`).FindStringSubmatch(body)
		t.Errorf("a 1 MiB scenario: %d, %q", code, msg)
	}
}

// until is "before that day", as `fabriclab runs --until` reads it.
func TestRunsUntilIsBefore(t *testing.T) {
	g := newRig(t, Config{})
	g.saveRun("alpha", nil, "", 1) // started 2026-11-30T10:00:00Z
	for q, listed := range map[string]bool{
		"since=2026-11-30&until=2026-11-30": false,
		"since=2026-11-30&until=2026-12-01": true,
		"until=2026-11-30T10:00:00Z":        false,
		"until=2026-11-30T10:00:01Z":        true,
		"since=2026-11-30T10:00:00Z":        true,
	} {
		code, body, _ := g.get("/runs?" + q)
		if code != 200 || strings.Contains(body, ">alpha<") != listed {
			t.Errorf("runs?%s: %d, alpha listed %v, want %v", q, code, !listed, listed)
		}
	}
	if _, body, _ := g.get("/runs"); !strings.Contains(body, "before <input name=\"until\"") {
		t.Error("the until field is not labelled as before")
	}
}

// A run still marked running whose process is gone shows as the command
// line's runs shows it: "running (stale?)".
func TestStaleRunShowsStale(t *testing.T) {
	g := newRig(t, Config{})
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	host, _ := os.Hostname()
	vs := []report.VariantResult{{Name: "first", Collective: "alltoall"}}
	dead, err := g.st.BeginRun(store.Meta{Name: "dead", ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Version: "test",
		Started: "2026-11-30T10:00:00Z", Expected: 2, Host: host, PID: cmd.Process.Pid}, vs)
	if err != nil {
		t.Fatal(err)
	}
	live, err := g.st.BeginRun(store.Meta{Name: "live", ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Version: "test",
		Started: "2026-11-30T10:00:00Z", Expected: 2, Host: host, PID: os.Getpid()}, vs)
	if err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile(`id="status">([^<]*)<`)
	for id, want := range map[int64]string{dead: "running (stale?)", live: "running"} {
		_, body, _ := g.get(fmt.Sprintf("/runs/%d", id))
		if m := status.FindStringSubmatch(body); m == nil || m[1] != want {
			t.Errorf("run %d's page: status %q, want %q", id, m, want)
		}
	}
	_, body, _ := g.get("/runs")
	if n := strings.Count(body, "<td>running (stale?)</td>"); n != 1 || !strings.Contains(body, "<td>running</td>") {
		t.Errorf("runs page: %d stale runs\n%s", n, body)
	}
}
