package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fabriclab/hosts/nslab"
)

func labExec(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = newApp(&out, &errOut).execute(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestLabUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"lab"},
		{"lab", "frob"},
		{"lab", "up"},
		{"lab", "up", "a.yaml", "b.yaml"},
		{"lab", "up", "a.yaml", "--scale", "0"},
		{"lab", "up", "a.yaml", "--scale", "1/0"},
		{"lab", "up", "a.yaml", "--scale", "fast"},
		{"lab", "up", "a.yaml", "--prefix", "Lab"},
		{"lab", "up", "a.yaml", "--mgmt-subnet", "10.254.0.0"},
		{"lab", "down", "extra"},
		{"lab", "status", "extra"},
		{"lab", "down", "--prefix", "waytoolongprefix-"},
	} {
		code, out, errOut := labExec(args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "fabriclab: ") || strings.Contains(out+errOut, "Usage:") {
			t.Errorf("%v: stderr %q, want one line", args, errOut)
		}
	}
}

func TestLabHelp(t *testing.T) {
	for _, args := range [][]string{{"lab", "--help"}, {"lab", "up", "--help"}, {"lab", "down", "--help"}, {"lab", "status", "--help"}} {
		code, out, _ := labExec(args...)
		if code != 0 || !strings.Contains(out, "Examples:\n  sudo fabriclab lab ") {
			t.Errorf("%v: exit %d, no examples in\n%s", args, code, out)
		}
	}
	_, out, _ := labExec("lab", "up", "--help")
	for _, want := range []string{"--scale S", "1/1000", "--state-dir DIR", "--prefix P", "--variant NAME", "--replace", "--no-agents", "propagation delay, ECN marking, PFC"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up --help lacks %q", want)
		}
	}
}

// labScenario is a 2-leaf, 1-spine, 2-host fabric in a file of t's.
func labScenario(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "lab.yaml")
	const text = `name: lab-cli
topology:
  kind: leaf-spine
  hosts: 2
  hosts_per_leaf: 1
  spines: 1
  host_link: {rate: 100Gbps}
  fabric_link: {rate: 100Gbps}
workload:
  kind: permutation
  sizes: {list: [1MiB]}
variants:
  - name: first
  - name: second
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLabUpDown builds a lab with the CLI (no agents), refuses a second
// one, replaces it, and takes it down, reading the prefix from the state.
func TestLabUpDown(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the lab tests need root, and CI=true runs as root")
		}
		t.Skip("the lab tests need root (network namespaces); run them with sudo")
	}
	pid := os.Getpid()
	prefix := "flc" + strconv.FormatInt(int64(pid), 36) + "-"
	slot := pid % 2048
	mgmt := fmt.Sprintf("10.253.%d.%d/27", slot/8, slot%8*32)
	dir := filepath.Join(t.TempDir(), "state")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := nslab.Down(ctx, nslab.Options{Prefix: prefix, StateDir: dir}); err != nil {
			t.Errorf("cleaning up the lab %s: %v", prefix, err)
		}
	})
	path := labScenario(t)
	up := []string{"lab", "up", path, "--prefix", prefix, "--state-dir", dir, "--mgmt-subnet", mgmt, "--no-agents", "--scale", "1/5000", "--variant", "second"}
	code, out, errOut := labExec(up...)
	if code != 0 {
		t.Fatalf("lab up: exit %d: %s", code, errOut)
	}
	want := fmt.Sprintf("lab %s: leaf-spine of 2 hosts and 3 switches (variant second), scale 1/5000: host links 20Mbps, fabric links 20Mbps, shaped with tbf\n", prefix)
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "--agents "+filepath.Join(dir, "agents.yaml")) {
		t.Errorf("lab up printed\n%s\nwant it to start with\n%s", out, want)
	}
	l, err := nslab.ReadLab(dir)
	if err != nil || len(l.Namespaces) != 5 || l.Mgmt.Subnet != netip.MustParsePrefix(mgmt) {
		t.Fatalf("lab.json: %v %+v", err, l)
	}

	code, _, errOut = labExec(up...)
	if code != exitError || !strings.Contains(errOut, "already exists") ||
		!strings.Contains(errOut, "run 'fabriclab lab down --prefix "+prefix+" --state-dir "+dir+"' first, or lab up --replace") {
		t.Errorf("second lab up: exit %d: %s", code, errOut)
	}
	if code, _, errOut = labExec(append(up, "--replace")...); code != 0 {
		t.Fatalf("lab up --replace: exit %d: %s", code, errOut)
	}
	// Without agents the lab is up but not whole: status says so, exit 1.
	code, out, errOut = labExec("lab", "status", "--state-dir", dir)
	if code != exitError || !strings.HasPrefix(out, "lab "+prefix+": leaf-spine of 2 hosts and 3 switches (variant second)") ||
		!strings.Contains(out, "namespaces 5 of 5 up, 0 agents") || !strings.Contains(out, "not whole: 2 of 2 host namespaces, 0 of 2 agents") {
		t.Errorf("lab status: exit %d: %s%s", code, out, errOut)
	}

	code, out, errOut = labExec("lab", "down", "--state-dir", dir)
	if code != 0 || !strings.HasPrefix(out, "lab "+prefix+": removed 5 namespaces") {
		t.Errorf("lab down: exit %d: %s%s", code, out, errOut)
	}
	code, out, _ = labExec("lab", "down", "--state-dir", dir, "--prefix", prefix)
	if code != 0 || out != "no lab with prefix "+prefix+" here: nothing to remove\n" {
		t.Errorf("lab down again: exit %d: %q", code, out)
	}
	code, out, _ = labExec("lab", "status", "--state-dir", dir, "--prefix", prefix)
	if code != exitError || out != "no lab with prefix "+prefix+" here\n" {
		t.Errorf("lab status after down: exit %d: %q", code, out)
	}
}
