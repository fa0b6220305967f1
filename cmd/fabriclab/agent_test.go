package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
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
		"--token-file FILE", "--allow CIDR", "--data-ip IP", "--max-rate RATE", "--max-duration DUR", "--metrics-listen ADDR", "--metrics-token-file FILE", "--ca FILE", `(default "127.0.0.1:7470")`} {
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
	addr := startLine(t, &errb, cancel, `listening on (127\.0\.0\.1:\d+)`)
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

// /metrics beyond loopback is HTTPS and needs a bearer token of its own;
// on loopback it is plain HTTP, with a token if one is given. The start
// line says which.
func TestAgentMetricsAuth(t *testing.T) {
	tok := agentToken(t, 0o600)
	mtok := filepath.Join(t.TempDir(), "metrics-token")
	if err := os.WriteFile(mtok, []byte("scrape-scrape-scrape-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--metrics-listen", "0.0.0.0:0"}, 1, "fabriclab: metrics on 0.0.0.0:"},
		{[]string{"--metrics-listen", "0.0.0.0:0", "--metrics-token-file", tok}, 1, "fabriclab: the metrics token is the control token: give /metrics a token of its own"},
		{[]string{"--metrics-listen", "off", "--metrics-token-file", mtok}, 2, "fabriclab: --metrics-token-file with --metrics-listen off"},
		{[]string{"--metrics-token-file", filepath.Join(t.TempDir(), "none")}, 1, "fabriclab: --metrics-token-file: token file: "},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"agent", "--token-file", tok, "--listen", "127.0.0.1:0"}, tc.args...)
		code := newApp(&out, &errb).execute(context.Background(), args)
		if code != tc.code || !strings.HasPrefix(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q…", tc.args, code, errb.String(), tc.code, tc.want)
		}
		if strings.Contains(errb.String(), "scrape-scrape") || strings.Contains(errb.String(), "s3cret") {
			t.Errorf("%v: the error shows a token", tc.args)
		}
	}

	scrape := func(url string, client *http.Client, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK && !strings.Contains(string(b), "fabriclab_agent_runs_total") {
			t.Errorf("%s: 200 without the agent's metrics:\n%s", url, b)
		}
		return res.StatusCode, string(b)
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, tc := range []struct {
		listen, token, line, scheme string
	}{
		{"0.0.0.0:0", mtok, "metrics https://", "https"},
		{"127.0.0.1:0", mtok, "/metrics (bearer token); allow", "http"},
		{"127.0.0.1:0", "", "/metrics; allow", "http"},
	} {
		args := []string{"agent", "--token-file", tok, "--listen", "127.0.0.1:0", "--metrics-listen", tc.listen}
		if tc.token != "" {
			args = append(args, "--metrics-token-file", tc.token)
		}
		var out bytes.Buffer
		var errb syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- newApp(&out, &errb).execute(ctx, args) }()
		port := startLine(t, &errb, cancel, `metrics https?://(?:\[[^\]]*\]|[^:/]+):(\d+)/metrics`)
		if !strings.Contains(errb.String(), tc.line) {
			t.Errorf("%s: start line lacks %q:\n%s", tc.listen, tc.line, errb.String())
		}
		url := tc.scheme + "://127.0.0.1:" + port + "/metrics"
		if tc.token != "" {
			for _, bad := range []string{"", "scrape-scrape-scrape-2", "s3cret-s3cret-s3cret-s3cret"} {
				if code, _ := scrape(url, insecure, bad); code != http.StatusUnauthorized {
					t.Errorf("%s with token %q: %d, want 401", url, bad, code)
				}
			}
			code, body := scrape(url, insecure, "scrape-scrape-scrape-1")
			if code != http.StatusOK || !strings.Contains(body, "fabriclab_agent_metrics_unauthorized_total 3\n") {
				t.Errorf("%s with the token: %d, want the three refusals counted:\n%s", url, code, body)
			}
		} else if code, _ := scrape(url, insecure, ""); code != http.StatusOK {
			t.Errorf("%s: %d", url, code)
		}
		if tc.scheme == "https" {
			// Plain HTTP to the TLS port gets no metrics.
			if res, err := http.Get("http://127.0.0.1:" + port + "/metrics"); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					t.Error("plain HTTP beyond loopback served the metrics")
				}
			}
		}
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d:\n%s", code, errb.String())
		}
	}
}

// startLine waits up to 5 s for the agent's start line on errb and returns
// what pattern's group matched in it; without one it cancels the agent
// and fails the test.
func startLine(t *testing.T, errb *syncBuffer, cancel func(), pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no start line:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
