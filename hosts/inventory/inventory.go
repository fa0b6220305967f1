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
// quotes the file beyond a short escaped token. So are those found after
// parsing: a token file that cannot be used (ReadToken) or a TLS file
// (CheckTLSFiles) at its key's value, a scenario host no agent runs
// (Cover) at the agents key; none quotes the file it read.
package inventory

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
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
	// TokenFile, CAFile, CertFile and KeyFile are resolved: as written
	// if absolute, else joined to Path's directory (absolute when Path
	// is).
	TokenFile, CAFile, CertFile, KeyFile string
	// Scale is the fraction of the scenario's link rates the fabric runs
	// at (1 on a real cluster; the namespace lab's --scale).
	Scale  float64
	Agents []Agent

	// at is where Parse found each top-level key's value ("agents": the
	// key), for errors found after parsing (Position).
	at map[string]position
}

// position is a line and column of the file (1-based).
type position struct{ line, col int }

// Agent is one agent and the hosts it runs.
type Agent struct {
	Address string // host:port of its control channel
	Hosts   []Host
	Line    int // where it is written, for messages
	col     int
	addr    position // where its address is written
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

// Cover checks that every host 0…hosts−1 has an agent. Its error names
// the file at its agents key and says which hosts the agents run, as no
// line names a missing host.
func (inv *Inventory) Cover(hosts int) error {
	m := inv.HostAgent()
	for h := 0; h < hosts; h++ {
		if _, ok := m[h]; !ok {
			has := fmt.Sprintf("the scenario has %d hosts; map every host 0–%d", hosts, hosts-1)
			if hosts == 1 {
				has = "the scenario has 1 host; map host 0"
			}
			return inv.errAt("agents", fmt.Errorf("no agent runs host %d (%s; the agents run %s)", h, has, hostList(m)))
		}
	}
	return nil
}

// maxRanges is how many ranges of hosts hostList writes out.
const maxRanges = 8

// hostList writes the hosts of m as ranges: "hosts 0–3, 6, 8–9", "host 0",
// or "no host"; past maxRanges ranges it ends "… (N hosts in all)".
func hostList(m map[int]Placement) string {
	hs := make([]int, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	switch len(hs) {
	case 0:
		return "no host"
	case 1:
		return fmt.Sprintf("host %d", hs[0])
	}
	var parts []string
	for i := 0; i < len(hs); {
		j := i
		for j+1 < len(hs) && hs[j+1] == hs[j]+1 {
			j++
		}
		if len(parts) == maxRanges {
			return fmt.Sprintf("hosts %s, … (%d hosts in all)", strings.Join(parts, ", "), len(hs))
		}
		if j == i {
			parts = append(parts, strconv.Itoa(hs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", hs[i], hs[j]))
		}
		i = j + 1
	}
	return "hosts " + strings.Join(parts, ", ")
}

// Position is where key (token_file, ca_file, cert_file, key_file, scale:
// its value; agents: the key) is written in the file; 0, 0 if it is not
// (or the inventory was not parsed).
func (inv *Inventory) Position(key string) (line, col int) {
	p := inv.at[key]
	return p.line, p.col
}

// Where is "file:line:column" of key (see Position), or the file alone
// when the position is not known.
func (inv *Inventory) Where(key string) string {
	if line, col := inv.Position(key); line > 0 {
		return fmt.Sprintf("%s:%d:%d", inv.Path, line, col)
	}
	return inv.Path
}

// errAt is err about key of the file, one line "file:line:column: key:
// err" (it wraps err); "key: err" for an inventory of no file.
func (inv *Inventory) errAt(key string, err error) error {
	if where := inv.Where(key); where != "" {
		return fmt.Errorf("%s: %s: %w", where, key, err)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// ReadToken reads the shared token: a file only its owner can read, at
// least 16 bytes (surrounding white space dropped). Its error names the
// token_file value of the agents file ("file:line:column: token_file:
// …") and never quotes the token file.
func (inv *Inventory) ReadToken() ([]byte, error) {
	if inv.TokenFile == "" {
		return nil, inv.errAt("token_file", errors.New("is required: the file with the agents' shared token"))
	}
	tok, err := readToken(inv.TokenFile)
	if err != nil {
		return nil, inv.errAt("token_file", fileProblem(inv.TokenFile, err))
	}
	return tok, nil
}

// ReadToken reads a token file (see Inventory.ReadToken). The error never
// quotes the file.
func ReadToken(path string) ([]byte, error) {
	tok, err := readToken(path)
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("token file %w", err)
		}
		return nil, fmt.Errorf("token file: %w", err)
	}
	return tok, nil
}

// tokenError is a token file that was read but cannot be used: the path,
// then what is wrong (never its bytes).
type tokenError struct{ path, msg string }

func (e *tokenError) Error() string { return e.path + " " + e.msg }

// readToken reads and checks the token file at path. Its errors are the
// file system's (*fs.PathError), inputfile's (*inputfile.Error) or a
// *tokenError; none quotes the file.
func readToken(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &tokenError{path, "is not a regular file"}
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, &tokenError{path, fmt.Sprintf("can be read by others (mode %04o); chmod 600 it", st.Mode().Perm())}
	}
	f, err := inputfile.Open(path, 4096)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	tok := bytes.TrimSpace(b)
	if len(tok) < 16 {
		return nil, &tokenError{path, fmt.Sprintf("holds %d bytes; a token needs at least 16", len(tok))}
	}
	return tok, nil
}

// fileProblem words err, from reading the file at path, as "path what":
// a file system error as inputfile words it (it wraps the cause), any
// other (already naming the path) as it is.
func fileProblem(path string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &inputfile.Error{Path: path, Msg: "does not exist", Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &inputfile.Error{Path: path, Msg: "cannot be read: permission denied", Err: err}
	}
	return &inputfile.Error{Path: path, Msg: "cannot be read: " + pe.Err.Error(), Err: err}
}

// MaxPEM bounds a ca_file, cert_file or key_file.
const MaxPEM = 16 << 20

// CheckTLSFiles checks that ca_file holds a PEM certificate, cert_file a
// PEM certificate and key_file its PEM private key, as the controller
// loads them for each agent it dials (Load calls it, so that a bad file is
// named at its line before any agent is dialed). Errors name the key's
// value in the agents file and never quote the files.
func (inv *Inventory) CheckTLSFiles() error {
	if inv.CAFile != "" {
		b, err := inputfile.ReadAll(inv.CAFile, MaxPEM)
		if err != nil {
			return inv.errAt("ca_file", fileProblem(inv.CAFile, err))
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return inv.errAt("ca_file", fmt.Errorf("%s holds no PEM certificate", inv.CAFile))
		}
	}
	if inv.CertFile == "" && inv.KeyFile == "" {
		return nil
	}
	if inv.KeyFile == "" {
		return inv.errAt("cert_file", errors.New("cert_file and key_file go together: give key_file too"))
	}
	if inv.CertFile == "" {
		return inv.errAt("key_file", errors.New("cert_file and key_file go together: give cert_file too"))
	}
	// tls.X509KeyPair's own errors may quote the files (the types of the
	// PEM blocks it skipped, names in a certificate it cannot parse):
	// what they would say is found first, in words of our own.
	certPEM, err := inputfile.ReadAll(inv.CertFile, MaxPEM)
	if err != nil {
		return inv.errAt("cert_file", fileProblem(inv.CertFile, err))
	}
	leaf := pemBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" })
	if leaf == nil {
		return inv.errAt("cert_file", fmt.Errorf("%s holds no PEM certificate", inv.CertFile))
	}
	if _, err := x509.ParseCertificate(leaf.Bytes); err != nil {
		return inv.errAt("cert_file", fmt.Errorf("%s holds a certificate that cannot be parsed", inv.CertFile))
	}
	keyPEM, err := inputfile.ReadAll(inv.KeyFile, MaxPEM)
	if err != nil {
		return inv.errAt("key_file", fileProblem(inv.KeyFile, err))
	}
	if pemBlock(keyPEM, func(t string) bool { return t == "PRIVATE KEY" || strings.HasSuffix(t, " PRIVATE KEY") }) == nil {
		return inv.errAt("key_file", fmt.Errorf("%s holds no PEM private key", inv.KeyFile))
	}
	// Past those, its errors are its own words (a key it cannot parse,
	// or one that is not the certificate's).
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return inv.errAt("key_file", fmt.Errorf("%s cannot be used with cert_file %s: %s", inv.KeyFile, inv.CertFile, strings.TrimPrefix(err.Error(), "tls: ")))
	}
	return nil
}

// pemBlock is the first PEM block of b whose type is, by ok, nil if none.
func pemBlock(b []byte, ok func(typ string) bool) *pem.Block {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil
		}
		if ok(blk.Type) {
			return blk
		}
	}
}

// Load reads and checks the agents file at path, and the TLS files it
// names (CheckTLSFiles); the token file is read by ReadToken.
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
	inv, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	if err := inv.CheckTLSFiles(); err != nil {
		return nil, err
	}
	return inv, nil
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
	inv := &Inventory{Path: path, Scale: 1, at: map[string]position{}}
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
			inv.at[key] = nodePos(mv.Value)
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
			inv.at[key] = nodePos(mv.Value)
		case "agents":
			agentsNode = mv.Value
			inv.at[key] = nodePos(mv.Key)
		default:
			return nil, p.at(mv.Key, inputfile.Token(key), "unknown key; use token_file, ca_file, cert_file, key_file, scale, agents")
		}
	}
	if inv.TokenFile == "" {
		return nil, p.at(root, "token_file", "is required: the file with the agents' shared token")
	}
	if inv.CertFile != "" && inv.KeyFile == "" {
		at := inv.at["cert_file"]
		return nil, p.errAt(at.line, at.col, "cert_file", "cert_file and key_file go together: give key_file too")
	}
	if inv.KeyFile != "" && inv.CertFile == "" {
		at := inv.at["key_file"]
		return nil, p.errAt(at.line, at.col, "key_file", "cert_file and key_file go together: give cert_file too")
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
			return nil, p.errAt(a.addr.line, a.addr.col, key+".address", fmt.Sprintf("%s is already the agent at line %d", a.Address, l))
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
			return nil, p.errAt(a.Line, a.col, key, fmt.Sprintf("more than %d hosts in all", MaxHosts))
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
	line, col := pos(n)
	a := Agent{Line: line, col: col}
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
			a.addr = nodePos(mv.Value)
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

// nodePos is pos as a position.
func nodePos(n ast.Node) position {
	line, col := pos(n)
	return position{line, col}
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
