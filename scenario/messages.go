package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"fabriclab/units"
	"fabriclab/workload"
)

// WorkloadsEnv names the folder holding the community's size-distribution
// files (W1–W5, websearch, …) that short names in workload.size_dist
// stand for.
const WorkloadsEnv = "FABRICLAB_WORKLOADS"

// workloadDirs are where short names are looked up, in order: $FABRICLAB_WORKLOADS,
// then a shared/data/workloads folder beside the scenario's project or
// the current directory's (the layout of fabriclab's own checkout).
func workloadDirs(scenarioDir string) []string {
	var dirs []string
	if d := os.Getenv(WorkloadsEnv); d != "" {
		dirs = append(dirs, d)
	}
	rel := filepath.Join("shared", "data", "workloads")
	for _, base := range []string{scenarioDir, "."} {
		for _, up := range []string{"..", filepath.Join("..", ".."), filepath.Join("..", "..", "..")} {
			dirs = append(dirs, filepath.Join(base, up, rel))
		}
	}
	return dirs
}

// shortDistDir is the first of workloadDirs(dir) that holds the shared
// data file file ("" if none does).
func shortDistDir(file, dir string) string {
	for _, d := range workloadDirs(dir) {
		if _, err := os.Stat(filepath.Join(d, file)); err == nil {
			return d
		}
	}
	return ""
}

// ResolveSizeDist reads a workload's size_dist: a short name (looked up in
// $FABRICLAB_WORKLOADS or the shared data folder) or a file path, relative
// to the scenario's directory dir. Files counted in packets (W5) are
// turned into bytes with HomaSimulation's 1442-byte payload whatever the
// NIC's MTU, so that every transport sees the same messages.
func ResolveSizeDist(name, dir string) (*workload.SizeDist, error) {
	opts := workload.LoadOptions{}
	if file := workload.SizeDistFile(name); file != "" {
		if d := shortDistDir(file, dir); d != "" {
			return workload.LoadSizeDistOpts(name, d, opts)
		}
		return nil, fmt.Errorf("%s is the short name of %s, which is not in $%s nor in a shared/data/workloads folder near the scenario; set %s to the folder holding it, or give the file's path",
			name, file, WorkloadsEnv, WorkloadsEnv)
	}
	path := RelativeTo(dir, name)
	// The loader opens the file through inputfile: a regular file of
	// bounded size, opened without blocking.
	d, err := workload.LoadSizeDistOpts(path, "", opts)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%q is neither a short name (%s) nor a file (a relative path is relative to the scenario file)",
			name, strings.Join(workload.SizeDistNames(), ", "))
	}
	return d, err
}

var (
	messagePatterns = []string{"uniform", "permutation"}
	bucketKinds     = []string{"equal-count", "log2"}
	tcpKinds        = []string{"pair", "pool"}
)

// maxMessages bounds the messages a messages job may generate.
const maxMessages = workload.MaxUniformMessages

// messages checks job i's messages workload: its distribution loads, the
// load and duration make sense, and the message count is bounded and not
// zero.
func (c *checker) messages(p string, job int, w Workload, s *Scenario, ranks int, limit units.Duration) {
	c.need(w.Load > 0 && w.Load <= 1, p+"load", "messages needs a load in (0, 1] (fraction of the host link rate, headers included), got %v", w.Load)
	c.need(w.Duration > 0, p+"duration", "messages needs a duration (> 0) during which messages arrive, got %v", w.Duration)
	c.need(limit <= 0 || w.Duration <= limit, p+"duration", "%v is beyond sim.time_limit %v", w.Duration, limit)
	c.need(w.Pattern == "" || oneOf(w.Pattern, messagePatterns), p+"pattern", "unknown pattern %q; use one of: %s", w.Pattern, choices(messagePatterns))
	c.need(w.Buckets == "" || oneOf(w.Buckets, bucketKinds), p+"buckets", "unknown buckets %q; use one of: %s", w.Buckets, choices(bucketKinds))
	c.need(w.BucketCount >= 0 && w.BucketCount <= 100, p+"bucket_count", "must be between 1 and 100 (0 = 10), got %d", w.BucketCount)
	c.need(w.BucketCount == 0 || w.Buckets != "log2", p+"bucket_count", "is read by buckets: equal-count only (log2 buckets are powers of two)")
	c.need(!userSizes(w.Sizes), p+"sizes", "messages draws its sizes from size_dist; remove sizes")
	c.need(w.ResponseSize >= 0 || w.ResponseSize == SameSize, p+"response_size", "must not be negative (0 = one-way messages, same = as long as the request), got %v", int64(w.ResponseSize))
	if w.SizeDist == "" {
		c.fail(p+"size_dist", "messages needs a size_dist: a short name (%s) or a CDF file", strings.Join(workload.SizeDistNames(), ", "))
	}
	if c.err != nil {
		return
	}
	d, err := c.f.sizeDist(w.SizeDist)
	if err != nil {
		c.fail(p+"size_dist", "%v", err)
		return
	}
	mtu, ovh := int64(s.NIC.MTU), int64(s.NIC.Overhead)
	spec := workload.PoissonSpec{Hosts: ranks, Load: w.Load, Rate: s.Topology.HostLink.Rate, Payload: mtu, Header: ovh, Sizes: d}
	// The bound Poisson itself applies (a margin of 6 standard deviations
	// over the expected count), on requests and responses together.
	most := float64(maxMessages)
	if w.ResponseSize.RPC() {
		most /= 2
	}
	n := spec.PoissonRate() * float64(ranks) * w.Duration.Seconds()
	if n+6*math.Sqrt(n) > most {
		c.fail(p+"duration", "about %.0f messages at load %v for %v, more than the limit of %d; shorten duration", n*maxMessages/most, w.Load, w.Duration, maxMessages)
		return
	}
	if n < fewMessages {
		// The draw may well be empty: make it, as run will (the count
		// depends on the seed), and refuse an empty one, which would run
		// nothing and report a row of zeros.
		seed := JobSeed(s.Seed, job)
		hs, err := JobHosts(w, s.Topology, seed)
		if err == nil {
			_, err = workload.Messages(workload.MessagesSpec{Hosts: hs, Sizes: d, Load: w.Load, Rate: s.Topology.HostLink.Rate,
				Payload: mtu, Header: ovh, Duration: w.Duration, Pattern: w.Pattern, ResponseBytes: int64(w.ResponseSize),
				Seed: seed, Limit: maxMessages})
		}
		if errors.Is(err, workload.ErrNoMessages) {
			c.fail(p+"duration", "%v at load %v yields no message (about %.2g expected, none drawn with seed %d); raise duration or load",
				w.Duration, w.Load, n, s.Seed)
			return
		}
	}
	if w.ResponseSize.RPC() {
		// Each host answers as many requests as it sends: its link carries
		// its requests and its responses (as many bytes again with same).
		resp := 1.0
		if w.ResponseSize != SameSize {
			resp = float64(workload.WireBytes(int64(w.ResponseSize), mtu, ovh)) / workload.MeanWireBytes(d, mtu, ovh)
		}
		total := w.Load * (1 + resp)
		c.need(total <= 1, p+"response_size", "requests at load %v and their %v responses need %.2f of every host link; lower load or response_size", w.Load, w.ResponseSize, total)
	}
}

// fewMessages is an expected message count below which a messages
// workload is drawn at validation to see whether it is empty (above it an
// empty draw has a probability below e^−50).
const fewMessages = 50

// userSizes reports whether a file wrote workload.sizes (the default is
// an empty sweep).
func userSizes(s Sizes) bool { return len(s.List) > 0 || s.From != 0 || s.To != 0 }

// sizeDist loads a size distribution once per name.
func (f *File) sizeDist(name string) (*workload.SizeDist, error) {
	f.read.mu.Lock()
	defer f.read.mu.Unlock()
	if f.read.dists == nil {
		f.read.dists = map[string]distEntry{}
	}
	if e, ok := f.read.dists[name]; ok {
		return e.d, e.err
	}
	if workload.SizeDistFile(name) == "" { // a path, not a short name
		if err := f.allowed(name, RelativeTo(f.Dir, name)); err != nil {
			return nil, err
		}
	}
	d, err := ResolveSizeDist(name, f.Dir)
	f.read.dists[name] = distEntry{d, err}
	return d, err
}

type distEntry struct {
	d   *workload.SizeDist
	err error
}

// UET's load-balancing and congestion-control choices.
var (
	uetLBs = []string{"spray", "reps", "single"}
	uetCCs = []string{"nscc", "rccc", "nscc+rccc"}
)

// transportKnobs checks the knobs of every transport (those of a transport
// not chosen are kept, unread, so that variants can switch transports
// under one set of settings, as dcqcn's are).
func (c *checker) transportKnobs(t Transport) {
	h, tc := t.Homa, t.TCP
	const hp, tp = "transport.homa.", "transport.tcp."
	c.need(h.RTTBytes >= 0, hp+"rtt_bytes", "must not be negative (0 = the bandwidth-delay product), got %v", h.RTTBytes)
	c.need(h.Overcommit >= 0 && h.Overcommit <= 8, hp+"overcommit", "must be between 1 and 8 (0 = the scheduled priority levels), got %d", h.Overcommit)
	c.need(h.UnscheduledPriorities >= 0 && h.UnscheduledPriorities <= 7, hp+"unscheduled_priorities", "must be between 1 and 7 of the 8 levels (0 = from the size distribution), got %d", h.UnscheduledPriorities)
	c.need(h.ResendTimeout >= 0, hp+"resend_timeout", "must not be negative (0 = 10ms), got %v", h.ResendTimeout)
	c.need(h.MaxResends >= 0, hp+"max_resends", "must not be negative (0 = 5), got %d", h.MaxResends)
	c.need(h.FIFOGrantFraction >= 0 && h.FIFOGrantFraction < 1, hp+"fifo_grant_fraction", "must be in [0, 1), got %v", h.FIFOGrantFraction)
	u := t.UET
	const up = "transport.uet."
	c.need(u.LB == "" || oneOf(u.LB, uetLBs), up+"lb", "unknown %q; use one of: %s", u.LB, choices(uetLBs))
	c.need(u.CC == "" || oneOf(u.CC, uetCCs), up+"cc", "unknown %q; use one of: %s", u.CC, choices(uetCCs))
	c.need(u.Entropies >= 0 && u.Entropies <= 65536, up+"entropies", "must be between 1 and 65536 (0 = 256), got %d", u.Entropies)
	c.need(u.TargetDelay >= 0, up+"target_delay", "must not be negative (0 = half the base RTT), got %v", u.TargetDelay)
	c.need(u.IncreaseGain >= 0, up+"increase_gain", "must not be negative (0 = 1), got %v", u.IncreaseGain)
	c.need(u.FairIncrease >= 0, up+"fair_increase", "must not be negative (0 = 1), got %v", u.FairIncrease)
	c.need(u.DecreaseGain >= 0 && u.DecreaseGain <= 1, up+"decrease_gain", "must be in (0, 1] (0 = 1), got %v", u.DecreaseGain)
	c.need(u.MaxWindow == 0 || u.MaxWindow >= 0.1 && u.MaxWindow <= 100, up+"max_window", "must be between 0.1 and 100 BDPs (0 = 1.25), got %v", u.MaxWindow)
	c.need(u.BaseRTT >= 0, up+"base_rtt", "must not be negative (0 = each connection's unloaded round trip), got %v", u.BaseRTT)
	hc := t.HPCC
	const hcp = "transport.hpcc."
	c.need(hc.Eta >= 0 && hc.Eta <= 1, hcp+"eta", "must be in (0, 1] (0 = 0.95), got %v", hc.Eta)
	c.need(hc.MaxStage >= 0 && hc.MaxStage <= 1000, hcp+"max_stage", "must be between 1 and 1000 (0 = 5), got %d", hc.MaxStage)
	c.need(hc.RateAI >= 0, hcp+"rate_ai", "must not be negative (0 = 50Mbps), got %v", hc.RateAI)
	c.need(hc.MinRate >= 0, hcp+"min_rate", "must not be negative (0 = 100Mbps), got %v", hc.MinRate)
	c.need(hc.BaseRTT >= 0, hcp+"base_rtt", "must not be negative (0 = each QP's unloaded round trip), got %v", hc.BaseRTT)
	c.need(tc.InitCwnd >= 0, tp+"init_cwnd", "must not be negative (0 = 10 segments), got %d", tc.InitCwnd)
	c.need(tc.G >= 0 && tc.G <= 1, tp+"g", "must be in (0, 1] (0 = 1/16), got %v", tc.G)
	c.need(tc.MinRTO >= 0, tp+"min_rto", "must not be negative (0 = 10ms), got %v", tc.MinRTO)
	c.need(tc.AckEvery >= 0, tp+"ack_every", "must not be negative (0 = every segment), got %d", tc.AckEvery)
	c.need(tc.Connections == "" || oneOf(tc.Connections, tcpKinds), tp+"connections", "unknown policy %q; use one of: %s", tc.Connections, choices(tcpKinds))
	c.need(tc.PoolSize >= 0 && tc.PoolSize <= 1024, tp+"pool_size", "must be between 2 and 1024, got %d", tc.PoolSize)
	c.need(tc.PoolSize == 0 || tc.Connections == "pool", tp+"pool_size", "is read by connections: pool only")
	c.need(tc.Connections != "pool" || tc.PoolSize >= 2, tp+"pool_size", "connections: pool needs a pool_size of at least 2 connections per pair, got %d", tc.PoolSize)
}
