package agent

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/wire"
)

// ClientConfig is how the controller reaches one agent.
type ClientConfig struct {
	Address string // host:port of the agent's control channel
	Token   []byte // the shared token
	// CAFile, when given, verifies the agent's certificate; CertFile and
	// KeyFile are the client certificate for an agent that requires one
	// (mTLS).
	CAFile, CertFile, KeyFile string
	// Timeout bounds the dial and each unary call whose context has no
	// earlier deadline (0: 10 s).
	Timeout time.Duration
}

// DefaultTimeout is ClientConfig.Timeout's default.
const DefaultTimeout = 10 * time.Second

// Client is one authenticated session with an agent. It holds one TLS
// connection, which the session is bound to: if the connection breaks the
// session is over (every call fails) and the agent aborts the session's
// run. Methods may be called concurrently.
type Client struct {
	addr    string
	timeout time.Duration
	sid     string
	tc      *tls.Conn
	tr      *http.Transport

	info       *connect.Client[wire.Empty, wire.Info]
	clock      *connect.Client[wire.Empty, wire.ClockResponse]
	prepare    *connect.Client[wire.RunSpec, wire.Empty]
	connect    *connect.Client[wire.Empty, wire.ConnectResponse]
	start      *connect.Client[wire.StartRequest, wire.Empty]
	notify     *connect.Client[wire.NotifyRequest, wire.Empty]
	events     *connect.Client[wire.Empty, wire.EventBatch]
	checkpoint *connect.Client[wire.Empty, wire.Checkpoint]
	stop       *connect.Client[wire.Empty, wire.Final]
	abort      *connect.Client[wire.Empty, wire.Empty]

	sentCert bool // the agent asked for, and got, a client certificate

	// The clock echo (wire.ClockRequest): its key, its socket (nil until
	// first used), and whether it failed, so that Clock falls back to the
	// control channel for good.
	clockKey  []byte
	clockConn net.Conn
	clockOff  bool
	clockMu   sync.Mutex

	mu        sync.Mutex
	eventsErr error
}

// Dial connects to the agent over TLS and runs the mutual handshake: on
// success both sides have proven they hold the token, on this TLS
// connection. Errors are one line that says which step failed.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	addr := cfg.Address
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("agent %q: not a host:port address: %v", addr, err)
	}
	if len(cfg.Token) < wire.MinTokenLen {
		return nil, fmt.Errorf("agent %s: the token is %d bytes; it needs at least %d", addr, len(cfg.Token), wire.MinTokenLen)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var asked bool
	tcfg, err := clientTLS(cfg, &asked)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %v", addr, err)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("agent %s: cannot connect: %v", addr, dialReason(err))
	}
	tc := tls.Client(raw, tcfg)
	if err := tc.HandshakeContext(dctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("agent %s: TLS handshake failed: %v%s", addr, err, tlsHint(err))
	}
	if asked && cfg.CertFile == "" {
		tc.Close()
		return nil, fmt.Errorf("agent %s: the agent requires a client certificate (mTLS): give the controller a cert and key signed by the agent's CA", addr)
	}
	cs := tc.ConnectionState()
	if cs.NegotiatedProtocol != alpnH2 {
		tc.Close()
		return nil, fmt.Errorf("agent %s: the server does not speak HTTP/2 (is it a fabriclab agent?)", addr)
	}
	exp, err := exporter(cs)
	if err != nil {
		tc.Close()
		return nil, fmt.Errorf("agent %s: TLS channel binding: %v", addr, err)
	}

	c := &Client{addr: addr, timeout: timeout, tc: tc, sentCert: asked}
	// The transport's one connection is the one just made: the session
	// will be bound to it, so it must never dial another.
	var once sync.Once
	c.tr = &http.Transport{
		DialTLSContext: func(context.Context, string, string) (net.Conn, error) {
			var conn net.Conn
			once.Do(func() { conn = tc })
			if conn == nil {
				return nil, errors.New("the connection to the agent was lost (the session ended with it)")
			}
			return conn, nil
		},
		ForceAttemptHTTP2: true,
		HTTP2:             &http.HTTP2Config{SendPingTimeout: 5 * time.Second, PingTimeout: 5 * time.Second},
	}
	c.newClients(&http.Client{Transport: c.tr})
	if err := c.handshake(dctx, cfg.Token, exp); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) newClients(hc *http.Client) {
	base := "https://" + c.addr
	opts := []connect.ClientOption{connect.WithCodec(wire.Codec{}), connect.WithReadMaxBytes(maxMessage)}
	c.info = connect.NewClient[wire.Empty, wire.Info](hc, base+wire.ProcInfo, opts...)
	c.clock = connect.NewClient[wire.Empty, wire.ClockResponse](hc, base+wire.ProcClock, opts...)
	c.prepare = connect.NewClient[wire.RunSpec, wire.Empty](hc, base+wire.ProcPrepare, opts...)
	c.connect = connect.NewClient[wire.Empty, wire.ConnectResponse](hc, base+wire.ProcConnect, opts...)
	c.start = connect.NewClient[wire.StartRequest, wire.Empty](hc, base+wire.ProcStart, opts...)
	c.notify = connect.NewClient[wire.NotifyRequest, wire.Empty](hc, base+wire.ProcNotify, opts...)
	c.events = connect.NewClient[wire.Empty, wire.EventBatch](hc, base+wire.ProcEvents, opts...)
	c.checkpoint = connect.NewClient[wire.Empty, wire.Checkpoint](hc, base+wire.ProcCheckpoint, opts...)
	c.stop = connect.NewClient[wire.Empty, wire.Final](hc, base+wire.ProcStop, opts...)
	c.abort = connect.NewClient[wire.Empty, wire.Empty](hc, base+wire.ProcAbort, opts...)
}

// handshake runs wire's ClientAuth over Challenge and Authenticate.
func (c *Client) handshake(ctx context.Context, token, exp []byte) error {
	hc := &http.Client{Transport: c.tr}
	base := "https://" + c.addr
	opts := []connect.ClientOption{connect.WithCodec(wire.Codec{}), connect.WithReadMaxBytes(maxHandshakeMessage)}
	chal := connect.NewClient[wire.ChallengeRequest, wire.ChallengeResponse](hc, base+wire.ProcChallenge, opts...)
	auth := connect.NewClient[wire.AuthenticateRequest, wire.AuthenticateResponse](hc, base+wire.ProcAuthenticate, opts...)

	nonce := make([]byte, wire.NonceLen)
	rand.Read(nonce)
	ca, err := wire.NewClientAuth(token, exp, nonce)
	if err != nil {
		return fmt.Errorf("agent %s: %v", c.addr, err)
	}
	req := ca.Request()
	cres, err := chal.CallUnary(ctx, connect.NewRequest(&req))
	if err != nil {
		err = c.fail("authentication challenge", err)
		if c.sentCert && !strings.Contains(err.Error(), "certificate") {
			// The agent's TLS alert may not reach this error.
			err = fmt.Errorf("%v (the agent may have refused the client certificate: is it signed by the agent's CA?)", err)
		}
		return err
	}
	mac, err := ca.Respond(cres.Msg.AgentNonce)
	if err != nil {
		return fmt.Errorf("agent %s: authentication failed: the agent's %v", c.addr, err)
	}
	ares, err := auth.CallUnary(ctx, connect.NewRequest(&wire.AuthenticateRequest{ClientMAC: mac}))
	if err != nil {
		if connect.CodeOf(err) == connect.CodeUnauthenticated {
			// The agent refused the proof: the tokens differ (or a relay
			// terminates TLS). The agent's own words, and
			// wire.IsAuthFailure, so that the controller does not retry.
			return &authError{msg: c.fail("authentication", err).Error(), is: wire.ErrWrongToken}
		}
		return c.fail("authentication", err)
	}
	if err := ca.Confirm(ares.Msg.SessionID, ares.Msg.AgentMAC); err != nil {
		return fmt.Errorf("agent %s: %w", c.addr, err)
	}
	c.sid = hex.EncodeToString(ares.Msg.SessionID)
	c.clockKey = wire.ClockKey(token, ares.Msg.SessionID)
	return nil
}

// authError is a handshake the agent refused: its one line as the agent
// put it, and wire.ErrWrongToken to errors.Is (wire.IsAuthFailure).
type authError struct {
	msg string
	is  error
}

func (e *authError) Error() string { return e.msg }
func (e *authError) Unwrap() error { return e.is }

// Address is the agent's address, as dialled.
func (c *Client) Address() string { return c.addr }

// call is one unary call in the session, bounded by the client's timeout.
func call[Req, Res any](ctx context.Context, c *Client, cl *connect.Client[Req, Res], what string, msg *Req) (*Res, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req := connect.NewRequest(msg)
	req.Header().Set(wire.SessionHeader, c.sid)
	res, err := cl.CallUnary(ctx, req)
	if err != nil {
		return nil, c.fail(what, err)
	}
	return res.Msg, nil
}

// Info describes the agent.
func (c *Client) Info(ctx context.Context) (wire.Info, error) {
	r, err := call(ctx, c, c.info, "info", &wire.Empty{})
	if err != nil {
		return wire.Info{}, err
	}
	return *r, nil
}

// Clock is the agent's wall clock, Unix ns, taken while handling the call.
func (c *Client) Clock(ctx context.Context) (int64, error) {
	if t, ok := c.clockEcho(); ok {
		return t, nil
	}
	r, err := call(ctx, c, c.clock, "clock", &wire.Empty{})
	if err != nil {
		return 0, err
	}
	return r.T, nil
}

// Prepare checks the run against the agent's limits and builds its data
// plane; a refusal is the agent's one-line reason.
func (c *Client) Prepare(ctx context.Context, spec wire.RunSpec) error {
	_, err := call(ctx, c, c.prepare, "prepare", &spec)
	return err
}

// Connect dials the agent's connections of the prepared run and lists
// those that failed.
func (c *Client) Connect(ctx context.Context) ([]wire.ConnFailure, error) {
	r, err := call(ctx, c, c.connect, "connect", &wire.Empty{})
	if err != nil {
		return nil, err
	}
	return r.Failures, nil
}

// Start starts the run's streams and UDP flows at atAgentUnixNano on the
// agent's clock, until that plus the run's duration.
func (c *Client) Start(ctx context.Context, atAgentUnixNano int64) error {
	_, err := call(ctx, c, c.start, "start", &wire.StartRequest{At: atAgentUnixNano})
	return err
}

// Notify relays deliveries the agent's share of the DAG waits for but
// cannot see itself.
func (c *Client) Notify(ctx context.Context, msgs []int64) error {
	_, err := call(ctx, c, c.notify, "notify", &wire.NotifyRequest{Msgs: msgs})
	return err
}

// Events streams the run's message events until the run ends or ctx is
// done; then the channel closes (EventsErr says why, if not cleanly).
func (c *Client) Events(ctx context.Context) (<-chan wire.Event, error) {
	req := connect.NewRequest(&wire.Empty{})
	req.Header().Set(wire.SessionHeader, c.sid)
	st, err := c.events.CallServerStream(ctx, req)
	if err != nil {
		return nil, c.fail("events", err)
	}
	// The agent opens the stream with an empty batch: a refusal shows
	// here, not as a channel that just closes.
	if !st.Receive() {
		err := st.Err()
		st.Close()
		if err == nil {
			err = errors.New("the stream ended at once")
		}
		return nil, c.fail("events", err)
	}
	ch := make(chan wire.Event, 1024)
	go func() {
		defer close(ch)
		defer st.Close()
		for {
			for _, ev := range st.Msg().Events {
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
			if !st.Receive() {
				break
			}
		}
		if err := st.Err(); err != nil && ctx.Err() == nil {
			c.mu.Lock()
			c.eventsErr = c.fail("events", err)
			c.mu.Unlock()
		}
	}()
	return ch, nil
}

// EventsErr is why the last Events stream ended, nil if it ended with
// the run or its context.
func (c *Client) EventsErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eventsErr
}

// Checkpoint is the run's counters on the agent now.
func (c *Client) Checkpoint(ctx context.Context) (wire.Checkpoint, error) {
	r, err := call(ctx, c, c.checkpoint, "checkpoint", &wire.Empty{})
	if err != nil {
		return wire.Checkpoint{}, err
	}
	return *r, nil
}

// Stop ends the run: its final counters and the host's counters before
// and after; the agent is then ready for the next run.
func (c *Client) Stop(ctx context.Context) (wire.Final, error) {
	r, err := call(ctx, c, c.stop, "stop", &wire.Empty{})
	if err != nil {
		return wire.Final{}, err
	}
	return *r, nil
}

// AbortTimeout bounds Abort.
const AbortTimeout = time.Second

// Abort closes the run's data plane at once. It is meant for Ctrl-C: it
// runs even when ctx is already cancelled, and returns within
// AbortTimeout.
func (c *Client) Abort(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbortTimeout)
	defer cancel()
	req := connect.NewRequest(&wire.Empty{})
	req.Header().Set(wire.SessionHeader, c.sid)
	if _, err := c.abort.CallUnary(ctx, req); err != nil {
		return c.fail("abort", err)
	}
	return nil
}

// Close ends the session and its connection; a run it still owns is
// aborted by the agent.
func (c *Client) Close() error {
	c.tr.CloseIdleConnections()
	c.clockMu.Lock()
	if c.clockConn != nil {
		c.clockConn.Close()
	}
	c.clockMu.Unlock()
	return c.tc.Close()
}

// fail is a call's error as one line: the agent's own message when it
// answered (a refusal, a failed handshake), else what went wrong on the
// way, naming the call.
func (c *Client) fail(what string, err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg := oneLine(ce.Message())
		switch ce.Code() {
		case connect.CodeDeadlineExceeded:
			return fmt.Errorf("agent %s: %s: %w", c.addr, what, wire.ErrNoAnswer)
		case connect.CodeCanceled:
			return fmt.Errorf("agent %s: %s: cancelled", c.addr, what)
		case connect.CodeUnavailable, connect.CodeUnknown:
			return fmt.Errorf("agent %s: %s: %s%s", c.addr, what, msg, tlsHint(err))
		}
		if !connect.IsWireError(err) {
			return fmt.Errorf("agent %s: %s: %s", c.addr, what, msg)
		}
		return fmt.Errorf("agent %s: %s", c.addr, msg)
	}
	return fmt.Errorf("agent %s: %s: %s", c.addr, what, oneLine(err.Error()))
}

// tlsHint explains the TLS alerts a misconfigured pair gets.
func tlsHint(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "unknown certificate authority") || strings.Contains(s, "bad certificate"):
		return " (a certificate is not signed by the CA the other side trusts)"
	}
	return ""
}

// dialReason drops the "dial tcp …:" prefix, which repeats the address.
func dialReason(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// clockEcho asks the agent's clock by one authenticated UDP round trip
// (ok false: no answer within 200 ms — a firewall, an old agent — and the
// echo is not tried again).
func (c *Client) clockEcho() (int64, bool) {
	c.clockMu.Lock()
	defer c.clockMu.Unlock()
	if c.clockOff || c.clockKey == nil {
		return 0, false
	}
	if c.clockConn == nil {
		conn, err := net.Dial("udp", c.addr)
		if err != nil {
			c.clockOff = true
			return 0, false
		}
		c.clockConn = conn
	}
	var nb [8]byte
	rand.Read(nb[:])
	nonce := binary.BigEndian.Uint64(nb[:])
	if _, err := c.clockConn.Write(wire.ClockRequest(c.clockKey, nonce)); err != nil {
		c.clockOff = true
		return 0, false
	}
	buf := make([]byte, 64)
	deadline := time.Now().Add(200 * time.Millisecond)
	for {
		c.clockConn.SetReadDeadline(deadline)
		n, err := c.clockConn.Read(buf)
		if err != nil {
			c.clockOff = true
			return 0, false
		}
		if t, ok := wire.ParseClockReply(c.clockKey, buf[:n], nonce); ok {
			return t, true
		}
		// A stale or forged datagram: keep reading until the deadline.
	}
}
