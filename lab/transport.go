package lab

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/transport/roce"
)

// hostTransport is what a simulation needs of the transport on its hosts:
// connections (a transport without them ignores connect), messages posted
// on them, delivery reported through the callback given to newTransport,
// and the 5-tuple a message's packets carry (what ECMP hashes, for the
// static path and routed-ideal analyses).
type hostTransport interface {
	// connect opens connection number conn (dense, from 0) from src to dst.
	connect(conn int32, src, dst int)
	post(conn, msg int32, src, dst int, bytes int64)
	tuple(conn, msg int32, src, dst int) (s, d, sqp, dqp int32)
	nicCounters(h int) metrics.Counters
	counters() metrics.Counters
	deliveredPayload() int64
	setName(h int, name string)
}

// newTransport attaches the scenario's transport to every host of net;
// delivered hears each message's delivery.
func newTransport(s *Sim, net *fabric.Network, delivered func(msg int32, now sim.Time)) (hostTransport, error) {
	spec := s.Job.Spec
	switch spec.Transport.Kind {
	case "", "roce":
		dq, err := scenario.DCQCNParams(spec)
		if err != nil {
			return nil, err
		}
		t := roce.New(net, roce.Config{
			MTU:              int32(spec.NIC.MTU),
			Overhead:         int32(spec.NIC.Overhead),
			AckEvery:         spec.NIC.AckEvery,
			RTO:              spec.NIC.RTO,
			MaxInflight:      int64(spec.NIC.MaxInflight),
			Burst:            spec.NIC.Burst,
			AcceptOutOfOrder: spec.NIC.OutOfOrder == "accept",
			DataPrio:         uint8(spec.NIC.DataPriority),
			CtrlPrio:         uint8(spec.NIC.ControlPriority),
			DCQCN:            dq,
		})
		t.OnDelivered = delivered
		s.RoCE = t
		return &roceLayer{t: t}, nil
	case "homa":
		return newHomaLayer(s, net, delivered)
	case "dctcp", "tcp":
		return newTCPLayer(s, net, delivered)
	}
	return nil, fmt.Errorf("unknown transport %q", spec.Transport.Kind)
}

// roceLayer: one queue pair per connection.
type roceLayer struct {
	t   *roce.Transport
	qps []roce.QP
}

func (l *roceLayer) connect(conn int32, src, dst int) {
	if int(conn) != len(l.qps) {
		panic("lab: connections out of order")
	}
	l.qps = append(l.qps, l.t.Connect(src, dst))
}

func (l *roceLayer) post(conn, msg int32, _, _ int, bytes int64) { l.t.Post(l.qps[conn], msg, bytes) }

func (l *roceLayer) tuple(conn, _ int32, _, _ int) (s, d, sqp, dqp int32) {
	return l.t.Tuple(l.qps[conn])
}

func (l *roceLayer) nicCounters(h int) metrics.Counters { return l.t.NICs[h].C }
func (l *roceLayer) counters() metrics.Counters         { return l.t.Counters() }
func (l *roceLayer) deliveredPayload() int64            { return l.t.DeliveredPayload }
func (l *roceLayer) setName(h int, name string)         { l.t.SetName(h, name) }
