package scenario

import (
	"fabriclab/units"
	"fabriclab/workload"
)

// Defaults returns the scenario every file starts from: a file is decoded
// onto this value, so a key it leaves out keeps the value below. This is the
// single place defaults are written down (the README copies from here).
//
// The values model a current RoCEv2 AI fabric:
//
//   - topology: leaf-spine, 400Gbps host and fabric links with 1us one-way
//     delay, no extra switch latency, oversubscription 1 (non-blocking).
//     The size of the fabric (hosts, hosts_per_leaf, k, servers, …) has no
//     default: a test must say how big it is.
//   - nic: 4096 B MTU payload (the largest RoCE MTU), 82 B wire overhead per
//     packet (Eth+IP+UDP+BTH+ICRC+FCS headers plus preamble and inter-frame
//     gap), an ACK for every data packet, 1ms retransmission timeout (close
//     to the smallest local ACK timeout a ConnectX NIC accepts, 4.096us×2^8;
//     large against fabric RTTs so a timeout is visibly costly), no in-flight
//     cap, per-packet round-robin between QPs (burst 1), data on priority 3 and CNPs/ACKs on priority 6 (the usual RoCE
//     lossless class and a higher control class).
//   - switch: 32 MiB shared buffer; ECN on with kmin 50KB, kmax 200KB,
//     pmax 0.2 at a 100Gbps reference rate (so 200KB/800KB on a 400G port);
//     PFC on with xoff 512KiB and xon 504KiB (two packets below xoff) per
//     ingress port and priority, headroom sized automatically; ECMP. ECN
//     thresholds sit below XOFF so that DCQCN gets marks before PFC pauses,
//     as RoCE deployment guides prescribe.
//   - transport: RoCE with the "default" DCQCN preset (vendor factory values).
//   - workload: nccl-tests-like sweeps multiply by 2 unless told otherwise;
//     the algorithm defaults per kind (alltoall: direct, allreduce: ring)
//     and ranks default to every host.
//   - sim: 1s simulated-time limit, no per-flow records or per-port counters
//     in the output; seed 1.
func Defaults() *Scenario {
	return &Scenario{
		Seed: 1,
		Topology: Topology{
			Kind:             "leaf-spine",
			Oversubscription: 1,
			HostLink:         Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
			FabricLink:       Link{Rate: 400 * units.Gbps, Delay: units.Microsecond},
			SwitchLatency:    0,
			Convergence:      50 * units.Microsecond,
		},
		NIC: NIC{
			MTU:             4096,
			Overhead:        82,
			AckEvery:        1,
			OutOfOrder:      "go-back-n",
			RTO:             units.Millisecond,
			Burst:           1,
			DataPriority:    3,
			ControlPriority: 6,
			ControlWire:     84,
			CNP:             "packet",
		},
		Switch: Switch{
			Buffer: 32 * units.MiB,
			ECN: ECN{
				Enabled:       true,
				KMin:          50 * units.KB,
				KMax:          200 * units.KB,
				PMax:          0.2,
				ReferenceRate: 100 * units.Gbps,
				MarkAt:        "enqueue",
			},
			PFC: PFC{
				Enabled:  true,
				XOFF:     512 * units.KiB,
				XON:      504 * units.KiB,
				Mode:     "static",
				Alpha:    0.125,
				Reserved: 0,
			},
			Forwarding: "ecmp",
			FlowletGap: 4 * units.Microsecond,
		},
		Transport: Transport{
			Kind:  "roce",
			DCQCN: DCQCN{Preset: "default"},
		},
		Workload: Workload{
			Sizes:      Sizes{Factor: 2},
			QPs:        1,
			Iterations: 1,
		},
		Sim: SimOpts{
			TimeLimit:       units.Second,
			MemoryLimit:     8 * units.GiB,
			ExplainSlowdown: 1.5,
			Engine:          "packet",
			FlowAbove:       256 * units.MiB,
		},
	}
}

// defaultAlgorithm is the algorithm a collective runs when a file leaves
// algorithm empty: the first of workload.Algorithms.
func defaultAlgorithm(kind string) string {
	if a := workload.Algorithms(kind); len(a) > 0 {
		return a[0]
	}
	return ""
}
