package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"fabriclab/hosts/wire"
)

func TestWrongTokenRefused(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new})
	wrong := []byte("not-the-token-at-all")
	_, err := Dial(context.Background(), ClientConfig{Address: a.addr, Token: wrong})
	want := "agent " + a.addr + ": authentication failed: wrong token"
	if err == nil || err.Error() != want || !wire.IsAuthFailure(err) {
		t.Fatalf("Dial with a wrong token: %v (an authentication failure: %v), want %q", err, wire.IsAuthFailure(err), want)
	}
	log := a.log.String()
	if !strings.Contains(log, "auth failure from 127.0.0.1:") || !strings.Contains(log, "wrong token") {
		t.Errorf("log does not name the failure and its address:\n%s", log)
	}
	if strings.Contains(log, string(wrong)) || strings.Contains(log, string(testToken)) {
		t.Errorf("log shows a token:\n%s", log)
	}
	if n := strings.Count(log, "\n") + 1; n != 1 {
		t.Errorf("%d log lines for one failure:\n%s", n, log)
	}
}

// TestRefusedConnectionNotAuthFailure: a dial that never reaches the
// handshake is not an authentication failure (the controller may try it
// again).
func TestRefusedConnectionNotAuthFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(context.Background(), ClientConfig{Address: addr, Token: testToken, Timeout: 2 * time.Second})
	if err == nil || wire.IsAuthFailure(err) {
		t.Fatalf("Dial to nothing: %v (an authentication failure: %v)", err, wire.IsAuthFailure(err))
	}
}

// TestFailedAuthDelayed: failures wait their turn, so guesses are slow.
func TestFailedAuthDelayed(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new, AuthFailureDelay: 150 * time.Millisecond})
	t0 := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Dial(context.Background(), ClientConfig{Address: a.addr, Token: []byte("guess-guess-guess-1")})
		}()
	}
	wg.Wait()
	if d := time.Since(t0); d < 450*time.Millisecond {
		t.Errorf("3 failed handshakes took %v, want ≥ 450ms (one at a time)", d)
	}
	// A right token is not held up.
	t1 := time.Now()
	dialAgent(t, a.addr, testToken)
	if d := time.Since(t1); d > 100*time.Millisecond {
		t.Errorf("a good handshake took %v", d)
	}
}

// TestImpostorAgent: a server that does not hold the token cannot make
// the client use it.
func TestImpostorAgent(t *testing.T) {
	type tlsKey struct{}
	opts := connect.WithCodec(wire.Codec{})
	mux := http.NewServeMux()
	var na = make([]byte, wire.NonceLen)
	var nc []byte
	mux.Handle(wire.ProcChallenge, connect.NewUnaryHandler(wire.ProcChallenge, func(ctx context.Context, r *connect.Request[wire.ChallengeRequest]) (*connect.Response[wire.ChallengeResponse], error) {
		nc = r.Msg.ClientNonce
		return connect.NewResponse(&wire.ChallengeResponse{AgentNonce: na}), nil
	}, opts))
	var prepared bool
	mux.Handle(wire.ProcAuthenticate, connect.NewUnaryHandler(wire.ProcAuthenticate, func(ctx context.Context, r *connect.Request[wire.AuthenticateRequest]) (*connect.Response[wire.AuthenticateResponse], error) {
		cs := ctx.Value(tlsKey{}).(*tls.ConnectionState)
		exp, _ := cs.ExportKeyingMaterial(wire.ExporterLabel, nil, wire.ExporterLen)
		sid := make([]byte, wire.SessionIDLen)
		// The impostor's best: the transcript done right, with its own token.
		mac := wire.AgentMAC([]byte("the-impostors-own-token"), na, nc, exp, sid)
		return connect.NewResponse(&wire.AuthenticateResponse{SessionID: sid, AgentMAC: mac}), nil
	}, opts))
	mux.Handle(wire.ProcPrepare, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { prepared = true }))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tlsKey{}, r.TLS)))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")

	_, err := Dial(context.Background(), ClientConfig{Address: addr, Token: testToken})
	if err == nil || !strings.Contains(err.Error(), "authentication failed: the agent did not prove it holds the token") || !wire.IsAuthFailure(err) {
		t.Fatalf("Dial to an impostor: %v (an authentication failure: %v)", err, wire.IsAuthFailure(err))
	}
	if prepared {
		t.Error("the client sent a request past the failed handshake")
	}
}

// TestManInTheMiddle: a relay that terminates TLS on both sides (two TLS
// sessions) passes every byte of the handshake, and still fails it.
func TestManInTheMiddle(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new})
	cert, err := selfSigned("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer down.Close()
				up, err := tls.Dial("tcp", a.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, down)
				io.Copy(down, up)
			}()
		}
	}()
	_, err = Dial(context.Background(), ClientConfig{Address: ln.Addr().String(), Token: testToken})
	if err == nil || !strings.Contains(err.Error(), "authentication failed: wrong token") {
		t.Fatalf("Dial through a TLS-terminating relay: %v, want the agent to refuse", err)
	}
}

// TestSessionBoundToConnection: a session id does not work on another
// TLS connection, even one with its own valid session.
func TestSessionBoundToConnection(t *testing.T) {
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new})
	c1 := dialAgent(t, a.addr, testToken)
	c2 := dialAgent(t, a.addr, testToken)
	if _, err := c2.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	c2.sid = c1.sid
	_, err := c2.Info(context.Background())
	want := "agent " + a.addr + ": no valid session on this connection (authenticate first)"
	if err == nil || err.Error() != want {
		t.Fatalf("c1's session on c2's connection: %v, want %q", err, want)
	}
	c2.sid = ""
	if _, err := c2.Info(context.Background()); err == nil {
		t.Fatal("a request without a session was served")
	}
	if _, err := c1.Info(context.Background()); err != nil {
		t.Errorf("c1 on its own connection: %v", err)
	}
}

// pki is a test CA with a server and a client certificate, as files.
type pki struct {
	dir                                              string
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	p := pki{dir: dir}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.ca = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(key)
		return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	a := startAgent(t, Config{NewPlane: (&fakePlanes{}).new, CertFile: p.serverCert, KeyFile: p.serverKey, CAFile: p.ca})
	if !strings.Contains(a.TLSMode(), "client certificates required") {
		t.Errorf("TLS mode %q", a.TLSMode())
	}
	// No client certificate: refused by TLS, before any handshake message.
	_, err := Dial(context.Background(), ClientConfig{Address: a.addr, Token: testToken, CAFile: p.ca})
	if err == nil || err.Error() != "agent "+a.addr+": the agent requires a client certificate (mTLS): give the controller a cert and key signed by the agent's CA" {
		t.Fatalf("Dial without a client certificate: %v", err)
	}
	// A certificate the agent's CA did not sign: refused too.
	other := newPKI(t)
	_, err = Dial(context.Background(), ClientConfig{Address: a.addr, Token: testToken, CAFile: p.ca, CertFile: other.clientCert, KeyFile: other.clientKey})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Dial with a foreign client certificate: %v", err)
	}
	// The client verifies the agent against its CA: another CA fails.
	_, err = Dial(context.Background(), ClientConfig{Address: a.addr, Token: testToken, CAFile: other.ca, CertFile: p.clientCert, KeyFile: p.clientKey})
	if err == nil || !strings.Contains(err.Error(), "TLS handshake failed") {
		t.Fatalf("Dial with the wrong CA: %v", err)
	}
	c, err := Dial(context.Background(), ClientConfig{Address: a.addr, Token: testToken, CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey})
	if err != nil {
		t.Fatalf("Dial with a good certificate: %v", err)
	}
	defer c.Close()
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	// mTLS does not replace the token.
	_, err = Dial(context.Background(), ClientConfig{Address: a.addr, Token: []byte("wrong-token-wrong-token"), CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey})
	if err == nil || !strings.HasSuffix(err.Error(), "authentication failed: wrong token") {
		t.Fatalf("Dial with a certificate and a wrong token: %v", err)
	}
}
