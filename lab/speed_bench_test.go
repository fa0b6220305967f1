//go:build unix

package lab

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fabriclab/scenario"
)

// The speed benchmarks of issue 17 ("Simulator speed"): the five scenarios
// whose targets the issue sets, on the files in testdata/bench and the
// README's main job. scripts/bench times the same files through the CLI
// with /usr/bin/time -v (whole process: wall, CPU, max RSS).
//
// Each iteration builds every job of the scenario, runs it to completion
// and computes its result, one job after another on one goroutine (the CLI
// runs a scenario's jobs in parallel). Besides ns/op they report:
//
//   - events/s, ns/event: scheduler events (sim.Scheduler.Executed) per
//     second of the Run phase, and Run-phase wall time per event
//   - events/op, packets/op: events run and packets injected per iteration
//   - cpu-s/op: user + system CPU time of the whole process (the GC's
//     workers included) per iteration, Build and Result included: what
//     the CPU-second targets count
//   - allocs/packet: heap allocations of the Run phase per injected packet
//   - peak-MiB: the largest HeapInuse seen right after a Run
//   - maxrss-MiB: the process's peak resident set (VmHWM) over the
//     benchmark, reset before it starts where Linux allows
//     (/proc/self/clear_refs); the test binary's own floor is included

// BenchmarkSpeedPermutation128 is issue 17's scenario 1: k=8 fat-tree,
// 128 × 100G, 2 MB permutation, RoCE + PFC, no CC, 4 KiB packets.
// Target: ≤ 0.19 s CPU and ≤ 12 MiB peak RSS (whole CLI process).
func BenchmarkSpeedPermutation128(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/permutation-k8.yaml"))
}

// BenchmarkSpeedPermutation1024 is scenario 2: the same permutation on a
// k=16 fat-tree (1,024 hosts). Target: ≤ 2.6 s, and ns/event at most 1.3×
// that of BenchmarkSpeedPermutation128.
func BenchmarkSpeedPermutation1024(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/permutation-k16.yaml"))
}

// BenchmarkSpeedAllToAllPairwise128 is scenario 3: k=8 fat-tree, all-to-all
// of 256 KB per pair, pairwise. Target: ≤ 3 s.
func BenchmarkSpeedAllToAllPairwise128(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/alltoall-k8-pairwise.yaml"))
}

// BenchmarkSpeedWebSearch320 is scenario 4: 320 × 100G hosts, 400G fabric,
// WebSearch sizes at 30% load for 10 ms, DCQCN, 1 KB packets. Target:
// ≤ 15 s. This is the long one (about a minute today).
func BenchmarkSpeedWebSearch320(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/websearch-320.yaml"))
}

// BenchmarkSpeedWebSearch320Parts2, BenchmarkSpeedPermutation1024Parts2
// and BenchmarkSpeedAllToAllPairwise128Parts2 are scenarios 4, 2 and 3
// split into two parts (sim.partitions: 2), each on a core of its own:
// ns/event is wall time per event of the run, so it falls with the cores;
// cpu-s/op counts both. In the pairwise all-to-all, each step of a rank
// waits on its own send of the last, delivered in the other part for half
// the pairs (partition_deps.go).
func BenchmarkSpeedWebSearch320Parts2(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/websearch-320.yaml", "sim.partitions=2"))
}

func BenchmarkSpeedPermutation1024Parts2(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/permutation-k16.yaml", "sim.partitions=2"))
}

func BenchmarkSpeedAllToAllPairwise128Parts2(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../testdata/bench/alltoall-k8-pairwise.yaml", "sim.partitions=2"))
}

// BenchmarkSpeedMainJobSmall is scenario 5 scaled down: the README's main
// job (examples/alltoall-dcqcn.yaml: 32 × 400G all-to-all, 5 DCQCN
// variants) at 8–64 MiB per rank only, 20 of its 40 jobs, run one after
// another. The full job (target ≤ 60 s wall on 2 cores) is timed by
// FULL=1 scripts/bench.
func BenchmarkSpeedMainJobSmall(b *testing.B) {
	benchSpeed(b, speedJobs(b, "../examples/alltoall-dcqcn.yaml", "workload.sizes.to=64MiB"))
}

func speedJobs(b *testing.B, file string, sets ...string) []scenario.Job {
	b.Helper()
	f, err := scenario.LoadSets(file, sets)
	if err != nil {
		b.Fatal(err)
	}
	jobs := f.Jobs()
	if len(jobs) == 0 {
		b.Fatalf("%s: no jobs", file)
	}
	return jobs
}

func benchSpeed(b *testing.B, jobs []scenario.Job) {
	var (
		st  runStats
		cpu time.Duration
	)
	debug.FreeOSMemory()
	rssReset := resetPeakRSS()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := cpuTime()
		for _, job := range jobs {
			st.run(b, job)
		}
		cpu += cpuTime() - c0
	}
	b.StopTimer()
	n := float64(b.N)
	if sec := st.runTime.Seconds(); sec > 0 {
		b.ReportMetric(float64(st.events)/sec, "events/s")
	}
	if st.events > 0 {
		b.ReportMetric(float64(st.runTime.Nanoseconds())/float64(st.events), "ns/event")
	}
	b.ReportMetric(float64(st.events)/n, "events/op")
	b.ReportMetric(float64(st.packets)/n, "packets/op")
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	if st.packets > 0 {
		b.ReportMetric(float64(st.mallocs)/float64(st.packets), "allocs/packet")
	}
	b.ReportMetric(float64(st.peak)/(1<<20), "peak-MiB")
	if kib, ok := peakRSSKiB(); ok && rssReset {
		b.ReportMetric(float64(kib)/1024, "maxrss-MiB")
	}
}

// cpuTime is the user + system CPU time the process has used so far (0 if
// the OS does not say).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the process's peak resident set (VmHWM) to its
// current one (Linux ≥ 4.0); false where it cannot, and the peak then
// covers the whole test binary's life, so it is not reported.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSSKiB reads VmHWM from /proc/self/status.
func peakRSSKiB() (uint64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return v, err == nil
	}
	return 0, false
}
