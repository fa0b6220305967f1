package agent

import (
	"crypto/sha256"
	"crypto/subtle"
	"log"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
)

// metrics are the agent's Prometheus metrics, on their own registry (no
// process-wide state): counters of runs, refusals and failed handshakes,
// and per endpoint pair the current (or last) run's bytes, completions
// and retransmits, read from the data plane at scrape time.
type metrics struct {
	reg          *prometheus.Registry
	runs         *prometheus.CounterVec
	refusals     *prometheus.CounterVec
	authFailures prometheus.Counter
	// scrapeRefusals counts scrapes of /metrics without the bearer token.
	scrapeRefusals prometheus.Counter
	active         prometheus.Gauge
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fabriclab_agent_runs_total", Help: "Runs ended, by how they ended (stopped, aborted, lease_expired, disconnected, shutdown).",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fabriclab_agent_refusals_total", Help: "Runs refused at prepare, by reason (busy, allow, not_in_run, rate, duration, data_ip, invalid).",
		}, []string{"reason"}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabriclab_agent_auth_failures_total", Help: "Failed authentication handshakes.",
		}),
		scrapeRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fabriclab_agent_metrics_unauthorized_total", Help: "Scrapes of /metrics refused for a missing or wrong bearer token.",
		}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fabriclab_agent_run_active", Help: "1 while a run is prepared or running.",
		}),
	}
	// Every label value from the start, so a scrape shows zeros rather
	// than missing series.
	for _, o := range []string{outcomeStopped, outcomeAborted, outcomeLease, outcomeDisconnected, outcomeShutdown} {
		m.runs.WithLabelValues(o)
	}
	for _, r := range []string{reasonBusy, reasonAllow, reasonNotInRun, reasonRate, reasonDuration, reasonDataIP, reasonInvalid} {
		m.refusals.WithLabelValues(r)
	}
	m.reg.MustRegister(m.runs, m.refusals, m.authFailures, m.scrapeRefusals, m.active, pairCollector{s})
	return m
}

// handler serves /metrics, to scrapers that send token as a bearer token
// when it is set.
func (m *metrics) handler(token []byte) http.Handler {
	mux := http.NewServeMux()
	var h http.Handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if len(token) > 0 {
		h = bearer(token, m.scrapeRefusals.Inc, h)
	}
	mux.Handle("/metrics", h)
	return mux
}

// bearer lets through requests whose Authorization header is "Bearer "
// (in any case) and token (compared in constant time, as digests so that
// the length does not show); the rest get 401 and are counted (refused).
func bearer(token []byte, refused func(), h http.Handler) http.Handler {
	want := sha256.Sum256(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1).
		auth := r.Header.Get("Authorization")
		scheme, got, ok := strings.Cut(auth, " ")
		ok = ok && strings.EqualFold(scheme, "Bearer")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			refused()
			w.Header().Set("WWW-Authenticate", `Bearer realm="fabriclab agent metrics"`)
			http.Error(w, "401 unauthorized: send the metrics token as a bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

var (
	pairLabels   = []string{"run", "client", "server", "side"}
	descBytes    = prometheus.NewDesc("fabriclab_agent_bytes_total", "Payload bytes of the run per endpoint pair, as this side counted them (sender: written; receiver: read).", pairLabels, nil)
	descComplete = prometheus.NewDesc("fabriclab_agent_completions_total", "Completed writes or messages of the run per endpoint pair (sender: acknowledged; receiver: read whole).", pairLabels, nil)
	descRetrans  = prometheus.NewDesc("fabriclab_agent_retransmits_total", "TCP segments retransmitted on the run's connections per endpoint pair (sender side, from TCP_INFO).", []string{"run", "client", "server"}, nil)
	descUDPLost  = prometheus.NewDesc("fabriclab_agent_udp_lost_total", "UDP datagrams of the run lost per endpoint pair, as the receiver counted them.", []string{"run", "client", "server"}, nil)
)

// pairCollector reads the per-pair counters of the active run (its plane
// now), or of the last run once it ended.
type pairCollector struct{ s *Server }

func (pairCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBytes
	ch <- descComplete
	ch <- descRetrans
	ch <- descUDPLost
}

func (c pairCollector) Collect(ch chan<- prometheus.Metric) {
	id, cp, ok := c.s.metricsSnapshot()
	if !ok {
		return
	}
	for _, p := range cp.Pairs {
		l := []string{id, strconv.Itoa(p.Client), strconv.Itoa(p.Server), p.Side}
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(p.Bytes), l...)
		ch <- prometheus.MustNewConstMetric(descComplete, prometheus.CounterValue, float64(p.Completions), l...)
	}
	type pair struct{ from, to int }
	retrans := map[pair]int64{}
	for _, cs := range cp.Conns {
		if cs.Side == wire.SideSender {
			k := pair{cs.From, cs.To}
			retrans[k] += 0
			if cs.TCP != nil {
				retrans[k] += cs.TCP.Retrans
			}
		}
	}
	for k, v := range retrans {
		ch <- prometheus.MustNewConstMetric(descRetrans, prometheus.CounterValue, float64(v), id, strconv.Itoa(k.from), strconv.Itoa(k.to))
	}
	lost := map[pair]int64{}
	for _, u := range cp.UDP {
		if u.Side == wire.SideReceiver {
			lost[pair{u.From, u.To}] += u.Lost
		}
	}
	for k, v := range lost {
		ch <- prometheus.MustNewConstMetric(descUDPLost, prometheus.CounterValue, float64(v), id, strconv.Itoa(k.from), strconv.Itoa(k.to))
	}
}

// metricsSnapshot is the run whose per-pair counters /metrics shows: the
// active one, read now, or the last one that ended.
func (s *Server) metricsSnapshot() (string, wire.Checkpoint, bool) {
	s.mu.Lock()
	r, last := s.run, s.last
	var p Plane
	if r != nil {
		p = r.plane
	}
	s.mu.Unlock()
	if r != nil {
		if f := r.final.Load(); f != nil {
			return r.id, f.Checkpoint, true
		}
		if p != nil {
			return r.id, p.Snapshot(), true
		}
	}
	if last != nil {
		return last.id, last.cp, true
	}
	return "", wire.Checkpoint{}, false
}

// newErrorLog turns net/http's error log (TLS handshake failures: a client
// without a certificate under mTLS, a scanner) into one log line each.
func newErrorLog(logf func(string, ...any)) *log.Logger {
	return log.New(lineWriter(logf), "", 0)
}

type lineWriter func(string, ...any)

func (w lineWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		w("%s", safetext.Terminal(strings.TrimPrefix(line, "http: ")))
	}
	return len(b), nil
}
