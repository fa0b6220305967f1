package hosts

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/hosts/agent"
	"fabriclab/hosts/inventory"
	"fabriclab/lab"
	"fabriclab/scenario"
)

var loopToken = []byte("0123456789abcdef0123456789abcdef")

// loopbackAgents starts n real agents on 127.0.0.1, each running two hosts
// whose data IPs are 127.0.1.(2i+1), 127.0.1.(2i+2), and the inventory of
// them.
func loopbackAgents(t *testing.T, n int) *inventory.Inventory {
	return loopbackAgentsWith(t, n, nil)
}

// loopbackAgentsWith is loopbackAgents with agent i's settings changed by
// set (nil: none).
func loopbackAgentsWith(t *testing.T, n int, set func(i int, c *agent.Config)) *inventory.Inventory {
	t.Helper()
	inv := &inventory.Inventory{Path: "agents.yaml", Scale: 1}
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.1.0/24")}
	for i := 0; i < n; i++ {
		var ips []netip.Addr
		a := inventory.Agent{}
		for h := 2 * i; h < 2*i+2; h++ {
			ip := netip.AddrFrom4([4]byte{127, 0, 1, byte(h + 1)})
			ips = append(ips, ip)
			a.Hosts = append(a.Hosts, inventory.Host{Host: h, DataIP: ip})
		}
		cfg := agent.Config{Listen: "127.0.0.1:0", Token: loopToken, Allow: allow, DataIPs: ips,
			MaxRate: 100e9, MaxDuration: time.Minute}
		if set != nil {
			set(i, &cfg)
		}
		s, err := agent.Listen(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		a.Address = s.Addr().String()
		inv.Agents = append(inv.Agents, a)
	}
	return inv
}

func loopbackDial(ctx context.Context, a inventory.Agent) (Agent, error) {
	c, err := agent.Dial(ctx, agent.ClientConfig{Address: a.Address, Token: loopToken, Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// The same scenarios as the simulator, over real sockets on loopback:
// an all-to-all and a ring all-reduce complete, every message once, with
// the row the simulator's has (a loopback is far faster than the declared
// 10G, so no rate is compared here; the namespace lab test does that).
// The time limit is far above the milliseconds these take: a full suite
// on two loaded cores once stopped the ring all-reduce at 1 s.
func TestLoopbackCollectives(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	inv := loopbackAgents(t, 2)
	e := &Engine{Inventory: inv, Dial: loopbackDial, DataPort: 17471}
	for _, w := range []string{
		"workload: {kind: alltoall, sizes: {list: [1MiB]}}",
		"workload: {kind: allreduce, algorithm: ring, sizes: {list: [1MiB]}}",
	} {
		src := `
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2, host_link: {rate: 10Gbps}, fabric_link: {rate: 10Gbps}}
transport: {kind: tcp}
sim: {time_limit: 10s}
` + w + "\n"
		j := job(t, src)
		r, err := engine.RunJob(context.Background(), e, j, nil)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if !r.Complete || r.CCTS <= 0 || r.Hosts == nil || r.Hosts.Agents != 2 || r.Hosts.ClockErrorS > 0.01 {
			t.Fatalf("%s: complete %v cct %v hosts %+v", w, r.Complete, r.CCTS, r.Hosts)
		}
		sim, err := lab.Run(context.Background(), j, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Flows != sim.Flows || r.Ranks != sim.Ranks || r.Algorithm != sim.Algorithm {
			t.Errorf("%s: hosts row %d flows %d ranks %s, simulator %d flows %d ranks %s", w, r.Flows, r.Ranks, r.Algorithm, sim.Flows, sim.Ranks, sim.Algorithm)
		}
		if len(r.Hosts.HostCounters) != 2 {
			t.Errorf("%s: counters of %d agents", w, len(r.Hosts.HostCounters))
		}
	}
}

// A message workload (open-loop arrivals, RPCs answered by their
// receivers) runs on real sockets through the same executor: every
// request and response is delivered, and the row has its round-trip
// times.
func TestLoopbackMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	inv := loopbackAgents(t, 2)
	e := &Engine{Inventory: inv, Dial: loopbackDial, DataPort: 17472}
	f, err := scenario.Load("testdata/messages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j := f.Jobs()[0]
	r, err := engine.RunJob(context.Background(), e, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.Flows < 20 || r.Load == nil || r.Load.RPCs == 0 || r.Load.RTT.P99 <= 0 {
		t.Fatalf("complete %v flows %d load %+v", r.Complete, r.Flows, r.Load)
	}
	sim, err := lab.Run(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Flows != sim.Flows || r.Load.RPCs != sim.Load.RPCs {
		t.Errorf("hosts %d flows %d RPCs, simulator %d flows %d RPCs", r.Flows, r.Load.RPCs, sim.Flows, sim.Load.RPCs)
	}
}

// Probes run beside the workload as paced UDP streams: on loopback every
// datagram arrives, in order, once, at about the probe's rate, and the row
// says so per probe.
func TestLoopbackProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	inv := loopbackAgents(t, 2)
	e := &Engine{Inventory: inv, Dial: loopbackDial, DataPort: 17473}
	j := job(t, `
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 2, host_link: {rate: 1Gbps}, fabric_link: {rate: 1Gbps}}
transport: {kind: tcp}
sim: {time_limit: 5s}
workload: {kind: any-to-any, clients: 2, servers: 2, sizes: {list: [64KiB]}, depth: 2, duration: 300ms}
probes:
  - {from: 0, to: 3, rate: 20Mbps, size: 1000B}
  - {from: 3, to: 1, rate: 5Mbps}
`)
	r, err := engine.RunJob(context.Background(), e, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Hosts == nil || len(r.Hosts.Probes) != 2 {
		t.Fatalf("hosts %+v", r.Hosts)
	}
	for i, p := range r.Hosts.Probes {
		// At most the run's time at the rate (a busy CPU makes the pacer
		// slip, so only a floor far below it is asked); both ends are read
		// as the agents stop, at about the same time, so their counts
		// differ by what was in flight then (up to 100 ms of it here).
		want := r.CCTS * p.RateGbps * 1e9 / 8 / float64(p.SizeBytes)
		skew := int64(0.1*p.RateGbps*1e9/8/float64(p.SizeBytes)) + 5
		if p.Sent < max(int64(0.1*want), 10) || p.Sent > int64(2*want)+5 || max(p.Received-p.Sent, p.Sent-p.Received) > skew ||
			p.Lost != 0 || p.Duplicates != 0 || p.Reordered != 0 || p.LossPct != 0 || p.SendErrors != 0 || p.JitterS <= 0 {
			t.Errorf("probe %d: %+v (about %.0f datagrams expected over %.0f ms)", i, p, want, r.CCTS*1e3)
		}
		if p.SentBytes != p.Sent*p.SizeBytes || p.ReceivedBytes != p.Received*p.SizeBytes {
			t.Errorf("probe %d: bytes sent %d received %d for %d/%d datagrams of %d", i, p.SentBytes, p.ReceivedBytes, p.Sent, p.Received, p.SizeBytes)
		}
	}
	if p := r.Hosts.Probes[1]; p.SizeBytes != 1024 || p.From != 3 || p.To != 1 {
		t.Errorf("probe 1: %+v", p)
	}
}
