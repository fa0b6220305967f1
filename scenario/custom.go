package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"

	"fabriclab/internal/inputfile"
	"fabriclab/topo"
	"fabriclab/units"
)

// Topologies of any shape: topology.kind custom reads topology.file, a
// YAML (.yaml, .yml) or CSV (.csv) file of nodes and links, and kind ns3
// reads an ns-3 topology.txt. The file is read and checked once per path
// (topo.Graph.Check), attached to every scenario that names it, and built
// by topo like the other kinds.

// Limits of a YAML topology file: the YAML library's cost is not linear
// (see prescan.go), so a YAML file is bounded well below a CSV one; a
// fabric larger than this is written in CSV.
const (
	maxYAMLTopology       = 4 << 20
	maxYAMLTopologyValues = 200000
)

var yamlTopologyLimits = textLimits{depth: 8, values: maxYAMLTopologyValues, keys: 16}

// customTopology is a topology file read: the graph, or why there is none.
type customTopology struct {
	kind, name, path string
	graph            *topo.Graph
	err              error
}

// readsFile reports whether a topology kind is built from topology.file.
func readsFile(kind string) bool { return kind == "custom" || kind == "ns3" }

// graph is t's checked graph (nil for the built-in kinds or a file that
// could not be used).
func (t Topology) graph() *topo.Graph {
	if t.custom == nil || !readsFile(t.Kind) || t.custom.kind != t.Kind || t.custom.name != t.File {
		return nil
	}
	return t.custom.graph
}

// customTopology reads (once per kind and path) the file t names.
func (f *File) customTopology(t Topology) *customTopology {
	if !readsFile(t.Kind) {
		return nil
	}
	path := RelativeTo(f.Dir, t.File)
	key := t.Kind + "\x00" + path
	v := &f.read.checks
	v.mu.Lock()
	defer v.mu.Unlock()
	if ct, ok := v.topologies[key]; ok && ct.name == t.File {
		return ct
	}
	ct := &customTopology{kind: t.Kind, name: t.File, path: path}
	if ct.err = f.allowed(t.File, path); ct.err == nil {
		ct.graph, ct.err = readTopologyFile(t.Kind, t.File, path)
	}
	if v.topologies == nil {
		v.topologies = map[string]*customTopology{}
	}
	v.topologies[key] = ct
	return ct
}

// attachTopology gives s's topology the file it names (a no-op for the
// built-in kinds); it reports whether that changed anything.
func (f *File) attachTopology(s *Scenario) bool {
	if s == nil {
		return false
	}
	ct := f.customTopology(s.Topology)
	if s.Topology.custom == ct {
		return false
	}
	s.Topology.custom = ct
	return true
}

// attachTopologies gives every scenario of the file the topology file it
// names, and rebuilds the resolved scenarios when that changed (their
// ranks default to every host, which needs the file).
func (f *File) attachTopologies() {
	changed := f.attachTopology(f.raw)
	for _, rv := range f.variants {
		changed = f.attachTopology(rv.spec) || changed
	}
	for _, rv := range f.parents {
		changed = f.attachTopology(rv.spec) || changed
	}
	if changed && f.Base != nil {
		f.finalize()
	}
}

// readTopologyFile reads and checks a topology file: by its extension for
// kind custom, as ns-3's topology.txt for kind ns3.
func readTopologyFile(kind, name, path string) (*topo.Graph, error) {
	if name == "" {
		return nil, fmt.Errorf("topology.kind %s needs topology.file, the file of its nodes and links (relative to the scenario)", kind)
	}
	format := "ns3"
	if kind == "custom" {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".yaml", ".yml":
			format = "yaml"
		case ".csv":
			format = "csv"
		default:
			return nil, fmt.Errorf("%s: a custom topology file is .yaml, .yml or .csv (for an ns-3 topology.txt use topology.kind: ns3)", name)
		}
	}
	limit := int64(maxFlowFile)
	if format == "yaml" {
		limit = maxYAMLTopology
	}
	r, err := inputfile.Open(path, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (a relative path is relative to the scenario file)", name)
	}
	if err != nil {
		if format == "yaml" && errors.As(err, new(*inputfile.Error)) && !errors.Is(err, fs.ErrPermission) {
			err = fmt.Errorf("%w (a YAML topology is at most %s; write a larger one in CSV)", err, inputfile.SizeText(limit))
		}
		return nil, err
	}
	defer r.Close()
	switch format {
	case "yaml":
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return ParseTopologyYAML(name, data)
	case "csv":
		return topo.ParseCustomCSV(name, r)
	}
	return topo.ParseNS3(name, r)
}

// ParseTopologyYAML reads a custom topology in YAML:
//
//	nodes:
//	  - {name: tor0, kind: switch, tier: tor}
//	  - {name: host0, kind: host, server: s0}
//	links:
//	  - {a: host0, b: tor0, rate: 100Gbps, delay: 1us}
//
// Node keys: name, kind (host or switch), tier (switches, optional),
// server (hosts, optional); link keys: a, b, rate, delay, all required.
// Anchors, aliases and tags are not read. Errors are "name:line: message".
func ParseTopologyYAML(name string, data []byte) (*topo.Graph, error) {
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, max(line, 1), fmt.Sprintf(format, args...))
	}
	if len(data) > maxYAMLTopology {
		return nil, errf(1, "the file is %s, more than a YAML topology's %s; write it in CSV", byteCount(int64(len(data))), byteCount(maxYAMLTopology))
	}
	limitErr := func(e *Error) error {
		msg := e.Msg
		if msg == valuesMsg(yamlTopologyLimits) {
			msg = fmt.Sprintf("more than %d values (keys, scalars and list entries: about %d links); write a topology this large in CSV", maxYAMLTopologyValues, maxYAMLTopologyValues/10)
		}
		return errf(e.Line, "%s", msg)
	}
	if e := prescan(name, data, yamlTopologyLimits); e != nil {
		return nil, limitErr(e)
	}
	tokens := lexer.Tokenize(string(inputfile.TrimBOM(data)))
	if e := checkTokens(name, tokens, yamlTopologyLimits); e != nil {
		return nil, limitErr(e)
	}
	file, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		e := yamlError(name, loc{}, "", err)
		if strings.Contains(e.Msg, "\t") || strings.Contains(e.Msg, "tab character") {
			tabError(e, data) // as a scenario's: the tab named, not shown
		}
		return nil, errf(e.Line, "%s", e.Msg)
	}
	var body ast.Node
	for _, d := range file.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			return nil, errf(line(d.Body), "only one YAML document per file")
		}
		body = d.Body
	}
	last := bytes.Count(data, []byte("\n")) + 1
	b := topo.NewGraphBuilder(name)
	var hasNodes, hasLinks bool
	top, err := yamlEntries(body, errf, "the file", []string{"nodes", "links"})
	if err != nil {
		return nil, err
	}
	for _, mv := range top {
		switch key := mv.Key.(*ast.StringNode).Value; key {
		case "nodes":
			hasNodes = true
			err = yamlList(mv.Value, errf, key, func(n ast.Node) error {
				kv, err := yamlFields(n, errf, "a node", []string{"name", "kind", "tier", "server"})
				if err != nil {
					return err
				}
				nd := topo.GraphNode{Name: kv["name"].text, Tier: kv["tier"].text, Server: kv["server"].text, Line: line(n)}
				if _, ok := kv["name"]; !ok {
					return errf(line(n), "a node needs a name")
				}
				switch k := kv["kind"]; k.text {
				case "host":
				case "switch":
					nd.Switch = true
				case "":
					return errf(line(n), "node %s needs a kind: host or switch", inputfile.Token(nd.Name))
				default:
					return errf(k.line, "node kind %s: want host or switch", inputfile.Token(k.text))
				}
				return b.AddNode(nd)
			})
		case "links":
			hasLinks = true
			err = yamlList(mv.Value, errf, key, func(n ast.Node) error {
				kv, err := yamlFields(n, errf, "a link", []string{"a", "b", "rate", "delay"})
				if err != nil {
					return err
				}
				for _, k := range []string{"a", "b", "rate", "delay"} {
					if _, ok := kv[k]; !ok {
						return errf(line(n), "a link needs a, b, rate and delay; %s is missing", k)
					}
				}
				rate, err := units.ParseRate(kv["rate"].text)
				if err != nil {
					return errf(kv["rate"].line, "rate: %v", err)
				}
				delay, err := units.ParseDuration(kv["delay"].text)
				if err != nil {
					return errf(kv["delay"].line, "delay: %v", err)
				}
				return b.AddLink(kv["a"].text, kv["b"].text, rate, delay, line(n))
			})
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasNodes || !hasLinks {
		return nil, errf(1, "a topology file has two lists, nodes and links")
	}
	return b.Graph(last)
}

type yamlErrf func(line int, format string, args ...any) error

// line is where node n is written (1 when unknown).
func line(n ast.Node) int {
	if n == nil {
		return 1
	}
	if mv, ok := n.(*ast.MappingNode); ok && !mv.IsFlowStyle && len(mv.Values) > 0 {
		n = mv.Values[0].Key
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		n = mv.Key
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 1
}

// yamlEntries is the entries of mapping n, whose keys must be plain,
// known and given once.
func yamlEntries(n ast.Node, errf yamlErrf, what string, known []string) ([]*ast.MappingValueNode, error) {
	var es []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		es = m.Values
	case *ast.MappingValueNode:
		es = []*ast.MappingValueNode{m}
	default:
		return nil, errf(line(n), "%s needs a mapping of keys (%s), got %s", what, strings.Join(known, ", "), describe(n))
	}
	seen := map[string]int{}
	for _, mv := range es {
		s, ok := mv.Key.(*ast.StringNode)
		if !ok {
			return nil, errf(line(mv.Key), "keys must be plain names, got %s", describe(mv.Key))
		}
		if !slices.Contains(known, s.Value) {
			return nil, errf(line(mv.Key), "unknown key %s in %s; the keys are: %s", inputfile.Token(s.Value), what, strings.Join(known, ", "))
		}
		if at, ok := seen[s.Value]; ok {
			return nil, errf(line(mv.Key), "key %s is given twice (first at line %d)", s.Value, at)
		}
		seen[s.Value] = line(mv.Key)
	}
	return es, nil
}

// yamlList calls each for every entry of list n (nothing for an empty
// value).
func yamlList(n ast.Node, errf yamlErrf, key string, each func(ast.Node) error) error {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.SequenceNode:
		for _, e := range v.Values {
			if err := each(e); err != nil {
				return err
			}
		}
		return nil
	}
	return errf(line(n), "%s needs a list (- …), got %s", key, describe(n))
}

type yamlValue struct {
	text string
	line int
}

// yamlFields is the scalar values of mapping n by key.
func yamlFields(n ast.Node, errf yamlErrf, what string, known []string) (map[string]yamlValue, error) {
	es, err := yamlEntries(n, errf, what, known)
	if err != nil {
		return nil, err
	}
	out := make(map[string]yamlValue, len(es))
	for _, mv := range es {
		key := mv.Key.(*ast.StringNode).Value
		var s string
		switch v := mv.Value.(type) {
		case *ast.StringNode:
			s = v.Value
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			s = v.GetToken().Value
		case *ast.NullNode:
		default:
			return nil, errf(line(mv.Value), "%s: needs a plain value, got %s", key, describe(mv.Value))
		}
		out[key] = yamlValue{strings.TrimSpace(s), line(mv.Value)}
	}
	return out, nil
}

// customCheck checks topology kinds custom and ns3: the file, its hosts
// against the limit, its servers against topology.gpus_per_server.
func (c *checker) customCheck(t Topology) {
	const p = "topology."
	ct := c.f.customTopology(t)
	if ct.err != nil {
		c.fail(p+"file", "%v", ct.err)
		return
	}
	g := ct.graph
	c.need(len(g.HostNodes) <= maxHosts, p+"file", "%s: %d hosts, more than the limit of %d", t.File, len(g.HostNodes), maxHosts)
	c.need(t.GPUsPerServer >= 0, p+"gpus_per_server", "must not be negative (0 or 1 = every host its own server), got %d", t.GPUsPerServer)
	if g.ServerSize > 0 {
		c.need(max(t.GPUsPerServer, 1) == g.ServerSize, p+"gpus_per_server",
			"%s puts %d hosts in each server; set gpus_per_server: %d (servers are consecutive hosts, as the file lists them)", t.File, g.ServerSize, g.ServerSize)
	}
}

// topologyTiersOf is the switch tiers of the scenario's topology, edge
// first.
func (c *checker) topologyTiersOf(kind string) []string {
	if readsFile(kind) && c.spec != nil {
		if g := c.spec.Topology.graph(); g != nil {
			return g.Tiers
		}
	}
	return topologyTiers[kind]
}

// customNotes: a file's host links at a rate other than
// topology.host_link.rate, which workload loads (and the reported offered
// load), Homa's RTT bytes and validate's ideal-time estimates (the
// sim.time_limit notes) take as the NICs' rate. The reports' ideal times
// and slowdowns do not: they are computed on the built fabric, from the
// file's links.
func customNotes(s *Scenario) []string {
	g := s.Topology.graph()
	if g == nil || slices.Contains(g.HostRates, s.Topology.HostLink.Rate) {
		return nil
	}
	rates := make([]string, len(g.HostRates))
	for i, r := range g.HostRates {
		rates[i] = r.String()
	}
	return []string{fmt.Sprintf("topology.host_link.rate (%v) is not the rate of any host link in %s (%s): workload loads, Homa's RTT bytes and the sim.time_limit check are computed from host_link.rate (the results' ideal times use the file's links); set it to the NICs' rate",
		s.Topology.HostLink.Rate, s.Topology.File, strings.Join(rates, ", "))}
}
