package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// seq is n bytes counting up from first: fixed nonces and exporters.
func seq(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

var (
	testToken = []byte("0123456789abcdef")
	agentN    = seq(0x00, NonceLen)
	clientN   = seq(0x20, NonceLen)
	exporter  = seq(0x40, ExporterLen)
	sessionID = seq(0x60, SessionIDLen)
)

// The expected MACs were computed independently (Python's hmac module) from
// the transcript in auth.go.
const (
	wantClientMAC = "20e02ee73bcf49b683c60e3278828d75434d23c63f4efbe826233c5a92afb633"
	wantAgentMAC  = "2f5b2a40e71612188b17e25e6b751776d88714f3be6c55f32cabb03fd49d2013"
	// the client's proof on a connection whose exporter starts at 0x41:
	// what a man in the middle's other TLS session gives.
	wantClientMACOtherChannel = "632e8d4073745e4ab6d8d22c3fec1e3d4ad9f744f7f7fe59a5cd59fabd03eecb"
)

func TestMACsExact(t *testing.T) {
	if got := hex.EncodeToString(ClientMAC(testToken, agentN, clientN, exporter)); got != wantClientMAC {
		t.Errorf("ClientMAC = %s, want %s", got, wantClientMAC)
	}
	if got := hex.EncodeToString(AgentMAC(testToken, agentN, clientN, exporter, sessionID)); got != wantAgentMAC {
		t.Errorf("AgentMAC = %s, want %s", got, wantAgentMAC)
	}
	if got := hex.EncodeToString(ClientMAC(testToken, agentN, clientN, seq(0x41, ExporterLen))); got != wantClientMACOtherChannel {
		t.Errorf("ClientMAC on another channel = %s, want %s", got, wantClientMACOtherChannel)
	}
}

// TestHandshake runs both state machines against each other with fixed
// values and checks every message exactly.
func TestHandshake(t *testing.T) {
	c, err := NewClientAuth(testToken, exporter, clientN)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAgentAuth(testToken, exporter, agentN)
	if err != nil {
		t.Fatal(err)
	}
	req := c.Request()
	if req.Version != ProtocolVersion || !bytes.Equal(req.ClientNonce, clientN) {
		t.Fatalf("Request = %+v", req)
	}
	na, err := a.Challenge(req.Version, req.ClientNonce)
	if err != nil || !bytes.Equal(na, agentN) {
		t.Fatalf("Challenge = %x, %v", na, err)
	}
	cmac, err := c.Respond(na)
	if err != nil || hex.EncodeToString(cmac) != wantClientMAC {
		t.Fatalf("Respond = %x, %v; want %s", cmac, err, wantClientMAC)
	}
	amac, err := a.Verify(cmac, sessionID)
	if err != nil || hex.EncodeToString(amac) != wantAgentMAC {
		t.Fatalf("Verify = %x, %v; want %s", amac, err, wantAgentMAC)
	}
	if err := c.Confirm(sessionID, amac); err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	// Each step is single-use.
	if _, err := a.Verify(cmac, sessionID); err == nil {
		t.Error("a second Verify succeeded")
	}
	if err := c.Confirm(sessionID, amac); err == nil {
		t.Error("a second Confirm succeeded")
	}
}

func TestWrongClientToken(t *testing.T) {
	a, _ := NewAgentAuth(testToken, exporter, agentN)
	if _, err := a.Challenge(ProtocolVersion, clientN); err != nil {
		t.Fatal(err)
	}
	bad := ClientMAC([]byte("0123456789abcdeX"), agentN, clientN, exporter)
	amac, err := a.Verify(bad, sessionID)
	if !errors.Is(err, ErrWrongToken) || amac != nil {
		t.Fatalf("Verify(wrong token) = %x, %v; want ErrWrongToken and no agent proof", amac, err)
	}
	if err.Error() != "authentication failed: wrong token" {
		t.Errorf("message %q", err)
	}
	// No retry on the same handshake, even with the right proof.
	if _, err := a.Verify(ClientMAC(testToken, agentN, clientN, exporter), sessionID); err == nil {
		t.Error("Verify after a failure succeeded")
	}
}

// TestOtherChannel: a man in the middle holds two TLS sessions, so the
// client's proof is bound to an exporter the agent does not see.
func TestOtherChannel(t *testing.T) {
	a, _ := NewAgentAuth(testToken, exporter, agentN)
	a.Challenge(ProtocolVersion, clientN)
	relayed, _ := hex.DecodeString(wantClientMACOtherChannel)
	if _, err := a.Verify(relayed, sessionID); !errors.Is(err, ErrWrongToken) {
		t.Fatalf("Verify(proof from another channel) = %v, want ErrWrongToken", err)
	}
}

func TestWrongAgentToken(t *testing.T) {
	c, _ := NewClientAuth(testToken, exporter, clientN)
	c.Respond(agentN)
	impostor := AgentMAC([]byte("fedcba9876543210"), agentN, clientN, exporter, sessionID)
	if err := c.Confirm(sessionID, impostor); !errors.Is(err, ErrAgentUnproven) {
		t.Fatalf("Confirm(impostor) = %v, want ErrAgentUnproven", err)
	}
	// A proof for another session id does not confirm this one.
	c, _ = NewClientAuth(testToken, exporter, clientN)
	c.Respond(agentN)
	real, _ := hex.DecodeString(wantAgentMAC)
	if err := c.Confirm(seq(0x61, SessionIDLen), real); !errors.Is(err, ErrAgentUnproven) {
		t.Fatalf("Confirm(swapped session id) = %v, want ErrAgentUnproven", err)
	}
	// Nor does the client's own proof reflected back.
	c, _ = NewClientAuth(testToken, exporter, clientN)
	cmac, _ := c.Respond(agentN)
	if err := c.Confirm(sessionID, cmac); !errors.Is(err, ErrAgentUnproven) {
		t.Fatalf("Confirm(reflected client proof) = %v, want ErrAgentUnproven", err)
	}
}

func TestHandshakeChecks(t *testing.T) {
	if _, err := NewAgentAuth([]byte("short"), exporter, agentN); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short token: %v", err)
	}
	if _, err := NewClientAuth(testToken, exporter[:8], clientN); err == nil {
		t.Error("short exporter accepted")
	}
	a, _ := NewAgentAuth(testToken, exporter, agentN)
	if _, err := a.Challenge(ProtocolVersion+1, clientN); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("other version: %v", err)
	}
	a, _ = NewAgentAuth(testToken, exporter, agentN)
	if _, err := a.Verify(make([]byte, MACLen), sessionID); err == nil {
		t.Error("Verify before Challenge succeeded")
	}
	a, _ = NewAgentAuth(testToken, exporter, agentN)
	if _, err := a.Challenge(ProtocolVersion, clientN[:5]); err == nil {
		t.Error("short client nonce accepted")
	}
}

func TestCodec(t *testing.T) {
	var c Codec
	b, err := c.Marshal(&StartRequest{At: 1733000000123456789})
	if err != nil || string(b) != `{"at_ns":1733000000123456789}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var s StartRequest
	if err := c.Unmarshal(b, &s); err != nil || s.At != 1733000000123456789 {
		t.Fatalf("Unmarshal = %+v, %v", s, err)
	}
	if err := c.Unmarshal([]byte(`{"at_ns":1,"max_rate":5}`), &s); err == nil {
		t.Error("an unknown field was accepted")
	}
	var e Empty
	if err := c.Unmarshal(nil, &e); err != nil {
		t.Errorf("empty body: %v", err)
	}
	var r RunSpec
	if err := c.Unmarshal([]byte(`{"run":"r1","duration_ns":5,"endpoints":[{"id":1,"addr":"127.0.0.1:9000"}],"local":[1]}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Endpoints[0].Addr.String() != "127.0.0.1:9000" {
		t.Errorf("endpoint address %v", r.Endpoints[0].Addr)
	}
}
