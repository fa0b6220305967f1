package nslab

import (
	"net/netip"
	"time"
)

// Lab is a namespace lab: what Plan lays out, Up builds and lab.json
// records.
type Lab struct {
	Prefix   string    `json:"prefix"`
	Scenario string    `json:"scenario"`
	Variant  string    `json:"variant"`
	Topology string    `json:"topology"` // leaf-spine, fat-tree, rail
	Created  time.Time `json:"created"`
	// Scale multiplies the scenario's rates; ScaleText is how it is
	// written (1/1000).
	Scale     float64 `json:"scale"`
	ScaleText string  `json:"scale_text"`
	// HostRate and FabricRate are the scaled link rates, bit/s.
	HostRate   int64 `json:"host_rate_bps"`
	FabricRate int64 `json:"fabric_rate_bps"`
	MTU        int   `json:"mtu"`
	// AgentPort is the port of every agent on its management address.
	AgentPort int `json:"agent_port"`
	// Qdisc is the shaper Up used: tbf or htb ("" before Up).
	Qdisc string `json:"qdisc,omitempty"`

	DataSubnet   netip.Prefix `json:"data_subnet"`
	FabricSubnet netip.Prefix `json:"fabric_subnet"`
	Mgmt         Mgmt         `json:"mgmt"`

	// Namespaces are every namespace of the lab, hosts first.
	Namespaces []string `json:"namespaces"`
	Hosts      []Host   `json:"hosts"`
	Switches   []Switch `json:"switches"`
	Links      []Link   `json:"links"`
	// Routes are the switches' and hosts' routes (not saved: they follow
	// from the topology).
	Routes []Route `json:"-"`
	// Notes say what of the scenario the lab does not emulate.
	Notes []string `json:"notes,omitempty"`
	// StateDir is where lab.json, token and agents.yaml are.
	StateDir string `json:"state_dir"`
}

// Mgmt is the management network: a bridge in the root namespace.
type Mgmt struct {
	Bridge string       `json:"bridge"`
	Subnet netip.Prefix `json:"subnet"`
	RootIP netip.Addr   `json:"root_ip"` // the bridge's address
}

// Host is one host namespace.
type Host struct {
	Host    int        `json:"host"` // the scenario's host number
	Name    string     `json:"name"` // the simulator's name (host3)
	NS      string     `json:"ns"`
	DataDev string     `json:"data_dev"`
	DataIP  netip.Addr `json:"data_ip"`
	// Gateway is the edge switch's end of the host link.
	Gateway netip.Addr `json:"gateway"`
	// MgmtDev is the host's end of its management veth, RootDev the root
	// namespace's end (on the bridge).
	MgmtDev string     `json:"mgmt_dev"`
	RootDev string     `json:"root_dev"`
	MgmtIP  netip.Addr `json:"mgmt_ip"`
	// AgentPID and AgentLog are the host's agent, when Up started one.
	AgentPID int    `json:"agent_pid,omitempty"`
	AgentLog string `json:"agent_log,omitempty"`
}

// AgentAddress is host:port of the host's agent.
func (h Host) AgentAddress(port int) string {
	return netip.AddrPortFrom(h.MgmtIP, uint16(port)).String()
}

// Switch is one switch namespace.
type Switch struct {
	Name string `json:"name"` // the simulator's name (leaf0)
	Tier string `json:"tier"`
	NS   string `json:"ns"`
	// Forwarding is how the lab forwards: ecmp or d-mod-k.
	Forwarding string `json:"forwarding"`
	// Ports is how many links it has, QueueLimit each egress queue's
	// limit in bytes.
	Ports      int   `json:"ports"`
	QueueLimit int64 `json:"queue_limit"`
}

// Link is one veth pair: A is the host or the lower tier.
type Link struct {
	A End `json:"a"`
	B End `json:"b"`
	// Down: the scenario fails it at time 0; it is built down.
	Down bool `json:"down,omitempty"`
}

// End is one end of a link.
type End struct {
	Node   string     `json:"node"` // the simulator's name of its node
	NS     string     `json:"ns"`
	Dev    string     `json:"dev"`
	IP     netip.Addr `json:"ip"`
	Bits   int        `json:"bits"`     // prefix length of the link subnet
	Rate   int64      `json:"rate_bps"` // egress rate, bit/s
	Limit  int64      `json:"limit"`    // egress queue limit, bytes
	Burst  int64      `json:"burst"`    // token bucket depth, bytes
	Switch bool       `json:"switch"`   // a switch's end (else a host's)
}

// Route is one route in a namespace: Dst via one or several next hops
// (several make a multipath route).
type Route struct {
	NS  string
	Dst netip.Prefix
	Via []NextHop
	Src netip.Addr // preferred source (hosts), or invalid
}

// NextHop is a gateway on an interface.
type NextHop struct {
	Dev string
	Gw  netip.Addr
}

// HostNS is the namespace of host h under prefix.
func HostNS(prefix string, h int) string { return prefix + "h" + itoa(h) }

// SwitchNS is the namespace of a switch.
func SwitchNS(prefix, name string) string { return prefix + name }

// BridgeName is the management bridge of a prefix.
func BridgeName(prefix string) string { return prefix + "mgmt" }

// RootDev is the root namespace's end of host h's management veth.
func RootDev(prefix string, h int) string { return prefix + "m" + itoa(h) }

// Host returns the host numbered h, or nil.
func (l *Lab) Host(h int) *Host {
	if h >= 0 && h < len(l.Hosts) && l.Hosts[h].Host == h {
		return &l.Hosts[h]
	}
	for i := range l.Hosts {
		if l.Hosts[i].Host == h {
			return &l.Hosts[i]
		}
	}
	return nil
}

// Switch returns the switch with the simulator's name name, or nil.
func (l *Lab) Switch(name string) *Switch {
	for i := range l.Switches {
		if l.Switches[i].Name == name {
			return &l.Switches[i]
		}
	}
	return nil
}
