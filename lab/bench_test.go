package lab

import (
	"context"
	"runtime"
	"testing"
	"time"

	"fabriclab/scenario"
	"fabriclab/units"
)

// Engine benchmarks. Each iteration builds the job, runs it to completion
// and computes its result. Besides ns/op (Build + Run + Result) they report:
//
//   - events/s: scheduler events executed per second of the Run phase
//   - events/op, packets/op: events executed and packets injected by hosts
//     (data + ACK/NACK/CNP) per run
//   - ns/packet: Run-phase wall time per injected packet
//   - allocs/packet: heap allocations (runtime.MemStats.Mallocs) during the
//     Run phase only (Build excluded) per injected packet
//   - peak-MiB: the largest runtime.MemStats.HeapInuse sampled right after
//     Run, while the simulation is still reachable. The packet free list and
//     the event heap keep their high-water size, so this is close to the
//     run's peak live heap (plus whatever garbage the GC has not collected
//     yet); it does not count stacks or runtime overhead outside the heap.
//     Compare with the max RSS that scripts/bench prints for the CLI.

// BenchmarkFatTreePermutation is the reference point: 128 hosts on a k=8
// three-tier fat-tree at 100G (4 KB MTU, 1 µs links), each sending one 2 MB
// RoCE flow in a random permutation, PFC on, 5-tuple ECMP, default DCQCN.
func BenchmarkFatTreePermutation(b *testing.B) {
	f, err := scenario.Load("../examples/fattree-permutation.yaml")
	if err != nil {
		b.Fatal(err)
	}
	benchJob(b, f.Jobs()[0])
}

// BenchmarkAllToAll128 is a 128-rank all-to-all on the same k=8 fat-tree
// with 256 KB (decimal) per pair: S = 128 × 256 KB per rank in nccl-tests'
// meaning, 16256 messages, about a million data packets.
func BenchmarkAllToAll128(b *testing.B) {
	s := scenario.Defaults()
	s.Name = "bench"
	s.Topology.Kind = "fat-tree"
	s.Topology.K = 8
	s.Topology.HostLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Topology.FabricLink = scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}
	s.Transport.DCQCN.Preset = "default"
	s.Workload.Kind = "alltoall"
	s.Workload.Algorithm = "direct"
	s.Workload.Ranks = 128
	benchJob(b, scenario.Job{Spec: s, Size: units.Size(128 * 256 * 1000), Seed: 1, Scenario: "bench", Variant: "a2a"})
}

// BenchmarkAllToAll32Small is a cheap regression benchmark: 32 hosts on a
// non-blocking 400G leaf-spine (8 hosts per leaf, 8 spines), all-to-all of
// 8 MiB per rank, default DCQCN.
func BenchmarkAllToAll32Small(b *testing.B) {
	s := scenario.Defaults()
	s.Name = "bench"
	s.Topology.Hosts = 32
	s.Topology.HostsPerLeaf = 8
	s.Topology.Spines = 8
	s.Transport.DCQCN.Preset = "default"
	s.Workload.Kind = "alltoall"
	s.Workload.Algorithm = "direct"
	s.Workload.Ranks = 32
	benchJob(b, scenario.Job{Spec: s, Size: 8 * units.MiB, Seed: 1, Scenario: "bench", Variant: "a2a-small"})
}

// BenchmarkMessagesW5 is the Homa paper's fabric cut to 2 racks (32 ×
// 10G hosts, 4 × 40G spines) with W5 messages at 80% load for 20 ms, per
// transport: Homa sprayed, DCTCP and RoCE/DCQCN on ECMP
// (examples/homa-w5.yaml).
func BenchmarkMessagesW5(b *testing.B) {
	f, err := scenario.LoadSets("../examples/homa-w5.yaml", []string{"topology.hosts=32", "workload.duration=20ms"})
	if err != nil {
		b.Fatal(err)
	}
	for _, job := range f.Jobs() {
		if job.Variant == "dctcp-pool8" {
			continue
		}
		b.Run(job.Variant, func(b *testing.B) { benchJob(b, job) })
	}
}

func benchJob(b *testing.B, job scenario.Job) {
	var st runStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.run(b, job)
	}
	b.StopTimer()
	n := float64(b.N)
	if sec := st.runTime.Seconds(); sec > 0 {
		b.ReportMetric(float64(st.events)/sec, "events/s")
	}
	b.ReportMetric(float64(st.events)/n, "events/op")
	b.ReportMetric(float64(st.packets)/n, "packets/op")
	if st.packets > 0 {
		b.ReportMetric(float64(st.runTime.Nanoseconds())/float64(st.packets), "ns/packet")
		b.ReportMetric(float64(st.mallocs)/float64(st.packets), "allocs/packet")
	}
	b.ReportMetric(float64(st.peak)/(1<<20), "peak-MiB")
}

// runStats adds up what the benchmarks report over the runs of run.
type runStats struct {
	events, packets, mallocs uint64
	runTime                  time.Duration
	peak                     uint64
	ms                       runtime.MemStats
}

// run builds and runs job once, counting its events, packets, mallocs
// and run time (the build is not timed), and fails the benchmark on an
// incomplete or unbalanced run.
func (st *runStats) run(b *testing.B, job scenario.Job) {
	s, err := Build(job)
	if err != nil {
		b.Fatal(err)
	}
	ev0, pk0 := s.Sched.Executed, s.Topo.Net.InjectedPackets
	runtime.ReadMemStats(&st.ms)
	m0 := st.ms.Mallocs
	t0 := time.Now()
	s.Run(context.Background(), nil)
	st.runTime += time.Since(t0)
	runtime.ReadMemStats(&st.ms)
	st.mallocs += st.ms.Mallocs - m0
	st.peak = max(st.peak, st.ms.HeapInuse)
	r := s.Result()
	if s.parts > 1 {
		for _, o := range s.others { // built and run by Run
			st.events += o.Sched.Executed
			st.packets += uint64(o.Topo.Net.InjectedPackets)
		}
	}
	st.events += s.Sched.Executed - ev0
	st.packets += uint64(s.Topo.Net.InjectedPackets - pk0)
	if !r.Complete {
		b.Fatalf("%s/%v: run incomplete at %.6fs simulated", job.Variant, job.Size, r.SimEndS)
	}
	if !r.Conservation.OK {
		b.Fatalf("%s/%v: conservation violated: %+v", job.Variant, job.Size, r.Conservation)
	}
}

// The data path does not allocate per packet: once pools and heaps have
// grown (a warm-up stretch of simulated time), a further stretch of a busy
// all-to-all with DCQCN (rate limiters, timers, CNPs) allocates next to
// nothing per packet injected.
func TestDataPathDoesNotAllocatePerPacket(t *testing.T) {
	s := scenario.Defaults()
	s.Name = "alloc"
	s.Topology.Hosts = 16
	s.Topology.HostsPerLeaf = 4
	s.Topology.Spines = 4
	s.Transport.DCQCN.Preset = "default"
	s.Workload.Kind = "alltoall"
	s.Workload.Algorithm = "direct"
	s.Workload.Ranks = 16
	sm, err := Build(scenario.Job{Spec: s, Size: 16 * units.MB, Seed: 1, Scenario: "alloc", Variant: "a2a"})
	if err != nil {
		t.Fatal(err)
	}
	const warm, window = 100 * units.Microsecond, 200 * units.Microsecond
	sm.Sched.Run(warm)
	if sm.Done() {
		t.Fatal("finished during warm-up: make the workload bigger")
	}
	net := sm.Topo.Net
	pk0, ev0, pool0 := net.InjectedPackets, sm.Sched.Executed, net.Pool.Allocated
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m0 := ms.Mallocs
	sm.Sched.Run(sm.Sched.Now() + window)
	runtime.ReadMemStats(&ms)
	// Growth of the packet free list is bounded by the most packets alive at
	// once (PFC bounds that), not by the packets sent: leave it out.
	grown := net.Pool.Allocated - pool0
	allocs := ms.Mallocs - m0 - uint64(grown)
	pkts := net.InjectedPackets - pk0
	if sm.Done() {
		t.Fatal("finished inside the measured window: make the workload bigger")
	}
	if pkts < 10000 {
		t.Fatalf("only %d packets in the window: not a busy enough run", pkts)
	}
	per := float64(allocs) / float64(pkts)
	t.Logf("%d allocations (+%d packets added to the pool) over %d packets, %d events (%.5f allocs/packet)", allocs, grown, pkts, sm.Sched.Executed-ev0, per)
	if per >= 0.002 {
		t.Errorf("%.4f allocations per packet, want < 0.002", per)
	}
}

// BenchmarkBuildAllToAll512 builds (does not run) a 512-rank all-to-all on a
// 512-host leaf-spine: 261,632 flows, each with its QP, DAG entry and
// per-message state. It reports the heap per flow, the simulator's memory
// per active flow before any packet exists.
func BenchmarkBuildAllToAll512(b *testing.B) {
	s := scenario.Defaults()
	s.Name = "build"
	s.Topology.Hosts, s.Topology.HostsPerLeaf, s.Topology.Spines = 512, 32, 32
	s.Workload.Kind = "alltoall"
	s.Workload.Algorithm = "direct"
	s.Workload.Ranks = 512
	var perFlow float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		sm, err := Build(scenario.Job{Spec: s, Size: 512 * units.MiB, Seed: 1, Scenario: "build", Variant: "a2a"})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		flows := len(sm.DAG.Msgs)
		perFlow = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(flows)
		runtime.KeepAlive(sm)
	}
	b.ReportMetric(perFlow, "B/flow")
}
