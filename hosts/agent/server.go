package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/wire"
)

// Server is one agent: the control channel's listener, the sessions, at
// most one run, and the metrics listener.
type Server struct {
	cfg     Config
	lim     limits
	tlsMode string // how TLS is set up, for the start line
	tlsCfg  *tls.Config
	ln, mln net.Listener
	srv     *http.Server
	msrv    *http.Server
	metrics *metrics

	mu       sync.Mutex
	conns    map[net.Conn]*connState
	sessions map[[wire.SessionIDLen]byte]*session
	run      *activeRun    // nil when idle
	closing  chan struct{} // closed once the last run's plane has closed
	last     *lastRun      // the last finished run's counters, for /metrics

	refusedLog everyInterval // rate-limits the "too many connections" line
	// clockPC is the clock echo's socket, on the control address;
	// clockKeys are the sessions by their clock id (under mu).
	clockPC   net.PacketConn
	clockKeys map[[8]byte]*session
	failMu    sync.Mutex // they wait one at a time
}

// maxMessage bounds a request body (a large run's spec is a few MB);
// handshake messages are tiny and get far less.
const (
	maxMessage          = 64 << 20
	maxHandshakeMessage = 4 << 10
	idleTimeout         = 5 * time.Minute
)

// Listen checks cfg, sets up TLS and binds the control and metrics
// addresses; Serve then serves them.
func Listen(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		conns:    map[net.Conn]*connState{},
		sessions: map[[wire.SessionIDLen]byte]*session{},
		lim: limits{
			allow: cfg.Allow, dataIPs: cfg.DataIPs,
			maxRate: cfg.MaxRate, maxDuration: cfg.MaxDuration,
		},
	}
	if s.cfg.NewPlane == nil || s.cfg.AvailableCC == nil || s.cfg.HostCounters == nil {
		useDataplane(&s.cfg)
	}
	closed := make(chan struct{})
	close(closed)
	s.closing = closed
	s.tlsCfg, s.tlsMode, err = serverTLS(cfg)
	if err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("control channel: %v", err)
	}
	// The clock echo listens on the same address and port, over UDP.
	s.clockPC, err = net.ListenPacket("udp", s.ln.Addr().String())
	if err != nil {
		s.ln.Close()
		return nil, fmt.Errorf("clock echo: %v", err)
	}
	s.clockKeys = map[[8]byte]*session{}
	if cfg.MetricsListen != "" {
		s.mln, err = net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			s.ln.Close()
			s.clockPC.Close()
			return nil, fmt.Errorf("metrics: %v", err)
		}
		if !s.MetricsLocal() && len(cfg.MetricsToken) == 0 {
			s.mln.Close()
			s.ln.Close()
			s.clockPC.Close()
			return nil, fmt.Errorf("metrics on %s are beyond loopback: they need a bearer token for the scrapers (--metrics-token-file), or listen on 127.0.0.1", cfg.MetricsListen)
		}
	}
	s.srv = s.newHTTPServer()
	if s.mln != nil {
		s.msrv = &http.Server{Handler: s.metrics.handler(cfg.MetricsToken), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: newErrorLog(s.cfg.Logf)} // TLS handshake failures, one line each as the agent's
		if !s.MetricsLocal() {
			// HTTPS with the control channel's certificate, for Prometheus
			// (HTTP/1.1 or h2); the bearer token authenticates, so no
			// client certificate is asked for even under mTLS.
			s.msrv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: s.tlsCfg.Certificates}
		}
	}
	return s, nil
}

// MetricsLocal reports whether /metrics listens on loopback only (plain
// HTTP) rather than beyond it (HTTPS). False when there are no metrics.
func (s *Server) MetricsLocal() bool {
	if s.mln == nil {
		return false
	}
	a, ok := s.mln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// MetricsAuth reports whether /metrics asks for a bearer token.
func (s *Server) MetricsAuth() bool { return s.mln != nil && len(s.cfg.MetricsToken) > 0 }

// Addr is the control channel's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// MetricsAddr is the metrics address, nil when there is none.
func (s *Server) MetricsAddr() net.Addr {
	if s.mln == nil {
		return nil
	}
	return s.mln.Addr()
}

// TLSMode says how the control channel's TLS is set up, for the start log.
func (s *Server) TLSMode() string { return s.tlsMode }

func (s *Server) newHTTPServer() *http.Server {
	opts := []connect.HandlerOption{
		connect.WithCodec(wire.Codec{}),
		connect.WithReadMaxBytes(maxMessage),
		connect.WithRecover(func(_ context.Context, spec connect.Spec, _ http.Header, p any) error {
			s.cfg.Logf("internal error in %s: %v", spec.Procedure, p)
			return connect.NewError(connect.CodeInternal, errors.New("internal error in the agent"))
		}),
	}
	small := append(opts[:len(opts):len(opts)], connect.WithReadMaxBytes(maxHandshakeMessage))
	mux := http.NewServeMux()
	mux.Handle(wire.ProcChallenge, connect.NewUnaryHandler(wire.ProcChallenge, s.challenge, small...))
	mux.Handle(wire.ProcAuthenticate, connect.NewUnaryHandler(wire.ProcAuthenticate, s.authenticate, small...))
	mux.Handle(wire.ProcInfo, connect.NewUnaryHandler(wire.ProcInfo, s.info, opts...))
	mux.Handle(wire.ProcClock, connect.NewUnaryHandler(wire.ProcClock, s.clock, opts...))
	mux.Handle(wire.ProcPrepare, connect.NewUnaryHandler(wire.ProcPrepare, s.prepare, opts...))
	mux.Handle(wire.ProcConnect, connect.NewUnaryHandler(wire.ProcConnect, s.connect, opts...))
	mux.Handle(wire.ProcStart, connect.NewUnaryHandler(wire.ProcStart, s.start, opts...))
	mux.Handle(wire.ProcNotify, connect.NewUnaryHandler(wire.ProcNotify, s.notify, opts...))
	mux.Handle(wire.ProcEvents, connect.NewServerStreamHandler(wire.ProcEvents, s.events, opts...))
	mux.Handle(wire.ProcCheckpoint, connect.NewUnaryHandler(wire.ProcCheckpoint, s.checkpoint, opts...))
	mux.Handle(wire.ProcStop, connect.NewUnaryHandler(wire.ProcStop, s.stop, opts...))
	mux.Handle(wire.ProcAbort, connect.NewUnaryHandler(wire.ProcAbort, s.abort, opts...))

	guarded := s.guard(mux)
	errw := connect.NewErrorWriter()
	top := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs := connFrom(r.Context())
		if cs == nil {
			errw.Write(w, r, connect.NewError(connect.CodeInternal, errors.New("no connection state")))
			return
		}
		if _, err := cs.binding(r); err != nil {
			errw.Write(w, r, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("the control channel needs TLS 1.3: %v", err)))
			return
		}
		guarded.ServeHTTP(w, r)
	})
	var protos http.Protocols
	protos.SetHTTP2(true)
	return &http.Server{
		Handler:           top,
		TLSConfig:         s.tlsCfg,
		Protocols:         &protos,
		ReadHeaderTimeout: 10 * time.Second,
		// A connection with no request for this long is closed, and its
		// sessions with it (a run keeps its controller far busier).
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: 16 << 10,
		HTTP2:          &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 10 * time.Second},
		ConnContext:    s.connContext,
		ConnState:      s.connStateChange,
		// TLS handshake failures (a client without a certificate under
		// mTLS, a port scanner) are logged as one line each.
		ErrorLog: newErrorLog(s.cfg.Logf),
	}
}

// Serve serves until ctx ends, then aborts any run and closes everything.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() { errc <- s.srv.ServeTLS(s.ln, "", "") }()
	if s.msrv != nil {
		if s.msrv.TLSConfig != nil {
			go func() { errc <- s.msrv.ServeTLS(s.mln, "", "") }()
		} else {
			go func() { errc <- s.msrv.Serve(s.mln) }()
		}
	}
	stopWatch := make(chan struct{})
	go s.watchLease(stopWatch)
	clockDone := make(chan struct{})
	go func() { defer close(clockDone); s.serveClock() }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("serving: %v", err)
	}
	close(stopWatch)
	s.abortRun(outcomeShutdown, "the agent is shutting down")
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	select {
	case <-closing:
	case <-time.After(2 * time.Second):
	}
	s.srv.Close()
	if s.msrv != nil {
		s.msrv.Close()
	}
	s.clockPC.Close()
	<-clockDone
	return err
}

// serveClock answers the clock echo's authenticated datagrams with this
// agent's clock (see wire.ClockRequest); anything else gets no answer.
func (s *Server) serveClock() {
	buf := make([]byte, 64)
	for {
		n, from, err := s.clockPC.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		id, ok := wire.ClockRequestID(buf[:n])
		if !ok {
			continue
		}
		s.mu.Lock()
		ss := s.clockKeys[id]
		s.mu.Unlock()
		if ss == nil {
			continue
		}
		if nonce, ok := wire.VerifyClockRequest(ss.clockKey, buf[:n]); ok {
			ss.touch() // an authenticated request: the controller is there
			s.clockPC.WriteTo(wire.ClockReply(ss.clockKey, nonce, time.Now().UnixNano()), from)
		}
	}
}

// watchLease aborts a run whose controller went silent.
func (s *Server) watchLease(stop <-chan struct{}) {
	tick := max(s.cfg.Lease/10, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			r := s.run
			expired := r != nil && r.owner.silent(now, s.cfg.Lease)
			s.mu.Unlock()
			if expired {
				s.abortRunIf(r, outcomeLease, fmt.Sprintf("the controller sent nothing for %v (lease)", s.cfg.Lease))
			}
		}
	}
}
