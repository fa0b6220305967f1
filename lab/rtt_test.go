package lab

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// RTT by size (issue 19): one-packet RPCs (request and response of the
// same length, response_size: same) on an idle fabric take the closed
// form — the request's and the response's serialization and propagation
// on the two links each crosses — within 1%, on every transport.
func TestRTTOfOnePacketRPCsIsClosedForm(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "one.txt"), []byte("999 0\n1000 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"roce", "homa", "dctcp", "uet"} {
		s := leafSpine(8, 8, 1) // one leaf: host → leaf → host
		s.Topology.HostLink.Rate, s.Topology.HostLink.Delay = 100*units.Gbps, units.Microsecond
		s.Switch.PFC.Enabled = false
		s.Transport.Kind = kind
		s.Workload = scenario.Workload{Kind: "messages", SizeDist: filepath.Join(dir, "one.txt"), Load: 0.0005, Duration: 2 * units.Millisecond,
			ResponseSize: scenario.SameSize}
		_, r := runSim(t, job(s, 0))
		wire := float64(1000 + s.NIC.Overhead)
		want := 4 * (wire*8/100e9 + 1e-6)
		ld := r.Load
		if ld == nil || ld.RTT == nil || ld.RPCs < 50 {
			t.Fatalf("%s: no RTTs measured (%+v)", kind, ld)
		}
		for _, b := range r.SlowdownBySize {
			if b.RTT == nil {
				t.Fatalf("%s: bucket %d–%d has no RTT", kind, b.LoBytes, b.HiBytes)
			}
		}
		t.Logf("%s: %d RPCs, RTT p50 %.4f µs, p99 %.4f µs; closed form %.4f µs", kind, ld.RPCs, ld.RTT.P50*1e6, ld.RTT.P99*1e6, want*1e6)
		for what, got := range map[string]float64{"p50": ld.RTT.P50, "p99": ld.RTT.P99} {
			if math.Abs(got-want) > 0.01*want {
				t.Errorf("%s: RTT %s %.4f µs, want %.4f µs within 1%%", kind, what, got*1e6, want*1e6)
			}
		}
	}
}
