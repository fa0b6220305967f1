package scenario

// MaxPartitions bounds sim.partitions.
const MaxPartitions = 64

// PartitionsSupport reports whether a partitioned run (sim.partitions > 1)
// can simulate s, and if not which key stands in the way and why: an
// engine other than the packet engine, or a transport not checked for
// parts (TransportKind.Partitioned).
func PartitionsSupport(s *Scenario) (ok bool, key, why string) {
	if s.Sim.Engine != "packet" {
		return false, "sim.engine", "partitions split the packet engine's run"
	}
	if k, known := LookupTransportKind(s.Transport.Kind); known && !k.Partitioned {
		return false, "transport.kind", k.Name + ": not checked for partitioned runs yet"
	}
	return true, "", ""
}
