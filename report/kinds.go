package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"fabriclab/workload"
)

// HasBusBW reports whether a workload kind has a bus bandwidth: the
// collectives (nccl-tests' factor) and permutation, where every rank sends
// and receives S, so that S / time is what each NIC carried (factor 1, as
// send/recv). The other traffic patterns have none and print "-": an
// incast's senders share the target's link (S / time per sender is not a
// link figure), a flow list, uniform load and messages add up flows
// between many pairs, and any-to-any's rate is the pairs' aggregate. An
// unknown kind (older results) keeps its figure.
func HasBusBW(kind string) bool {
	switch kind {
	case "incast", "flows", "uniform", "messages", "any-to-any":
		return false
	}
	return true
}

// IsCollective reports whether kind is one of the collectives (not a
// traffic pattern).
func IsCollective(kind string) bool { return slices.Contains(workload.Collectives(), kind) }

// busCell is a bus bandwidth cell: "-" for a kind without one.
func busCell(kind string, gbps float64) string {
	if !HasBusBW(kind) {
		return "-"
	}
	return GBps(gbps)
}

// GBps is a bandwidth in GB/s as the tables print it: two decimals, or
// three significant digits below 0.1 GB/s, where two decimals say nothing
// (a namespace lab at 1/1000 of the rates reads 0.0125, not 0.01).
func GBps(v float64) string {
	a := math.Abs(v)
	if a >= 0.1 || a == 0 || math.IsNaN(a) || math.IsInf(a, 0) {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	prec := min(2+int(math.Ceil(-math.Log10(a))), 8)
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// noBusBWNote is the footer of a table whose kind has no bus bandwidth:
// what its algbw is instead (and, for an incast, the average rate into the
// target over the n complete sizes, sum being Σ algbw × senders).
func noBusBWNote(kind string, sum float64, n int, over string) string {
	switch kind {
	case "incast":
		s := "# incast: no bus bandwidth (busbw -); algbw = bytes per sender / time"
		if n > 0 {
			s += fmt.Sprintf("; into the target: %s GB/s on average (senders × bytes per sender / time)%s", GBps(sum/float64(n)), over)
		}
		return s + "\n"
	case "any-to-any":
		return "# any-to-any: no bus bandwidth (busbw -); algbw = payload completed within the duration / duration, all pairs (see the endpoint table)\n"
	case "flows":
		return "# flows: no bus bandwidth (busbw -); algbw = all flows' bytes / time, the aggregate throughput\n"
	}
	return fmt.Sprintf("# %s: no bus bandwidth (busbw -); algbw = all messages' bytes / time, the aggregate throughput\n", kind)
}
