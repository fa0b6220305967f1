// Package wire is the control protocol between the fabriclab controller and
// its agents (`fabriclab agent`): the messages, as plain Go structs with
// JSON tags, the JSON codec that carries them over Connect RPC, and the
// authentication handshake as a pure state machine.
//
// The protocol is Connect RPC over HTTP/2 with TLS 1.3. Messages are JSON
// (the structs below, encoding/json), not protobuf: there is no schema
// compiler in the build, and the messages are few and small. Times are
// int64 nanoseconds since the Unix epoch on the clock of the side that took
// them (an agent's events carry the agent's clock; the controller converts
// with its offset estimate); durations are int64 nanoseconds; rates are
// bits per second; sizes are bytes.
//
// A session starts with the handshake (see auth.go): Challenge, then
// Authenticate, on one TLS connection. Every later request carries the
// session id in the SessionHeader header and is accepted only on the TLS
// connection that authenticated it.
package wire

// Service is the Connect service name; procedures are "/" + Service + "/" + method.
const Service = "fabriclab.agent.v1.Agent"

// The procedures of the service. Events is server-streaming, the others are
// unary.
const (
	ProcChallenge    = "/" + Service + "/Challenge"
	ProcAuthenticate = "/" + Service + "/Authenticate"
	ProcInfo         = "/" + Service + "/Info"
	ProcClock        = "/" + Service + "/Clock"
	ProcPrepare      = "/" + Service + "/Prepare"
	ProcConnect      = "/" + Service + "/Connect"
	ProcStart        = "/" + Service + "/Start"
	ProcNotify       = "/" + Service + "/Notify"
	ProcEvents       = "/" + Service + "/Events"
	ProcCheckpoint   = "/" + Service + "/Checkpoint"
	ProcStop         = "/" + Service + "/Stop"
	ProcAbort        = "/" + Service + "/Abort"
)

// SessionHeader carries the session id (lower-case hex) on every request
// after the handshake.
const SessionHeader = "Fabriclab-Session"

// ProtocolVersion is the version of this protocol; the handshake refuses a
// peer that speaks another one rather than misreading its messages.
const ProtocolVersion = 2
