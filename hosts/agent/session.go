package agent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/wire"
	"fabriclab/internal/safetext"
)

// connState is one TLS connection's state: its exporter (worked out once,
// on its first request) and the handshake in progress on it.
type connState struct {
	remote string

	once     sync.Once
	exporter []byte
	expErr   error

	mu      sync.Mutex
	pending *wire.AgentAuth

	closed bool // under Server.mu: no session may be added any more
	authed bool // under Server.mu: a session was made on it
	// authBusy (under mu): an Authenticate is in flight on it.
	authBusy bool
	// deadline closes it when it has not authenticated in time.
	deadline *time.Timer
}

// binding is the connection's channel binding.
func (c *connState) binding(r *http.Request) ([]byte, error) {
	c.once.Do(func() {
		if r.TLS == nil {
			c.expErr = errors.New("not a TLS connection")
			return
		}
		c.exporter, c.expErr = exporter(*r.TLS)
	})
	return c.exporter, c.expErr
}

// session is an authenticated controller session, valid on one connection.
type session struct {
	id       [wire.SessionIDLen]byte
	conn     *connState
	exporter []byte
	lastSeen atomic.Int64 // Unix ns of its latest request: the lease
	clockKey []byte       // its clock echo's key (wire.ClockKey)
	inflight atomic.Int32 // requests in progress (but Events)
}

// silent says whether the session has been quiet for longer than lease.
func (s *session) silent(now time.Time, lease time.Duration) bool {
	return s.inflight.Load() == 0 && now.UnixNano()-s.lastSeen.Load() > int64(lease)
}

func (s *session) touch() { s.lastSeen.Store(time.Now().UnixNano()) }

// maxSessions bounds the sessions held at once (one per controller
// connection; a controller needs one per agent).
const maxSessions = 64

type ctxKey int

const (
	connKey ctxKey = iota
	sessionKey
)

// connContext gives every request of a connection its connState.
func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	cs := &connState{remote: c.RemoteAddr().String()}
	ip := remoteIP(c)
	s.mu.Lock()
	perIP := 0
	for other := range s.conns {
		if remoteIP(other) == ip {
			perIP++
		}
	}
	full := len(s.conns) >= maxConns || perIP >= maxConnsPerIP
	if !full {
		s.conns[c] = cs
	}
	s.mu.Unlock()
	if full {
		// Beyond the caps a connection is dropped before its TLS
		// handshake: nobody can hold the agent's memory or file
		// descriptors without a token.
		if s.refusedLog.Allow() {
			s.cfg.Logf("connection from %s refused: too many connections (logged at most once a second)", safetext.Terminal(cs.remote))
		}
		c.Close()
		return context.WithValue(ctx, connKey, cs)
	}
	// A connection that has not authenticated within handshakeDeadline is
	// closed (a controller authenticates at once).
	cs.deadline = time.AfterFunc(handshakeDeadline, func() {
		s.mu.Lock()
		idle := !cs.authed && !cs.closed
		s.mu.Unlock()
		if idle {
			c.Close()
		}
	})
	return context.WithValue(ctx, connKey, cs)
}

// Connection caps: in all, from one address, and how long a connection may
// stay without a session.
const (
	maxConns          = 128
	maxConnsPerIP     = 16
	handshakeDeadline = 10 * time.Second
)

// remoteIP is a connection's peer address without its port.
func remoteIP(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// connStateChange drops a closed connection's sessions, and aborts the run
// its session owned: the controller at the other end is gone.
func (s *Server) connStateChange(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	s.mu.Lock()
	cs := s.conns[c]
	delete(s.conns, c)
	if cs != nil {
		cs.closed = true
		if cs.deadline != nil {
			cs.deadline.Stop()
		}
	}
	var owner bool
	for id, ss := range s.sessions {
		if ss.conn == cs {
			delete(s.sessions, id)
			delete(s.clockKeys, wire.ClockID(ss.clockKey))
			if s.run != nil && s.run.owner == ss {
				owner = true
			}
		}
	}
	s.mu.Unlock()
	if owner {
		s.abortRun(outcomeDisconnected, "the controller's connection closed")
	}
}

// guard is the HTTP middleware in front of every procedure but the
// handshake's: a request without a valid session for its connection is
// refused before its body is read.
func (s *Server) guard(next http.Handler) http.Handler {
	errw := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case wire.ProcChallenge, wire.ProcAuthenticate:
			next.ServeHTTP(w, r)
			return
		}
		ss, err := s.sessionOf(r)
		if err != nil {
			errw.Write(w, r, connect.NewError(connect.CodeUnauthenticated, err))
			return
		}
		// A request in progress keeps the lease (a long Connect), except
		// the events stream, which is open for the whole run.
		ss.touch()
		if r.URL.Path != wire.ProcEvents {
			ss.inflight.Add(1)
			defer func() {
				ss.touch()
				ss.inflight.Add(-1)
			}()
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey, ss)))
	})
}

var errNoSession = errors.New("no valid session on this connection (authenticate first)")

func (s *Server) sessionOf(r *http.Request) (*session, error) {
	cs, _ := r.Context().Value(connKey).(*connState)
	h := r.Header.Get(wire.SessionHeader)
	var id [wire.SessionIDLen]byte
	if cs == nil || len(h) != 2*wire.SessionIDLen {
		return nil, errNoSession
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return nil, errNoSession
	}
	exp, err := cs.binding(r)
	if err != nil {
		return nil, errNoSession
	}
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	// A session id taken to another TLS connection does not work there:
	// its exporter differs.
	if ss == nil || subtle.ConstantTimeCompare(ss.exporter, exp) != 1 {
		return nil, errNoSession
	}
	return ss, nil
}

// sessionFrom is the request's session (guard put it there).
func sessionFrom(ctx context.Context) *session {
	ss, _ := ctx.Value(sessionKey).(*session)
	return ss
}

// connFrom is the request's connection state (Connect handlers get the
// http.Request's context).
func connFrom(ctx context.Context) *connState {
	cs, _ := ctx.Value(connKey).(*connState)
	return cs
}

// The handshake's two procedures. Both run on the connection's pending
// wire.AgentAuth; the exporter comes from the TLS session the request
// arrived on.

func (s *Server) challenge(ctx context.Context, req *connect.Request[wire.ChallengeRequest]) (*connect.Response[wire.ChallengeResponse], error) {
	cs := connFrom(ctx) // the top handler has worked out its exporter
	nonce := make([]byte, wire.NonceLen)
	rand.Read(nonce)
	a, err := wire.NewAgentAuth(s.cfg.Token, cs.exporter, nonce)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	na, err := a.Challenge(req.Msg.Version, req.Msg.ClientNonce)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	cs.mu.Lock()
	cs.pending = a // a new handshake replaces an unfinished one
	cs.mu.Unlock()
	return connect.NewResponse(&wire.ChallengeResponse{AgentNonce: na}), nil
}

func (s *Server) authenticate(ctx context.Context, req *connect.Request[wire.AuthenticateRequest]) (*connect.Response[wire.AuthenticateResponse], error) {
	cs := connFrom(ctx)
	cs.mu.Lock()
	a := cs.pending
	cs.pending = nil
	busy := cs.authBusy
	if a != nil && !busy {
		cs.authBusy = true
	}
	cs.mu.Unlock()
	if busy {
		return nil, connect.NewError(connect.CodeResourceExhausted, errors.New("authentication refused: one handshake at a time on a connection"))
	}
	if a == nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("authenticate without a challenge on this connection"))
	}
	defer func() {
		cs.mu.Lock()
		cs.authBusy = false
		cs.mu.Unlock()
	}()
	ss := &session{conn: cs, exporter: cs.exporter}
	rand.Read(ss.id[:])
	// A right proof gets in at once; a wrong one is answered only after
	// AuthFailureDelay, one failure at a time, with one handshake in
	// flight per connection: with the connection caps, a guesser gets
	// about four tries a second however many connections it opens.
	amac, err := a.Verify(req.Msg.ClientMAC, ss.id[:])
	if err != nil {
		s.failMu.Lock()
		defer s.failMu.Unlock()
		return nil, s.authFailed(req.Peer().Addr, err)
	}
	ss.touch()
	s.mu.Lock()
	if cs.closed {
		s.mu.Unlock()
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("the connection closed"))
	}
	if len(s.sessions) >= maxSessions {
		s.mu.Unlock()
		return nil, connect.NewError(connect.CodeResourceExhausted, errors.New("too many controller sessions on this agent"))
	}
	s.sessions[ss.id] = ss
	ss.clockKey = wire.ClockKey(s.cfg.Token, ss.id[:])
	s.clockKeys[wire.ClockID(ss.clockKey)] = ss
	cs.authed = true
	s.mu.Unlock()
	return connect.NewResponse(&wire.AuthenticateResponse{SessionID: ss.id[:], AgentMAC: amac}), nil
}

// authFailed logs, counts and delays a failed handshake; the caller holds
// the failure gate, so failures are answered one at a time, each after the
// full delay whether or not the client still waits.
func (s *Server) authFailed(peer string, err error) error {
	s.metrics.authFailures.Inc()
	s.cfg.Logf("auth failure from %s: %s", safetext.Terminal(peer), err)
	time.Sleep(s.cfg.AuthFailureDelay)
	return connect.NewError(connect.CodeUnauthenticated, err)
}

// everyInterval allows one event a second (a log line that a flood of
// refused connections would otherwise repeat).
type everyInterval struct {
	mu   sync.Mutex
	last time.Time
}

func (e *everyInterval) Allow() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := time.Now(); now.Sub(e.last) >= time.Second {
		e.last = now
		return true
	}
	return false
}
