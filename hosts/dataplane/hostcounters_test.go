package dataplane

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

const sampleSnmp = `Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 126789
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 10 5000 6000 17 0 3 0
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 100 2 5 90 5 0 0 0 0
`

// An old kernel: TcpExt without the CE fields, no IpExt table at all.
const sampleNetstat = `TcpExt: SyncookiesSent TCPTimeouts TCPECNFallback TCPFastRetrans
TcpExt: 0 4 1 9
`

func TestParseProcKeepsOnlyWhatExists(t *testing.T) {
	got := map[string]int64{}
	if err := parseProcPairs(sampleSnmp, keepProc, got); err != nil {
		t.Fatal(err)
	}
	if err := parseProcPairs(sampleNetstat, keepProc, got); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"Tcp.InSegs": 5000, "Tcp.OutSegs": 6000, "Tcp.RetransSegs": 17, "Tcp.InErrs": 0, "Tcp.OutRsts": 3,
		"Udp.InDatagrams": 100, "Udp.NoPorts": 2, "Udp.InErrors": 5, "Udp.OutDatagrams": 90, "Udp.RcvbufErrors": 5, "Udp.SndbufErrors": 0,
		"TcpExt.TCPTimeouts": 4, "TcpExt.TCPECNFallback": 1, "TcpExt.TCPFastRetrans": 9,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %d (%v), want %d", k, g, ok, v)
		}
	}
	h := HostCounters{Values: got}
	for _, absent := range []string{"TcpExt.TCPDeliveredCE", "IpExt.InCEPkts", "Tcp.RtoMin"} {
		if v, ok := h.Get(absent); ok {
			t.Errorf("%s = %d, want absent", absent, v)
		}
	}
	if err := parseProcPairs("Tcp: A B\nTcp: 1\n", keepProc, got); err == nil {
		t.Error("mismatched line accepted")
	}
	if err := parseProcPairs("Tcp: A B\n", keepProc, got); err == nil {
		t.Error("odd lines accepted")
	}
}

const sampleEthtool = `NIC statistics:
     rx_packets: 123
     rx_pause_ctrl_phy: 5
     tx_pause_ctrl_phy: 6
     rx_prio3_pause: 7
     rx_ecn_mark: 8
     rx_discards_phy: 9
     tx_bytes: 1000
     weird line without a number: x
`

func TestParseEthtool(t *testing.T) {
	got := map[string]int64{}
	if n := parseEthtool("eth1", sampleEthtool, got); n != 5 {
		t.Fatalf("%d counters: %v", n, got)
	}
	for k, v := range map[string]int64{"rx_pause_ctrl_phy": 5, "tx_pause_ctrl_phy": 6, "rx_prio3_pause": 7, "rx_ecn_mark": 8, "rx_discards_phy": 9} {
		if got["ethtool.eth1."+k] != v {
			t.Errorf("%s = %d, want %d", k, got["ethtool.eth1."+k], v)
		}
	}
	if _, ok := got["ethtool.eth1.rx_packets"]; ok {
		t.Error("rx_packets kept")
	}
}

func TestCounterDelta(t *testing.T) {
	before := HostCounters{Values: map[string]int64{"a": 1, "b": 10, "c": 5}}
	after := HostCounters{Values: map[string]int64{"a": 4, "b": 2, "d": 7}}
	d := CounterDelta(before, after)
	if len(d) != 1 || d["a"] != 3 {
		t.Fatalf("delta %v, want only a=3 (b reset, c and d in one reading only)", d)
	}
}

// TestReadHostCountersHere reads this machine: /proc/net is always there;
// without ethtool the NIC counters are unavailable, not zero.
func TestReadHostCountersHere(t *testing.T) {
	h := ReadHostCounters(context.Background(), "lo")
	if _, ok := h.Get("Tcp.RetransSegs"); !ok {
		t.Fatalf("no Tcp.RetransSegs: %v (unavailable %v)", h.Values, h.Unavailable)
	}
	if _, err := exec.LookPath("ethtool"); err != nil {
		if h.Unavailable["ethtool -S lo"] != "ethtool not installed" {
			t.Fatalf("unavailable %v", h.Unavailable)
		}
		for k := range h.Values {
			if strings.HasPrefix(k, "ethtool.") {
				t.Fatalf("%s present without ethtool", k)
			}
		}
	}
	if ifc, err := InterfaceOf(lo); err != nil || ifc != "lo" {
		t.Fatalf("InterfaceOf(127.0.0.1) = %q, %v", ifc, err)
	}
}
