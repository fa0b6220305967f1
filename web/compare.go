package web

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"fabriclab/report"
	"fabriclab/report/charts"
	"fabriclab/store"
)

// maxCompare bounds the runs of one comparison.
const maxCompare = 16

// compareSel is the comparison's selection: a run, or one variant of it.
type compareSel struct {
	id      int64
	variant string
}

// String is the selection as RUN or RUN:VARIANT.
func (c compareSel) String() string {
	if c.variant == "" {
		return fmt.Sprint(c.id)
	}
	return fmt.Sprintf("%d:%s", c.id, c.variant)
}

// parseSel reads the selection, in order: first every run parameter, each
// one selection, RUN or RUN:VARIANT with the variant as it is (a sweep
// point's name has spaces: run=27:pfc qps=1); a run parameter without a
// ':' may list run ids (run=12,13: runs have no spaces or commas). Then
// the compare page's one text field, runs, a list of selections separated
// by spaces or commas, quoted as a shell quotes a word when a variant's
// name has either: runs=12 '27:pfc qps=1'.
func parseSel(q url.Values) ([]compareSel, error) {
	var words []string
	for _, raw := range q["run"] {
		if strings.Contains(raw, ":") {
			words = append(words, raw)
			continue
		}
		words = append(words, strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })...)
	}
	for _, raw := range q["runs"] {
		w, err := splitWords(raw)
		if err != nil {
			return nil, err
		}
		words = append(words, w...)
	}
	var out []compareSel
	for _, s := range words {
		run, variant, hasVariant := strings.Cut(s, ":")
		id, err := store.ParseID(strings.TrimSpace(run))
		if err != nil {
			return nil, fmt.Errorf("%q is not RUN or RUN:VARIANT", s)
		}
		if hasVariant && variant == "" {
			return nil, fmt.Errorf("%q: empty variant after ':'", s)
		}
		out = append(out, compareSel{id, variant})
		if len(out) > maxCompare {
			return nil, fmt.Errorf("at most %d runs at once", maxCompare)
		}
	}
	return out, nil
}

// splitWords splits the compare field's text into selections: spaces and
// commas separate them, except within quotes ('…' as it is, "…" with \"
// and \\) or after a backslash, as a shell splits words.
func splitWords(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				w.WriteRune(r)
			}
		case r == ',' || unicode.IsSpace(r):
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			inWord = true
			switch r {
			case '\'', '"':
				quote = r
			case '\\':
				escaped = true
			default:
				w.WriteRune(r)
			}
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("%q: a quote or backslash is not closed", s)
	}
	if inWord {
		out = append(out, w.String())
	}
	return out, nil
}

// quoteWord is s as the compare field writes it: quoted for splitWords
// when it holds a space, a comma, a quote or a backslash.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r == ',' || r == '\'' || r == '"' || r == '\\' || unicode.IsSpace(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// selQuery is the selection as the report's query: one run parameter each.
func selQuery(sel []compareSel) string {
	v := url.Values{}
	for _, c := range sel {
		v.Add("run", c.String())
	}
	return v.Encode()
}

// columns reads the selected runs: one column per variant, named
// "N:variant", and the report sources.
func (s *Server) columns(sel []compareSel) ([]report.Column, []charts.Source, error) {
	type loaded struct {
		out report.Output
		m   store.Meta
	}
	runs := map[int64]loaded{}
	var cols []report.Column
	var srcs []charts.Source
	for _, a := range sel {
		l, ok := runs[a.id]
		if !ok {
			out, m, err := s.cfg.Store.Run(a.id)
			if err != nil {
				return nil, nil, &runError{a.id, err}
			}
			l = loaded{out, m}
			runs[a.id] = l
		}
		src := l.out
		src.Variants = nil
		var names []string
		for _, v := range l.out.Variants {
			names = append(names, v.Name)
			if a.variant == "" || v.Name == a.variant {
				cols = append(cols, report.Column{Name: fmt.Sprintf("%d:%s", a.id, v.Name), Results: v.Results, Kind: v.Collective})
				src.Variants = append(src.Variants, v)
			}
		}
		if len(src.Variants) == 0 {
			return nil, nil, fmt.Errorf("run %d has no variant %q (variants: %s)", a.id, a.variant, strings.Join(names, ", "))
		}
		// One variant of the run, perhaps: its status, without the
		// run's list of missing jobs (other variants' too).
		srcs = append(srcs, charts.Source{Label: fmt.Sprintf("run %d", a.id), Output: src, ScenarioText: l.m.ScenarioText,
			ScenarioPaths: l.m.ScenarioPaths(), Status: l.m.Status})
	}
	return cols, srcs, nil
}

// failColumns answers a selection columns refused: a run that could not
// be read as failRun does, a variant the run does not have with 404.
func (s *Server) failColumns(w http.ResponseWriter, r *http.Request, err error) {
	if re, ok := errors.AsType[*runError](err); ok {
		s.failRun(w, r, re)
		return
	}
	s.fail(w, r, http.StatusNotFound, oneLine(err.Error()))
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	sel, err := parseSel(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	// Every selection the page was asked for (the runs page's checkboxes
	// send a run parameter each) goes back in its one field, runs, quoted
	// where a variant's name needs it: resubmitting keeps them all.
	var words []string
	for _, c := range sel {
		words = append(words, quoteWord(c.String()))
	}
	data := map[string]any{"Query": strings.Join(words, " ")}
	if len(sel) > 0 {
		cols, _, err := s.columns(sel)
		if err != nil {
			s.failColumns(w, r, err)
			return
		}
		if len(cols) < 2 {
			data["Error"] = "nothing to compare: name another run or variant"
		} else {
			var tables []map[string]string
			for _, m := range report.AllMetrics {
				var b bytes.Buffer
				if err := report.WriteCompare(&b, cols, m); err != nil {
					s.fail(w, r, http.StatusInternalServerError, oneLine(err.Error()))
					return
				}
				mt, _ := report.LookupMetric(m)
				tables = append(tables, map[string]string{"Title": mt.Title, "Text": b.String()})
			}
			data["Tables"] = tables
			data["ReportURL"] = "/compare/report?" + selQuery(sel)
			var names []string
			for _, c := range cols {
				names = append(names, c.Name)
			}
			data["Columns"] = names
			data["Note"] = strings.TrimSuffix(strings.TrimPrefix(report.KindsNote(cols), "# note: "), "\n")
		}
	}
	s.render(w, r, "compare", "Compare", data)
}

// compareReport is the report of the selected runs side by side (the
// compare page frames it): their bus-bandwidth curves overlaid.
func (s *Server) compareReport(w http.ResponseWriter, r *http.Request) {
	sel, err := parseSel(r.URL.Query())
	if err != nil || len(sel) == 0 {
		s.fail(w, r, http.StatusBadRequest, "name the runs to compare (run=RUN or RUN:VARIANT)")
		return
	}
	_, srcs, err := s.columns(sel)
	if err != nil {
		s.failColumns(w, r, err)
		return
	}
	s.writeReport(w, r, srcs, "")
}
