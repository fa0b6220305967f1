package dataplane

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckCC(t *testing.T) {
	avail := []string{"reno", "cubic"}
	if err := checkCC("cubic", avail); err != nil {
		t.Fatal(err)
	}
	err := checkCC("dctcp", avail)
	if err == nil || err.Error() != `dataplane: congestion control "dctcp" not available (kernel offers: reno cubic)` {
		t.Fatalf("err %v", err)
	}
}

// pickCC is a congestion control this process may set other than the
// kernel default, so reading it back proves the setsockopt took.
func pickCC(t *testing.T) string {
	t.Helper()
	avail, err := AvailableCC()
	if err != nil || len(avail) == 0 {
		t.Fatalf("AvailableCC: %v %v", avail, err)
	}
	def, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	allowed, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
	for _, cc := range avail {
		if cc != strings.TrimSpace(string(def)) && (os.Geteuid() == 0 || slices.Contains(strings.Fields(string(allowed)), cc)) {
			return cc
		}
	}
	t.Skipf("no congestion control besides the default %q to set (available %v)", def, avail)
	return ""
}

func TestCCSetAndReadBack(t *testing.T) {
	cc := pickCC(t)
	snd, rcv := newPair(t, Config{CC: cc, Allowed: onlyLoopback})
	dial(t, snd, Conn{1, 0, 10})
	s := connStats(snd.Snapshot(), 1, SideSender)
	if s.CC != cc || s.TCP == nil || s.TCP.CC != cc {
		t.Fatalf("sender reads back %q / %+v, want %q", s.CC, s.TCP, cc)
	}
	waitFor(t, 2*time.Second, "receiver registered", func() bool { return connStats(rcv.Snapshot(), 1, SideReceiver).ID == 1 })
	if r := connStats(rcv.Snapshot(), 1, SideReceiver); r.TCP == nil || r.TCP.CC != cc {
		t.Fatalf("receiver (inherits the listener's) reads back %+v, want %q", r.TCP, cc)
	}
	t.Logf("congestion control %s set and read back", cc)
}

func TestCCUnavailableRefused(t *testing.T) {
	_, err := New(Config{CC: "fabriclab-nope", Allowed: onlyLoopback}, []Endpoint{ep(0)}, nil)
	if err == nil || !strings.Contains(err.Error(), `congestion control "fabriclab-nope" not available (kernel offers: `) {
		t.Fatalf("err %v", err)
	}
}
