package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// HostCounters is one reading of this host's network counters: the
// network namespace the agent runs in (/proc/net is per namespace) and the
// NICs asked for. A counter the host does not expose is absent from
// Values, never 0; Unavailable names each source that could not be read
// and why, so a report can say "unavailable" rather than guess.
//
// Names are "Table.Field" as the kernel spells them ("Tcp.RetransSegs",
// "TcpExt.TCPDeliveredCE", "IpExt.InCEPkts", "Udp.RcvbufErrors") and
// "ethtool.IFACE.stat" for NIC counters ("ethtool.eth0.rx_pause_ctrl_phy").
type HostCounters struct {
	T           time.Time
	Values      map[string]int64
	Unavailable map[string]string // source → why
}

// Get is one counter; ok is false when the host does not expose it.
func (h HostCounters) Get(name string) (v int64, ok bool) {
	v, ok = h.Values[name]
	return v, ok
}

// hostKeep lists the /proc/net counters a run reports: retransmits and
// loss for TCP and UDP, and whatever says ECN.
var hostKeep = map[string][]string{
	"Tcp": {"InSegs", "OutSegs", "RetransSegs", "InErrs", "OutRsts"},
	"Udp": {"InDatagrams", "OutDatagrams", "NoPorts", "InErrors", "RcvbufErrors", "SndbufErrors"},
	"TcpExt": {"TCPDelivered", "TCPDeliveredCE", "TCPTimeouts", "TCPLostRetransmit", "TCPFastRetrans",
		"TCPSlowStartRetrans", "TCPSynRetrans", "TCPSpuriousRTOs", "TCPOFOQueue", "TCPRcvQDrop", "TCPBacklogDrop"},
	"IpExt": {"InNoECTPkts", "InECT1Pkts", "InECT0Pkts", "InCEPkts"},
}

func keepProc(table, field string) bool {
	for _, f := range hostKeep[table] {
		if f == field {
			return true
		}
	}
	return table == "TcpExt" && strings.Contains(field, "ECN")
}

// ethtoolKeep are the substrings of NIC statistics worth a before/after:
// pause and PFC frames, ECN marks and CNPs, drops and discards.
var ethtoolKeep = []string{"pause", "pfc", "ecn", "cnp", "congest", "discard", "drop", "out_of_buffer"}

func keepEthtool(stat string) bool {
	s := strings.ToLower(stat)
	for _, k := range ethtoolKeep {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// ReadHostCounters reads /proc/net/snmp, /proc/net/netstat and, for each
// interface named, `ethtool -S` (when the command exists and answers).
func ReadHostCounters(ctx context.Context, ifaces ...string) HostCounters {
	h := HostCounters{T: time.Now(), Values: map[string]int64{}, Unavailable: map[string]string{}}
	for _, path := range []string{"/proc/net/snmp", "/proc/net/netstat"} {
		b, err := os.ReadFile(path)
		if err == nil {
			err = parseProcPairs(string(b), keepProc, h.Values)
		}
		if err != nil {
			h.Unavailable[path] = err.Error()
		}
	}
	if len(ifaces) == 0 {
		return h
	}
	bin, err := exec.LookPath("ethtool")
	if err != nil {
		for _, ifc := range ifaces {
			h.Unavailable["ethtool -S "+ifc] = "ethtool not installed"
		}
		return h
	}
	for _, ifc := range ifaces {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		out, err := exec.CommandContext(cctx, bin, "-S", ifc).Output()
		cancel()
		if err != nil {
			h.Unavailable["ethtool -S "+ifc] = oneLine(err)
			continue
		}
		n := parseEthtool(ifc, string(out), h.Values)
		if n == 0 {
			h.Unavailable["ethtool -S "+ifc] = "driver exposes no pause, PFC, ECN or drop counter"
		}
	}
	return h
}

func oneLine(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return strings.TrimSpace(strings.SplitN(string(ee.Stderr), "\n", 2)[0])
	}
	return err.Error()
}

// parseProcPairs reads the /proc/net/snmp format: for each table a line of
// field names and a line of values, both prefixed "Table:". Kept fields
// go into dst as "Table.Field"; a value that does not parse is left out.
func parseProcPairs(text string, keep func(table, field string) bool, dst map[string]int64) error {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines)%2 != 0 {
		return fmt.Errorf("odd number of lines (%d)", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || len(names) != len(values) || names[0] != values[0] || !strings.HasSuffix(names[0], ":") {
			return fmt.Errorf("line %d: names and values do not pair up", i+1)
		}
		table := strings.TrimSuffix(names[0], ":")
		for j := 1; j < len(names); j++ {
			if !keep(table, names[j]) {
				continue
			}
			if v, err := strconv.ParseInt(values[j], 10, 64); err == nil {
				dst[table+"."+names[j]] = v
			}
		}
	}
	return nil
}

// parseEthtool reads `ethtool -S` output ("     name: value" lines) and
// returns how many kept counters it put in dst.
func parseEthtool(iface, text string, dst map[string]int64) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		name, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name == "" || !keepEthtool(name) {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			continue
		}
		dst["ethtool."+iface+"."+strings.TrimSpace(name)] = v
		n++
	}
	return n
}

// CounterDelta is after − before for every counter present in both; a
// counter that went down (a driver reset) is left out rather than shown
// negative.
func CounterDelta(before, after HostCounters) map[string]int64 {
	d := map[string]int64{}
	for k, a := range after.Values {
		if b, ok := before.Values[k]; ok && a >= b {
			d[k] = a - b
		}
	}
	return d
}

// InterfaceOf is the name of the interface holding addr: what to give
// ReadHostCounters for an endpoint's NIC.
func InterfaceOf(addr netip.Addr) (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("dataplane: listing interfaces: %w", err)
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if pn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(pn.IP); ok && ip.Unmap() == addr.Unmap() {
					return ifc.Name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("dataplane: no interface holds %s", addr)
}
