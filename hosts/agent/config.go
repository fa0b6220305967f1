package agent

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"fabriclab/hosts/wire"
)

// Defaults of the agent's settings.
const (
	DefaultListen        = "127.0.0.1:7470"
	DefaultMetricsListen = "127.0.0.1:9470"
	DefaultMaxRate       = 100_000_000_000 // 100 Gb/s
	DefaultMaxDuration   = 10 * time.Minute
	DefaultLease         = 3 * time.Second
	// DefaultAuthFailureDelay is how long a failed handshake waits before
	// its answer; failures wait one after the other, so a token guesser
	// gets a few tries a second at most.
	DefaultAuthFailureDelay = 250 * time.Millisecond
)

// Config is an agent's settings; zero values take the defaults above.
type Config struct {
	Listen string // control address (DefaultListen)
	Token  []byte // the shared token, at least wire.MinTokenLen bytes
	// CertFile and KeyFile are the agent's certificate; without them it
	// makes an ephemeral self-signed one. CAFile turns on mTLS: clients
	// must present a certificate it signed.
	CertFile, KeyFile, CAFile string
	Allow                     []netip.Prefix // the only addresses the agent sends to; none: nowhere
	DataIPs                   []netip.Addr   // when given, a run's local endpoints must use these
	MaxRate                   int64          // bits/s (DefaultMaxRate)
	MaxDuration               time.Duration  // (DefaultMaxDuration)
	// MetricsListen is the address of /metrics; "" serves none. On
	// loopback it is plain HTTP; beyond loopback it is HTTPS with the
	// control channel's certificate and needs MetricsToken.
	MetricsListen string
	// MetricsToken, when set, is the bearer token a scraper must send
	// (Authorization: Bearer …). A token of its own, not Token: it
	// travels to every scraper, while Token never leaves a handshake.
	MetricsToken []byte
	Lease        time.Duration // (DefaultLease)
	Version      string        // reported by Info
	// Logf receives one line per event (no trailing newline); nil drops
	// them.
	Logf func(format string, args ...any)

	// NewPlane builds a run's data plane (nil: package dataplane).
	NewPlane func(PlaneSpec) (Plane, error)
	// AvailableCC lists the kernel's congestion controls (nil: dataplane's).
	AvailableCC func() ([]string, error)
	// HostCounters reads the host's counters, with the NICs that hold the
	// given local addresses, and the sources it could not read (nil:
	// dataplane's reader).
	HostCounters func(ctx context.Context, local []netip.Addr) (wire.HostCounters, map[string]string)
	// AuthFailureDelay (DefaultAuthFailureDelay); tests shorten it.
	AuthFailureDelay time.Duration
	// DurationGrace is how long after a run's duration ends the agent
	// closes its data plane if the controller has not stopped it (2 s).
	DurationGrace time.Duration
}

// withDefaults fills zero values and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return c, fmt.Errorf("listen address %q: %v", c.Listen, err)
	}
	if len(c.Token) < wire.MinTokenLen {
		return c, fmt.Errorf("the token is %d bytes; it needs at least %d", len(c.Token), wire.MinTokenLen)
	}
	if len(c.MetricsToken) > 0 {
		if len(c.MetricsToken) < wire.MinTokenLen {
			return c, fmt.Errorf("the metrics token is %d bytes; it needs at least %d", len(c.MetricsToken), wire.MinTokenLen)
		}
		if subtle.ConstantTimeCompare(c.MetricsToken, c.Token) == 1 {
			return c, errors.New("the metrics token is the control token: give /metrics a token of its own (scrapers hold it; the control token never leaves the agent and its controllers)")
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return c, errors.New("a certificate needs both a cert file and a key file")
	}
	if c.CAFile != "" && c.CertFile == "" {
		return c, errors.New("mTLS (a CA file) needs the agent's own certificate and key too, signed so that clients can verify it")
	}
	if c.MaxRate == 0 {
		c.MaxRate = DefaultMaxRate
	}
	if c.MaxRate < 0 {
		return c, fmt.Errorf("max rate %d is negative", c.MaxRate)
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = DefaultMaxDuration
	}
	if c.MaxDuration < 0 {
		return c, fmt.Errorf("max duration %v is negative", c.MaxDuration)
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.AuthFailureDelay <= 0 {
		c.AuthFailureDelay = DefaultAuthFailureDelay
	}
	if c.DurationGrace <= 0 {
		c.DurationGrace = 2 * time.Second
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	allow := make([]netip.Prefix, len(c.Allow))
	for i, p := range c.Allow {
		allow[i] = p.Masked()
	}
	c.Allow = allow
	return c, nil
}
