package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fabriclab/hosts/agent"
)

func agentToken(t *testing.T, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("s3cret-s3cret-s3cret-s3cret\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAgentHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := newApp(&out, &errb).execute(context.Background(), []string{"agent", "--help"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Examples:", "fabriclab agent --listen 10.0.0.5:7470 --token-file /etc/fabriclab/token --allow 10.0.0.0/24",
		"--token-file FILE", "--allow CIDR", "--data-ip IP", "--max-rate RATE", "--max-duration DUR", "--metrics-listen ADDR", "--ca FILE", `(default "127.0.0.1:7470")`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAgentFlagErrors(t *testing.T) {
	tok := agentToken(t, 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"agent"}, 2, "fabriclab: agent needs --token-file FILE (the shared token) (see 'fabriclab agent --help')"},
		{[]string{"agent", "--token-file", tok, "--max-rate", "100GBps"}, 2, "fabriclab: --max-rate: "},
		{[]string{"agent", "--token-file", tok, "--max-duration", "forever"}, 2, `fabriclab: --max-duration "forever": want a positive duration such as 30s, 10m or 1h (see 'fabriclab agent --help')`},
		{[]string{"agent", "--token-file", tok, "--allow", "10.0.0.0/33"}, 2, `fabriclab: --allow "10.0.0.0/33": not a CIDR such as 10.0.0.0/24 (or one address) (see 'fabriclab agent --help')`},
		{[]string{"agent", "--token-file", tok, "--data-ip", "ten"}, 2, `fabriclab: --data-ip "ten" is not an IP address`},
		{[]string{"agent", "--token-file", tok, "--cert", "c.pem"}, 2, "fabriclab: --cert and --key go together"},
		{[]string{"agent", "--token-file", tok, "--bogus"}, 2, "fabriclab: unknown flag: --bogus"},
		{[]string{"agent", "extra"}, 2, `fabriclab: unexpected argument "extra"`},
		{[]string{"agent", "--token-file", tok, "--listen", "127.0.0.1:0", "--metrics-listen", "nowhere"}, 1, "fabriclab: metrics: listen tcp: address nowhere: missing port in address"},
	} {
		var out, errb bytes.Buffer
		code := newApp(&out, &errb).execute(context.Background(), tc.args)
		if code != tc.code || !strings.HasPrefix(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q…", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

func TestAgentTokenFileMode(t *testing.T) {
	tok := agentToken(t, 0o644)
	var out, errb bytes.Buffer
	code := newApp(&out, &errb).execute(context.Background(), []string{"agent", "--token-file", tok, "--listen", "127.0.0.1:0", "--metrics-listen", "off"})
	want := "fabriclab: token file " + tok + " can be read by others (mode 0644); chmod 600 it\n"
	if code != 1 || errb.String() != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, errb.String(), want)
	}
	if strings.Contains(errb.String(), "s3cret") {
		t.Error("the error shows the token")
	}
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("tiny"), 0o600)
	errb.Reset()
	if code := newApp(&out, &errb).execute(context.Background(), []string{"agent", "--token-file", short}); code != 1 || !strings.Contains(errb.String(), "a token needs at least 16") {
		t.Errorf("short token: exit %d, %q", code, errb.String())
	}
}

// TestAgentServes starts the command, dials it with the token, and stops
// it as a signal would: exit 0 after aborting the run.
func TestAgentServes(t *testing.T) {
	tok := agentToken(t, 0o600)
	var out bytes.Buffer
	var errb syncBuffer
	a := newApp(&out, &errb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- a.execute(ctx, []string{"agent", "--token-file", tok, "--listen", "127.0.0.1:0", "--metrics-listen", "off", "--allow", "127.0.0.1"})
	}()
	re := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(5 * time.Second)
	var addr string
	for addr == "" {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no start line:\n%s", errb.String())
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	c, err := agent.Dial(context.Background(), agent.ClientConfig{Address: addr, Token: []byte("s3cret-s3cret-s3cret-s3cret")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	in, err := c.Info(context.Background())
	if err != nil || in.Version != version || strings.Join(in.Allow, ",") != "127.0.0.1/32" {
		t.Errorf("Info = %+v, %v", in, err)
	}
	c.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d:\n%s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent did not stop")
	}
	log := errb.String()
	for _, want := range []string{"fabriclab agent: fabriclab dev listening on 127.0.0.1:", "ephemeral self-signed certificate", "allow 127.0.0.1/32", "max rate 100Gbps, max duration 10m0s", "fabriclab agent: stopped\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "s3cret") {
		t.Error("the log shows the token")
	}
}

// /metrics beyond loopback is the operator's choice (Prometheus scrapes
// from elsewhere), and the start line says what it then shows to anyone.
func TestAgentMetricsLine(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{nil, "off"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9470}, "http://127.0.0.1:9470/metrics"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9470}, "http://[::1]:9470/metrics"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9470}, "http://0.0.0.0:9470/metrics (beyond loopback, plain HTTP without authentication: anyone who reaches it sees run ids"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9470}, "http://10.0.0.7:9470/metrics (beyond loopback"},
	} {
		if got := metricsLine(c.addr); !strings.HasPrefix(got, c.want) || strings.Contains(c.want, "(") != strings.Contains(got, "(") {
			t.Errorf("%v: %q, want %q", c.addr, got, c.want)
		}
	}
}
