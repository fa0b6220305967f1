package scenario

import "slices"

// partitionedTransports are the transports whose NICs a partitioned run
// can split: each part runs the hosts it owns, and whatever a transport
// reaches across to the other end (TCP's framing) crosses between parts
// (lab/partition_framing.go). A new transport joins once checked.
var partitionedTransports = []string{"roce", "uet", "dctcp", "tcp", "homa"}

// MaxPartitions bounds sim.partitions.
const MaxPartitions = 64

// PartitionsSupport reports whether a partitioned run (sim.partitions > 1)
// can simulate s, and if not which key stands in the way and why: an
// engine other than the packet engine, or a transport not checked for
// parts.
func PartitionsSupport(s *Scenario) (ok bool, key, why string) {
	switch {
	case s.Sim.Engine != "packet":
		return false, "sim.engine", "partitions split the packet engine's run"
	case !slices.Contains(partitionedTransports, s.Transport.Kind):
		return false, "transport.kind", s.Transport.Kind + ": not checked for partitioned runs yet"
	}
	return true, "", ""
}
