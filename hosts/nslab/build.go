package nslab

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// build makes the namespaces, links, addresses, queues and routes.
func (b *builder) build(ctx context.Context) error {
	steps := []struct {
		what string
		do   func(context.Context) error
	}{
		{"namespaces", b.namespaces},
		{"sysctls", b.sysctls},
		{"links", b.links},
		{"addresses", b.addresses},
		{"queues", b.shape},
		{"routes", b.routes},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.do(ctx); err != nil {
			return err
		}
		fmt.Fprintf(b.log, "%s: done in %v\n", s.what, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// namespaces creates every namespace and the management bridge, in one
// ip process.
func (b *builder) namespaces(ctx context.Context) error {
	l := b.l
	var lines []string
	for _, ns := range l.Namespaces {
		lines = append(lines, "netns add "+ns)
	}
	m := l.Mgmt
	lines = append(lines,
		fmt.Sprintf("link add name %s type bridge", m.Bridge),
		fmt.Sprintf("addr add %s/%d dev %s", m.RootIP, m.Subnet.Bits(), m.Bridge),
		fmt.Sprintf("link set %s up", m.Bridge))
	if _, err := b.run(ctx, ipBatch("", lines)); err != nil {
		if notFound(err) {
			return &MissingCommandError{Name: "ip"}
		}
		return fmt.Errorf("creating the namespaces and the bridge %s: %w", m.Bridge, err)
	}
	return nil
}

// sysctls set each namespace's forwarding before its links exist (so
// that the interfaces inherit the defaults): switches forward with an L4
// multipath hash, hosts do not forward; reverse-path filtering is off
// (ECMP and pinned routes make paths asymmetric) and IPv6 is off (no
// router solicitations or DAD on the links).
func (b *builder) sysctls(ctx context.Context) error {
	common := []string{
		"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
		"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
	}
	isSwitch := map[string]bool{}
	for _, s := range b.l.Switches {
		isSwitch[s.NS] = true
	}
	return b.each(ctx, b.l.Namespaces, func(ns string) error {
		kv := append([]string{"net.ipv4.ip_forward=0"}, common...)
		if isSwitch[ns] {
			kv = append([]string{"net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1"}, common...)
		}
		if _, err := b.run(ctx, sysctlCmd(ns, kv...)); err != nil {
			if notFound(err) {
				return &MissingCommandError{Name: "ip"}
			}
			if strings.Contains(output(err), `exec of "sysctl" failed`) {
				return &MissingCommandError{Name: "sysctl"}
			}
			return fmt.Errorf("setting the sysctls of %s: %w", ns, err)
		}
		return nil
	})
}

// links creates every veth pair with its ends already in their
// namespaces, and the management veths on the bridge, in one ip process.
// The data links carry no GSO super-packets (gso_max_segs 1): each queue
// then holds and drops real frames, as a switch's does (a 64 KiB TSO
// packet would not fit a queue of a few frames at all).
func (b *builder) links(ctx context.Context) error {
	l := b.l
	var lines []string
	for _, lk := range l.Links {
		lines = append(lines, fmt.Sprintf("link add name %s mtu %d gso_max_segs 1 netns %s type veth peer name %s mtu %d gso_max_segs 1 netns %s",
			lk.A.Dev, l.MTU, lk.A.NS, lk.B.Dev, l.MTU, lk.B.NS))
	}
	for _, h := range l.Hosts {
		lines = append(lines,
			fmt.Sprintf("link add name %s type veth peer name %s netns %s", h.RootDev, h.MgmtDev, h.NS),
			fmt.Sprintf("link set %s master %s", h.RootDev, l.Mgmt.Bridge),
			fmt.Sprintf("link set %s up", h.RootDev))
	}
	if _, err := b.run(ctx, ipBatch("", lines)); err != nil {
		return fmt.Errorf("creating the links: %w", err)
	}
	return nil
}

// addresses gives every interface its address and brings it up (a link
// the scenario fails at time 0 stays down), one ip process per
// namespace.
func (b *builder) addresses(ctx context.Context) error {
	l := b.l
	byNS := map[string][]string{}
	for _, ns := range l.Namespaces {
		byNS[ns] = []string{"link set lo up"}
	}
	for _, lk := range l.Links {
		state := "up"
		if lk.Down {
			state = "down"
		}
		for _, e := range []End{lk.A, lk.B} {
			byNS[e.NS] = append(byNS[e.NS],
				fmt.Sprintf("addr add %s/%d dev %s", e.IP, e.Bits, e.Dev),
				fmt.Sprintf("link set %s %s", e.Dev, state))
		}
	}
	for _, h := range l.Hosts {
		byNS[h.NS] = append(byNS[h.NS],
			fmt.Sprintf("addr add %s/%d dev %s", h.MgmtIP, l.Mgmt.Subnet.Bits(), h.MgmtDev),
			fmt.Sprintf("link set %s up", h.MgmtDev))
	}
	return b.each(ctx, l.Namespaces, func(ns string) error {
		if _, err := b.run(ctx, ipBatch(ns, byNS[ns])); err != nil {
			return fmt.Errorf("addressing the interfaces of %s: %w", ns, err)
		}
		return nil
	})
}

// routes installs l.Routes, one ip process per namespace.
func (b *builder) routes(ctx context.Context) error {
	byNS := map[string][]string{}
	var order []string
	for _, r := range b.l.Routes {
		if _, ok := byNS[r.NS]; !ok {
			order = append(order, r.NS)
		}
		byNS[r.NS] = append(byNS[r.NS], routeLine(r))
	}
	return b.each(ctx, order, func(ns string) error {
		if _, err := b.run(ctx, ipBatch(ns, byNS[ns])); err != nil {
			return fmt.Errorf("adding the routes of %s: %w", ns, err)
		}
		return nil
	})
}

// routeLine is r as an ip command: a plain route for one next hop, a
// multipath route for several.
func routeLine(r Route) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "route replace %s", r.Dst)
	if len(r.Via) == 1 {
		fmt.Fprintf(&sb, " via %s dev %s", r.Via[0].Gw, r.Via[0].Dev)
	} else {
		for _, v := range r.Via {
			fmt.Fprintf(&sb, " nexthop via %s dev %s weight 1", v.Gw, v.Dev)
		}
	}
	if r.Src.IsValid() {
		fmt.Fprintf(&sb, " src %s", r.Src)
	}
	return sb.String()
}

// parallel is how many commands the builder runs at once: enough to hide
// the fork and exec of each, few enough for a 2-core machine.
const parallel = 4

// each runs f for every item, parallel at a time, and returns the first
// error (the others still finish, so that nothing is left half-made).
func (b *builder) each(ctx context.Context, items []string, f func(string) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, parallel)
	for _, it := range items {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
