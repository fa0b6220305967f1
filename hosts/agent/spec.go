package agent

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"fabriclab/hosts/dataplane"
	"fabriclab/hosts/rankexec"
	"fabriclab/hosts/wire"
	"fabriclab/units"
)

// Prepare's checks: a run spec is refused here, before any plane exists
// and so before anything is bound or sent, when it is malformed or would
// break one of the agent's limits. Every refusal is one line and names
// what broke which limit.

// Refusal reasons, the label of the refusals metric.
const (
	reasonBusy     = "busy"
	reasonAllow    = "allow"      // a target outside --allow
	reasonNotInRun = "not_in_run" // a target that is not an endpoint of the run
	reasonRate     = "rate"       // above --max-rate
	reasonDuration = "duration"   // above --max-duration
	reasonDataIP   = "data_ip"    // a local endpoint not on a --data-ip
	reasonInvalid  = "invalid"    // a malformed spec
)

// refusal is a refused request: why (a reason above) and the one line the
// client and the log get.
type refusal struct {
	reason, msg string
}

func (r *refusal) Error() string { return r.msg }

// limits are the agent's settings that a run must keep to.
type limits struct {
	allow       []netip.Prefix
	dataIPs     []netip.Addr
	maxRate     int64
	maxDuration time.Duration
	cc          []string // the kernel's congestion controls; nil: not known, not checked here
}

// checkedRun is a spec that passed: what this agent holds and does.
type checkedRun struct {
	spec     wire.RunSpec
	duration time.Duration
	session  uint64
	local    []wire.Endpoint
	peers    []wire.Endpoint   // every endpoint of the run
	conns    []wire.Conn       // the connections this agent dials
	connByID map[int]wire.Conn // every connection of the run
	streams  []wire.Stream     // on this agent's connections
	udp      []wire.UDPFlow    // sent by this agent
	isLocal  map[int]bool
	allowed  func(netip.Addr) bool
	exec     *rankexec.Exec // the agent's share of the DAG (possibly empty)
}

// Bounds on a spec's values: IDs travel as 32 bits in the data plane; the
// rest keeps a typo from becoming an absurd run.
const (
	maxID        = 1<<32 - 1
	maxRunIDLen  = 128
	maxStreamLen = 1 << 40
	maxDepth     = 1 << 16
	maxDatagram  = dataplane.MaxDatagram  // the largest UDP payload over IPv4
	minDatagram  = dataplane.UDPHeaderLen // the data plane's sequence header
)

func checkRun(spec wire.RunSpec, lim limits) (*checkedRun, error) {
	run := spec.Run
	if err := checkRunID(run); err != nil {
		return nil, &refusal{reasonInvalid, "run refused: " + err.Error()}
	}
	refuse := func(reason, format string, a ...any) error {
		return &refusal{reason, fmt.Sprintf("run %s refused: ", run) + fmt.Sprintf(format, a...)}
	}
	d := time.Duration(spec.Duration)
	if d <= 0 {
		return nil, refuse(reasonInvalid, "duration %v is not positive", d)
	}
	if d > lim.maxDuration {
		return nil, refuse(reasonDuration, "duration %v is above this agent's --max-duration %v", d, lim.maxDuration)
	}
	if spec.NICRate < 0 {
		return nil, refuse(reasonInvalid, "NIC rate %d is negative", spec.NICRate)
	}
	if spec.NICRate > lim.maxRate {
		return nil, refuse(reasonRate, "the run's NIC rate %v is above this agent's --max-rate %v", units.Rate(spec.NICRate), units.Rate(lim.maxRate))
	}
	if spec.CC != "" && lim.cc != nil && !slices.Contains(lim.cc, spec.CC) {
		return nil, refuse(reasonInvalid, "congestion control %q is not offered by this kernel (it has %s)", spec.CC, strings.Join(lim.cc, ", "))
	}
	r := &checkedRun{spec: spec, duration: d, session: runSession(spec), connByID: map[int]wire.Conn{}, isLocal: map[int]bool{}}

	eps := map[int]wire.Endpoint{}
	for _, e := range spec.Endpoints {
		if e.ID < 0 || e.ID > maxID {
			return nil, refuse(reasonInvalid, "endpoint id %d is outside 0…%d", e.ID, maxID)
		}
		if _, dup := eps[e.ID]; dup {
			return nil, refuse(reasonInvalid, "endpoint %d is listed twice", e.ID)
		}
		a := e.Addr.Addr()
		if !e.Addr.IsValid() || e.Addr.Port() == 0 || a.IsUnspecified() || a.IsMulticast() {
			return nil, refuse(reasonInvalid, "endpoint %d's address %v is not a unicast IP and port", e.ID, e.Addr)
		}
		e.Addr = netip.AddrPortFrom(a.Unmap(), e.Addr.Port())
		eps[e.ID] = e
	}
	for _, id := range spec.Local {
		e, ok := eps[id]
		if !ok {
			return nil, refuse(reasonInvalid, "local endpoint %d is not in the run's endpoint list", id)
		}
		if r.isLocal[id] {
			return nil, refuse(reasonInvalid, "local endpoint %d is listed twice", id)
		}
		if len(lim.dataIPs) > 0 && !slices.Contains(lim.dataIPs, e.Addr.Addr()) {
			return nil, refuse(reasonDataIP, "local endpoint %d's address %v is not one of this agent's --data-ip (%s)", id, e.Addr.Addr(), addrList(lim.dataIPs))
		}
		r.isLocal[id] = true
		r.local = append(r.local, e)
	}
	if len(r.local) == 0 {
		return nil, refuse(reasonInvalid, "no endpoint is local to this agent")
	}
	// Every endpoint is a peer, local ones too: traffic between two
	// endpoints of this agent goes through the plane like any other.
	for _, e := range spec.Endpoints {
		r.peers = append(r.peers, eps[e.ID])
	}

	// target checks where this agent sends: an endpoint of the run, inside
	// --allow.
	target := func(what string, to int) error {
		e, ok := eps[to]
		if !ok {
			return refuse(reasonNotInRun, "%s targets endpoint %d, which is not in the run's endpoint list", what, to)
		}
		if !inPrefixes(lim.allow, e.Addr.Addr()) {
			return refuse(reasonAllow, "%s targets endpoint %d at %v, outside this agent's --allow (%s)", what, to, e.Addr.Addr(), allowList(lim.allow))
		}
		return nil
	}
	// known checks a reference this agent does not act on.
	known := func(what string, id int) error {
		if _, ok := eps[id]; !ok {
			return refuse(reasonNotInRun, "%s names endpoint %d, which is not in the run's endpoint list", what, id)
		}
		return nil
	}

	for _, c := range spec.Conns {
		what := fmt.Sprintf("connection %d", c.ID)
		if c.ID < 0 || c.ID > maxID {
			return nil, refuse(reasonInvalid, "connection id %d is outside 0…%d", c.ID, maxID)
		}
		if _, dup := r.connByID[c.ID]; dup {
			return nil, refuse(reasonInvalid, "connection %d is listed twice", c.ID)
		}
		if err := known(what, c.From); err != nil {
			return nil, err
		}
		if r.isLocal[c.From] {
			if err := target(what, c.To); err != nil {
				return nil, err
			}
			r.conns = append(r.conns, c)
		} else if err := known(what, c.To); err != nil {
			return nil, err
		}
		r.connByID[c.ID] = c
	}
	for i, s := range spec.Streams {
		c, ok := r.connByID[s.Conn]
		if !ok {
			return nil, refuse(reasonInvalid, "stream %d is on connection %d, which is not in the run", i, s.Conn)
		}
		if s.Size <= 0 || s.Size > maxStreamLen || s.Depth < 1 || s.Depth > maxDepth {
			return nil, refuse(reasonInvalid, "stream %d on connection %d: size %d and depth %d must be in 1…%d and 1…%d", i, s.Conn, s.Size, s.Depth, int64(maxStreamLen), maxDepth)
		}
		if r.isLocal[c.From] {
			r.streams = append(r.streams, s)
		}
	}
	flows := map[int]bool{}
	var total int64
	for _, f := range spec.UDP {
		what := fmt.Sprintf("UDP flow %d", f.ID)
		if f.ID < 0 || f.ID > maxID || flows[f.ID] {
			return nil, refuse(reasonInvalid, "UDP flow id %d is a duplicate or outside 0…%d", f.ID, maxID)
		}
		flows[f.ID] = true
		if err := known(what, f.From); err != nil {
			return nil, err
		}
		if !r.isLocal[f.From] {
			if err := known(what, f.To); err != nil {
				return nil, err
			}
			continue
		}
		if err := target(what, f.To); err != nil {
			return nil, err
		}
		if f.Rate <= 0 {
			return nil, refuse(reasonInvalid, "%s's rate %d is not positive", what, f.Rate)
		}
		if f.Rate > lim.maxRate {
			return nil, refuse(reasonRate, "%s's rate %v is above this agent's --max-rate %v", what, units.Rate(f.Rate), units.Rate(lim.maxRate))
		}
		if f.Size < minDatagram || f.Size > maxDatagram {
			return nil, refuse(reasonInvalid, "%s's datagram size %d is outside %d…%d", what, f.Size, minDatagram, maxDatagram)
		}
		total += f.Rate
		if total > lim.maxRate {
			return nil, refuse(reasonRate, "the UDP flows this agent sends add up to more than its --max-rate %v", units.Rate(lim.maxRate))
		}
		r.udp = append(r.udp, f)
	}

	if spec.Until < 0 || spec.Until > spec.Duration {
		return nil, refuse(reasonInvalid, "until %v is outside 0…the duration %v", time.Duration(spec.Until), d)
	}
	dialed := map[int]bool{}
	for _, c := range r.conns {
		dialed[c.ID] = true
	}
	for _, m := range spec.DAG {
		if m.Conn >= 0 && !dialed[m.Conn] {
			return nil, refuse(reasonInvalid, "DAG message %d is on connection %d, which this agent does not dial", m.Msg, m.Conn)
		}
		if m.Bytes > maxStreamLen {
			return nil, refuse(reasonInvalid, "DAG message %d: %d bytes is above %d", m.Msg, m.Bytes, int64(maxStreamLen))
		}
	}
	x, err := rankexec.New(spec.DAG, spec.Until)
	if err != nil {
		return nil, refuse(reasonInvalid, "%v", err)
	}
	r.exec = x

	// The plane's own check: the run's endpoints inside --allow.
	allowed := map[netip.Addr]bool{}
	for _, e := range eps {
		if a := e.Addr.Addr(); inPrefixes(lim.allow, a) {
			allowed[a] = true
		}
	}
	r.allowed = func(a netip.Addr) bool { return allowed[a.Unmap()] }
	return r, nil
}

// checkRunID keeps run ids printable: they go into logs and metric labels.
func checkRunID(id string) error {
	if id == "" || len(id) > maxRunIDLen {
		return fmt.Errorf("run id must be 1–%d characters", maxRunIDLen)
	}
	for _, c := range []byte(id) {
		if c <= ' ' || c >= 0x7f {
			return fmt.Errorf("run id %q: only printable ASCII without spaces", id)
		}
	}
	return nil
}

// runSession is the spec's session number, or one derived from the run id.
func runSession(spec wire.RunSpec) uint64 {
	if spec.Session != 0 {
		return spec.Session
	}
	h := sha256.Sum256([]byte("fabriclab run " + spec.Run))
	if s := binary.BigEndian.Uint64(h[:8]); s != 0 {
		return s
	}
	return 1
}

func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func allowList(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "none given: this agent sends nowhere"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

func addrList(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}
