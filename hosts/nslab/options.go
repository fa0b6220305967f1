package nslab

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"fabriclab/hosts/inventory"
	"fabriclab/units"
)

// Defaults.
const (
	DefaultPrefix   = "fl-"
	DefaultStateDir = "/run/fabriclab/lab"
	// StateDirEnv names the environment variable that replaces
	// DefaultStateDir.
	StateDirEnv = "FABRICLAB_LAB_DIR"
	// DefaultAgentPort is the port every agent listens on, on its
	// management address.
	DefaultAgentPort = 7470
	// DefaultHostRate is what a host link runs at with the automatic
	// scale.
	DefaultHostRate = 100 * units.Mbps
	// MinRate is the slowest scaled link the lab builds: below it a
	// handful of packets is a noticeable time and nothing measures well.
	MinRate = 1 * units.Mbps
	// MinQueueFrames and HostQueueFrames: see the package doc.
	MinQueueFrames  = 64
	HostQueueFrames = 64
	// MaxHosts bounds a lab: one namespace, veth and agent per host is
	// more than one machine forwards at any useful rate well before this.
	MaxHosts = 1024
)

// Fixed subnets (see the package doc): they exist only inside the lab.
var (
	DataSubnet        = netip.MustParsePrefix("10.70.0.0/16")
	FabricSubnet      = netip.MustParsePrefix("10.71.0.0/16")
	DefaultMgmtSubnet = netip.MustParsePrefix("10.254.0.0/16")
)

// Options are the choices of a lab. The zero value builds the default lab
// (prefix fl-, automatic scale, state in DefaultStateDir or $FABRICLAB_LAB_DIR,
// no agents).
type Options struct {
	// Prefix starts the name of every namespace and root-namespace
	// interface of the lab; Down removes everything that carries it.
	Prefix string
	// Scale multiplies the scenario's link rates, in (0, 1]; 0 = automatic
	// (host links at DefaultHostRate).
	Scale float64
	// StateDir receives lab.json, token, agents.yaml and the agents' logs.
	StateDir string
	// MgmtSubnet is the management network's IPv4 subnet (default
	// DefaultMgmtSubnet); it must not overlap the machine's routes.
	MgmtSubnet netip.Prefix
	// Shaper is the qdisc that shapes the links: tbf or htb; "" = tbf,
	// or htb where the kernel has no tbf.
	Shaper string
	// Replace removes an existing lab with the same prefix (and state dir)
	// first instead of refusing.
	Replace bool

	// StartAgents starts one agent per host namespace (see AgentCommand).
	StartAgents bool
	// AgentExe is the fabriclab binary the agents run (default: this
	// process's executable).
	AgentExe string
	// AgentPort is the agents' control port (default DefaultAgentPort).
	AgentPort int
	// AgentEnv is added to the agents' environment (e.g. GOMAXPROCS=1).
	AgentEnv []string
	// AgentWait bounds how long Up waits for every agent to accept
	// connections (default 10 s).
	AgentWait time.Duration

	// Runner runs ip, tc and sysctl (default ExecRunner); tests replace it.
	Runner Runner
	// Log, when set, hears one line per step.
	Log io.Writer
}

// withDefaults fills in the zero fields and checks the others.
func (o Options) withDefaults() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := CheckPrefix(o.Prefix); err != nil {
		return o, err
	}
	if o.Scale < 0 || o.Scale > 1 || math.IsNaN(o.Scale) {
		return o, fmt.Errorf("scale %g is not in (0, 1]", o.Scale)
	}
	if o.StateDir == "" {
		o.StateDir = StateDir()
	}
	if !o.MgmtSubnet.IsValid() {
		o.MgmtSubnet = DefaultMgmtSubnet
	}
	if !o.MgmtSubnet.Addr().Is4() {
		return o, fmt.Errorf("management subnet %s is not IPv4", o.MgmtSubnet)
	}
	o.MgmtSubnet = o.MgmtSubnet.Masked()
	if o.MgmtSubnet.Overlaps(DataSubnet) || o.MgmtSubnet.Overlaps(FabricSubnet) {
		return o, fmt.Errorf("management subnet %s overlaps the lab's data subnets %s and %s", o.MgmtSubnet, DataSubnet, FabricSubnet)
	}
	switch o.Shaper {
	case "", "tbf", "htb":
	default:
		return o, fmt.Errorf("shaper %q: the lab shapes with tbf or htb", o.Shaper)
	}
	if o.AgentPort == 0 {
		o.AgentPort = DefaultAgentPort
	}
	if o.AgentWait == 0 {
		o.AgentWait = 10 * time.Second
	}
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	switch o.Log.(type) {
	case nil:
		o.Log = io.Discard
	case *syncWriter:
	default:
		o.Log = &syncWriter{w: o.Log}
	}
	if abs, err := filepath.Abs(o.StateDir); err == nil {
		o.StateDir = abs // the agents get the token's path
	}
	return o, nil
}

// syncWriter lets the builder's parallel steps share one log.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// StateDir is the default state directory: $FABRICLAB_LAB_DIR, else
// DefaultStateDir.
func StateDir() string {
	if d := os.Getenv(StateDirEnv); d != "" {
		return d
	}
	return DefaultStateDir
}

// maxPrefix leaves room in an interface name (15 characters) for the
// root-namespace names the lab makes: PREFIX+"mgmt" and PREFIX+"m"+N.
const maxPrefix = 11

// CheckPrefix accepts a prefix of lower-case letters, digits and '-', of
// at most 11 characters (interface names have 15), that does not start
// with '-'.
func CheckPrefix(p string) error {
	if p == "" {
		return errors.New("the lab prefix is empty")
	}
	if len(p) > maxPrefix {
		return fmt.Errorf("the lab prefix %q is longer than %d characters (interface names have at most 15)", p, maxPrefix)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("the lab prefix %q may hold only a–z, 0–9 and '-'", p)
		}
	}
	if p[0] == '-' {
		return fmt.Errorf("the lab prefix %q starts with '-'", p)
	}
	return nil
}

// ParseScale reads a scale: "auto" (0, the automatic scale), a fraction
// "1/1000" or a number "0.001", in (0, 1].
func ParseScale(s string) (float64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		return 0, nil
	}
	return inventory.ParseScale(strings.TrimSpace(s))
}

// FormatScale writes a scale as ParseScale reads it: 1/N when it is
// (nearly) the inverse of an integer, else the shortest number.
func FormatScale(v float64) string {
	if v <= 0 {
		return "auto"
	}
	if v == 1 {
		return "1"
	}
	if n := math.Round(1 / v); n >= 2 && math.Abs(1/n-v) <= 1e-9*v {
		return "1/" + strconv.FormatFloat(n, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// AutoScale is the scale that makes host links of rate host run at
// DefaultHostRate (1 for links that are no faster).
func AutoScale(host units.Rate) float64 {
	if host <= DefaultHostRate {
		return 1
	}
	return float64(DefaultHostRate) / float64(host)
}

// scaleRate is r × s in bits per second, rounded.
func scaleRate(r units.Rate, s float64) int64 {
	return int64(math.Round(float64(r) * s))
}
