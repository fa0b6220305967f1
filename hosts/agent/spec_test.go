package agent

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"fabriclab/hosts/wire"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// baseSpec: endpoint 0 is local (10.0.0.5), 1 and 2 are peers inside
// 10.0.0.0/24, 3 is outside it.
func baseSpec() wire.RunSpec {
	return wire.RunSpec{
		Run: "r7", Duration: int64(time.Minute), NICRate: 100e9,
		Endpoints: []wire.Endpoint{{ID: 0, Addr: ap("10.0.0.5:7000")}, {ID: 1, Addr: ap("10.0.0.6:7000")}, {ID: 2, Addr: ap("10.0.0.7:7000")}, {ID: 3, Addr: ap("10.1.0.9:7000")}},
		Local:     []int{0},
		Conns:     []wire.Conn{{ID: 0, From: 0, To: 1}, {ID: 1, From: 1, To: 0}, {ID: 2, From: 2, To: 3}},
		Streams:   []wire.Stream{{Conn: 0, Size: 1 << 20, Depth: 4}, {Conn: 1, Size: 1 << 20, Depth: 4}},
		UDP:       []wire.UDPFlow{{ID: 0, From: 0, To: 2, Rate: 10e9, Size: 1400}},
	}
}

func baseLimits() limits {
	return limits{
		allow:   []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")},
		dataIPs: []netip.Addr{netip.MustParseAddr("10.0.0.5")},
		maxRate: 100e9, maxDuration: 10 * time.Minute, cc: []string{"reno", "cubic"},
	}
}

func TestCheckRunAccepts(t *testing.T) {
	r, err := checkRun(baseSpec(), baseLimits())
	if err != nil {
		t.Fatal(err)
	}
	// This agent dials only its own connection, streams on it and sends
	// its own flow; connection 2 (between two peers, one outside --allow)
	// is not its business.
	if len(r.conns) != 1 || r.conns[0].ID != 0 || len(r.streams) != 1 || r.streams[0].Conn != 0 || len(r.udp) != 1 {
		t.Errorf("local work: conns %v streams %v udp %v", r.conns, r.streams, r.udp)
	}
	if len(r.local) != 1 || len(r.peers) != 4 {
		t.Errorf("local %v peers %v", r.local, r.peers)
	}
	for a, want := range map[string]bool{"10.0.0.6": true, "10.0.0.7": true, "10.0.0.5": true, "10.1.0.9": false, "10.0.0.99": false, "::ffff:10.0.0.6": true} {
		if got := r.allowed(netip.MustParseAddr(a)); got != want {
			t.Errorf("allowed(%s) = %v, want %v (run endpoints ∩ --allow)", a, got, want)
		}
	}
	if r.session != runSession(baseSpec()) || r.session == 0 {
		t.Errorf("session %d", r.session)
	}
}

func TestCheckRunRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*wire.RunSpec, *limits)
		reason string
		msg    string
	}{
		{"target outside allow", func(s *wire.RunSpec, _ *limits) { s.Conns = append(s.Conns, wire.Conn{ID: 5, From: 0, To: 3}) },
			reasonAllow, "run r7 refused: connection 5 targets endpoint 3 at 10.1.0.9, outside this agent's --allow (10.0.0.0/24)"},
		{"no allow at all", func(_ *wire.RunSpec, l *limits) { l.allow = nil },
			reasonAllow, "run r7 refused: connection 0 targets endpoint 1 at 10.0.0.6, outside this agent's --allow (none given: this agent sends nowhere)"},
		{"udp outside allow", func(s *wire.RunSpec, _ *limits) { s.UDP[0].To = 3 },
			reasonAllow, "run r7 refused: UDP flow 0 targets endpoint 3 at 10.1.0.9, outside this agent's --allow (10.0.0.0/24)"},
		{"target not in run", func(s *wire.RunSpec, _ *limits) { s.Conns[0].To = 9 },
			reasonNotInRun, "run r7 refused: connection 0 targets endpoint 9, which is not in the run's endpoint list"},
		{"udp target not in run", func(s *wire.RunSpec, _ *limits) { s.UDP[0].To = 9 },
			reasonNotInRun, "run r7 refused: UDP flow 0 targets endpoint 9, which is not in the run's endpoint list"},
		{"udp rate", func(s *wire.RunSpec, _ *limits) { s.UDP[0].Rate = 200e9 },
			reasonRate, "run r7 refused: UDP flow 0's rate 200Gbps is above this agent's --max-rate 100Gbps"},
		{"udp rates add up", func(s *wire.RunSpec, _ *limits) {
			s.UDP[0].Rate = 60e9
			s.UDP = append(s.UDP, wire.UDPFlow{ID: 1, From: 0, To: 1, Rate: 60e9, Size: 1400})
		}, reasonRate, "run r7 refused: the UDP flows this agent sends add up to more than its --max-rate 100Gbps"},
		{"nic rate", func(s *wire.RunSpec, _ *limits) { s.NICRate = 400e9 },
			reasonRate, "run r7 refused: the run's NIC rate 400Gbps is above this agent's --max-rate 100Gbps"},
		{"duration", func(s *wire.RunSpec, _ *limits) { s.Duration = int64(20 * time.Minute) },
			reasonDuration, "run r7 refused: duration 20m0s is above this agent's --max-duration 10m0s"},
		{"data ip", func(s *wire.RunSpec, _ *limits) { s.Local = []int{1} },
			reasonDataIP, "run r7 refused: local endpoint 1's address 10.0.0.6 is not one of this agent's --data-ip (10.0.0.5)"},
		{"cc", func(s *wire.RunSpec, _ *limits) { s.CC = "bbr" },
			reasonInvalid, `run r7 refused: congestion control "bbr" is not offered by this kernel (it has reno, cubic)`},
		{"zero duration", func(s *wire.RunSpec, _ *limits) { s.Duration = 0 },
			reasonInvalid, "run r7 refused: duration 0s is not positive"},
		{"bad run id", func(s *wire.RunSpec, _ *limits) { s.Run = "a b" },
			reasonInvalid, `run refused: run id "a b": only printable ASCII without spaces`},
		{"duplicate endpoint", func(s *wire.RunSpec, _ *limits) { s.Endpoints = append(s.Endpoints, s.Endpoints[1]) },
			reasonInvalid, "run r7 refused: endpoint 1 is listed twice"},
		{"no local", func(s *wire.RunSpec, _ *limits) { s.Local = nil },
			reasonInvalid, "run r7 refused: no endpoint is local to this agent"},
		{"stream on unknown conn", func(s *wire.RunSpec, _ *limits) { s.Streams[0].Conn = 44 },
			reasonInvalid, "run r7 refused: stream 0 is on connection 44, which is not in the run"},
		{"peer's conn names unknown endpoint", func(s *wire.RunSpec, _ *limits) { s.Conns[1].To = 12 },
			reasonNotInRun, "run r7 refused: connection 1 names endpoint 12, which is not in the run's endpoint list"},
		{"small datagram", func(s *wire.RunSpec, _ *limits) { s.UDP[0].Size = 8 },
			reasonInvalid, "run r7 refused: UDP flow 0's datagram size 8 is outside 40…65507"},
		{"multicast endpoint", func(s *wire.RunSpec, _ *limits) { s.Endpoints[2].Addr = ap("239.1.1.1:7000") },
			reasonInvalid, "run r7 refused: endpoint 2's address 239.1.1.1:7000 is not a unicast IP and port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, l := baseSpec(), baseLimits()
			tc.change(&s, &l)
			_, err := checkRun(s, l)
			var rf *refusal
			if !errors.As(err, &rf) {
				t.Fatalf("checkRun = %v, want a refusal", err)
			}
			if rf.reason != tc.reason || rf.msg != tc.msg {
				t.Errorf("refusal (%s) %q\nwant      (%s) %q", rf.reason, rf.msg, tc.reason, tc.msg)
			}
		})
	}
}
