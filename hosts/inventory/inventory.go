// Package inventory reads the agents file of a hosts run (run --engine
// hosts --agents FILE): which agent runs each host of the scenario, the
// data IP that host's rank binds, and the credentials the controller
// authenticates with. `fabriclab lab up` writes one for the namespace lab.
//
//	token_file: token            # the agents' shared token (relative to this file)
//	ca_file: ca.pem              # optional: verify agents' certificates (mTLS with cert_file, key_file)
//	scale: 0.001                 # optional: the fabric runs at this fraction of the scenario's rates
//	agents:
//	  - address: 10.0.0.5:7470   # the agent's control address
//	    hosts:
//	      - {host: 0, data_ip: 192.168.1.5}
//	      - {host: 1, data_ip: 192.168.1.6}
//
// Every error is one line "file:line:column: key: message" and never
// quotes the file beyond a short escaped token.
package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"fabriclab/internal/inputfile"
	"fabriclab/scenario"
)

// MaxSize bounds an agents file (a thousand hosts take about 50 KB).
const MaxSize = 1 << 20

// MaxHosts bounds the hosts one file maps (a typo of a huge list should not
// allocate before it is refused).
const MaxHosts = 1 << 16

// Inventory is a parsed agents file.
type Inventory struct {
	// Path is the file it was read from; relative paths below are
	// resolved against its directory.
	Path string
	// TokenFile, CAFile, CertFile and KeyFile are absolute (resolved).
	TokenFile, CAFile, CertFile, KeyFile string
	// Scale is the fraction of the scenario's link rates the fabric runs
	// at (1 on a real cluster; the namespace lab's --scale).
	Scale  float64
	Agents []Agent
}

// Agent is one agent and the hosts it runs.
type Agent struct {
	Address string // host:port of its control channel
	Hosts   []Host
	Line    int // where it is written, for messages
}

// Host is one host of the scenario on an agent.
type Host struct {
	Host   int
	DataIP netip.Addr
	Line   int
	col    int
}

// Placement is where a scenario host runs: its agent (an index into
// Agents) and its entry there.
type Placement struct {
	Agent int
	Host  Host
}

// HostAgent is, per scenario host, where it runs.
func (inv *Inventory) HostAgent() map[int]Placement {
	m := map[int]Placement{}
	for i, a := range inv.Agents {
		for _, h := range a.Hosts {
			m[h.Host] = Placement{i, h}
		}
	}
	return m
}

// Cover checks that every host 0…hosts−1 has an agent.
func (inv *Inventory) Cover(hosts int) error {
	m := inv.HostAgent()
	for h := 0; h < hosts; h++ {
		if _, ok := m[h]; !ok {
			return fmt.Errorf("%s: no agent runs host %d (the scenario has %d hosts; map every host 0–%d)", inv.Path, h, hosts, hosts-1)
		}
	}
	return nil
}

// ReadToken reads the shared token: a file only its owner can read, at
// least 16 bytes (surrounding white space dropped).
func (inv *Inventory) ReadToken() ([]byte, error) { return ReadToken(inv.TokenFile) }

// ReadToken reads a token file (see Inventory.ReadToken). The error never
// quotes the file.
func ReadToken(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s can be read by others (mode %04o); chmod 600 it", path, st.Mode().Perm())
	}
	f, err := inputfile.Open(path, 4096)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	tok := bytes.TrimSpace(b)
	if len(tok) < 16 {
		return nil, fmt.Errorf("token file %s holds %d bytes; a token needs at least 16", path, len(tok))
	}
	return tok, nil
}

// Load reads and checks the agents file at path.
func Load(path string) (*Inventory, error) {
	f, err := inputfile.Open(path, MaxSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse checks the agents file src, read from path.
func Parse(path string, src []byte) (*Inventory, error) {
	p := &parse{path: path}
	if int64(len(src)) > MaxSize {
		return nil, p.errAt(1, 1, "", fmt.Sprintf("the file is %d bytes, more than the limit of %d", len(src), MaxSize))
	}
	// The YAML library's cost is not linear in its input: bound nesting,
	// values and keys first, as for scenarios.
	if err := scenario.PrescanYAML(path, src, 8*MaxHosts); err != nil {
		return nil, err
	}
	file, err := parser.ParseBytes(inputfile.TrimBOM(src), 0)
	if err != nil {
		var se yaml.Error
		if errors.As(err, &se) && se.GetToken() != nil {
			return nil, p.errAt(se.GetToken().Position.Line, se.GetToken().Position.Column, "", "not valid YAML: "+se.GetMessage())
		}
		return nil, p.errAt(1, 1, "", "not valid YAML")
	}
	if len(file.Docs) != 1 || file.Docs[0].Body == nil {
		return nil, p.errAt(1, 1, "", "needs one YAML document with token_file and agents")
	}
	root, ok := file.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, p.at(file.Docs[0].Body, "", "the file must be a mapping with token_file and agents")
	}
	inv := &Inventory{Path: path, Scale: 1}
	dir := filepath.Dir(path)
	resolve := func(s string) string {
		if s == "" {
			return s
		}
		return scenario.RelativeTo(dir, s)
	}
	var agentsNode ast.Node
	seen := map[string]bool{}
	for _, mv := range root.Values {
		key := mv.Key.String()
		if seen[key] {
			return nil, p.at(mv.Key, key, "is given twice")
		}
		seen[key] = true
		switch key {
		case "token_file", "ca_file", "cert_file", "key_file":
			s, err := p.str(mv.Value, key)
			if err != nil {
				return nil, err
			}
			switch key {
			case "token_file":
				inv.TokenFile = resolve(s)
			case "ca_file":
				inv.CAFile = resolve(s)
			case "cert_file":
				inv.CertFile = resolve(s)
			case "key_file":
				inv.KeyFile = resolve(s)
			}
		case "scale":
			s, err := p.str(mv.Value, key)
			if err != nil {
				return nil, err
			}
			v, err := ParseScale(s)
			if err != nil {
				return nil, p.at(mv.Value, key, err.Error())
			}
			inv.Scale = v
		case "agents":
			agentsNode = mv.Value
		default:
			return nil, p.at(mv.Key, inputfile.Token(key), "unknown key; use token_file, ca_file, cert_file, key_file, scale, agents")
		}
	}
	if inv.TokenFile == "" {
		return nil, p.at(root, "token_file", "is required: the file with the agents' shared token")
	}
	if (inv.CertFile == "") != (inv.KeyFile == "") {
		return nil, p.at(root, "cert_file", "cert_file and key_file go together")
	}
	seq, ok := agentsNode.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		n := ast.Node(root)
		if agentsNode != nil {
			n = agentsNode
		}
		return nil, p.at(n, "agents", "needs a list of agents, each with address and hosts")
	}
	hostSeen := map[int]int{}
	addrSeen := map[string]int{}
	total := 0
	for i, an := range seq.Values {
		key := fmt.Sprintf("agents[%d]", i)
		a, err := p.agent(an, key)
		if err != nil {
			return nil, err
		}
		if l, dup := addrSeen[a.Address]; dup {
			return nil, p.errAt(a.Line, 1, key+".address", fmt.Sprintf("%s is already the agent at line %d", a.Address, l))
		}
		addrSeen[a.Address] = a.Line
		for _, h := range a.Hosts {
			if l, dup := hostSeen[h.Host]; dup {
				return nil, p.errAt(h.Line, h.col, key+".hosts", fmt.Sprintf("host %d is already mapped at line %d", h.Host, l))
			}
			hostSeen[h.Host] = h.Line
		}
		total += len(a.Hosts)
		if total > MaxHosts {
			return nil, p.errAt(a.Line, 1, key, fmt.Sprintf("more than %d hosts in all", MaxHosts))
		}
		inv.Agents = append(inv.Agents, a)
	}
	return inv, nil
}

func (p *parse) agent(n ast.Node, key string) (Agent, error) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		return Agent{}, p.at(n, key, "must be a mapping with address and hosts")
	}
	line, _ := pos(n)
	a := Agent{Line: line}
	var hostsNode ast.Node
	for _, mv := range m.Values {
		switch k := mv.Key.String(); k {
		case "address":
			s, err := p.str(mv.Value, key+".address")
			if err != nil {
				return a, err
			}
			host, port, err := net.SplitHostPort(s)
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
				return a, p.at(mv.Value, key+".address", "must be host:port with a port 1–65535 (e.g. 10.0.0.5:7470)")
			}
			a.Address = s
		case "hosts":
			hostsNode = mv.Value
		default:
			return a, p.at(mv.Key, key+"."+inputfile.Token(k), "unknown key; an agent has address and hosts")
		}
	}
	if a.Address == "" {
		return a, p.at(n, key+".address", "is required (host:port of the agent)")
	}
	seq, ok := hostsNode.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return a, p.at(n, key+".hosts", "needs a list of {host: N, data_ip: IP}")
	}
	if len(seq.Values) > MaxHosts {
		return a, p.at(hostsNode, key+".hosts", fmt.Sprintf("more than %d hosts", MaxHosts))
	}
	for j, hn := range seq.Values {
		hk := fmt.Sprintf("%s.hosts[%d]", key, j)
		hm, ok := hn.(*ast.MappingNode)
		if !ok {
			return a, p.at(hn, hk, "must be {host: N, data_ip: IP}")
		}
		line, col := pos(hn)
		h := Host{Host: -1, Line: line, col: col}
		for _, mv := range hm.Values {
			switch k := mv.Key.String(); k {
			case "host":
				s, err := p.str(mv.Value, hk+".host")
				if err != nil {
					return a, err
				}
				v, err := strconv.Atoi(s)
				if err != nil || v < 0 || v >= MaxHosts {
					return a, p.at(mv.Value, hk+".host", fmt.Sprintf("must be a host number 0–%d", MaxHosts-1))
				}
				h.Host = v
			case "data_ip":
				s, err := p.str(mv.Value, hk+".data_ip")
				if err != nil {
					return a, err
				}
				ip, err := netip.ParseAddr(s)
				if err != nil || ip.Zone() != "" {
					return a, p.at(mv.Value, hk+".data_ip", "must be an IP address (e.g. 192.168.1.5)")
				}
				h.DataIP = ip
			default:
				return a, p.at(mv.Key, hk+"."+inputfile.Token(k), "unknown key; a host has host and data_ip")
			}
		}
		if h.Host < 0 {
			return a, p.at(hn, hk+".host", "is required")
		}
		if !h.DataIP.IsValid() {
			return a, p.at(hn, hk+".data_ip", "is required")
		}
		a.Hosts = append(a.Hosts, h)
	}
	return a, nil
}

// ParseScale reads a scale as a fraction ("1/1000") or a number ("0.001"),
// in (0, 1].
func ParseScale(s string) (float64, error) {
	var v float64
	if num, den, ok := strings.Cut(s, "/"); ok {
		a, err1 := strconv.ParseFloat(num, 64)
		b, err2 := strconv.ParseFloat(den, 64)
		if err1 != nil || err2 != nil || b == 0 {
			return 0, errors.New("must be a fraction like 1/1000 or a number like 0.001")
		}
		v = a / b
	} else {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, errors.New("must be a fraction like 1/1000 or a number like 0.001")
		}
		v = f
	}
	if !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("must be in (0, 1], got %g", v)
	}
	return v, nil
}

type parse struct{ path string }

func (p *parse) errAt(line, col int, key, msg string) error {
	if line <= 0 {
		line, col = 1, 1
	}
	if key != "" {
		return fmt.Errorf("%s:%d:%d: %s: %s", p.path, line, col, key, msg)
	}
	return fmt.Errorf("%s:%d:%d: %s", p.path, line, col, msg)
}

// at places an error at node n: a mapping at its first key (its own token
// is the first colon).
func (p *parse) at(n ast.Node, key, msg string) error {
	line, col := pos(n)
	return p.errAt(line, col, key, msg)
}

func pos(n ast.Node) (line, col int) {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		n = m.Values[0].Key
	}
	if n == nil || n.GetToken() == nil {
		return 1, 1
	}
	return n.GetToken().Position.Line, n.GetToken().Position.Column
}

// str is a scalar's text (a string, number or bare word).
func (p *parse) str(n ast.Node, key string) (string, error) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.LiteralNode:
		return v.GetToken().Value, nil
	}
	return "", p.at(n, key, "must be a single value")
}
