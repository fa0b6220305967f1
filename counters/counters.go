// Package counters holds what the packet path counts: the event counters
// of a port, a NIC or a whole run, and the fabric's byte balance. It is a
// leaf (it imports nothing) so that the fabric and the transports can count
// without depending on the results schema (package metrics, which aliases
// these types into the results).
package counters

// Counters are event counts for one port, NIC or the whole run. Fields are
// summed by Add.
type Counters struct {
	PFCPausesSent int64   `json:"pfc_pauses_sent"`
	PFCPausesRecv int64   `json:"pfc_pauses_received"`
	PFCPausedS    float64 `json:"pfc_paused_s"` // time an egress queue was held by a received pause
	ECNMarks      int64   `json:"ecn_marks"`
	CNPs          int64   `json:"cnps"`
	Drops         int64   `json:"drops"`
	Retransmits   int64   `json:"retransmits"` // data packets sent again
	Timeouts      int64   `json:"timeouts"`
	NACKs         int64   `json:"nacks"`
	OutOfOrder    int64   `json:"out_of_order"`
	// ReorderMaxPackets is the most packets one receive QP held in its
	// reorder buffer (out-of-order acceptance only).
	ReorderMaxPackets int64   `json:"reorder_max_packets"`
	TxPackets         int64   `json:"tx_packets"`
	TxBytes           int64   `json:"tx_bytes"` // wire bytes including overhead
	MaxQueueBytes     int64   `json:"max_queue_bytes"`
	UtilizationPct    float64 `json:"utilization_pct,omitempty"` // tx busy time / run time (ports only)
	// WatchdogTrips counts a PFC watchdog acting on a queue paused too
	// long; WatchdogDrops the packets its drop action discarded.
	WatchdogTrips int64 `json:"pfc_watchdog_trips,omitempty"`
	WatchdogDrops int64 `json:"pfc_watchdog_drops,omitempty"`
	// Trims counts data packets a switch cut to their header instead of
	// dropping them (switch.trimming).
	Trims int64 `json:"trims,omitempty"`
}

// Add accumulates o into c (max for MaxQueueBytes; utilization is not summed).
func (c *Counters) Add(o Counters) {
	c.PFCPausesSent += o.PFCPausesSent
	c.PFCPausesRecv += o.PFCPausesRecv
	c.PFCPausedS += o.PFCPausedS
	c.ECNMarks += o.ECNMarks
	c.CNPs += o.CNPs
	c.Drops += o.Drops
	c.Retransmits += o.Retransmits
	c.Timeouts += o.Timeouts
	c.NACKs += o.NACKs
	c.OutOfOrder += o.OutOfOrder
	c.WatchdogTrips += o.WatchdogTrips
	c.WatchdogDrops += o.WatchdogDrops
	c.Trims += o.Trims
	c.TxPackets += o.TxPackets
	c.TxBytes += o.TxBytes
	if o.MaxQueueBytes > c.MaxQueueBytes {
		c.MaxQueueBytes = o.MaxQueueBytes
	}
	c.ReorderMaxPackets = max(c.ReorderMaxPackets, o.ReorderMaxPackets)
}

// Conservation is the packet balance checked at the end of every run:
// Injected = Delivered + Dropped + InFlight. The bytes trimming cut off
// packets count as dropped.
type Conservation struct {
	InjectedBytes  int64 `json:"injected_bytes"`
	DeliveredBytes int64 `json:"delivered_bytes"`
	DroppedBytes   int64 `json:"dropped_bytes"`
	InFlightBytes  int64 `json:"in_flight_bytes"`
	OK             bool  `json:"ok"`
}
