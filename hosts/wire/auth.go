package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// The handshake. Both sides hold the same token; neither ever sends it.
// Each handshake runs on one TLS 1.3 connection and is bound to it by the
// connection's exported keying material (RFC 9266, "tls-exporter"): both
// ends of one TLS session compute the same Exporter value, the two ends of
// a man in the middle's two sessions do not.
//
//	client → agent  Challenge{version, Nc}          Nc: NonceLen random bytes
//	agent  → client {Na}                            Na: NonceLen random bytes
//	client → agent  Authenticate{ClientMAC}
//	agent  → client {SID, AgentMAC}                 SID: SessionIDLen random bytes
//
//	E         = TLS exporter (label ExporterLabel, no context, ExporterLen bytes)
//	ClientMAC = HMAC-SHA256(token, "fabriclab-agent-v1 client" ‖ Na ‖ Nc ‖ E)
//	AgentMAC  = HMAC-SHA256(token, "fabriclab-agent-v1 agent"  ‖ Na ‖ Nc ‖ E ‖ SID)
//
// The agent checks ClientMAC before it reveals anything derived from the
// token; the client checks AgentMAC before it uses the session, so it never
// prepares a run on an agent that does not hold the token. All fields have
// fixed lengths, so the concatenations are unambiguous. The session id then
// rides on every request (SessionHeader) and the agent accepts it only on a
// connection whose exporter is E.

// Lengths of the handshake's values, in bytes.
const (
	NonceLen     = 32
	ExporterLen  = 32
	SessionIDLen = 32
	MACLen       = sha256.Size
	// MinTokenLen is the shortest token accepted: 128 bits.
	MinTokenLen = 16
)

// ExporterLabel is the TLS exporter label of RFC 9266 (channel binding).
const ExporterLabel = "EXPORTER-Channel-Binding"

// The MACs' role labels, which keep a client's proof from ever being
// replayed as an agent's.
const (
	clientLabel = "fabriclab-agent-v1 client"
	agentLabel  = "fabriclab-agent-v1 agent"
)

// ErrWrongToken is what the agent answers a client whose proof fails: a
// wrong token, or a connection that is not the one the client's TLS
// session ended at (a man in the middle).
var ErrWrongToken = errors.New("authentication failed: wrong token")

// ErrAgentUnproven is what a client concludes when the agent's proof fails.
var ErrAgentUnproven = errors.New("authentication failed: the agent did not prove it holds the token (a wrong token on the agent, or not the agent)")

// IsAuthFailure reports whether err is a handshake that failed on the
// token — the agent refused the client's proof (ErrWrongToken) or the
// agent did not prove its own (ErrAgentUnproven) — rather than on the
// way there (a refused connection, a timeout). Such a failure is not
// transient: the same token fails again, and each try costs the agent a
// failure delay and a log line.
func IsAuthFailure(err error) bool {
	return errors.Is(err, ErrWrongToken) || errors.Is(err, ErrAgentUnproven)
}

// ClientMAC is the client's proof (see the transcript above).
func ClientMAC(token, agentNonce, clientNonce, exporter []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(clientLabel))
	m.Write(agentNonce)
	m.Write(clientNonce)
	m.Write(exporter)
	return m.Sum(nil)
}

// AgentMAC is the agent's proof (see the transcript above).
func AgentMAC(token, agentNonce, clientNonce, exporter, sessionID []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(agentLabel))
	m.Write(agentNonce)
	m.Write(clientNonce)
	m.Write(exporter)
	m.Write(sessionID)
	return m.Sum(nil)
}

func checkLen(what string, b []byte, n int) error {
	if len(b) != n {
		return fmt.Errorf("%s is %d bytes, want %d", what, len(b), n)
	}
	return nil
}

func checkToken(token []byte) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("token is %d bytes, want at least %d", len(token), MinTokenLen)
	}
	return nil
}

// handshake states, shared by both sides.
type authState int

const (
	stateNew authState = iota
	stateChallenged
	stateDone
	stateFailed
)

// AgentAuth is the agent's side of one handshake, a pure state machine:
// Challenge, then Verify, each once. Randomness comes in as arguments so
// tests get exact values.
type AgentAuth struct {
	token, exporter, agentNonce, clientNonce []byte
	state                                    authState
}

// NewAgentAuth starts a handshake on the TLS connection whose exporter is
// given, with the agent's fresh nonce.
func NewAgentAuth(token, exporter, agentNonce []byte) (*AgentAuth, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := checkLen("TLS exporter", exporter, ExporterLen); err != nil {
		return nil, err
	}
	if err := checkLen("agent nonce", agentNonce, NonceLen); err != nil {
		return nil, err
	}
	return &AgentAuth{token: token, exporter: exporter, agentNonce: agentNonce}, nil
}

// Challenge takes the client's nonce and returns the agent's.
func (a *AgentAuth) Challenge(version int, clientNonce []byte) (agentNonce []byte, err error) {
	if a.state != stateNew {
		a.state = stateFailed
		return nil, errors.New("handshake out of order: a second challenge")
	}
	if version != ProtocolVersion {
		a.state = stateFailed
		return nil, fmt.Errorf("protocol version %d, this agent speaks %d (use the same fabriclab version on both sides)", version, ProtocolVersion)
	}
	if err := checkLen("client nonce", clientNonce, NonceLen); err != nil {
		a.state = stateFailed
		return nil, err
	}
	a.clientNonce = clientNonce
	a.state = stateChallenged
	return a.agentNonce, nil
}

// Verify checks the client's proof in constant time. On success it returns
// the agent's proof for the new session id; on failure ErrWrongToken, and
// the handshake cannot be retried (the client starts a new one).
func (a *AgentAuth) Verify(clientMAC, sessionID []byte) (agentMAC []byte, err error) {
	if a.state != stateChallenged {
		a.state = stateFailed
		return nil, errors.New("handshake out of order: authenticate before challenge")
	}
	a.state = stateFailed
	if err := checkLen("session id", sessionID, SessionIDLen); err != nil {
		return nil, err
	}
	want := ClientMAC(a.token, a.agentNonce, a.clientNonce, a.exporter)
	if !hmac.Equal(want, clientMAC) {
		return nil, ErrWrongToken
	}
	a.state = stateDone
	return AgentMAC(a.token, a.agentNonce, a.clientNonce, a.exporter, sessionID), nil
}

// ClientAuth is the client's side of one handshake, a pure state machine:
// Respond, then Confirm, each once.
type ClientAuth struct {
	token, exporter, clientNonce, agentNonce []byte
	state                                    authState
}

// NewClientAuth starts a handshake on the TLS connection whose exporter is
// given, with the client's fresh nonce.
func NewClientAuth(token, exporter, clientNonce []byte) (*ClientAuth, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := checkLen("TLS exporter", exporter, ExporterLen); err != nil {
		return nil, err
	}
	if err := checkLen("client nonce", clientNonce, NonceLen); err != nil {
		return nil, err
	}
	return &ClientAuth{token: token, exporter: exporter, clientNonce: clientNonce}, nil
}

// Request is the opening message.
func (c *ClientAuth) Request() ChallengeRequest {
	return ChallengeRequest{Version: ProtocolVersion, ClientNonce: c.clientNonce}
}

// Respond takes the agent's nonce and returns the client's proof.
func (c *ClientAuth) Respond(agentNonce []byte) (clientMAC []byte, err error) {
	if c.state != stateNew {
		c.state = stateFailed
		return nil, errors.New("handshake out of order: a second response")
	}
	if err := checkLen("agent nonce", agentNonce, NonceLen); err != nil {
		c.state = stateFailed
		return nil, err
	}
	c.agentNonce = agentNonce
	c.state = stateChallenged
	return ClientMAC(c.token, c.agentNonce, c.clientNonce, c.exporter), nil
}

// Confirm checks the agent's proof for the session id it gave, in constant
// time: ErrAgentUnproven if it fails.
func (c *ClientAuth) Confirm(sessionID, agentMAC []byte) error {
	if c.state != stateChallenged {
		c.state = stateFailed
		return errors.New("handshake out of order: confirm before respond")
	}
	c.state = stateFailed
	if err := checkLen("session id", sessionID, SessionIDLen); err != nil {
		return fmt.Errorf("authentication failed: the agent's %w", err)
	}
	want := AgentMAC(c.token, c.agentNonce, c.clientNonce, c.exporter, sessionID)
	if !hmac.Equal(want, agentMAC) {
		return ErrAgentUnproven
	}
	c.state = stateDone
	return nil
}
