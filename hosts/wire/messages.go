package wire

import (
	"errors"
	"net/netip"
)

// ErrNoAnswer is what a call that got no answer before its deadline
// wraps: the controller tells a late agent from a failed one by it.
var ErrNoAnswer = errors.New("no answer in time")

// Empty is the request or response of a procedure that carries nothing.
type Empty struct{}

// ChallengeRequest opens the handshake: the client's fresh random nonce
// (NonceLen bytes) and the protocol version it speaks.
type ChallengeRequest struct {
	Version     int    `json:"version"`
	ClientNonce []byte `json:"client_nonce"`
}

// ChallengeResponse is the agent's fresh random nonce (NonceLen bytes).
type ChallengeResponse struct {
	AgentNonce []byte `json:"agent_nonce"`
}

// AuthenticateRequest is the client's proof that it holds the token
// (ClientMAC in auth.go).
type AuthenticateRequest struct {
	ClientMAC []byte `json:"client_mac"`
}

// AuthenticateResponse is the new session and the agent's proof that it
// holds the token too (AgentMAC in auth.go). The client uses the session
// only after checking AgentMAC.
type AuthenticateResponse struct {
	SessionID []byte `json:"session_id"`
	AgentMAC  []byte `json:"agent_mac"`
}

// Info describes an agent: what it is, what it offers and the limits it
// enforces, so the controller can check a run before preparing it.
type Info struct {
	Version  string `json:"version"`  // fabriclab version of the agent binary
	Hostname string `json:"hostname"` // os.Hostname, or "" if unknown
	// CongestionControls are the kernel's TCP congestion controls (cubic,
	// bbr, reno, dctcp, … as the kernel lists them).
	CongestionControls []string `json:"congestion_controls"`
	MaxRate            int64    `json:"max_rate_bps"`    // --max-rate, bits/s
	MaxDuration        int64    `json:"max_duration_ns"` // --max-duration
	// Allow are the --allow CIDRs: the only addresses the agent sends to.
	// Empty means it sends nowhere.
	Allow []string `json:"allow"`
	// DataIPs are the --data-ip addresses; when not empty, a run's local
	// endpoints must use them.
	DataIPs []string `json:"data_ips"`
	// Lease is how long the agent waits without any request from the
	// session that owns a run before aborting the run by itself.
	Lease int64 `json:"lease_ns"`
	// Run is the id of the active run, "" when idle.
	Run string `json:"run,omitempty"`
}

// ClockResponse is the agent's wall clock when it handled the request.
type ClockResponse struct {
	T int64 `json:"t_ns"`
}

// Endpoint is one endpoint of a run: an id and the data address (IP and
// port) it binds or is reached at.
type Endpoint struct {
	ID   int            `json:"id"`
	Addr netip.AddrPort `json:"addr"`
}

// Conn is one TCP connection of a run, dialed by the agent that holds From
// and accepted by the agent that holds To.
type Conn struct {
	ID   int `json:"id"`
	From int `json:"from"`
	To   int `json:"to"`
}

// Stream is the any-to-any streaming mode on one connection: its sender
// keeps Depth writes of Size bytes outstanding from the start time until
// the run's duration ends.
type Stream struct {
	Conn  int   `json:"conn"`
	Size  int64 `json:"size"`
	Depth int   `json:"depth"`
}

// UDPFlow is a paced UDP stream with sequence numbers from endpoint From to
// endpoint To at Rate bits/s in datagrams of Size bytes of payload.
type UDPFlow struct {
	ID   int   `json:"id"`
	From int   `json:"from"`
	To   int   `json:"to"`
	Rate int64 `json:"rate_bps"`
	Size int   `json:"size"`
}

// RunSpec is what Prepare gives an agent: the whole run's endpoints and
// traffic, and which endpoints are this agent's. An agent acts on the
// connections, streams and flows whose sender is local and checks that
// every other reference names an endpoint of the run.
type RunSpec struct {
	Run string `json:"run"` // run id: 1–128 printable ASCII characters, no spaces
	// Session is the controller's random number for this run, the same in
	// every agent's spec: the data planes tell the run's traffic from an
	// earlier run's stragglers by it. 0: derived from Run, which must then
	// be unique.
	Session uint64 `json:"session,omitempty"`
	// CC is the kernel congestion control for the run's TCP connections,
	// one of Info.CongestionControls; "" keeps the kernel's default.
	CC string `json:"cc,omitempty"`
	// Duration is > 0 and at most the agent's --max-duration. Streams and
	// UDP flows end at start + Duration, posts are refused after it, and
	// 2 s later the agent closes the data plane if no Stop came.
	Duration int64 `json:"duration_ns"`
	// NICRate is the NIC rate the run declares (bits/s; 0 if none); a rate
	// above the agent's --max-rate is refused.
	NICRate   int64      `json:"nic_rate_bps,omitempty"`
	Endpoints []Endpoint `json:"endpoints"`
	Local     []int      `json:"local"` // ids of the endpoints this agent holds
	Conns     []Conn     `json:"conns,omitempty"`
	Streams   []Stream   `json:"streams,omitempty"`
	UDP       []UDPFlow  `json:"udp,omitempty"`
	// DAG lists, in the run's DAG order, the messages this agent starts:
	// it runs the workload's executor for them itself, releasing each
	// when what it waits for is delivered (seen here: received by a local
	// endpoint, acknowledged to one, or told by Notify).
	DAG []DAGMsg `json:"dag,omitempty"`
	// Until, when positive, ends a closed-loop DAG (any-to-any) that long
	// after the start: a message released at or after it is cut, never
	// sent (as workload.DAG.Until).
	Until int64 `json:"until_ns,omitempty"`
}

// ConnectResponse lists the local connections that could not be dialed.
type ConnectResponse struct {
	Failures []ConnFailure `json:"failures"`
}

// ConnFailure is one connection that could not be dialed, and why.
type ConnFailure struct {
	Conn int    `json:"conn"`
	Err  string `json:"err"`
}

// StartRequest starts the prepared run's streams and UDP flows at At
// (agent clock, Unix ns); they run until At + the run's duration.
type StartRequest struct {
	At int64 `json:"at_ns"`
}

// DAGMsg is one message of the DAG mode that an agent starts: a data
// message of Bytes bytes on connection Conn (which the agent dials), or,
// with Conn −1, a marker that moves nothing and completes the moment its
// dependencies have. It starts once every message in Deps is delivered,
// and not before At after the start time. Msg is its id in the run's DAG.
//
// A Shadow is a copy of another agent's marker whose every dependency this
// agent sees too (a transfer split into pieces joins them on the
// receiver's marker, and the sender's next step waits on it): the agent
// completes its copy itself instead of waiting for a relay, and reports
// nothing of it (the owner does).
type DAGMsg struct {
	Msg    int64   `json:"msg"`
	Conn   int     `json:"conn"`
	Bytes  int64   `json:"bytes,omitempty"`
	At     int64   `json:"at_ns,omitempty"`
	Deps   []int64 `json:"deps,omitempty"`
	Shadow bool    `json:"shadow,omitempty"`
}

// NotifyRequest tells an agent of deliveries it cannot see itself: the
// messages, delivered between two other endpoints (or markers of another
// agent), that some of its own messages wait for.
type NotifyRequest struct {
	Msgs []int64 `json:"msgs"`
}

// Event kinds. An agent's Events stream carries started, delivered and
// done; acked stays inside the agent (it releases the sender's own
// dependants).
const (
	EventAcked     = "acked"     // at the sender: the receiver acknowledged a message's last byte
	EventDelivered = "delivered" // the last byte of a message reached the receiver; for a marker (Conn −1), it completed
	EventStarted   = "started"   // the first byte of a message is about to leave the sender
	EventDone      = "done"      // every DAG message of this agent was delivered or cut; Cut says how many were cut
	EventFailed    = "failed"    // the agent could not send a released message; Err says why
)

// Event is one message event of the DAG mode, timestamped on the agent's
// clock (Unix ns).
type Event struct {
	Kind  string `json:"kind"` // one of the kinds above
	Msg   int64  `json:"msg"`
	Conn  int    `json:"conn"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Bytes int64  `json:"bytes"`
	T     int64  `json:"t_ns"`
	Cut   int64  `json:"cut,omitempty"` // EventDone: the agent's messages cut by Until
	Err   string `json:"err,omitempty"` // EventFailed
}

// EventBatch is one message of the Events stream: the events the agent had
// when it sent it, so a busy run does not cost one frame per event.
type EventBatch struct {
	Events []Event `json:"events"`
}

// Sides of a connection or flow, as a counter saw it.
const (
	SideSender   = "sender"   // counts what was written (and on TCP acknowledged)
	SideReceiver = "receiver" // counts what was read
)

// PairCount is one (client endpoint, server endpoint) pair as one side on
// this agent sees it: the sender counts completions acknowledged and
// payload bytes written, the receiver frames and payload bytes read. A
// pair with a connection is listed even when nothing moved: a stalled
// pair shows as zeros.
type PairCount struct {
	Client      int    `json:"client"`
	Server      int    `json:"server"`
	Side        string `json:"side"`
	Completions int64  `json:"completions"`
	Bytes       int64  `json:"bytes"`
}

// UDPStats is one UDP flow at one side. The sender fills Sent, SendErrors,
// LastError, Done and Bytes; the receiver Received, Bytes and the sequence
// counts.
type UDPStats struct {
	Flow       int    `json:"flow"`
	From       int    `json:"from"`
	To         int    `json:"to"`
	Side       string `json:"side"`
	Sent       int64  `json:"sent,omitempty"` // datagrams
	SendErrors int64  `json:"send_errors,omitempty"`
	LastError  string `json:"last_error,omitempty"`
	Done       bool   `json:"done,omitempty"`     // sender: the flow has ended
	Received   int64  `json:"received,omitempty"` // datagrams, duplicates included
	Bytes      int64  `json:"bytes"`              // payload bytes sent or received
	Lost       int64  `json:"lost,omitempty"`     // below the highest sequence number, never seen
	Reordered  int64  `json:"reordered,omitempty"`
	Duplicates int64  `json:"duplicates,omitempty"`
	Late       int64  `json:"late,omitempty"`      // too far behind to tell reordered from duplicate
	Jitter     int64  `json:"jitter_ns,omitempty"` // RFC 3550 interarrival jitter
}

// TCPInfo is the part of the kernel's TCP_INFO a run reports for one
// connection (counts in segments unless named bytes).
type TCPInfo struct {
	RTT          int64  `json:"rtt_ns"` // smoothed
	RTTVar       int64  `json:"rttvar_ns"`
	Retrans      int64  `json:"retrans"` // over the connection's life
	BytesRetrans int64  `json:"bytes_retrans"`
	Lost         int64  `json:"lost"`
	Unacked      int64  `json:"unacked"`
	Cwnd         int64  `json:"cwnd"`
	DeliveredCE  int64  `json:"delivered_ce"`
	CC           string `json:"cc"`
}

// ConnStats is one TCP connection at one side.
type ConnStats struct {
	Conn           int      `json:"conn"`
	From           int      `json:"from"`
	To             int      `json:"to"`
	Side           string   `json:"side"`
	Bytes          int64    `json:"bytes"`           // sender: payload written; receiver: read
	Acked          int64    `json:"acked,omitempty"` // sender: payload acknowledged
	Completions    int64    `json:"completions"`     // sender: acks received; receiver: frames read whole
	Outstanding    int64    `json:"outstanding,omitempty"`
	MaxOutstanding int64    `json:"max_outstanding,omitempty"`
	CC             string   `json:"cc,omitempty"`  // sender: as read back after connect
	TCP            *TCPInfo `json:"tcp,omitempty"` // absent when the kernel could not be asked
	Closed         bool     `json:"closed,omitempty"`
	Err            string   `json:"err,omitempty"` // why it failed
}

// Checkpoint is a snapshot of the run's counters on this agent at T
// (agent clock, Unix ns).
type Checkpoint struct {
	T     int64       `json:"t_ns"`
	Pairs []PairCount `json:"pairs"`
	UDP   []UDPStats  `json:"udp,omitempty"`
	Conns []ConnStats `json:"conns,omitempty"`
	// EventsDropped counts message events lost because nobody read the
	// Events stream; above 0, a DAG run cannot be trusted.
	EventsDropped int64 `json:"events_dropped,omitempty"`
	// Refused counts inbound connections the data plane dropped (not
	// allowed, bad hello, another run's); LastRefusal says why the latest.
	Refused     int64  `json:"refused,omitempty"`
	LastRefusal string `json:"last_refusal,omitempty"`
	Stray       int64  `json:"stray,omitempty"` // datagrams that were not this run's
}

// HostCounters are the host's network counters by name ("Tcp.RetransSegs",
// "TcpExt.TCPDeliveredCE", "IpExt.InCEPkts", "ethtool.eth0.rx_pause_ctrl_phy",
// …). A counter the host does not expose is absent, never 0.
type HostCounters map[string]int64

// Final is what Stop returns: the last snapshot and the host's counters
// when the run was prepared and when it stopped.
type Final struct {
	Checkpoint
	HostBefore HostCounters `json:"host_before"`
	HostAfter  HostCounters `json:"host_after"`
	// HostUnavailable names each source of host counters that could not be
	// read (a file, "ethtool -S eth0") and why, so a report can say
	// "unavailable" rather than guess.
	HostUnavailable map[string]string `json:"host_unavailable,omitempty"`
	// Ended says how the data plane ended: "" (by Stop) or "duration"
	// (the run outlived its duration and the agent closed it).
	Ended string `json:"ended,omitempty"`
}
