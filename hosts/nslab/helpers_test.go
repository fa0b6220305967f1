package nslab

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fabriclab/internal/roottest"
	"fabriclab/scenario"
)

// needRoot: the root tests build real labs (see roottest).
func needRoot(t *testing.T) { t.Helper(); roottest.Need(t) }

// testExe is this test binary; the helpers below run it inside
// namespaces (ip netns exec NS testExe nslab-helper MODE ARGS…).
var testExe string

// TestMain runs the helper modes when the binary is started as one: a
// ping, a TCP sender or receiver inside a namespace, or a stand-in agent.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "nslab-helper" {
		os.Exit(helperMain(os.Args[2], os.Args[3:]))
	}
	if os.Getenv("NSLAB_FAKE_AGENT") == "1" && len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(fakeAgent(os.Args[2:]))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testExe = exe
	os.Exit(m.Run())
}

func helperMain(mode string, args []string) int {
	switch mode {
	case "ping": // ping [-dev DEV] [-w DUR] SRC DST…: one line per DST, "DST ok" or "DST fail: why"
		dev, wait := "", 2*time.Second
		for len(args) > 1 && strings.HasPrefix(args[0], "-") {
			switch args[0] {
			case "-dev":
				dev = args[1]
			case "-w":
				wait, _ = time.ParseDuration(args[1])
			}
			args = args[2:]
		}
		for _, dst := range args[1:] {
			if err := ping(args[0], dev, dst, wait); err != nil {
				fmt.Printf("%s fail: %v\n", dst, err)
			} else {
				fmt.Printf("%s ok\n", dst)
			}
		}
		return 0
	case "recv": // recv ADDR N: prints "ready", then "ns=D" (first to last byte of N)
		return recvHelper(args[0], args[1])
	case "send": // send SRC DST N
		return sendHelper(args[0], args[1], args[2])
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 2
}

// ping sends ICMP echo requests from src (optionally bound to dev) to dst
// until one is answered or d passes.
func ping(src, dev, dst string, d time.Duration) error {
	lc := net.ListenConfig{}
	if dev != "" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptString(int(fd), syscall.SOL_SOCKET, syscall.SO_BINDTODEVICE, dev)
			})
			return errors.Join(err, serr)
		}
	}
	if src == "" {
		src = "0.0.0.0"
	}
	pc, err := lc.ListenPacket(context.Background(), "ip4:icmp", src)
	if err != nil {
		return err
	}
	defer pc.Close()
	to := &net.IPAddr{IP: net.ParseIP(dst)}
	id := uint16(os.Getpid())
	deadline := time.Now().Add(d)
	buf := make([]byte, 1500)
	for seq := uint16(1); time.Now().Before(deadline); seq++ {
		if _, err := pc.WriteTo(echoRequest(id, seq), to); err != nil {
			return err
		}
		pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				break // timed out: send the next one
			}
			if n >= 8 && buf[0] == 0 && from.String() == dst && binary.BigEndian.Uint16(buf[4:]) == id {
				return nil
			}
		}
	}
	return errors.New("no reply")
}

// echoRequest is an ICMP echo request with its checksum.
func echoRequest(id, seq uint16) []byte {
	b := make([]byte, 16)
	b[0] = 8 // echo request
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], "fabricla")
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(b[2:], ^uint16(sum))
	return b
}

func recvHelper(addr, size string) int {
	n, _ := strconv.ParseInt(size, 10, 64)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("ready")
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	buf := make([]byte, 64<<10)
	var got int64
	var first time.Time
	for got < n {
		k, err := c.Read(buf)
		if k > 0 && got == 0 {
			first = time.Now()
		}
		got += int64(k)
		if err != nil {
			break
		}
	}
	fmt.Printf("bytes=%d ns=%d\n", got, time.Since(first).Nanoseconds())
	return 0
}

func sendHelper(src, dst, size string) int {
	n, _ := strconv.ParseInt(size, 10, 64)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", dst)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if _, err := io.CopyN(c, zeroReader{}, n); err != nil {
		fmt.Println("error", err)
		return 1
	}
	c.Close()
	return 0
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// fakeAgent stands in for `fabriclab agent` (written elsewhere): it
// prints its arguments, accepts connections on --listen and waits to be
// stopped.
func fakeAgent(args []string) int {
	fmt.Println("fake agent:", strings.Join(args, " "))
	if os.Getenv("NSLAB_FAKE_AGENT_FAIL") == "1" {
		fmt.Println("failing as asked")
		return 3
	}
	listen := ""
	for i, a := range args {
		if a == "--listen" && i+1 < len(args) {
			listen = args[i+1]
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		c.Close()
	}
}

// inNS runs this binary's helper mode inside namespace ns and returns
// its output.
func inNS(t *testing.T, ns, mode string, args ...string) string {
	t.Helper()
	argv := append([]string{"netns", "exec", ns, testExe, "nslab-helper", mode}, args...)
	out, err := exec.Command("ip", argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("helper %s in %s: %v: %s", mode, ns, err, out)
	}
	return string(out)
}

// startInNS starts a helper in ns and returns it with its stdout.
func startInNS(t *testing.T, ns, mode string, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	argv := append([]string{"netns", "exec", ns, testExe, "nslab-helper", mode}, args...)
	cmd := exec.Command("ip", argv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// ipOut runs ip (or another command) and returns its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// testOptions are the options of a test lab: a prefix and a management
// subnet of this process's own (flt + the PID in base 36 + a letter), a
// state directory in t's temporary directory.
func testOptions(t *testing.T, letter byte) Options {
	pid := os.Getpid()
	slot := (pid*8 + int(letter-'a')) % 2048
	return Options{
		Prefix:     "flt" + strconv.FormatInt(int64(pid), 36) + string(letter) + "-",
		StateDir:   filepath.Join(t.TempDir(), "lab"),
		MgmtSubnet: netip.MustParsePrefix(fmt.Sprintf("10.252.%d.%d/27", slot/8, slot%8*32)),
	}
}

// upTest builds the lab of the scenario at path with o and removes it when
// t ends, whatever happens.
func upTest(t *testing.T, path string, o Options, sets ...string) *Lab {
	t.Helper()
	removeStaleTestLabs(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := Down(ctx, o); err != nil {
			t.Errorf("cleaning up the lab %s: %v", o.Prefix, err)
		}
	})
	start := time.Now()
	l, err := Up(context.Background(), loadJob(t, path, sets...), o)
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Logf("lab %s up in %v", o.Prefix, time.Since(start).Round(time.Millisecond))
	return l
}

func loadJob(t *testing.T, path string, sets ...string) scenario.Job {
	t.Helper()
	f, err := scenario.LoadSets(path, sets)
	if err != nil {
		t.Fatal(err)
	}
	jobs := f.Jobs()
	if len(jobs) == 0 {
		t.Fatalf("%s: no jobs", path)
	}
	return jobs[0]
}

// removeStaleTestLabs removes the labs of test processes that are gone
// (a test binary killed before its cleanups ran): namespaces and root
// interfaces named flt<pid in base 36><a–h>- whose process does not
// exist.
func removeStaleTestLabs(t *testing.T) {
	var names []string
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
				names = append(names, name)
			}
		}
	}
	seen := map[string]bool{}
	for _, name := range names {
		m := staleTestName.FindStringSubmatch(name)
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		pid, err := strconv.ParseInt(m[2], 36, 64)
		if err != nil {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.FormatInt(pid, 10)); err == nil {
			continue // its process still runs
		}
		t.Logf("removing the stale test lab %s", m[1])
		if _, err := Down(context.Background(), Options{Prefix: m[1], StateDir: t.TempDir()}); err != nil {
			t.Logf("removing the stale test lab %s: %v", m[1], err)
		}
	}
}

// staleTestName matches the names of testOptions' labs.
var staleTestName = regexp.MustCompile(`^(flt([0-9a-z]{1,6})[a-h]-)`)

// inode is a file's inode number (a namespace's identity for /run/netns).
func inode(fi os.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }
