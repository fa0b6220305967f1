package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"fabriclab/report"
	"fabriclab/report/charts"
	"fabriclab/store"
)

// pageNames are the page templates, each rendered inside layout.html.
var pageNames = []string{"runs", "run", "compare", "launch", "launchstatus", "login", "error"}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"join": strings.Join,
		"add":  func(a, b int) int { return a + b },
	}
	out := map[string]*template.Template{}
	for _, p := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %v", p, err)
		}
		out[p] = t
	}
	return out, nil
}

// perPage is the runs page's page size.
const perPage = 50

// runRow is one line of the runs page.
type runRow struct {
	store.Meta
	Overrides  string
	Rows       string
	StatusText string // "running (stale?)" for a run whose process is gone
}

// runsPage lists the runs, newest first, filtered by name, tag, status
// and start date, a page at a time.
func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.Filter{Name: strings.TrimSpace(q.Get("name")), Tag: strings.TrimSpace(q.Get("tag"))}
	var err error
	if f.Since, err = parseDay(q.Get("since")); err != nil {
		s.fail(w, r, http.StatusBadRequest, "since: "+err.Error())
		return
	}
	if f.Until, err = parseDay(q.Get("until")); err != nil {
		s.fail(w, r, http.StatusBadRequest, "until: "+err.Error())
		return
	}
	status := strings.TrimSpace(q.Get("status"))
	page := 1
	if p := q.Get("page"); p != "" {
		if page, err = strconv.Atoi(p); err != nil || page < 1 || page > 1e6 {
			s.fail(w, r, http.StatusBadRequest, "page must be a positive number")
			return
		}
	}
	metas, err := s.cfg.Store.Runs(f)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, s.storeProblem("the runs could not be read from the results database", err))
		return
	}
	statuses := map[string]bool{}
	var sel []store.Meta
	for i := len(metas) - 1; i >= 0; i-- { // newest first
		m := metas[i]
		statuses[m.Status] = true
		if status == "" || m.Status == status {
			sel = append(sel, m)
		}
	}
	pages := max((len(sel)+perPage-1)/perPage, 1)
	page = min(page, pages)
	lo, hi := (page-1)*perPage, min(page*perPage, len(sel))
	rows := make([]runRow, 0, hi-lo)
	for _, m := range sel[lo:hi] {
		m.ScenarioText = "" // not shown here
		rows = append(rows, runRow{Meta: m, Overrides: overrides(m), Rows: rowCount(m), StatusText: statusText(m)})
	}
	var sts []string
	for st := range statuses {
		sts = append(sts, st)
	}
	sort.Strings(sts)
	link := func(p int) string {
		v := url.Values{}
		for _, k := range []string{"name", "tag", "status", "since", "until"} {
			if x := q.Get(k); x != "" {
				v.Set(k, x)
			}
		}
		v.Set("page", strconv.Itoa(p))
		return "/runs?" + v.Encode()
	}
	data := map[string]any{"Runs": rows, "Total": len(sel), "Page": page, "Pages": pages, "Statuses": sts,
		"Name": f.Name, "Tag": f.Tag, "Status": status, "Since": q.Get("since"), "Until": q.Get("until")}
	if page > 1 {
		data["Prev"] = link(page - 1)
	}
	if page < pages {
		data["Next"] = link(page + 1)
	}
	s.render(w, r, "runs", "Runs", data)
}

// parseDay reads a since or until value as `fabriclab runs --since/--until`
// does: a date (YYYY-MM-DD, midnight UTC) or an RFC 3339 time. Runs are
// those started at or after since and before until (store.Filter), so an
// until date is not included: since=D&until=D lists nothing, as the
// command line does.
func parseDay(v string) (time.Time, error) {
	if v = strings.TrimSpace(v); v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date like 2026-12-01 or a time like 2026-12-01T14:00:00Z", v)
}

// statusText is a run's status as `fabriclab runs` shows it: a run still
// marked running whose process on this machine is gone (killed) is
// "running (stale?)" (store.Meta.Stale, the command line's test).
func statusText(m store.Meta) string {
	if m.Stale() {
		return m.Status + " (stale?)"
	}
	return m.Status
}

// overrides says what changed a run from its file, as show's "#
// overrides:" line says it: the seed, then --set and --sweep shell-quoted,
// ready to paste into a command line.
func overrides(m store.Meta) string {
	return report.Overrides(report.Output{Seed: m.Seed, Sets: m.Sets, Sweeps: m.Sweeps})
}

func rowCount(m store.Meta) string {
	if m.Expected > 0 {
		return fmt.Sprintf("%d/%d", m.Rows, m.Expected)
	}
	return strconv.Itoa(m.Rows)
}

// runID reads the {id} of the path; false (after the error page) when it
// is not a run of the store.
func (s *Server) runID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := store.ParseID(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "no such run")
		return 0, false
	}
	return id, true
}

// loadRun reads a run; false (after the error page) when it cannot.
func (s *Server) loadRun(w http.ResponseWriter, r *http.Request, id int64) (report.Output, store.Meta, bool) {
	out, m, err := s.cfg.Store.Run(id)
	if err != nil {
		s.failRun(w, r, &runError{id, err})
		return out, m, false
	}
	return out, m, true
}

// runError is run id that could not be read.
type runError struct {
	id  int64
	err error
}

func (e *runError) Error() string { return fmt.Sprintf("run %d: %v", e.id, e.err) }
func (e *runError) Unwrap() error { return e.err }

// failRun answers a run that could not be read: 404 for one that is not in
// the store, 500 otherwise, the reason in the server's log and not on the
// page (it names the server's files).
func (s *Server) failRun(w http.ResponseWriter, r *http.Request, e *runError) {
	if errors.Is(e.err, store.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, fmt.Sprintf("no run %d", e.id))
		return
	}
	s.fail(w, r, http.StatusInternalServerError, s.storeProblem(fmt.Sprintf("run %d could not be read from the results database", e.id), e.err))
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	out, m, ok := s.loadRun(w, r, id)
	if !ok {
		return
	}
	var tables bytes.Buffer
	if err := report.WriteTables(&tables, out); err != nil {
		s.fail(w, r, http.StatusInternalServerError, oneLine(err.Error()))
		return
	}
	// After the rows, the jobs it planned that have none, as show lists
	// them; the scenario (and the files it names) is read again only when
	// some may be missing.
	if u := store.UnsavedOf(m, out); !u.None() {
		tables.WriteString("\n")
		_ = report.WriteUnsaved(&tables, u) // a bytes.Buffer does not fail
	}
	hostsRows := 0
	for _, v := range out.Variants {
		for _, res := range v.Results {
			if res.Hosts != nil {
				hostsRows++
			}
		}
	}
	s.render(w, r, "run", fmt.Sprintf("Run %d", m.ID), map[string]any{
		"Meta": m, "Status": statusText(m), "Overrides": overrides(m), "Rows": rowCount(m), "Tables": tables.String(),
		"Fabric": fabricSummary(out), "Variants": out.Variants, "HostsRows": hostsRows,
	})
}

// fabricSummary is one line per variant: what it ran on.
func fabricSummary(out report.Output) []string {
	var lines []string
	for _, v := range out.Variants {
		if len(v.Results) == 0 {
			continue
		}
		r := v.Results[0]
		engine := "packet simulator"
		if r.Engine == "flow" {
			engine = "flow-level engine (no fabric counters)"
		}
		if r.Hosts != nil {
			engine = r.Hosts.String()
		}
		lines = append(lines, fmt.Sprintf("%s: %s, %d ranks, %s", v.Name, v.Collective, r.Ranks, engine))
	}
	return lines
}

// runReport is the run's HTML report (the page frames it).
func (s *Server) runReport(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	out, m, ok := s.loadRun(w, r, id)
	if !ok {
		return
	}
	s.writeReport(w, r, []charts.Source{charts.SavedRun(m, out)}, "")
}

// writeReport writes the report of srcs; attachment names a download.
func (s *Server) writeReport(w http.ResponseWriter, r *http.Request, srcs []charts.Source, attachment string) {
	var b bytes.Buffer
	if err := charts.Write(&b, srcs, charts.Options{}); err != nil {
		s.fail(w, r, http.StatusInternalServerError, oneLine(err.Error()))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", reportCSP)
	h.Set("Content-Type", "text/html; charset=utf-8")
	if attachment != "" {
		h.Set("Content-Disposition", `attachment; filename="`+attachment+`"`)
	}
	_, _ = w.Write(b.Bytes())
}

// runDownload serves the run as JSON, CSV or its HTML report.
func (s *Server) runDownload(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	format := r.PathValue("format")
	if format != "json" && format != "csv" && format != "html" {
		s.fail(w, r, http.StatusNotFound, "downloads are json, csv or html")
		return
	}
	out, m, ok := s.loadRun(w, r, id)
	if !ok {
		return
	}
	name := fmt.Sprintf("run-%d.%s", m.ID, format)
	if format == "html" {
		s.writeReport(w, r, []charts.Source{charts.SavedRun(m, out)}, name)
		return
	}
	var b bytes.Buffer
	var err error
	if format == "json" {
		w.Header().Set("Content-Type", "application/json")
		err = report.WriteJSON(&b, out)
	} else {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		err = report.WriteCSV(&b, out)
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, oneLine(err.Error()))
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	_, _ = w.Write(b.Bytes())
}

// oneLine keeps an error to its first line (errors never echo files, but
// a page shows one line).
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
