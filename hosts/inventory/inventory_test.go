package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const good = `# two agents, three hosts
token_file: token
scale: 1/1000
agents:
  - address: 10.0.0.5:7470
    hosts:
      - {host: 0, data_ip: 192.168.1.5}
      - {host: 1, data_ip: 192.168.1.6}
  - address: "[fd00::7]:7470"
    hosts:
      - host: 2
        data_ip: fd00::1:7
`

func TestParse(t *testing.T) {
	inv, err := Parse("/etc/fl/agents.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if inv.TokenFile != "/etc/fl/token" || inv.Scale != 0.001 || len(inv.Agents) != 2 {
		t.Fatalf("got %+v", inv)
	}
	a := inv.Agents[0]
	if a.Address != "10.0.0.5:7470" || len(a.Hosts) != 2 || a.Hosts[1].Host != 1 || a.Hosts[1].DataIP.String() != "192.168.1.6" || a.Line != 5 {
		t.Errorf("agent 0: %+v", a)
	}
	if h := inv.Agents[1].Hosts[0]; h.Host != 2 || h.DataIP.String() != "fd00::1:7" {
		t.Errorf("agent 1 host: %+v", h)
	}
	if err := inv.Cover(3); err != nil {
		t.Error(err)
	}
	if err := inv.Cover(4); err == nil || !strings.Contains(err.Error(), "no agent runs host 3") {
		t.Errorf("Cover(4) = %v", err)
	}
	if p := inv.HostAgent()[2]; p.Agent != 1 {
		t.Errorf("host 2 on agent %d", p.Agent)
	}
}

func TestParseByteOrderMark(t *testing.T) {
	inv, err := Parse("agents.yaml", []byte("\ufeff"+good))
	if err != nil || len(inv.Agents) != 2 || inv.Agents[0].Line != 5 {
		t.Fatalf("%+v, %v", inv, err)
	}
	// The nesting guard reads the text without the mark too (with it, the
	// first line was one scalar to the guard and deep brackets to the
	// parser, whose cost grows as their square).
	_, err = Parse("agents.yaml", []byte("\ufeff"+strings.Repeat("[", 200)))
	if err == nil || !strings.HasPrefix(err.Error(), "agents.yaml:1:65: nested too deeply") {
		t.Errorf("deep brackets after a byte-order mark: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"agents: []\n", "a.yaml:1:1: token_file: is required"},
		{"token_file: t\n", "a.yaml:1:1: agents: needs a list of agents"},
		{"token_file: t\nport: 3\nagents: []\n", "a.yaml:2:1: \"port\": unknown key"},
		{"token_file: t\nagents: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", "nest"},
		{"token_file: t\n" + strings.Repeat("k", 100000) + ": 1\n", "unknown key"},
		{"token_file: t\ntoken_file: u\n", "a.yaml:2:1: not valid YAML: mapping key \"token_file\" already defined"},
		{"token_file: t\nscale: 2\nagents: []\n", "a.yaml:2:8: scale: must be in (0, 1], got 2"},
		{"token_file: t\nscale: 1/0\nagents: []\n", "a.yaml:2:8: scale: must be a fraction"},
		{"token_file: t\nagents:\n  - address: nowhere\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n", "a.yaml:3:14: agents[0].address: must be host:port"},
		{"token_file: t\nagents:\n  - address: a:0\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n", "agents[0].address: must be host:port with a port 1–65535"},
		{"token_file: t\nagents:\n  - address: a:1\n", "a.yaml:3:5: agents[0].hosts: needs a list"},
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: x, data_ip: 10.0.0.1}]\n", "agents[0].hosts[0].host: must be a host number"},
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0, data_ip: 10.0.0.300}]\n", "agents[0].hosts[0].data_ip: must be an IP address"},
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0}]\n", "agents[0].hosts[0].data_ip: is required"},
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n  - address: b:1\n    hosts: [{host: 0, data_ip: 10.0.0.2}]\n",
			"a.yaml:6:14: agents[1].hosts: host 0 is already mapped at line 4"},
		{"token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n  - address: a:1\n    hosts: [{host: 1, data_ip: 10.0.0.2}]\n",
			"agents[1].address: a:1 is already the agent at line 3"},
		{"token_file: t\ncert_file: c\nagents: []\n", "cert_file: cert_file and key_file go together"},
		{"- a\n", "the file must be a mapping"},
		{"token_file: [\n", "a.yaml:1:"},
	}
	for _, c := range cases {
		_, err := Parse("a.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant …%s…", c.src, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || len(err.Error()) > 300) {
			t.Errorf("error spans lines or quotes too much (%d bytes)", len(err.Error()))
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte("  0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := ReadToken(p)
	if err != nil || string(tok) != "0123456789abcdef0123" {
		t.Fatalf("ReadToken = %q, %v", tok, err)
	}
	os.Chmod(p, 0o644)
	if _, err := ReadToken(p); err == nil || !strings.Contains(err.Error(), "can be read by others (mode 0644)") {
		t.Errorf("0644: %v", err)
	}
	os.WriteFile(p, []byte("short-secret"), 0o600)
	os.Chmod(p, 0o600)
	if _, err := ReadToken(p); err == nil || !strings.Contains(err.Error(), "at least 16") || strings.Contains(err.Error(), "short-secret") {
		t.Errorf("short: %v", err)
	}
	if _, err := ReadToken(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing token file was read")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("token_file: t\nagents:\n  - address: a:1\n    hosts: [{host: 0, data_ip: 10.0.0.1}]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		inv, err := Parse("f.yaml", src)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if inv.TokenFile == "" || len(inv.Agents) == 0 || !(inv.Scale > 0 && inv.Scale <= 1) {
			t.Fatalf("accepted an incomplete file: %+v", inv)
		}
	})
}
