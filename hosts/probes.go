package hosts

import (
	"fabriclab/hosts/wire"
	"fabriclab/metrics"
)

// probes are the scenario's UDP probes as the agents' paced UDP flows
// (flow id = the probe's index), at the fabric's scale.
func (r *run) probes() []wire.UDPFlow {
	ps := r.l.spec.Probes
	if len(ps) == 0 {
		return nil
	}
	out := make([]wire.UDPFlow, len(ps))
	for i, p := range ps {
		out[i] = wire.UDPFlow{ID: i, From: p.From, To: p.To, Rate: int64(p.Rate), Size: int(p.Size)}
	}
	return out
}

// probeResults joins each probe's two ends: what its sender sent, what its
// receiver counted. A probe whose receiver reported nothing (its agent's
// Stop failed) has Received −1: unknown, not lost.
func (r *run) probeResults() []metrics.Probe {
	ps := r.l.spec.Probes
	if len(ps) == 0 {
		return nil
	}
	out := make([]metrics.Probe, len(ps))
	for i, p := range ps {
		out[i] = metrics.Probe{From: p.From, To: p.To, RateGbps: float64(p.Rate) / 1e9, SizeBytes: int64(p.Size), Sent: -1, SendErrors: -1, Received: -1}
	}
	for _, u := range r.udpStats {
		if u.Flow < 0 || u.Flow >= len(out) {
			continue
		}
		o := &out[u.Flow]
		switch u.Side {
		case wire.SideSender:
			o.Sent, o.SentBytes, o.SendErrors = u.Sent, u.Bytes, u.SendErrors
		case wire.SideReceiver:
			o.Received, o.ReceivedBytes = u.Received, u.Bytes
			o.Lost, o.Reordered, o.Duplicates, o.Late = u.Lost, u.Reordered, u.Duplicates, u.Late
			o.JitterS = float64(u.Jitter) / 1e9
		}
	}
	for i := range out {
		if o := &out[i]; o.Sent > 0 && o.Received >= 0 {
			o.LossPct = 100 * float64(o.Lost) / float64(o.Sent)
		}
	}
	return out
}
