package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/engines"
	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/queue"
	"fabriclab/report"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
)

const tinyScenario = `name: tiny
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1, host_link: {rate: 100Gbps}, fabric_link: {rate: 100Gbps}}
workload: {kind: alltoall, sizes: {list: [64KiB, 256KiB]}}
variants:
  - name: first
  - name: second
    nic: {mtu: 1KiB}
`

// rig is a server on a fresh store, with an examples directory.
type rig struct {
	t   *testing.T
	st  *store.Store
	s   *Server
	ts  *httptest.Server
	cli *http.Client
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ex := filepath.Join(dir, "examples")
	if err := os.MkdirAll(ex, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ex, "tiny.yaml"), []byte(tinyScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.ExamplesDir = st, ex
	if cfg.Run == nil {
		cfg.Run = lab.Run
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	jar, _ := cookiejar.New(nil)
	cli := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &rig{t: t, st: st, s: s, ts: ts, cli: cli}
}

func (g *rig) get(path string) (int, string, http.Header) {
	g.t.Helper()
	resp, err := g.cli.Get(g.ts.URL + path)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (g *rig) post(path string, form url.Values) (int, string, http.Header) {
	g.t.Helper()
	resp, err := g.cli.PostForm(g.ts.URL+path, form)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// saveRun stores a finished run of name with rows of tinyScenario-like
// results.
func (g *rig) saveRun(name string, tags []string, note string, busbw float64) int64 {
	g.t.Helper()
	vs := []report.VariantResult{{Name: "first", Collective: "alltoall"}, {Name: "second", Collective: "alltoall"}}
	id, err := g.st.BeginRun(store.Meta{Name: name, ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Seed: 7,
		Sets: []string{"nic.mtu=4KiB"}, Tags: tags, Note: note, Version: "test", Started: "2026-11-30T10:00:00Z", Expected: 4}, vs)
	if err != nil {
		g.t.Fatal(err)
	}
	for v := range 2 {
		for k, size := range []int64{65536, 262144} {
			r := metrics.SizeResult{}
			r.SizeBytes, r.Ranks, r.Flows, r.Complete = size, 4, 12, true
			r.CCTS, r.BusBWGBps, r.AlgBWGBps = 1e-5*float64(k+1), busbw*float64(v+1), busbw
			if err := g.st.AddResult(id, v, k, r); err != nil {
				g.t.Fatal(err)
			}
		}
	}
	if err := g.st.FinishRun(id, store.StatusDone, "2026-11-30T10:01:00Z"); err != nil {
		g.t.Fatal(err)
	}
	return id
}

func (g *rig) csrf() string { return g.s.csrfToken() }

func TestPagesAndDownloads(t *testing.T) {
	g := newRig(t, Config{})
	a := g.saveRun("alpha", []string{"nightly"}, "first try", 10)
	b := g.saveRun("beta", nil, "", 20)

	code, body, h := g.get("/runs")
	if code != 200 || !strings.Contains(body, ">alpha<") || !strings.Contains(body, ">beta<") || !strings.Contains(body, "seed 7; --set nic.mtu=4KiB") {
		t.Fatalf("runs: %d\n%s", code, body)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", h)
	}
	if strings.Index(body, ">beta<") > strings.Index(body, ">alpha<") {
		t.Error("runs are not newest first")
	}
	for _, c := range []struct{ q, want, not string }{
		{"?name=alp", ">alpha<", ">beta<"},
		{"?tag=nightly", ">alpha<", ">beta<"},
		{"?status=done&since=2026-11-30&until=2026-12-01", ">alpha<", "No runs"}, // until: before that day, as runs --until
		{"?since=2026-12-01", "No runs match", ">alpha<"},
	} {
		if code, body, _ := g.get("/runs" + c.q); code != 200 || !strings.Contains(body, c.want) || strings.Contains(body, c.not) {
			t.Errorf("runs%s: %d, want %q and not %q", c.q, code, c.want, c.not)
		}
	}
	if code, _, _ := g.get("/runs?since=yesterday"); code != 400 {
		t.Errorf("a bad date: %d", code)
	}

	code, body, _ = g.get(fmt.Sprintf("/runs/%d", a))
	for _, want := range []string{"first try", "nightly", "--set nic.mtu=4KiB", "busbw", "name: tiny", "/runs/1/report", "first: alltoall, 4 ranks, packet simulator"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	if code != 200 {
		t.Fatalf("run page %d", code)
	}
	code, body, h = g.get(fmt.Sprintf("/runs/%d/report", a))
	if code != 200 || !strings.Contains(body, "<svg") || strings.Contains(h.Get("Content-Security-Policy"), "script-src") || !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("report: %d, CSP %q", code, h.Get("Content-Security-Policy"))
	}
	code, body, h = g.get(fmt.Sprintf("/runs/%d/download/json", a))
	var out report.Output
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || len(out.Variants) != 2 || !strings.Contains(h.Get("Content-Disposition"), "run-1.json") {
		t.Errorf("json download: %d %q", code, h.Get("Content-Disposition"))
	}
	if code, body, _ = g.get(fmt.Sprintf("/runs/%d/download/csv", a)); code != 200 || !strings.HasPrefix(body, "variant,") && !strings.Contains(body, "size_bytes") {
		t.Errorf("csv download: %d %.80q", code, body)
	}
	if code, body, _ = g.get(fmt.Sprintf("/runs/%d/download/html", b)); code != 200 || !strings.Contains(body, "<svg") {
		t.Errorf("html download: %d", code)
	}

	code, body, _ = g.get(fmt.Sprintf("/compare?run=%d&run=%d:second", a, b))
	if code != 200 || !strings.Contains(body, "1:first, 1:second, 2:second") || !strings.Contains(body, "/compare/report?") || !strings.Contains(body, "bus bandwidth") {
		t.Errorf("compare: %d\n%s", code, body)
	}
	// The form keeps every run asked for (it kept the first).
	if want := fmt.Sprintf(`name="runs" value="%d %d:second"`, a, b); !strings.Contains(body, want) {
		t.Errorf("compare form: want %s", want)
	}
	if code, body, _ = g.get(fmt.Sprintf("/compare/report?run=%d,%d", a, b)); code != 200 || !strings.Contains(body, "run 2") {
		t.Errorf("compare report: %d", code)
	}
}

// Bad input: unknown ids, traversal, injection, oversized bodies, CSRF.
func TestBadInput(t *testing.T) {
	g := newRig(t, Config{})
	evil := `<script>alert(1)</script>`
	id := g.saveRun(evil, []string{"x"}, evil+`"onmouseover="x`, 1)
	for _, p := range []string{"/runs/999", "/runs/abc", "/runs/-1", "/runs/1/download/exe", "/runs/1/../../etc/passwd",
		"/launches/99", "/compare?run=99", "/nope", "/static/../server.go", "/launch?example=../web_test.go"} {
		code, body, _ := g.get(p)
		if code < 300 || code == 500 && !strings.Contains(body, "class=\"error\"") {
			t.Errorf("%s: %d", p, code)
		}
		if strings.Contains(body, "package web") {
			t.Errorf("%s served a source file", p)
		}
	}
	// A run that is not in the store is not found (it was a 500 naming the
	// database's file), on every page that reads one.
	for _, p := range []string{"/runs/999", "/runs/999/download/json", "/runs/999/download/csv", "/runs/999/download/html",
		"/runs/999/report", "/compare?run=999", fmt.Sprintf("/compare?run=%d&run=999", id), "/compare/report?run=999"} {
		code, body, _ := g.get(p)
		if code != http.StatusNotFound || !strings.Contains(body, "no run 999") || strings.Contains(body, ".db") {
			t.Errorf("%s: %d\n%s", p, code, body)
		}
	}
	for _, p := range []string{"/runs", fmt.Sprintf("/runs/%d", id)} {
		_, body, _ := g.get(p)
		if strings.Contains(body, evil) || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not escape the run's name and note", p)
		}
	}
	if code, _, _ := g.get("/compare?run=1:"); code != 400 {
		t.Errorf("an empty variant: %d", code)
	}
	// POSTs need the CSRF token, and a same-site origin.
	if code, body, _ := g.post("/launch", url.Values{"yaml": {tinyScenario}}); code != 403 || !strings.Contains(body, "CSRF") {
		t.Errorf("launch without CSRF: %d", code)
	}
	req, _ := http.NewRequest("POST", g.ts.URL+"/launch", strings.NewReader(url.Values{"yaml": {tinyScenario}, "csrf": {g.csrf()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if resp, err := g.cli.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("a cross-site POST: %v %v", resp.StatusCode, err)
	}
	// DNS rebinding: a page of another site whose name now resolves to
	// 127.0.0.1 is same-origin with itself; its requests name its host,
	// and a server without a token answers loopback names only.
	for host, want := range map[string]int{"rebind.attacker.example:80": 421, "localhost.attacker.example": 421, "LOCALHOST:7480": 200, "127.0.0.2": 200, "[::1]:7480": 200} {
		for _, post := range []bool{false, true} {
			req, _ := http.NewRequest("GET", g.ts.URL+"/runs/1", nil)
			if post {
				req, _ = http.NewRequest("POST", g.ts.URL+"/launch", strings.NewReader(url.Values{"example": {"tiny.yaml"}, "csrf": {g.csrf()}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", "http://"+host)
			}
			req.Host = host
			resp, err := g.cli.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if code := resp.StatusCode; want == 421 && code != 421 || want == 200 && code == 421 {
				t.Errorf("Host %s (POST %v): %d", host, post, code)
			}
		}
	}
	big := strings.Repeat("x", maxBody+10)
	if code, _, _ := g.post("/launch", url.Values{"yaml": {big}, "csrf": {g.csrf()}}); code != 413 {
		t.Errorf("a huge body: %d", code)
	}
	// A scenario with an error comes back with it, line:column first.
	code, body, _ := g.post("/launch", url.Values{"yaml": {"topology: {hosts: 4, hosts_per_leaf: 2}\nworkload: {kind: alltoal}\n"}, "csrf": {g.csrf()}})
	if code != 422 || !regexp.MustCompile(`pasted\.yaml:2:\d+: workload\.kind`).MatchString(body) {
		t.Errorf("an invalid scenario: %d\n%s", code, body)
	}
	// A pasted scenario may read files of the examples, none elsewhere.
	outside := filepath.Join(t.TempDir(), "flows.txt")
	for _, p := range []string{outside, filepath.Join(g.s.cfg.ExamplesDir, "flows.txt")} {
		if err := os.WriteFile(p, []byte("0 1 1MB 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flows := "topology: {hosts: 4, hosts_per_leaf: 2}\nworkload: {kind: flows, file: %s}\n"
	code, body, _ = g.post("/launch", url.Values{"yaml": {fmt.Sprintf(flows, outside)}, "csrf": {g.csrf()}})
	if code != 422 || !strings.Contains(body, "outside the examples directory") {
		t.Errorf("a scenario reading a file elsewhere: %d\n%s", code, body)
	}
	// Nor through a symbolic link in the examples directory (a link to a
	// file, or to a directory, elsewhere).
	if err := os.Symlink(outside, filepath.Join(g.s.cfg.ExamplesDir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(g.s.cfg.ExamplesDir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	// Nor with a ".." after a link: cleaned, the path is inside the
	// examples; opened, it leads to the link target's parent.
	back := filepath.Join(g.s.cfg.ExamplesDir, "linkdir") + "/../" + filepath.Base(filepath.Dir(outside)) + "/flows.txt"
	for _, ref := range []string{"link.txt", "linkdir/flows.txt", back} {
		code, body, _ = g.post("/launch", url.Values{"yaml": {fmt.Sprintf(flows, ref)}, "csrf": {g.csrf()}})
		if code != 422 || !strings.Contains(body, "outside the examples directory") {
			t.Errorf("a scenario reading %s, a link out of the examples: %d\n%s", ref, code, body)
		}
	}
	// Refused before it is opened: a file that does not exist is refused
	// the same way, not found missing (nothing outside is even looked at).
	for _, y := range []string{fmt.Sprintf(flows, "/nonexistent/flows.txt"),
		"topology: {kind: custom, file: /nonexistent/fabric.csv}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n"} {
		code, body, _ = g.post("/launch", url.Values{"yaml": {y}, "csrf": {g.csrf()}})
		if code != 422 || !strings.Contains(body, "outside the examples directory") || strings.Contains(body, "does not exist") {
			t.Errorf("%q: %d\n%s", y, code, body)
		}
	}
	if code, body, _ = g.post("/launch", url.Values{"yaml": {fmt.Sprintf(flows, "flows.txt")}, "sets": {"workload.file=/nonexistent/x.txt"}, "csrf": {g.csrf()}}); code != 422 || !strings.Contains(body, "outside the examples directory") {
		t.Errorf("a --set pointing elsewhere: %d\n%s", code, body)
	}
	if code, _, _ = g.post("/launch", url.Values{"yaml": {fmt.Sprintf(flows, "flows.txt")}, "csrf": {g.csrf()}}); code != http.StatusSeeOther {
		t.Errorf("a scenario reading the examples' flows.txt: %d", code)
	}
}

// A launch whose jobs a build would refuse is refused on the launch page,
// as validate refuses it (Config.Check: engines.Accept in fabriclab
// serve), and nothing is queued or saved.
func TestLaunchRefusesWhatABuildWould(t *testing.T) {
	g := newRig(t, Config{Check: engines.Accept})
	for _, c := range []struct{ sets, want string }{
		{"sim.telemetry={interval: 10us, flows: [99]}", "first 64KiB: sim.telemetry.flows[0]: there is no flow 99"},
		{"sim.memory_limit=1MiB\nworkload.message_size=1KiB\nworkload.sizes.list=[64KiB, 256MiB]", "first 256MiB: this job needs about"},
	} {
		code, body, _ := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "sets": {c.sets}, "csrf": {g.csrf()}})
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, c.want) {
			t.Errorf("%q: %d, want 422 and %q in\n%s", c.sets, code, c.want, body)
		}
	}
	if g.s.jobs.get(1) != nil {
		t.Error("a refused launch was queued")
	}
	if runs, err := g.st.Runs(store.Filter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs saved: %v %v", runs, err)
	}
	if code, _, _ := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "sets": {"sim.telemetry={interval: 10us, flows: [11]}"}, "csrf": {g.csrf()}}); code != http.StatusSeeOther {
		t.Errorf("flow 11, the last of 0..11: %d", code)
	}
}

// Checks (which may build a job) run at most as many at once as launches
// do: with one worker, a second launch posted while the first is being
// checked is turned away, and is taken once the check is over.
func TestLaunchChecksAsManyAtOnceAsWorkers(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	check := func(scenario.Job) error {
		once.Do(func() { close(entered); <-release })
		return nil
	}
	g := newRig(t, Config{Check: check, Workers: 1})
	csrf := g.csrf()
	first := make(chan int)
	go func() {
		resp, err := g.cli.PostForm(g.ts.URL+"/launch", url.Values{"example": {"tiny.yaml"}, "csrf": {csrf}})
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-entered
	if code, body, _ := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "csrf": {csrf}}); code != http.StatusServiceUnavailable || !strings.Contains(body, "busy checking other launches") {
		t.Errorf("a launch during another's check: %d, want 503", code)
	}
	close(release)
	if code := <-first; code != http.StatusSeeOther {
		t.Errorf("the first launch: %d", code)
	}
	if code, _, _ := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "csrf": {csrf}}); code != http.StatusSeeOther {
		t.Errorf("a launch after the check: %d", code)
	}
}

// With a token every page needs it: the login page sets a session cookie.
func TestToken(t *testing.T) {
	g := newRig(t, Config{Token: []byte("0123456789abcdef-secret")})
	g.saveRun("alpha", nil, "", 1)
	code, _, h := g.get("/runs")
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/login?next=") {
		t.Fatalf("without the token: %d %v", code, h)
	}
	if code, _, _ := g.get("/runs/1/download/json"); code != 401 {
		t.Errorf("a download without the token: %d", code)
	}
	if code, _, _ := g.post("/login", url.Values{"token": {"wrong-token-000000"}, "csrf": {g.csrf()}}); code != 401 {
		t.Errorf("a wrong token: %d", code)
	}
	code, _, h = g.post("/login", url.Values{"token": {"0123456789abcdef-secret"}, "csrf": {g.csrf()}, "next": {"//evil.example/"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/runs" || !strings.Contains(h.Get("Set-Cookie"), "HttpOnly") || !strings.Contains(h.Get("Set-Cookie"), "SameSite=Strict") {
		t.Fatalf("login: %d %v", code, h)
	}
	if strings.Contains(h.Get("Set-Cookie"), "0123456789abcdef-secret") {
		t.Error("the cookie holds the token itself")
	}
	if code, body, _ := g.get("/runs"); code != 200 || !strings.Contains(body, ">alpha<") {
		t.Errorf("after login: %d", code)
	}
	req, _ := http.NewRequest("GET", g.ts.URL+"/runs", nil)
	req.Header.Set("Authorization", "Bearer 0123456789abcdef-secret")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("a bearer token: %v %v", resp.StatusCode, err)
	}
}

func TestListenRefusesOpenBinds(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", TLS{}, true); err == nil || !strings.Contains(err.Error(), "needs TLS") {
		t.Errorf("0.0.0.0 without TLS: %v", err)
	}
	if _, err := Listen("0.0.0.0:0", TLS{CertFile: "c", KeyFile: "k"}, false); err == nil || !strings.Contains(err.Error(), "--token-file or --client-ca") {
		t.Errorf("0.0.0.0 without a token: %v", err)
	}
	ln, err := Listen("127.0.0.1:0", TLS{}, false)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

// A launch runs on the worker pool, streams its progress and lands in
// the store; another is cancelled while it runs.
func TestLaunchAndCancel(t *testing.T) {
	block := make(chan struct{})
	run := func(ctx context.Context, job scenario.Job, p engine.Progress) (metrics.SizeResult, error) {
		if job.Spec.Name == "slow" {
			select {
			case <-block:
			case <-ctx.Done():
				return metrics.SizeResult{}, ctx.Err()
			}
		}
		return lab.Run(ctx, job, p)
	}
	g := newRig(t, Config{Run: run, Workers: 2})
	code, _, h := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "csrf": {g.csrf()}})
	if code != http.StatusSeeOther || h.Get("Location") != "/launches/1" {
		t.Fatalf("launch: %d %v", code, h)
	}
	events := readEvents(t, g.ts.URL+"/launches/1/events")
	last := events[len(events)-1]
	if !last.Final || last.State != store.StatusDone || last.Done != 4 || last.Total != 4 || last.RunID == 0 {
		t.Fatalf("last event %+v of %d", last, len(events))
	}
	out, m, err := g.st.Run(last.RunID)
	if err != nil || m.Status != store.StatusDone || len(out.Variants) != 2 || len(out.Variants[1].Results) != 2 || m.ScenarioFile != "tiny.yaml" {
		t.Fatalf("the stored run: %+v %v", m, err)
	}
	// It is found again in the examples directory, not the server's.
	if _, err := os.Stat(m.ScenarioPath()); err != nil || !filepath.IsAbs(m.ScenarioPath()) {
		t.Errorf("the stored run's scenario %q: %v", m.ScenarioPath(), err)
	}
	// The same run from the CLI's engine gives the same rows.
	f, _ := scenario.Parse("tiny.yaml", []byte(tinyScenario))
	r, _ := lab.Run(context.Background(), f.Jobs()[0], nil)
	if got := out.Variants[0].Results[0]; got.CCTS != r.CCTS || got.BusBWGBps != r.BusBWGBps {
		t.Errorf("stored %v/%v, direct %v/%v", got.CCTS, got.BusBWGBps, r.CCTS, r.BusBWGBps)
	}

	slow := strings.Replace(tinyScenario, "name: tiny", "name: slow", 1)
	code, _, h = g.post("/launch", url.Values{"yaml": {slow}, "sets": {"seed=3"}, "csrf": {g.csrf()}})
	if code != http.StatusSeeOther {
		t.Fatalf("second launch: %d", code)
	}
	loc := h.Get("Location")
	deadline := time.Now().Add(10 * time.Second)
	for g.s.jobs.get(2).snapshot().State != stateRunning && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if code, body, _ := g.get(loc); code != 200 || !strings.Contains(body, "Cancel") {
		t.Errorf("status page: %d", code)
	}
	if code, _, _ := g.post(loc+"/cancel", url.Values{"csrf": {g.csrf()}}); code != http.StatusSeeOther {
		t.Errorf("cancel: %d", code)
	}
	events = readEvents(t, g.ts.URL+loc+"/events")
	last = events[len(events)-1]
	if !last.Final || last.State != store.StatusInterrupted {
		t.Fatalf("cancelled: %+v", last)
	}
	if _, m, err := g.st.Run(last.RunID); err != nil || m.Status != store.StatusInterrupted || strings.Join(m.Sets, " ") != "seed=3" || m.Name != "slow" {
		t.Errorf("the cancelled run: %+v %v", m, err)
	}
	close(block)
}

func readEvents(t *testing.T, u string) []progress {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var out []progress
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var p progress
			if err := json.Unmarshal([]byte(d), &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("no events")
	}
	return out
}

// BenchmarkRunsPage10k renders the runs page of a store with 10,000 runs
// (the bound: under 200 ms a page).
func BenchmarkRunsPage10k(b *testing.B) {
	dir := b.TempDir()
	st, err := store.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	vs := []report.VariantResult{{Name: "base", Collective: "alltoall"}}
	for i := range 10000 {
		if _, err := st.BeginRun(store.Meta{Name: fmt.Sprintf("run-%d", i), ScenarioText: tinyScenario, Tags: []string{"bench"},
			Started: "2026-11-30T10:00:00Z", Expected: 1}, vs); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Config{Store: st, Run: lab.Run})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/runs?page=3&tag=bench", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// With a job queue, a launch goes to the workers: here one in-process
// worker on the same SQLite file takes the jobs; the launch's page follows
// the rows to done, and the run is a queued run.
func TestLaunchOnTheQueue(t *testing.T) {
	g := newRig(t, Config{})
	dsn := filepath.Join(filepath.Dir(g.s.cfg.ExamplesDir), "runs.db")
	q, err := queue.Open(context.Background(), dsn, "runs.db", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	g.s.cfg.Queue = q
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Work(ctx, queue.WorkerConfig{Store: g.st, Run: lab.Run, Version: "test", PollInterval: 50 * time.Millisecond,
			Row: func(jr runner.JobResult) metrics.SizeResult { return jr.Result }, Log: io.Discard})
	}()
	defer func() { stop(); <-done }()
	g.s.cfg.Version = "test"
	code, _, h := g.post("/launch", url.Values{"example": {"tiny.yaml"}, "csrf": {g.csrf()}})
	if code != http.StatusSeeOther {
		t.Fatalf("launch: %d", code)
	}
	events := readEvents(t, g.ts.URL+h.Get("Location")+"/events")
	last := events[len(events)-1]
	if !last.Final || last.State != store.StatusDone || last.Done != 4 {
		t.Fatalf("last event %+v", last)
	}
	out, m, err := g.st.Run(last.RunID)
	if err != nil || m.Queue == "" || len(out.Variants) != 2 || len(out.Variants[0].Results) != 2 {
		t.Fatalf("the queued run: %+v %v", m, err)
	}
	f, _ := scenario.Parse("tiny.yaml", []byte(tinyScenario))
	r, _ := lab.Run(context.Background(), f.Jobs()[0], nil)
	if got := out.Variants[0].Results[0]; got.CCTS != r.CCTS {
		t.Errorf("the worker's row: CCT %v, a local run's %v", got.CCTS, r.CCTS)
	}
}

// A launch's errors name files relative to the folders the server reads,
// not where it keeps them.
func TestShortPaths(t *testing.T) {
	t.Setenv(scenario.WorkloadsEnv, "/srv/lab/workloads/")
	for _, c := range []struct{ in, want string }{
		{"/srv/ex/pasted.yaml:2:3: workload.kind: unknown", "pasted.yaml:2:3: workload.kind: unknown"},
		{"/srv/lab/workloads/w5.txt:7: bad line (see /srv/ex/flows.txt)", "w5.txt:7: bad line (see flows.txt)"},
		{"/srv/exx/a.yaml: other folder", "/srv/exx/a.yaml: other folder"},
		{"/data/srv/ex/f.txt and /home/u/srv/ex/g: inside other paths", "/data/srv/ex/f.txt and /home/u/srv/ex/g: inside other paths"},
		{`reads "/srv/ex/flows.txt" (line 3)`, `reads "flows.txt" (line 3)`},
	} {
		if got := shortPaths(c.in, "/srv/ex"); got != c.want {
			t.Errorf("shortPaths(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The overrides read as show's do, quoted for a shell (they were pasted
// raw: "--set sim.telemetry.flows=top 2").
func TestOverridesAreQuoted(t *testing.T) {
	got := overrides(store.Meta{Seed: 3, Sets: []string{"sim.telemetry.flows=top 2", "seed=3"}, Sweeps: []string{"workload.qps=1,2"}})
	if want := "seed 3; --set 'sim.telemetry.flows=top 2' --set seed=3 --sweep workload.qps=1,2"; got != want {
		t.Errorf("overrides %q, want %q", got, want)
	}
}

// The compare page knows each column's workload, as the CLI's compare
// does: an incast's bus bandwidth is "-", and columns of different
// workloads get a note.
func TestCompareMixedWorkloads(t *testing.T) {
	g := newRig(t, Config{})
	a := g.saveRun("alpha", nil, "", 10)
	id, err := g.st.BeginRun(store.Meta{Name: "in", ScenarioFile: "x.yaml", ScenarioText: tinyScenario, Seed: 7, Version: "test",
		Started: "2026-11-30T10:00:00Z", Expected: 1}, []report.VariantResult{{Name: "in", Collective: "incast"}})
	if err != nil {
		t.Fatal(err)
	}
	r := metrics.SizeResult{}
	r.SizeBytes, r.Ranks, r.Complete, r.CCTS, r.BusBWGBps, r.AlgBWGBps = 65536, 4, true, 1e-5, 7.77, 3
	if err := g.st.AddResult(id, 0, 0, r); err != nil {
		t.Fatal(err)
	}
	if err := g.st.FinishRun(id, store.StatusDone, "2026-11-30T10:01:00Z"); err != nil {
		t.Fatal(err)
	}
	code, body, _ := g.get(fmt.Sprintf("/compare?run=%d:first&run=%d", a, id))
	if code != 200 || !strings.Contains(body, "Note: the columns run different workloads") || strings.Contains(body, "7.77") {
		t.Errorf("compare: %d\n%s", code, body)
	}
}
