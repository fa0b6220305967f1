package nslab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"fabriclab/hosts/inventory"
)

// TestLabLeafSpine builds the 2 leaves × 2 hosts, 2 spines lab of
// testdata/leafspine.yaml at 20 Mb/s with stand-in agents and checks the
// fabric, the management network, the agents, and down (also after a
// crash).
func TestLabLeafSpine(t *testing.T) {
	needRoot(t)
	o := testOptions(t, 'a')
	o.Scale = 1.0 / 5000 // 100G → 20 Mb/s
	o.StartAgents, o.AgentExe = true, testExe
	o.AgentEnv = []string{"NSLAB_FAKE_AGENT=1", "GOMAXPROCS=1"}
	l := upTest(t, "testdata/leafspine.yaml", o)
	if l.HostRate != 20e6 || l.FabricRate != 20e6 {
		t.Fatalf("rates %d, %d bit/s, want 20e6", l.HostRate, l.FabricRate)
	}

	t.Run("every host pings every other", func(t *testing.T) { pingAll(t, l) })

	t.Run("the shaped rate holds", func(t *testing.T) {
		// host 0 (leaf0) → host 2 (leaf1): host link, uplink, downlink.
		src := l.Hosts[0]
		checkRate(t, l, src, l.Hosts[2])
		q := run(t, "tc", "-n", src.NS, "qdisc", "show", "dev", "eth0")
		if !strings.Contains(q, "tbf") || !strings.Contains(q, "rate 20Mbit") {
			t.Errorf("host 0's NIC queue: %s", q)
		}
	})

	t.Run("ECMP over both spines with an L4 hash", func(t *testing.T) {
		leaf0 := l.Switch("leaf0")
		// Host 2 (on leaf1) is reached over both spines.
		r := run(t, "ip", "-n", leaf0.NS, "route", "show", l.Hosts[2].DataIP.String()+"/32")
		if strings.Count(r, "nexthop via") != 2 || !strings.Contains(r, "dev spine0") || !strings.Contains(r, "dev spine1") {
			t.Errorf("leaf0's route to host 2:\n%s", r)
		}
		if p := strings.TrimSpace(run(t, "ip", "netns", "exec", leaf0.NS, "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy")); p != "1" {
			t.Errorf("fib_multipath_hash_policy is %s, want 1", p)
		}
		// Different ports take different spines.
		used := map[string]bool{}
		for sport := 10000; sport < 10032; sport++ {
			g := run(t, "ip", "-n", leaf0.NS, "route", "get", l.Hosts[2].DataIP.String(), "from", l.Hosts[0].DataIP.String(),
				"iif", "h0", "ipproto", "tcp", "sport", strconv.Itoa(sport), "dport", "5201")
			if m := regexp.MustCompile(`dev (spine\d)`).FindStringSubmatch(g); m != nil {
				used[m[1]] = true
			}
		}
		if !used["spine0"] || !used["spine1"] {
			t.Errorf("32 flows to host 2 used %v, want both spines", used)
		}
	})

	t.Run("the routes file pins leaf0's route to host 3", func(t *testing.T) {
		// testdata/routes.txt: leaf0 3 spine1.
		g := run(t, "ip", "-n", l.Switch("leaf0").NS, "route", "get", l.Hosts[3].DataIP.String())
		if !strings.Contains(g, "dev spine1") {
			t.Errorf("leaf0 sends host 3's traffic: %s", g)
		}
		r := run(t, "ip", "-n", l.Switch("leaf0").NS, "route", "show", l.Hosts[3].DataIP.String()+"/32")
		if strings.Contains(r, "nexthop") {
			t.Errorf("leaf0's route to host 3 is multipath: %s", r)
		}
	})

	t.Run("management reachable from the root namespace only", func(t *testing.T) {
		for _, h := range l.Hosts {
			if err := ping("", "", h.MgmtIP.String(), 2*time.Second); err != nil {
				t.Errorf("root → host %d's management address %s: %v", h.Host, h.MgmtIP, err)
			}
			if g := run(t, "ip", "route", "get", h.DataIP.String()); strings.Contains(g, l.Mgmt.Bridge) {
				t.Errorf("the root namespace routes host %d's data address into the lab: %s", h.Host, g)
			}
		}
		mgmt := []string{}
		for _, h := range l.Hosts {
			mgmt = append(mgmt, h.MgmtIP.String())
		}
		for _, s := range l.Switches {
			out := inNS(t, s.NS, "ping", append([]string{"-w", "300ms", ""}, mgmt...)...)
			if strings.Contains(out, " ok") {
				t.Errorf("switch %s reaches the management network:\n%s", s.Name, out)
			}
		}
		// Host 1 through its data interface reaches no management address.
		out := inNS(t, l.Hosts[1].NS, "ping", append([]string{"-dev", "eth0", "-w", "300ms", l.Hosts[1].DataIP.String()}, mgmt...)...)
		if strings.Contains(out, " ok") {
			t.Errorf("host 1's data interface reaches the management network:\n%s", out)
		}
	})

	t.Run("agents run in their namespaces with the documented command line", func(t *testing.T) {
		for _, h := range l.Hosts {
			if h.AgentPID == 0 {
				t.Fatalf("host %d has no agent", h.Host)
			}
			nsOf, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", h.AgentPID))
			st, err := os.Stat("/run/netns/" + h.NS)
			if err != nil || !strings.Contains(nsOf, fmt.Sprint(inode(st))) {
				t.Errorf("agent %d of host %d is in %s, not in %s", h.AgentPID, h.Host, nsOf, h.NS)
			}
			c, err := net.DialTimeout("tcp", h.AgentAddress(l.AgentPort), 2*time.Second)
			if err != nil {
				t.Errorf("the root namespace cannot reach the agent of host %d: %v", h.Host, err)
			} else {
				c.Close()
			}
			log, _ := os.ReadFile(h.AgentLog)
			want := fmt.Sprintf("fake agent: --listen %s:%d --data-ip %s --token-file %s --allow 10.70.0.0/16",
				h.MgmtIP, DefaultAgentPort, h.DataIP, filepath.Join(l.StateDir, "token"))
			if !strings.Contains(string(log), want) {
				t.Errorf("agent of host %d logged %q, want %q", h.Host, log, want)
			}
		}
		inv, err := inventory.Load(AgentsPath(l.StateDir))
		if err != nil {
			t.Fatal(err)
		}
		if err := inv.Cover(len(l.Hosts)); err != nil {
			t.Error(err)
		}
		if _, err := inv.ReadToken(); err != nil {
			t.Error(err)
		}
		saved, err := ReadLab(l.StateDir)
		if err != nil || saved.Hosts[3].AgentPID != l.Hosts[3].AgentPID {
			t.Errorf("lab.json: %v, %+v", err, saved)
		}
	})

	t.Run("up again refuses", func(t *testing.T) {
		_, err := Up(context.Background(), loadJob(t, "testdata/leafspine.yaml"), o)
		var ee *ExistsError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "fabriclab lab down") {
			t.Fatalf("second lab up: %v", err)
		}
		if _, err := os.Stat("/run/netns/" + l.Hosts[0].NS); err != nil {
			t.Errorf("the refused lab up removed the lab: %v", err)
		}
	})

	t.Run("down after a crash removes everything", func(t *testing.T) {
		if err := os.Remove(filepath.Join(l.StateDir, LabFile)); err != nil {
			t.Fatal(err)
		}
		rm, err := Down(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(rm.Namespaces) != len(l.Namespaces) || len(rm.Processes) != len(l.Hosts) {
			t.Errorf("removed %d namespaces and %d processes, want %d and %d", len(rm.Namespaces), len(rm.Processes), len(l.Namespaces), len(l.Hosts))
		}
		assertGone(t, l)
		for _, h := range l.Hosts {
			if _, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", h.AgentPID)); err == nil {
				t.Errorf("the agent of host %d (pid %d) still runs", h.Host, h.AgentPID)
			}
		}
		again, err := Down(context.Background(), o)
		if err != nil || !again.Empty() {
			t.Errorf("down again: %v, %+v", err, again)
		}
	})
}

// checkRate moves 2 MiB over TCP from src to dst and checks that it
// goes at the shaped rate, within 20%.
func checkRate(t *testing.T, l *Lab, src, dst Host) {
	t.Helper()
	const n = 2 << 20
	addr := dst.DataIP.String() + ":5201"
	_, out := startInNS(t, dst.NS, "recv", addr, strconv.Itoa(n))
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("receiver: %q", line)
	}
	inNS(t, src.NS, "send", src.DataIP.String(), addr, strconv.Itoa(n))
	line, _ := out.ReadString('\n')
	var got, ns int64
	if _, err := fmt.Sscanf(line, "bytes=%d ns=%d", &got, &ns); err != nil || got != n {
		t.Fatalf("receiver: %q", line)
	}
	rate := float64(got*8) / (float64(ns) / 1e9)
	t.Logf("%d bytes in %v: %.2f Mb/s of payload on %.0f Mb/s links (%s)", got, time.Duration(ns), rate/1e6, float64(l.HostRate)/1e6, l.Qdisc)
	if rate < 0.8*float64(l.HostRate) || rate > 1.2*float64(l.HostRate) {
		t.Errorf("TCP moved %.2f Mb/s, want within 20%% of the shaped %d Mb/s", rate/1e6, l.HostRate/1e6)
	}
}

// TestLabHTB builds the smallest lab shaped with htb (what kernels
// without tbf get) and checks its rate, then that down removes it.
func TestLabHTB(t *testing.T) {
	needRoot(t)
	o := testOptions(t, 'b')
	o.Scale, o.Shaper = 1.0/4000, "htb" // 25 Mb/s
	l := upTest(t, "testdata/tiny.yaml", o)
	if l.Qdisc != "htb" {
		t.Fatalf("shaped with %s", l.Qdisc)
	}
	if out := inNS(t, l.Hosts[0].NS, "ping", l.Hosts[0].DataIP.String(), l.Hosts[1].DataIP.String()); !strings.Contains(out, " ok") {
		t.Fatalf("host 0 → host 1: %s", out)
	}
	checkRate(t, l, l.Hosts[0], l.Hosts[1])
	q := run(t, "tc", "-n", l.Switch("spine0").NS, "class", "show", "dev", "leaf1")
	if !strings.Contains(q, "htb 1:1") || !strings.Contains(q, "rate 25Mbit") {
		t.Errorf("spine0's port to leaf1: %s", q)
	}
	rm, err := Down(context.Background(), o)
	if err != nil || len(rm.Namespaces) != 5 {
		t.Fatalf("down: %v, %+v", err, rm)
	}
	assertGone(t, l)
}

// TestLabAgentExitsUndoes: an agent that dies at once fails lab up,
// which says where its log is and removes the lab.
func TestLabAgentExitsUndoes(t *testing.T) {
	needRoot(t)
	o := testOptions(t, 'f')
	o.StartAgents, o.AgentExe = true, testExe
	o.AgentEnv = []string{"NSLAB_FAKE_AGENT=1", "NSLAB_FAKE_AGENT_FAIL=1"}
	removeStaleTestLabs(t)
	t.Cleanup(func() { Down(context.Background(), o) })
	_, err := Up(context.Background(), loadJob(t, "testdata/tiny.yaml"), o)
	logPath := filepath.Join(o.StateDir, "agent-h0.log")
	if err == nil || !strings.Contains(err.Error(), "the agent of host 0 exited (exit status 3): see "+logPath) {
		t.Fatalf("lab up with a failing agent: %v", err)
	}
	// The logs stay for the user to read; everything else is gone.
	if log, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(log), "failing as asked") {
		t.Errorf("agent log: %v %q", err, log)
	}
	for _, f := range []string{"agent-h0.log", "agent-h1.log"} {
		os.Remove(filepath.Join(o.StateDir, f))
	}
	assertGone(t, &Lab{Prefix: o.Prefix, StateDir: o.StateDir})
}

// TestLabFatTreeAndRail builds a k=4 fat-tree (a link down from the
// start) and a rail fabric, and pings every host from every host.
func TestLabFatTreeAndRail(t *testing.T) {
	needRoot(t)
	for i, path := range []string{"testdata/fattree.yaml", "testdata/rail.yaml"} {
		o := testOptions(t, byte('c'+i))
		l := upTest(t, path, o)
		pingAll(t, l)
		if i == 0 {
			link := run(t, "ip", "-n", l.Switch("edge0-0").NS, "link", "show", "agg0-0")
			if !strings.Contains(link, "state DOWN") {
				t.Errorf("the link failing at 0 is up: %s", link)
			}
		}
	}
}

// pingAll pings every host's data address from every other host.
func pingAll(t *testing.T, l *Lab) {
	t.Helper()
	for _, h := range l.Hosts {
		args := []string{h.DataIP.String()}
		for _, o := range l.Hosts {
			if o.Host != h.Host {
				args = append(args, o.DataIP.String())
			}
		}
		out := inNS(t, h.NS, "ping", args...)
		if strings.Count(out, " ok\n") != len(l.Hosts)-1 {
			t.Errorf("%s: from host %d:\n%s", l.Topology, h.Host, out)
		}
	}
}

// assertGone checks that nothing of l is left: namespaces, root
// interfaces, state files.
func assertGone(t *testing.T, l *Lab) {
	t.Helper()
	ns := run(t, "ip", "netns", "list")
	for _, line := range strings.Split(ns, "\n") {
		if strings.HasPrefix(line, l.Prefix) {
			t.Errorf("namespace left: %s", line)
		}
	}
	for _, line := range strings.Split(run(t, "ip", "-o", "link", "show"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], l.Prefix) {
			t.Errorf("interface left: %s", f[1])
		}
	}
	if ents, err := os.ReadDir(l.StateDir); err == nil && len(ents) > 0 {
		t.Errorf("state left in %s: %v", l.StateDir, ents)
	}
}
