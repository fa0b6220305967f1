package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/hosts/agent"
	"fabriclab/hosts/inventory"
	"fabriclab/internal/safetext"
	"fabriclab/units"
)

func init() { moreCommands = append(moreCommands, (*app).agentCmd) }

type agentFlags struct {
	listen, tokenFile    string
	allow, dataIPs       []string
	maxRate, maxDuration string
	cert, key, ca        string
	metricsListen        string
	metricsTokenFile     string
}

func (a *app) agentCmd() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Serve as the agent of a real host for hosts runs",
		Long: `agent runs on every server of a real-host run (run --engine hosts): a
long-running server that the controller drives over an authenticated
control channel, and the data plane that moves the run's bytes.

The control channel is Connect RPC over HTTP/2 on TLS 1.3, on 127.0.0.1:7470
unless --listen says otherwise. Without --cert/--key the agent makes an
ephemeral self-signed certificate at start; with --ca it also requires
client certificates signed by that CA (mTLS). Either way a controller must
prove it holds the shared token of --token-file (a file only its owner may
read, at least 16 bytes) by a challenge-response bound to the TLS session,
and the agent proves it holds it too; the token is never sent.

The agent only sends to addresses that are endpoints of the run and inside
its --allow ranges (none by default: it sends nowhere), at most --max-rate
of paced UDP and for at most --max-duration. A run that breaks a limit is
refused with a one-line reason before anything is sent. One run at a time;
a run whose controller falls silent for 3 s is aborted.

Prometheus metrics (bytes, completions, retransmits and lost UDP datagrams
per endpoint pair, runs, refusals, failed authentications, refused
scrapes) are served at /metrics on
--metrics-listen ("off" disables them): plain HTTP on loopback (the
default, 127.0.0.1:9470); beyond loopback HTTPS with the agent's
certificate and a bearer token that scrapers must send, read from
--metrics-token-file (a token of its own, not --token-file's; optional on
loopback). The agent logs one line
per event on stderr. SIGINT or SIGTERM aborts any run and exits 0.`,
		Example: `  fabriclab agent --listen 10.0.0.5:7470 --token-file /etc/fabriclab/token --allow 10.0.0.0/24
  fabriclab agent --token-file token --allow 10.0.0.0/24,10.0.1.0/24 --data-ip 10.0.0.5 --max-rate 400Gbps
  fabriclab agent --listen 10.0.0.5:7470 --token-file token --allow 10.0.0.0/24 \
      --cert agent.pem --key agent-key.pem --ca ca.pem --metrics-listen off
  fabriclab agent --listen 10.0.0.5:7470 --token-file token --allow 10.0.0.0/24 \
      --cert agent.pem --key agent-key.pem --metrics-listen 10.0.0.5:9470 --metrics-token-file metrics-token`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.agentConfig(cmd, f)
			if err != nil {
				return err
			}
			return a.runAgent(cmd.Context(), cfg)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", agent.DefaultListen, "serve the control channel on `ADDR` (host:port)")
	fl.StringVar(&f.tokenFile, "token-file", "", "the shared token, in `FILE` (mode 0600 or stricter, at least 16 bytes; required)")
	fl.StringSliceVar(&f.allow, "allow", nil, "send only to run endpoints inside `CIDR` (repeatable or comma-separated; default: none, every send is refused)")
	fl.StringSliceVar(&f.dataIPs, "data-ip", nil, "this host's data `IP` (repeatable): a run's local endpoints must use one")
	fl.StringVar(&f.maxRate, "max-rate", "100Gbps", "refuse UDP rates (each, and their sum) and a declared NIC rate above `RATE`")
	fl.StringVar(&f.maxDuration, "max-duration", "10m", "refuse runs longer than `DUR` (e.g. 30s, 10m, 1h)")
	fl.StringVar(&f.cert, "cert", "", "the agent's TLS certificate `FILE` (PEM; with --key)")
	fl.StringVar(&f.key, "key", "", "the agent's TLS key `FILE` (PEM)")
	fl.StringVar(&f.ca, "ca", "", "require client certificates signed by the CA in `FILE` (mTLS; needs --cert/--key)")
	fl.StringVar(&f.metricsListen, "metrics-listen", agent.DefaultMetricsListen, "serve /metrics on `ADDR` (beyond loopback: HTTPS, needs --metrics-token-file), or off")
	fl.StringVar(&f.metricsTokenFile, "metrics-token-file", "", "scrapers of /metrics must send the token in `FILE` as a bearer token (mode 0600 or stricter, at least 16 bytes, not the --token-file token; required beyond loopback)")
	return cmd
}

// agentConfig turns the flags into the agent's settings: malformed values
// are usage errors, an unreadable or unsafe token file is not.
func (a *app) agentConfig(cmd *cobra.Command, f agentFlags) (agent.Config, error) {
	cfg := agent.Config{Listen: f.listen, CertFile: f.cert, KeyFile: f.key, CAFile: f.ca, Version: version}
	if f.tokenFile == "" {
		return cfg, usageErr(cmd, "agent needs --token-file FILE (the shared token)")
	}
	for _, s := range f.allow {
		p, err := parseAllow(s)
		if err != nil {
			return cfg, usageErr(cmd, "--allow %q: %v", s, err)
		}
		cfg.Allow = append(cfg.Allow, p)
	}
	for _, s := range f.dataIPs {
		ip, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || ip.Zone() != "" {
			return cfg, usageErr(cmd, "--data-ip %q is not an IP address", s)
		}
		cfg.DataIPs = append(cfg.DataIPs, ip.Unmap())
	}
	r, err := units.ParseRate(f.maxRate)
	if err != nil || r <= 0 {
		if err == nil {
			err = errors.New("must be positive")
		}
		return cfg, usageErr(cmd, "--max-rate: %v", err)
	}
	cfg.MaxRate = int64(r)
	d, err := time.ParseDuration(f.maxDuration)
	if err != nil || d <= 0 {
		return cfg, usageErr(cmd, "--max-duration %q: want a positive duration such as 30s, 10m or 1h", f.maxDuration)
	}
	cfg.MaxDuration = d
	if (f.cert == "") != (f.key == "") {
		return cfg, usageErr(cmd, "--cert and --key go together")
	}
	if f.ca != "" && f.cert == "" {
		return cfg, usageErr(cmd, "--ca (mTLS) needs the agent's own --cert and --key, signed so that controllers can verify it")
	}
	if f.metricsListen != "off" {
		cfg.MetricsListen = f.metricsListen
	} else if f.metricsTokenFile != "" {
		return cfg, usageErr(cmd, "--metrics-token-file with --metrics-listen off: there are no metrics to protect")
	}
	tok, err := inventory.ReadToken(f.tokenFile)
	if err != nil {
		return cfg, err
	}
	cfg.Token = tok
	if f.metricsTokenFile != "" {
		mt, err := inventory.ReadToken(f.metricsTokenFile)
		if err != nil {
			return cfg, fmt.Errorf("--metrics-token-file: %w", err)
		}
		cfg.MetricsToken = mt
	}
	return cfg, nil
}

// metricsLine is the start line's word on the agent's /metrics (off, or
// its URL and how a scraper authenticates).
func metricsLine(s *agent.Server) string {
	m := s.MetricsAddr()
	if m == nil {
		return "off"
	}
	if !s.MetricsLocal() {
		return "https://" + m.String() + "/metrics (the agent's certificate; bearer token)"
	}
	line := "http://" + m.String() + "/metrics"
	if s.MetricsAuth() {
		line += " (bearer token)"
	}
	return line
}

// parseAllow reads a CIDR, or one address as its own /32 or /128.
func parseAllow(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	return netip.Prefix{}, errors.New("not a CIDR such as 10.0.0.0/24 (or one address)")
}

// runAgent serves until ctx ends (SIGINT, SIGTERM): the agent aborts any
// run, and the command exits 0.
func (a *app) runAgent(ctx context.Context, cfg agent.Config) error {
	lg := &agentLog{w: a.stderr, now: a.now}
	cfg.Logf = lg.logf
	s, err := agent.Listen(cfg)
	if err != nil {
		return err
	}
	// Signals cancel ctx instead of quitting at once, so the run is aborted
	// and the sockets closed before the process exits.
	processStop.jobPhase()
	metrics := metricsLine(s)
	allow := "none (every send is refused)"
	if len(cfg.Allow) > 0 {
		allow = joinStrings(cfg.Allow)
	}
	dataIPs := "any"
	if len(cfg.DataIPs) > 0 {
		dataIPs = joinStrings(cfg.DataIPs)
	}
	lg.logf("fabriclab %s listening on %s (TLS 1.3, %s; token challenge-response); metrics %s; allow %s; data IPs %s; max rate %v, max duration %v",
		version, s.Addr(), s.TLSMode(), metrics, allow, dataIPs, units.Rate(cfg.MaxRate), cfg.MaxDuration)
	err = s.Serve(ctx)
	why := "stopped"
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		why = "stopped by " + signalName(sc.sig)
	}
	lg.logf("%s", why)
	return err
}

func joinStrings[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ", ")
}

// agentLog writes the agent's log: one line per event, timestamped, with
// anything from the network escaped.
type agentLog struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

func (l *agentLog) logf(format string, args ...any) {
	msg := safetext.Terminal(fmt.Sprintf(format, args...))
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s fabriclab agent: %s\n", l.now().UTC().Format("2006-01-02T15:04:05.000Z"), msg)
}
