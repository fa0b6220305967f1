package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"time"

	"fabriclab/hosts/wire"
)

// alpnH2 is the only application protocol: HTTP/2.
const alpnH2 = "h2"

// serverTLS is the agent's TLS configuration: TLS 1.3 only (its exporter
// is what the handshake binds to), HTTP/2, the given certificate or an
// ephemeral one, and client certificates required when a CA is given.
func serverTLS(c Config) (*tls.Config, string, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{alpnH2}}
	mode := "ephemeral self-signed certificate"
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("loading the certificate %s / key %s: %v", c.CertFile, c.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
		mode = "certificate " + c.CertFile
	} else {
		cert, err := selfSigned(c.Listen)
		if err != nil {
			return nil, "", err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pool, err := loadCA(c.CAFile)
		if err != nil {
			return nil, "", err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		mode += ", client certificates required (mTLS, CA " + c.CAFile + ")"
	}
	return cfg, mode, nil
}

// selfSigned makes an ephemeral certificate for this process's lifetime.
// Nobody can verify it; it only gives the channel its encryption, and the
// token handshake, bound to the channel, gives the authentication.
func selfSigned(listen string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making an ephemeral TLS key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making an ephemeral certificate: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "fabriclab agent (ephemeral)"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, _, err := net.SplitHostPort(listen); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if host != "" && ip == nil {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making an ephemeral certificate: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func loadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the CA file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// clientTLS is the controller's TLS configuration for one agent. With a
// CA file the agent's certificate must verify against it for the host of
// address; without one it is not checked, and the token handshake, bound
// to this TLS session, is what proves the agent. *asked is set when the
// agent asks for a client certificate: under TLS 1.3 a client without one
// learns of its refusal only at its first read, as an error that the
// HTTP/2 transport may swallow, so Dial checks this instead.
func clientTLS(cfg ClientConfig, asked *bool) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{alpnH2}}
	if cfg.CAFile != "" {
		pool, err := loadCA(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(cfg.Address)
		if err != nil {
			return nil, fmt.Errorf("address %q: %v", cfg.Address, err)
		}
		t.RootCAs = pool
		t.ServerName = host
	} else {
		t.InsecureSkipVerify = true // see above: the handshake authenticates the agent
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("a client certificate needs both a cert file and a key file")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate %s / key %s: %v", cfg.CertFile, cfg.KeyFile, err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	t.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		*asked = true
		if len(t.Certificates) > 0 {
			return &t.Certificates[0], nil
		}
		return &tls.Certificate{}, nil
	}
	return t, nil
}

// exporter is the TLS session's channel binding (RFC 9266).
func exporter(cs tls.ConnectionState) ([]byte, error) {
	if cs.Version != tls.VersionTLS13 {
		return nil, errors.New("the TLS session is not TLS 1.3")
	}
	return cs.ExportKeyingMaterial(wire.ExporterLabel, nil, wire.ExporterLen)
}
