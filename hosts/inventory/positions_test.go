package inventory

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentsFile writes an agents file into dir whose head (the top-level
// keys before agents) is given, with one agent of hosts 0–1 on loopback.
func agentsFile(t *testing.T, dir, head string) string {
	t.Helper()
	p := filepath.Join(dir, "agents.yaml")
	src := head + "agents:\n  - address: 127.0.0.1:7470\n    hosts:\n      - {host: 0, data_ip: 127.0.0.1}\n      - {host: 1, data_ip: 127.0.0.2}\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An unusable token file is named at its token_file value in the agents
// file (file:line:column), with the path it resolved to (relative to the
// agents file), and never quotes the token file.
func TestReadTokenNamesItsLine(t *testing.T) {
	const secret = "short-secret"
	for _, c := range []struct {
		name  string
		write func(p string) // makes the token file at p
		want  string         // after "<agents>:3:13: token_file: <token path> "
	}{
		{"missing", func(string) {}, "does not exist"},
		{"others read it", func(p string) { os.WriteFile(p, []byte("0123456789abcdef0123\n"), 0o644); os.Chmod(p, 0o644) }, "can be read by others (mode 0644); chmod 600 it"},
		{"short", func(p string) { os.WriteFile(p, []byte(secret+"\n"), 0o600) }, "holds 12 bytes; a token needs at least 16"},
		{"directory", func(p string) { os.Mkdir(p, 0o700) }, "is not a regular file"},
		{"large", func(p string) { os.WriteFile(p, []byte(strings.Repeat(secret, 400)), 0o600) }, "is larger than 4 KiB (4800 bytes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "keys"), 0o700)
			tok := filepath.Join(dir, "keys", "token")
			c.write(tok)
			// token_file on line 3, relative to the agents file's directory.
			path := agentsFile(t, dir, "# the lab's agents\nscale: 1\ntoken_file: keys/token\n")
			inv, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = inv.ReadToken()
			want := path + ":3:13: token_file: " + tok + " " + c.want
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
			if strings.Contains(err.Error(), "short-sec") {
				t.Errorf("the error quotes the token file: %v", err)
			}
			if c.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v is not fs.ErrNotExist", err)
			}
		})
	}
}

// ReadToken of a path (the agent's --token-file) words its errors as it
// did: the path has no line.
func TestReadTokenFlagWords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if _, err := ReadToken(p); err == nil || err.Error() != "token file: stat "+p+": no such file or directory" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	os.Mkdir(p, 0o700)
	if _, err := ReadToken(p); err == nil || err.Error() != "token file "+p+" is not a regular file" {
		t.Errorf("directory: %v", err)
	}
	q := filepath.Join(dir, "big")
	os.WriteFile(q, make([]byte, 5000), 0o600)
	if _, err := ReadToken(q); err == nil || err.Error() != "token file: "+q+" is larger than 4 KiB (5000 bytes)" {
		t.Errorf("large: %v", err)
	}
}

// An inventory made in code (no positions) names the file alone.
func TestReadTokenWithoutPositions(t *testing.T) {
	inv := &Inventory{Path: "agents.yaml", TokenFile: filepath.Join(t.TempDir(), "none")}
	if _, err := inv.ReadToken(); err == nil || err.Error() != "agents.yaml: token_file: "+inv.TokenFile+" does not exist" {
		t.Errorf("got %v", err)
	}
	inv.TokenFile = ""
	if _, err := inv.ReadToken(); err == nil || !strings.HasPrefix(err.Error(), "agents.yaml: token_file: is required") {
		t.Errorf("no token file: %v", err)
	}
}

// A scenario host no agent runs: no line names it, so the error names the
// file at its agents key and says which hosts the agents run.
func TestCoverNamesTheFile(t *testing.T) {
	inv, err := Parse("/etc/fl/agents.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := "/etc/fl/agents.yaml:4:1: agents: no agent runs host 3 (the scenario has 5 hosts; map every host 0–4; the agents run hosts 0–2)"
	if err := inv.Cover(5); err == nil || err.Error() != want {
		t.Errorf("Cover(5):\n got %v\nwant %s", err, want)
	}
	one := &Inventory{Path: "agents.yaml", Agents: []Agent{{Address: "127.0.0.1:1", Hosts: []Host{{Host: 1}}}}}
	want = "agents.yaml: agents: no agent runs host 0 (the scenario has 1 host; map host 0; the agents run host 1)"
	if err := one.Cover(1); err == nil || err.Error() != want {
		t.Errorf("Cover(1) of an inventory made in code:\n got %v\nwant %s", err, want)
	}
}

func TestHostList(t *testing.T) {
	m := func(hs ...int) map[int]Placement {
		r := map[int]Placement{}
		for _, h := range hs {
			r[h] = Placement{}
		}
		return r
	}
	var even []int
	for h := 0; h < 40; h += 2 {
		even = append(even, h)
	}
	for _, c := range []struct {
		hosts []int
		want  string
	}{
		{nil, "no host"},
		{[]int{3}, "host 3"},
		{[]int{5, 0, 1, 2, 7, 8}, "hosts 0–2, 5, 7–8"},
		{[]int{0, 2}, "hosts 0, 2"},
		{even, "hosts 0, 2, 4, 6, 8, 10, 12, 14, … (20 hosts in all)"},
	} {
		if got := hostList(m(c.hosts...)); got != c.want {
			t.Errorf("%v: %q, want %q", c.hosts, got, c.want)
		}
	}
}

// The place of an error found by Parse is the value that caused it.
func TestParseErrorPositions(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n  - address: a:1\n    hosts: [{host: 1, data_ip: 10.0.0.2}]\n",
			"a.yaml:5:14: agents[1].address: a:1 is already the agent at line 3"},
		{"token_file: t\ncert_file: c\nagents: []\n", "a.yaml:2:12: cert_file: cert_file and key_file go together: give key_file too"},
		{"token_file: t\n\nkey_file:  k\nagents: []\n", "a.yaml:3:12: key_file: cert_file and key_file go together: give cert_file too"},
	} {
		if _, err := Parse("a.yaml", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// pemPair is a self-signed certificate and its key, PEM.
func pemPair(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
}

// ca_file, cert_file and key_file are checked by Load, before any agent
// is dialed, and a bad one is named at its value in the agents file,
// resolved against its directory, without quoting it.
func TestLoadChecksTLSFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := pemPair(t)
	_, otherKey := pemPair(t)
	files := map[string][]byte{
		"ca.pem": cert, "cert.pem": cert, "key.pem": key, "other-key.pem": otherKey,
		"junk.pem":  []byte("s3cret junk, no PEM here\n"),
		"odd.pem":   pem.EncodeToMemory(&pem.Block{Type: "S3CRET KIND", Bytes: []byte("s3cret")}),
		"badcert":   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("s3cret")}),
		"badkey":    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte("s3cret")}),
		"certaskey": cert,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "adir"), 0o700)
	at := func(s string) string { return filepath.Join(dir, s) }
	for _, c := range []struct{ head, want string }{
		{"token_file: t\nca_file: ca.pem\ncert_file: cert.pem\nkey_file: key.pem\n", ""},
		{"token_file: t\nca_file: none.pem\n", ":2:10: ca_file: " + at("none.pem") + " does not exist"},
		{"token_file: t\nca_file: adir\n", ":2:10: ca_file: " + at("adir") + " is a directory, not a regular file"},
		{"token_file: t\nca_file: junk.pem\n", ":2:10: ca_file: " + at("junk.pem") + " holds no PEM certificate"},
		{"token_file: t\ncert_file: none.pem\nkey_file: key.pem\n", ":2:12: cert_file: " + at("none.pem") + " does not exist"},
		{"token_file: t\ncert_file: cert.pem\nkey_file: none.pem\n", ":3:11: key_file: " + at("none.pem") + " does not exist"},
		{"token_file: t\ncert_file: junk.pem\nkey_file: none.pem\n", ":2:12: cert_file: " + at("junk.pem") + " holds no PEM certificate"},
		{"token_file: t\ncert_file: odd.pem\nkey_file: key.pem\n", ":2:12: cert_file: " + at("odd.pem") + " holds no PEM certificate"},
		{"token_file: t\ncert_file: badcert\nkey_file: key.pem\n", ":2:12: cert_file: " + at("badcert") + " holds a certificate that cannot be parsed"},
		{"token_file: t\ncert_file: cert.pem\nkey_file: odd.pem\n", ":3:11: key_file: " + at("odd.pem") + " holds no PEM private key"},
		{"token_file: t\ncert_file: cert.pem\nkey_file: certaskey\n", ":3:11: key_file: " + at("certaskey") + " holds no PEM private key"},
		{"token_file: t\ncert_file: cert.pem\nkey_file: badkey\n", ":3:11: key_file: " + at("badkey") + " cannot be used with cert_file " + at("cert.pem") + ": failed to parse private key"},
		{"token_file: t\ncert_file: cert.pem\nkey_file: other-key.pem\n", ":3:11: key_file: " + at("other-key.pem") + " cannot be used with cert_file " + at("cert.pem") + ": private key does not match public key"},
	} {
		path := agentsFile(t, dir, c.head)
		_, err := Load(path)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.head, err)
			}
			continue
		}
		if err == nil || err.Error() != path+c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.head, err, path+c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "S3CRET")) {
			t.Errorf("%q: the error quotes a file: %v", c.head, err)
		}
	}
	// Made in code: the file alone.
	inv := &Inventory{Path: "agents.yaml", CAFile: at("none.pem")}
	if err := inv.CheckTLSFiles(); err == nil || err.Error() != "agents.yaml: ca_file: "+at("none.pem")+" does not exist" {
		t.Errorf("made in code: %v", err)
	}
}
