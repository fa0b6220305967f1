// Package web is `fabriclab serve`: a browser front end to the results
// store — the runs (filtered, paginated), one run (its fabric, tables,
// every report chart, overrides and scenario; downloads), a comparison of
// runs, and a launch page that validates a scenario inline and runs it on
// the server's worker pool with live progress.
//
// It is server-rendered HTML (html/template, which escapes for the HTML
// context), a little plain JavaScript for the live progress, and nothing
// from the network; the charts are the report's (package report/charts).
// Routing is Go's own http.ServeMux, whose method and wildcard patterns
// cover every route here, so there is no router dependency.
//
// Security: it binds loopback unless told otherwise, and beyond loopback
// it needs a token (checked in constant time, then kept in an HttpOnly,
// SameSite=Strict cookie). Every POST carries a CSRF token bound to the
// server's secret and is refused when its Origin is another site's.
// Request bodies are bounded; ids are numbers; example names are matched
// against the examples directory's listing, never joined as paths.
package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"fabriclab/queue"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Config is what a Server is built from.
type Config struct {
	// Store is the results database the pages read and launches write
	// (opened for writing).
	Store *store.Store
	// Token, when not empty, is required of every request (a cookie set
	// by the login page, or an Authorization: Bearer header). Serving
	// beyond loopback without one is refused by Listen.
	Token []byte
	// Run runs one job of a launch (lab.Run for the packet engine).
	Run runner.JobFunc
	// Check, when set, refuses a launch whose jobs a build would refuse
	// before the launch is accepted (engines.Accept in fabriclab serve: as
	// validate does), so that the error is on the launch page rather than
	// in every row.
	Check func(scenario.Job) error
	// ExamplesDir holds the scenario files the launch page offers; a
	// pasted scenario's relative references resolve in it. "" = none.
	ExamplesDir string
	// Workers is how many launches run at once (0 = 1); Parallel how many
	// jobs of one launch (0: the CPUs, divided by the launch's
	// sim.partitions). Every job of every launch also takes a core for
	// each of its parts from one budget of the machine's CPUs
	// (runner.Cores).
	Workers, Parallel int
	// MaxQueued bounds the launches waiting for a worker (0 = 16).
	MaxQueued int
	// Queue, when set, sends launches to the job queue in the store's
	// database (fabriclab worker runs them) instead of the local pool;
	// a launch's page then follows the rows as the workers save them.
	Queue *queue.Queue
	// Version is saved with launched runs.
	Version string
	// Log hears launches and refusals (nil: silent).
	Log io.Writer
}

// Server serves the pages.
type Server struct {
	cfg    Config
	pages  map[string]*template.Template
	secret []byte // per-process: CSRF tokens and the session cookie's value
	jobs   *launcher
	// checking holds a token per launch being checked (Config.Check):
	// as many at once as launches run.
	checking chan struct{}
	cores    *runner.Cores // the launches' jobs share the CPUs
	mux      *http.ServeMux
	logMu    sync.Mutex
}

// New builds a server; Close stops its launches.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: no results store")
	}
	if cfg.Run == nil {
		return nil, errors.New("web: no job runner")
	}
	s := &Server{cfg: cfg, secret: make([]byte, 32), cores: runner.NewCores(runtime.NumCPU())}
	if _, err := rand.Read(s.secret); err != nil {
		return nil, err
	}
	var err error
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.jobs = newLauncher(s)
	s.checking = make(chan struct{}, max(cfg.Workers, 1))
	s.routes()
	return s, nil
}

// Close cancels the running launches and waits for them to be saved.
func (s *Server) Close() { s.jobs.close() }

// Handler is the server's whole handler, middleware included.
func (s *Server) Handler() http.Handler { return s.protect(s.mux) }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/runs", http.StatusSeeOther) })
	m.HandleFunc("GET /runs", s.runsPage)
	m.HandleFunc("GET /runs/{id}", s.runPage)
	m.HandleFunc("GET /runs/{id}/report", s.runReport)
	m.HandleFunc("GET /runs/{id}/download/{format}", s.runDownload)
	m.HandleFunc("GET /compare", s.comparePage)
	m.HandleFunc("GET /compare/report", s.compareReport)
	m.HandleFunc("GET /launch", s.launchPage)
	m.HandleFunc("POST /launch", s.launchPost)
	m.HandleFunc("GET /launches/{id}", s.launchStatusPage)
	m.HandleFunc("GET /launches/{id}/events", s.launchEvents)
	m.HandleFunc("POST /launches/{id}/cancel", s.launchCancel)
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.loginPost)
	static, _ := fs.Sub(assets, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	// No catch-all "/" route: it would match every method and hide the
	// mux's 405 (with Allow) for a known path asked with the wrong method.
	// Requests no route takes are answered by unrouted.
	s.mux = m
}

// unrouted answers a request that no route takes (ServeMux.Handler gives
// no pattern): the mux's own answer — a redirect to the canonical path, a
// 405 with the Allow header for a known path asked with another method,
// or a 404 — with the error page in place of its plain text.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	h, _ := s.mux.Handler(r)
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	switch {
	case rec.code == http.StatusMethodNotAllowed:
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.fail(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed here (allowed: %s)", r.Method, allow))
	case rec.code >= 300 && rec.code < 400 && rec.header.Get("Location") != "":
		http.Redirect(w, r, rec.header.Get("Location"), rec.code)
	default:
		s.fail(w, r, http.StatusNotFound, "no such page")
	}
}

// recorder keeps the status and headers of the mux's internal handlers
// (unrouted); their bodies are plain text and dropped.
type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

// TLS is what Listen needs to serve HTTPS: a certificate and key, and
// optionally the CA whose client certificates are required (mTLS).
type TLS struct {
	CertFile, KeyFile, ClientCAFile string
}

// Listen opens addr for Serve. Loopback is allowed as it is; any other
// address needs TLS (a token or session cookie must not travel in clear)
// and an authenticator: the token, or client certificates.
func Listen(addr string, t TLS, hasToken bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %v (use HOST:PORT, e.g. 127.0.0.1:7480)", addr, err)
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("--cert-file and --key-file go together")
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		return nil, errors.New("--client-ca needs --cert-file and --key-file (mTLS is TLS)")
	}
	if !loopbackHost(host) {
		switch {
		case t.CertFile == "":
			return nil, fmt.Errorf("--addr %s is not a loopback address: serving beyond this machine needs TLS (--cert-file, --key-file) and --token-file or --client-ca", addr)
		case !hasToken && t.ClientCAFile == "":
			return nil, fmt.Errorf("--addr %s is not a loopback address: serving beyond this machine needs --token-file or --client-ca", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil || t.CertFile == "" {
		return ln, err
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("the server certificate: %v", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			ln.Close()
			return nil, fmt.Errorf("--client-ca %s: no PEM certificate could be read", t.ClientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tls.NewListener(ln, cfg), nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Serve serves on ln until ctx ends, then shuts down (launches are
// cancelled and saved).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return nil
}

const cookieName = "fabriclab_session"

// sessionValue is what the session cookie holds: a MAC of the token under
// the process's secret, so the cookie is not the token and dies with the
// process.
func (s *Server) sessionValue() string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("session\x00"))
	m.Write(s.cfg.Token)
	return hex.EncodeToString(m.Sum(nil))
}

// csrfToken is the token every form carries.
func (s *Server) csrfToken() string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) authorized(r *http.Request) bool {
	if len(s.cfg.Token) == 0 {
		return true
	}
	if tok, ok := bearer(r.Header.Get("Authorization")); ok {
		return subtle.ConstantTimeCompare([]byte(tok), s.cfg.Token) == 1
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.sessionValue())) == 1
	}
	return false
}

// bearer reads the token of an "Authorization: Bearer TOKEN" header; the
// scheme's name is case-insensitive (RFC 9110, section 11.1), and spaces
// may separate it from the token.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.Trim(tok, " "), true
}

// maxBody bounds every request body (a scenario is at most 1 MiB).
const maxBody = 2 << 20

// protect is the middleware: security headers, body bound, auth, CSRF.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Frame-Options", "SAMEORIGIN")
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if !s.authenticates(r) && !loopbackRequest(r) {
			// Nothing but the address protects a server without a token
			// or client certificates: a page of another site whose name
			// comes to resolve to 127.0.0.1 (DNS rebinding) would be
			// same-origin with it. Such requests name another host.
			s.fail(w, r, http.StatusMisdirectedRequest, "this server answers to its loopback address only (localhost, 127.0.0.1, [::1]); the request names another host")
			return
		}
		login := r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/")
		if !login && !s.authorized(r) {
			if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/events") && !strings.Contains(r.URL.Path, "/download/") {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.fail(w, r, http.StatusUnauthorized, "a token is needed: log in first")
			return
		}
		if _, pattern := s.mux.Handler(r); pattern == "" {
			// No route takes it (a wrong method gets 405, not a CSRF
			// refusal or a 404).
			s.unrouted(w, r)
			return
		}
		if r.Method == http.MethodPost {
			if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameOrigin(o, r) {
				s.fail(w, r, http.StatusForbidden, "cross-site request refused")
				return
			}
			if err := r.ParseForm(); err != nil {
				s.fail(w, r, http.StatusRequestEntityTooLarge, "the request is too large or malformed")
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrfToken())) != 1 {
				s.fail(w, r, http.StatusForbidden, "the form is stale or from another site (missing CSRF token): reload the page")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// pageCSP allows this server's own scripts, styles and frames only.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; form-action 'self'; base-uri 'none'"

// reportCSP is the embedded report's: inline SVG and styles, no script.
const reportCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'"

// authenticates reports whether requests must prove who sends them: a
// token, or a client certificate the TLS handshake verified.
func (s *Server) authenticates(r *http.Request) bool {
	return len(s.cfg.Token) > 0 || r.TLS != nil && len(r.TLS.VerifiedChains) > 0
}

// loopbackRequest reports whether r's Host names a loopback address
// (localhost, 127.0.0.0/8, ::1), with or without a port.
func loopbackRequest(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackHost(strings.ToLower(strings.Trim(host, "[]")))
}

func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "serve: "+format+"\n", a...)
}

// storeProblem logs err, from the results database, and returns what a
// page says of it: what failed, without the server's paths its message
// names.
func (s *Server) storeProblem(what string, err error) string {
	s.logf("%s: %v", what, err)
	return what + " (the server's log says why)"
}

// fail renders the error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = s.pages["error"].ExecuteTemplate(w, "layout", s.data(r, "Error", map[string]any{"Code": code, "Message": msg}))
}

// data is what every page template gets.
func (s *Server) data(_ *http.Request, title string, page any) map[string]any {
	return map[string]any{"Title": title, "CSRF": s.csrfToken(), "Page": page, "Auth": len(s.cfg.Token) > 0}
}

// render executes page's template.
func (s *Server) render(w http.ResponseWriter, r *http.Request, page, title string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := s.pages[page].ExecuteTemplate(&b, "layout", s.data(r, title, data)); err != nil {
		s.logf("rendering %s: %v", page, err)
		s.fail(w, r, http.StatusInternalServerError, "the page could not be rendered")
		return
	}
	_, _ = io.WriteString(w, b.String())
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "login", "Log in", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

func (s *Server) loginPost(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.PostFormValue("next"))
	if len(s.cfg.Token) == 0 {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(r.PostFormValue("token"))), s.cfg.Token) != 1 {
		time.Sleep(250 * time.Millisecond) // guesses are slow
		s.logf("a wrong token from %s", r.RemoteAddr)
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, r, "login", "Log in", map[string]any{"Next": next, "Wrong": true})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.sessionValue(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this site: a path of this
// server ("/runs?tag=x"), rebuilt from its parsed, re-encoded parts, or
// "/runs". Refused: anything but a single leading "/" ("//host" and "/\host"
// are other sites to a browser), any control character or backslash
// (browsers drop tabs and newlines, so "/\t/evil.example" becomes
// "//evil.example", and read "\" as "/"), and a path that decodes to one of
// those ("/%2F/evil.example", "/%5Cevil.example", "/%09/evil.example").
func safeNext(next string) string {
	const home = "/runs"
	bad := func(p string) bool {
		return strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") ||
			strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || unicode.IsControl(r) || r == utf8.RuneError })
	}
	if len(next) > 4096 || !strings.HasPrefix(next, "/") || bad(next) {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || bad(u.Path) {
		return home
	}
	out := u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + escapeQuery(u.RawQuery)
	}
	if bad(out) {
		return home
	}
	return out
}

// escapeQuery percent-encodes what a query may not hold as it is, keeping
// the rest (and its "%XX" escapes and parameter order) unchanged.
func escapeQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/?%", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
