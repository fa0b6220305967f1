package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"fabriclab/internal/safetext"
	"fabriclab/scenario"
	"fabriclab/topo"
	"fabriclab/units"
)

// A FabricField is one line of a fabric summary: what it describes
// (topology, links, …) and the description.
type FabricField struct {
	Name, Value string
}

// Fabric is the fabric one variant ran on, as the summary above the tables
// and at the top of the report give it.
type Fabric struct {
	Variant string
	Fields  []FabricField
	// NICGBps is the host link's rate in GB/s (the line drawn on bus
	// bandwidth charts): a topology file's host links' rate, host_link's
	// for the other kinds; 0 when unknown or the file's host links differ.
	NICGBps float64
}

// FabricOf summarizes a resolved scenario: topology, hosts, link rates,
// spines and oversubscription, forwarding, PFC and ECN thresholds,
// transport and congestion control.
func FabricOf(variant string, s *scenario.Scenario) Fabric {
	t, sw, tr := s.Topology, s.Switch, s.Transport
	f := Fabric{Variant: variant, NICGBps: float64(t.HostLink.Rate) / 8e9}
	add := func(name, format string, a ...any) {
		f.Fields = append(f.Fields, FabricField{name, fmt.Sprintf(format, a...)})
	}
	hosts := scenario.Hosts(t)
	ts := scenario.TopoSpec(s)
	var links string
	switch t.Kind {
	case "leaf-spine":
		leaves := 0
		if t.HostsPerLeaf > 0 {
			leaves = hosts / t.HostsPerLeaf
		}
		spines := topo.LeafSpines(ts)
		add("topology", "leaf-spine, %s, %s of %d, %s (%s)", Plural(hosts, "host", "hosts"), Plural(leaves, "leaf", "leaves"), t.HostsPerLeaf,
			Plural(spines, "spine", "spines"), oversub(t.HostsPerLeaf, t.HostLink.Rate, spines, t.FabricLink.Rate))
	case "fat-tree":
		add("topology", "fat-tree k=%d, %s, %d edge + %d aggregation + %d core switches (1:1, non-blocking)",
			t.K, Plural(hosts, "host", "hosts"), t.K*t.K/2, t.K*t.K/2, t.K*t.K/4)
	case "rail":
		per := t.ServersPerGroup
		if per <= 0 {
			per = t.Servers
		}
		spines := t.Spines
		if spines <= 0 {
			spines = topo.SpinesFor(per, t.HostLink.Rate, t.FabricLink.Rate, t.Oversubscription)
		}
		groups := 0
		if per > 0 {
			groups = t.Servers / per
		}
		add("topology", "rail-optimized, %s × %s = %s, %s of %s, %s, %s (%s)",
			Plural(t.Servers, "server", "servers"), Plural(t.GPUsPerServer, "GPU", "GPUs"), Plural(hosts, "host", "hosts"),
			Plural(groups, "group", "groups"), Plural(per, "server", "servers"), Plural(groups*t.GPUsPerServer, "rail leaf", "rail leaves"),
			Plural(spines, "spine", "spines"), oversub(per, t.HostLink.Rate, spines, t.FabricLink.Rate))
	case "custom", "ns3":
		// The file's nodes and links, not host_link and fabric_link (which
		// such a file does not use for its links).
		if g := ts.Graph; g != nil {
			add("topology", "%s", graphTopology(t.Kind, t.File, g))
			links, f.NICGBps = graphLinks(g)
		} else {
			add("topology", "%s (%s, not read), %s", t.Kind, t.File, Plural(hosts, "host", "hosts"))
			links, f.NICGBps = "as in "+t.File, 0
		}
	default:
		add("topology", "%s, %s", t.Kind, Plural(hosts, "host", "hosts"))
	}
	if links == "" {
		links = fmt.Sprintf("hosts %s, fabric %s, %s one-way", t.HostLink.Rate, t.FabricLink.Rate, t.HostLink.Delay)
		if t.FabricLink.Delay != t.HostLink.Delay {
			links = fmt.Sprintf("hosts %s (%s), fabric %s (%s) one-way", t.HostLink.Rate, t.HostLink.Delay, t.FabricLink.Rate, t.FabricLink.Delay)
		}
	}
	if t.ScaleUp.Rate > 0 {
		links += fmt.Sprintf("; scale-up %s per GPU", t.ScaleUp.Rate)
	}
	if len(t.Failures) > 0 {
		links += "; " + Plural(len(t.Failures), "link failure", "link failures")
	}
	add("links", "%s", links)
	fwd := sw.Forwarding
	if sw.Forwarding == "ecmp" && sw.ECMPPolarized {
		fwd += " (polarized)"
	}
	for _, tf := range sw.ForwardingTiers {
		fwd += fmt.Sprintf(", %s on %s", tf.Forwarding, tf.Tier)
	}
	if sw.RoutesFile != "" {
		fwd += ", routes from " + sw.RoutesFile
	}
	add("forwarding", "%s", fwd)
	buf := "buffer " + sw.Buffer.String()
	pfc := "PFC off"
	if sw.PFC.Enabled {
		head := "auto"
		if sw.PFC.Headroom > 0 {
			head = sw.PFC.Headroom.String()
		}
		pfc = fmt.Sprintf("PFC xoff %s, xon %s, headroom %s", sw.PFC.XOFF, sw.PFC.XON, head)
		if sw.PFC.Mode == "dynamic" {
			pfc = fmt.Sprintf("PFC dynamic: pause beyond %g × the free buffer (at least %s), headroom %s", sw.PFC.Alpha, max(sw.PFC.Reserved, s.NIC.MTU+s.NIC.Overhead), head)
		}
	}
	ecn := "ECN off"
	if sw.ECN.Enabled {
		ecn = fmt.Sprintf("ECN kmin %s, kmax %s, pmax %g", sw.ECN.KMin, sw.ECN.KMax, sw.ECN.PMax)
		if sw.ECN.ReferenceRate > 0 {
			ecn += fmt.Sprintf(" at %s (scaled per port rate)", sw.ECN.ReferenceRate)
		}
		if sw.ECN.MarkAt == "dequeue" {
			ecn += ", marked at dequeue"
		}
	}
	add("switches", "%s; %s; %s", buf, pfc, ecn)
	kind := tr.Kind
	if kind == "" {
		kind = "roce"
	}
	var cc string
	switch kind {
	case "roce":
		cc = "RoCEv2, no congestion control (DCQCN off)"
		if tr.DCQCN.Preset != "off" {
			cc = "RoCEv2, DCQCN " + tr.DCQCN.Preset
			if o := tr.DCQCN.Knobs(); o != "" {
				cc += " (" + o + ")"
			}
		}
		if tr.CC == "hpcc" {
			h := scenario.HPCCParams(s)
			rtt := "each QP's base RTT"
			if h.BaseRTT > 0 {
				rtt = "base RTT " + h.BaseRTT.String()
			}
			cc = fmt.Sprintf("RoCEv2, HPCC (η %g, max stage %d, AI %s, %s; INT on every switch)", h.Eta, h.MaxStage, h.RateAI, rtt)
		}
	case "uet":
		u := tr.UET.WithDefaults()
		spread := fmt.Sprintf("%s over %d entropies", u.LB, u.Entropies)
		if u.LB == "single" {
			spread = "one entropy per connection"
		}
		cc = fmt.Sprintf("Ultra Ethernet (%s, %s, reliable unordered with SACK)", spread, strings.ToUpper(u.CC))
	case "homa":
		cc = "Homa (receiver-driven)"
	case "dctcp":
		cc = "DCTCP"
	case "tcp":
		cc = "TCP (ECN as plain TCP)"
	default:
		cc = kind
	}
	extra := ""
	if kind == "roce" && s.NIC.CNP == "ack" {
		extra += ", CNPs on ACKs"
	}
	if s.NIC.ControlWire > 0 && s.NIC.ControlWire != 84 {
		extra += fmt.Sprintf(", control frames %s", s.NIC.ControlWire)
	}
	if s.NIC.ControlPriority == s.NIC.DataPriority {
		extra += ", ACKs in the data class"
	}
	if sw.Trimming {
		extra += ", switches trim"
	}
	order := s.NIC.OutOfOrder
	if kind == "uet" {
		order = "any order"
	}
	add("transport", "%s; MTU %s, %s%s", cc, s.NIC.MTU, order, extra)
	return f
}

// Plural is "1 spine", "4 spines": a count and its noun, for every
// command's and page's text.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// maxTiersNamed is how many tiers a file's topology line names; a file
// with more gives only their number.
const maxTiersNamed = 4

// graphTopology is the topology line of a fabric read from a file:
// "ns3 (ns.txt), 16 hosts, 6 switches in 2 tiers (tier1, tier2)".
func graphTopology(kind, file string, g *topo.Graph) string {
	tiers := Plural(len(g.Tiers), "tier", "tiers")
	if len(g.Tiers) > 0 && len(g.Tiers) <= maxTiersNamed {
		tiers += " (" + strings.Join(g.Tiers, ", ") + ")"
	}
	out := fmt.Sprintf("%s (%s), %s, %s in %s", kind, file, Plural(len(g.HostNodes), "host", "hosts"),
		Plural(g.Switches, "switch", "switches"), tiers)
	if g.ServerSize > 0 {
		out += fmt.Sprintf(", servers of %s", Plural(g.ServerSize, "host", "hosts"))
	}
	return out
}

// span is the least and the most of a set of link rates and delays.
type span struct {
	n                int
	loRate, hiRate   units.Rate
	loDelay, hiDelay units.Duration
}

func (s *span) add(r units.Rate, d units.Duration) {
	if s.n == 0 || r < s.loRate {
		s.loRate = r
	}
	if s.n == 0 || r > s.hiRate {
		s.hiRate = r
	}
	if s.n == 0 || d < s.loDelay {
		s.loDelay = d
	}
	if s.n == 0 || d > s.hiDelay {
		s.hiDelay = d
	}
	s.n++
}

func (s span) rate() string  { return between(s.loRate.String(), s.hiRate.String()) }
func (s span) delay() string { return between(s.loDelay.String(), s.hiDelay.String()) }

// between is "100Gbps" for one value, "100–400Gbps" for a range in one
// unit, "500ns–3us" for a range across units.
func between(lo, hi string) string {
	if lo == hi {
		return lo
	}
	unit := func(v string) string {
		return strings.TrimLeft(v, "0123456789.")
	}
	if u := unit(lo); u != "" && u == unit(hi) {
		return strings.TrimSuffix(lo, u) + "–" + hi
	}
	return lo + "–" + hi
}

// graphLinks is the links line of a fabric read from a file, from its
// links: the host links' rates and delays and the switch-to-switch ones',
// each a range when they differ. nic is the host links' rate in GB/s when
// every host link has the same rate, else 0.
func graphLinks(g *topo.Graph) (links string, nic float64) {
	var host, fab span
	for _, l := range g.Links {
		if g.Nodes[l.A].Switch && g.Nodes[l.B].Switch {
			fab.add(l.Rate, l.Delay)
		} else {
			host.add(l.Rate, l.Delay)
		}
	}
	if len(g.HostRates) == 1 {
		nic = float64(g.HostRates[0]) / 8e9
	}
	switch {
	case fab.n == 0:
		return fmt.Sprintf("hosts %s, %s one-way; no switch-to-switch links", host.rate(), host.delay()), nic
	case host.loDelay == host.hiDelay && host.loDelay == fab.loDelay && fab.loDelay == fab.hiDelay:
		return fmt.Sprintf("hosts %s, fabric %s, %s one-way", host.rate(), fab.rate(), host.delay()), nic
	}
	return fmt.Sprintf("hosts %s (%s), fabric %s (%s) one-way", host.rate(), host.delay(), fab.rate(), fab.delay()), nic
}

// oversub is "2:1" or "1:1, non-blocking" for a leaf's down and up capacity.
func oversub(down int, host units.Rate, up int, fab units.Rate) string {
	if up <= 0 || fab <= 0 {
		return "no uplinks"
	}
	r := float64(down) * float64(host) / (float64(up) * float64(fab))
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if r != float64(int64(r*100))/100 {
		s = strconv.FormatFloat(r, 'f', 2, 64)
	}
	if r <= 1 {
		return s + ":1, non-blocking"
	}
	return s + ":1 oversubscribed"
}

// WriteFabric writes the fabric summary as comment lines: the first
// variant's fabric in full, then, for each later variant whose fabric
// differs, only the lines that differ from the first's:
//
//	# fabric: leaf-spine, 32 hosts, 4 leaves of 8, 4 spines (1:1, non-blocking)
//	#   links: hosts 400Gbps, fabric 400Gbps, 1us one-way
//	#   …
//	# fabric of lossy: switches: buffer 32MiB; PFC off; ECN …
//
// Nothing is written without fabrics.
func WriteFabric(w io.Writer, fs []Fabric) error {
	if len(fs) == 0 {
		return nil
	}
	var b strings.Builder
	base := fs[0]
	for i, f := range base.Fields {
		if i == 0 {
			fmt.Fprintf(&b, "# fabric: %s\n", safetext.Terminal(f.Value))
			continue
		}
		fmt.Fprintf(&b, "#   %s: %s\n", f.Name, safetext.Terminal(f.Value))
	}
	for _, f := range fs[1:] {
		for _, d := range FabricDiff(base, f) {
			fmt.Fprintf(&b, "# fabric of %s: %s: %s\n", safetext.Terminal(f.Variant), d.Name, safetext.Terminal(d.Value))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FabricDiff is the fields of f that differ from base's.
func FabricDiff(base, f Fabric) []FabricField {
	var out []FabricField
	for _, x := range f.Fields {
		same := false
		for _, y := range base.Fields {
			if y == x {
				same = true
				break
			}
		}
		if !same {
			out = append(out, x)
		}
	}
	return out
}

// FabricsOfFile is the fabric of every variant of a loaded scenario file
// (sweep points included), in variant order.
func FabricsOfFile(f *scenario.File) []Fabric {
	var out []Fabric
	for _, v := range f.Variants {
		spec := v.Spec
		if spec == nil {
			spec = f.Base
		}
		if spec == nil {
			continue
		}
		out = append(out, FabricOf(v.Name, spec))
	}
	return out
}

// SavedScenario re-reads a saved run's scenario text with its --set and
// --sweep options, for no engine (scenario.EngineNone): it was valid for
// whichever engine ran it (real hosts run what the simulator refuses, and
// a run that failed on every host has no row that says where it ran).
// The files the scenario names (flow lists, size
// distributions, routes) are looked up relative to file, as when it ran;
// when they are gone the error says so.
func SavedScenario(file, text string, sets, sweeps []string) (*scenario.File, error) {
	if text == "" {
		return nil, fmt.Errorf("the run has no scenario text")
	}
	name := file
	if name == "" {
		name = "scenario.yaml"
	}
	return scenario.ParseOptions(name, []byte(text), scenario.Options{Sets: sets, Sweeps: sweeps, MaxBytes: int64(len(text)) + 1, SavedRun: true, Engine: scenario.EngineNone})
}

// SavedScenarioIn is SavedScenario read as the first of paths (the places
// a saved run's scenario may be: store.Meta.ScenarioPaths) where it reads;
// the first one's error when none does.
func SavedScenarioIn(paths []string, text string, sets, sweeps []string) (*scenario.File, error) {
	if len(paths) == 0 {
		paths = []string{""}
	}
	var first error
	for _, p := range paths {
		f, err := SavedScenario(p, text, sets, sweeps)
		if err == nil {
			return f, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// SavedFabrics is the fabric of every variant of a saved run
// (SavedScenarioIn).
func SavedFabrics(paths []string, text string, sets, sweeps []string) ([]Fabric, error) {
	f, err := SavedScenarioIn(paths, text, sets, sweeps)
	if err != nil {
		return nil, err
	}
	return FabricsOfFile(f), nil
}

// Overrides is what the command line changed of a run's scenario, as
// "seed 7; --set nic.burst=16 --sweep workload.qps=1,2" ("seed 1; no --set
// or --sweep" when nothing): --seed is kept as --set seed=N.
func Overrides(o Output) string {
	opts := OverrideFlags(o.Sets, o.Sweeps)
	if opts == "" {
		opts = "no --set or --sweep"
	}
	return fmt.Sprintf("seed %d; %s", o.Seed, opts)
}

// OverrideFlags is the --set and --sweep options as one line ("" for
// none), each value quoted for a shell when it needs it.
func OverrideFlags(sets, sweeps []string) string {
	var parts []string
	for _, s := range sets {
		parts = append(parts, "--set "+shellWord(s))
	}
	for _, s := range sweeps {
		parts = append(parts, "--sweep "+shellWord(s))
	}
	return strings.Join(parts, " ")
}

// shellWord quotes s for a POSIX shell unless it is made of safe characters.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,=:/+@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
