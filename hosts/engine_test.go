package hosts

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/hosts/inventory"
	"fabriclab/hosts/rankexec"
	"fabriclab/hosts/wire"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// fakeNet stands in for agents and the network between them: each agent
// runs its share of the DAG (package rankexec, as a real agent does); a
// message posted on a connection is delivered after its serialization at
// rate behind whatever its source host sent before (one FIFO NIC per
// host), reported by the destination's agent on that agent's clock and
// acknowledged to the sender's share at the same moment.
type fakeNet struct {
	mu     sync.Mutex
	rate   float64 // bytes per ns
	busy   map[int]int64
	agents []*fakeAgent
	conns  map[int]wire.Conn // by id, from every Prepare
	host   map[int]int       // endpoint → agent
}

type fakeAgent struct {
	n      *fakeNet
	idx    int
	skew   int64 // agent clock − true clock
	events chan wire.Event
	dead   bool // answers nothing from now on
	// late is how many checkpoints from now on get no answer in time
	// (and silent: all of them).
	late   int
	silent bool
	mu     sync.Mutex
	posts  int
	spec   wire.RunSpec

	xmu      sync.Mutex
	x        *rankexec.Exec
	at       time.Time // the start, true clock
	doneSent bool
	notified int
}

func (a *fakeAgent) clock() int64 { return time.Now().UnixNano() + a.skew }

func (a *fakeAgent) alive() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead {
		return errors.New("connection refused")
	}
	return nil
}

func (a *fakeAgent) Clock(context.Context) (int64, error) { return a.clock(), a.alive() }
func (a *fakeAgent) Prepare(_ context.Context, s wire.RunSpec) error {
	a.spec = s
	x, err := rankexec.New(s.DAG, s.Until)
	if err != nil {
		return err
	}
	a.xmu.Lock()
	a.x, a.doneSent, a.notified = x, false, 0
	a.xmu.Unlock()
	a.n.mu.Lock()
	defer a.n.mu.Unlock()
	for _, c := range s.Conns {
		a.n.conns[c.ID] = c
	}
	for _, h := range s.Local {
		a.n.host[h] = a.idx
	}
	return nil
}
func (a *fakeAgent) Connect(context.Context) ([]wire.ConnFailure, error) { return nil, a.alive() }
func (a *fakeAgent) Start(_ context.Context, at int64) error {
	if err := a.alive(); err != nil {
		return err
	}
	a.xmu.Lock()
	a.at = time.Unix(0, at-a.skew)
	a.xmu.Unlock()
	go func() {
		time.Sleep(time.Until(a.at))
		a.step(func(x *rankexec.Exec, now sim.Time) []rankexec.Release { return x.Ready(now) })
	}()
	return nil
}

// step runs f on the share and sends what it released.
func (a *fakeAgent) step(f func(x *rankexec.Exec, now sim.Time) []rankexec.Release) {
	if a.alive() != nil {
		return
	}
	a.xmu.Lock()
	now := sim.Time(time.Since(a.at).Nanoseconds()) * units.Nanosecond
	rel := append([]rankexec.Release(nil), f(a.x, now)...)
	done := !a.doneSent && a.x.Done(now)
	a.doneSent = a.doneSent || done
	cut := a.x.Cut()
	a.xmu.Unlock()
	for _, r := range rel {
		if r.Marker {
			if !r.Shadow {
				a.events <- wire.Event{Kind: wire.EventDelivered, Msg: r.Msg, Conn: -1, T: a.clock()}
			}
			continue
		}
		a.send(r)
	}
	if done {
		a.events <- wire.Event{Kind: wire.EventDone, Cut: int64(cut), T: a.clock()}
	}
}

func (a *fakeAgent) send(r rankexec.Release) {
	n := a.n
	n.mu.Lock()
	c := n.conns[r.Conn]
	now := time.Now().UnixNano()
	done := max(now, n.busy[c.From]) + int64(float64(r.Bytes)/n.rate)
	n.busy[c.From] = done
	dst := n.agents[n.host[c.To]]
	n.mu.Unlock()
	a.mu.Lock()
	a.posts++
	a.mu.Unlock()
	a.events <- wire.Event{Kind: wire.EventStarted, Msg: r.Msg, Conn: r.Conn, From: c.From, To: c.To, Bytes: r.Bytes, T: a.clock()}
	go func() {
		time.Sleep(time.Duration(done - time.Now().UnixNano()))
		if dst.alive() != nil {
			return
		}
		dst.events <- wire.Event{Kind: wire.EventDelivered, Msg: r.Msg, Conn: r.Conn, From: c.From, To: c.To, Bytes: r.Bytes, T: dst.clock()}
		deliver := func(x *rankexec.Exec, now sim.Time) []rankexec.Release { return x.Delivered(r.Msg, now) }
		dst.step(deliver)
		if dst != a {
			a.step(deliver) // the acknowledgement
		}
	}()
}

func (a *fakeAgent) Notify(_ context.Context, msgs []int64) error {
	if err := a.alive(); err != nil {
		return err
	}
	a.xmu.Lock()
	a.notified += len(msgs)
	a.xmu.Unlock()
	for _, m := range msgs {
		a.step(func(x *rankexec.Exec, now sim.Time) []rankexec.Release { return x.Delivered(m, now) })
	}
	return nil
}
func (a *fakeAgent) Events(ctx context.Context) (<-chan wire.Event, error) {
	out := make(chan wire.Event)
	go func() {
		defer close(out)
		for {
			select {
			case ev := <-a.events:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
func (a *fakeAgent) Checkpoint(ctx context.Context) (wire.Checkpoint, error) {
	a.mu.Lock()
	late := a.silent || a.late > 0
	if a.late > 0 {
		a.late--
	}
	a.mu.Unlock()
	if late {
		<-ctx.Done()
		return wire.Checkpoint{}, fmt.Errorf("agent %d: checkpoint: %w", a.idx, wire.ErrNoAnswer)
	}
	return wire.Checkpoint{T: a.clock()}, a.alive()
}
func (a *fakeAgent) Stop(context.Context) (wire.Final, error) { return wire.Final{}, a.alive() }
func (a *fakeAgent) Abort(context.Context) error              { return nil }
func (a *fakeAgent) Close() error                             { return nil }

// rig builds an inventory of one agent per host pair and the fake network.
func rig(t *testing.T, hosts int, skews ...int64) (*inventory.Inventory, *fakeNet) {
	t.Helper()
	n := &fakeNet{rate: 1.25, busy: map[int]int64{}, conns: map[int]wire.Conn{}, host: map[int]int{}} // 10 Gb/s
	inv := &inventory.Inventory{Path: "agents.yaml", Scale: 1}
	for i := 0; i*2 < hosts; i++ {
		a := inventory.Agent{Address: "agent" + string(rune('A'+i)) + ":7470"}
		for h := 2 * i; h < min(2*i+2, hosts); h++ {
			a.Hosts = append(a.Hosts, inventory.Host{Host: h, DataIP: netip.AddrFrom4([4]byte{10, 0, 0, byte(h + 1)})})
		}
		inv.Agents = append(inv.Agents, a)
		var skew int64
		if i < len(skews) {
			skew = skews[i]
		}
		n.agents = append(n.agents, &fakeAgent{n: n, idx: i, skew: skew, events: make(chan wire.Event, 4096)})
	}
	return inv, n
}

func (n *fakeNet) dial(_ context.Context, a inventory.Agent) (Agent, error) {
	return n.agents[int(a.Address[5]-'A')], nil
}

const scen = `
topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 2, spines: 1, host_link: {rate: 10Gbps}, fabric_link: {rate: 10Gbps}}
transport: {kind: tcp}
workload: {kind: alltoall, sizes: {list: [256KiB]}}
sim: {time_limit: 1s}
`

func job(t *testing.T, src string) scenario.Job {
	t.Helper()
	f, err := scenario.ParseOptions("h.yaml", []byte(src), scenario.Options{Engine: scenario.EngineHosts})
	if err != nil {
		t.Fatal(err)
	}
	return f.Jobs()[0]
}

// The agents run the DAG: every message is posted by its source host's
// agent once, after what it depends on, and its delivery time comes back
// on the controller's clock although every agent clock is off by up to a
// second.
func TestRunAllToAllOnFakeAgents(t *testing.T) {
	inv, n := rig(t, 4, 1_000_000_000, -700_000_000)
	e := &Engine{Inventory: inv, Dial: n.dial}
	j := job(t, scen)
	p, err := e.Plan(j, planTogether)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Done() {
		t.Fatalf("%d of %d delivered", tr.Delivered, len(tr.End))
	}
	posts := 0
	for _, a := range n.agents {
		posts += a.posts
	}
	msgs := 0
	for i, m := range p.DAG.Msgs {
		if !m.Marker {
			msgs++
		}
		if tr.End[i] < tr.Start[i] || tr.Start[i] < 0 {
			t.Fatalf("message %d: start %v end %v", i, tr.Start[i], tr.End[i])
		}
		for _, s := range p.DAG.Successors(int32(i)) {
			if tr.Start[s] < tr.End[i] {
				t.Fatalf("message %d started at %v before its dependency %d ended at %v", s, tr.Start[s], i, tr.End[i])
			}
		}
	}
	if posts != msgs {
		t.Errorf("%d posts for %d messages", posts, msgs)
	}
	// Clock skews of ±1 s are gone: the run took milliseconds.
	if last := tr.Now; last <= 0 || last > 5e11 {
		t.Errorf("run ended at %v", last)
	}
	r, err := engine.RunJob(context.Background(), e, j, nil)
	if err != nil || !r.Complete || r.BusBWGBps <= 0 || r.BusBWGBps > 10 {
		t.Errorf("RunJob: complete %v busbw %v err %v", r.Complete, r.BusBWGBps, err)
	}
}

// An agent that stops answering (a refused connection) fails the run at once, named
// with its hosts; the run does not hang.
func TestDeadAgentFailsTheRun(t *testing.T) {
	inv, n := rig(t, 4)
	e := &Engine{Inventory: inv, Dial: n.dial, Heartbeat: 20_000_000_000} // 20 ms (units.Duration is ps)
	// A DAG long enough to be running when the agent dies.
	j := job(t, strings.Replace(scen, "256KiB", "1GiB", 1))
	p, err := e.Plan(j, planTogether)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		a := n.agents[1]
		a.mu.Lock()
		a.dead = true
		a.mu.Unlock()
	}()
	began := time.Now()
	tr, err := e.Run(context.Background(), p, nil)
	if err == nil || !strings.Contains(err.Error(), "agentB:7470 (hosts 2, 3) stopped answering") {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(began); el > 2*time.Second {
		t.Errorf("took %v to notice", el)
	}
	if tr == nil || tr.Done() {
		t.Error("a failed run has a complete trace")
	}
}

// A late answer or two is a busy machine, not a dead agent: the run goes
// on. An agent that leaves missedChecks checks in a row unanswered fails
// it, named.
func TestLateAgentIsNotDead(t *testing.T) {
	for _, c := range []struct {
		name   string
		late   int
		silent bool
	}{{"two late answers", missedChecks - 1, false}, {"silent", 0, true}} {
		t.Run(c.name, func(t *testing.T) {
			inv, n := rig(t, 4)
			e := &Engine{Inventory: inv, Dial: n.dial, Heartbeat: 20_000_000_000} // 20 ms
			j := job(t, strings.Replace(scen, "256KiB", "512MiB", 1))
			p, err := e.Plan(j, planTogether)
			if err != nil {
				t.Fatal(err)
			}
			a := n.agents[1]
			a.mu.Lock()
			a.late, a.silent = c.late, c.silent
			a.mu.Unlock()
			tr, err := e.Run(context.Background(), p, nil)
			if c.silent {
				if err == nil || !strings.Contains(err.Error(), "agentB:7470 (hosts 2, 3) stopped answering") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || tr == nil || !tr.Done() {
				t.Fatalf("run failed: %v", err)
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.late != 0 {
				t.Errorf("the run ended before the late checks (%d left)", a.late)
			}
		})
	}
}

func TestPlanNeedsEveryHost(t *testing.T) {
	inv, n := rig(t, 2)
	e := &Engine{Inventory: inv, Dial: n.dial}
	if _, err := e.Plan(job(t, scen), planTogether); err == nil || !strings.Contains(err.Error(), "no agent runs host 2") {
		t.Errorf("err = %v", err)
	}
}

func TestScaled(t *testing.T) {
	j := job(t, scen)
	s := scaled(j.Spec, 0.001)
	if s.Topology.HostLink.Rate != 10_000_000 || j.Spec.Topology.HostLink.Rate != 10_000_000_000 {
		t.Errorf("scaled %v, original %v", s.Topology.HostLink.Rate, j.Spec.Topology.HostLink.Rate)
	}
	if s.Sim.TimeLimit != 1000*units.Second || j.Spec.Sim.TimeLimit != units.Second {
		t.Errorf("time limit scaled %v, original %v", s.Sim.TimeLimit, j.Spec.Sim.TimeLimit)
	}
}

var planTogether = plan.Together

// A sending connection with messages outstanding that moves nothing over
// two checkpoints is a stall; one that failed is named at once.
func TestStallWatch(t *testing.T) {
	w := stallWatch{last: map[int]connProgress{}, after: 2}
	cp := func(bytes, acked, out int64, err string) wire.Checkpoint {
		return wire.Checkpoint{Conns: []wire.ConnStats{{Conn: 3, From: 1, To: 2, Side: wire.SideSender, Bytes: bytes, Acked: acked, Outstanding: out, Err: err},
			{Conn: 3, From: 1, To: 2, Side: wire.SideReceiver}}}
	}
	for i, c := range []wire.Checkpoint{cp(100, 50, 2, ""), cp(200, 100, 2, ""), cp(200, 100, 2, "")} {
		if err := w.check(c); err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
	}
	if err := w.check(cp(200, 100, 2, "")); err == nil || err.Error() != "host 1 → host 2 stalled: 2 messages outstanding and nothing moved over 2 checkpoints" {
		t.Fatalf("err = %v", err)
	}
	idle := stallWatch{last: map[int]connProgress{}, after: 2}
	for i := 0; i < 5; i++ { // nothing outstanding: idle, not stalled
		if err := idle.check(cp(0, 0, 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := idle.check(cp(0, 0, 0, "connection reset by peer")); err == nil || err.Error() != "host 1 → host 2: the connection failed: connection reset by peer" {
		t.Fatalf("err = %v", err)
	}
}

// Collectives whose steps wait across agents (every algorithm, with
// warmup and iterations joined by markers) run to completion on the
// agents' shares, every step after what it waits for; what an agent
// cannot see itself is relayed.
func TestCollectivesOnFakeAgents(t *testing.T) {
	for _, w := range []string{
		"{kind: allreduce, algorithm: ring, sizes: {list: [64KiB]}, iterations: 2, warmup: 1}",
		"{kind: allreduce, algorithm: double-binary-tree, sizes: {list: [64KiB]}}",
		"{kind: allreduce, algorithm: halving-doubling, sizes: {list: [64KiB]}}",
		"{kind: broadcast, sizes: {list: [64KiB]}}",
		"{kind: alltoall, algorithm: pairwise, sizes: {list: [64KiB]}, iterations: 2}",
		"{kind: allreduce, algorithm: ring, sizes: {list: [64KiB]}, qps: 2, iterations: 2}",
		"{kind: alltoall, algorithm: pairwise, sizes: {list: [64KiB]}, qps: 2, message_size: 8KiB}",
		"{kind: allgather, sizes: {list: [64KiB]}, qps: 4, iterations: 3, warmup: 1}",
	} {
		t.Run(w, func(t *testing.T) {
			inv, n := rig(t, 4, 300_000_000)
			e := &Engine{Inventory: inv, Dial: n.dial}
			j := job(t, strings.Replace(scen, "{kind: alltoall, sizes: {list: [256KiB]}}", w, 1))
			p, err := e.Plan(j, planTogether)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := e.Run(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Done() {
				t.Fatalf("%d of %d delivered", tr.Delivered, len(tr.End))
			}
			for i := range p.DAG.Msgs {
				for _, s := range p.DAG.Successors(int32(i)) {
					if tr.Start[s] < tr.End[i] {
						t.Fatalf("message %d started at %v before its dependency %d ended at %v", s, tr.Start[s], i, tr.End[i])
					}
				}
			}
			_, relay := shares(p, []int{0, 0, 1, 1}, 2)
			want, got := 0, 0
			for _, as := range relay {
				want += len(as)
			}
			for _, a := range n.agents {
				got += a.notified
			}
			if got != want || want != 0 {
				t.Errorf("%d deliveries relayed (want %d): a built-in collective's steps should all be seen where they wait", got, want)
			}
			t.Logf("%d messages, %d relayed", len(p.DAG.Msgs), got)
		})
	}
}

// A step that waits for a message between two other agents' hosts runs
// after the controller relays that delivery.
func TestRelayedDeliveries(t *testing.T) {
	inv, n := rig(t, 4, -200_000_000)
	e := &Engine{Inventory: inv, Dial: n.dial}
	p, err := e.Plan(job(t, scen), planTogether)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(src, dst int32) int32 {
		for i, c := range p.Conns {
			if c.Src == src && c.Dst == dst {
				return int32(i)
			}
		}
		t.Fatalf("no connection %d→%d", src, dst)
		return -1
	}
	// TestShares's DAG: message 3 (host 1, agent 0) waits for 1 (2→3, both
	// on agent 1).
	d := &workload.DAG{}
	d.Add(workload.Message{Src: 0, Dst: 2, Bytes: 10000})
	d.Add(workload.Message{Src: 2, Dst: 3, Bytes: 20000}, 0)
	d.Add(workload.Message{Src: 1, Dst: 1, Marker: true}, 0)
	d.Add(workload.Message{Src: 1, Dst: 3, Bytes: 30000}, 1)
	d.Add(workload.Message{Src: 3, Dst: 3, Marker: true}, 3, 2)
	d.Finish()
	p.DAG, p.Conn = d, []int32{conn(0, 2), conn(2, 3), -1, conn(1, 3), -1}
	tr, err := e.Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Done() || tr.Start[3] < tr.End[1] || tr.Start[4] < tr.End[3] {
		t.Fatalf("done %v, starts %v, ends %v", tr.Done(), tr.Start, tr.End)
	}
	// Agent 1 shadows marker 2 (it received message 0); agent 0 cannot
	// see message 1 (2→3).
	if n.agents[0].notified != 1 || n.agents[1].notified != 0 {
		t.Errorf("relayed %d to agent 0 and %d to agent 1, want 1 and 0", n.agents[0].notified, n.agents[1].notified)
	}
}
