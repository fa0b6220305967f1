package lab

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/transport/roce"
	"fabriclab/transport/uet"
)

// hostTransport is what a simulation needs of the transport on its hosts:
// connections (a transport without them ignores connect), messages posted
// on them, delivery reported through the callback given to newTransport,
// and the 5-tuple a message's packets carry (the plan chose it, see
// plan.Conn; connect checks that the transport puts the same on the wire).
type hostTransport interface {
	// connect opens connection number conn (dense, from 0) from src to dst.
	connect(conn int32, src, dst int)
	post(conn, msg int32, src, dst int, bytes int64)
	tuple(conn, msg int32, src, dst int) (s, d, sqp, dqp int32)
	nicCounters(h int) metrics.Counters
	counters() metrics.Counters
	deliveredPayload() int64
	setName(h int, name string)
	// watchFlows follows messages msgs (sim.telemetry.flows; called before
	// any is posted) and names the metric flowState returns with a
	// message's payload delivered in order (flowprobe.go); ok is false
	// before the message is posted.
	watchFlows(msgs []int32) (metric string)
	// It is called on the message's sender's transport with rcv, its
	// receiver's: the same one, or the same transport in another part of a
	// partitioned run.
	flowState(msg int32, rcv hostTransport) (value float64, delivered int64, ok bool)
}

// transports are the packet engine's transports by scenario kind: how one
// attaches to every host of the network (delivered hears each message's
// delivery) and what it costs in the memory estimate. A test checks that
// every scenario.TransportKinds has one.
var transports = map[string]struct {
	attach func(s *Sim, net *fabric.Network, delivered func(msg int32, now sim.Time)) (hostTransport, error)
	// costs is the transport's for spec (nil: its NICs' alone).
	costs func(c *costs, spec *scenario.Scenario) transportCosts
}{
	"roce":  {newRoCELayer, (*costs).roceCosts},
	"homa":  {newHomaLayer, func(c *costs, _ *scenario.Scenario) transportCosts { return c.homa }},
	"uet":   {newUETLayer, (*costs).uetCosts},
	"dctcp": {newTCPLayer, func(c *costs, _ *scenario.Scenario) transportCosts { return c.tcp }},
	"tcp":   {newTCPLayer, func(c *costs, _ *scenario.Scenario) transportCosts { return c.tcp }},
}

// newTransport attaches the scenario's transport to every host of net.
func newTransport(s *Sim, net *fabric.Network, delivered func(msg int32, now sim.Time)) (hostTransport, error) {
	kind := scenario.TransportOf(s.Job.Spec).Name
	if t, ok := transports[kind]; ok {
		return t.attach(s, net, delivered)
	}
	return nil, fmt.Errorf("unknown transport %q", kind)
}

// newRoCELayer attaches RoCE NICs with DCQCN (one queue pair per
// connection).
func newRoCELayer(s *Sim, net *fabric.Network, delivered func(msg int32, now sim.Time)) (hostTransport, error) {
	spec := s.Job.Spec
	dq, err := scenario.DCQCNParams(spec)
	if err != nil {
		return nil, err
	}
	hp := scenario.HPCCParams(spec)
	if hp.Enabled {
		dq.Enabled = false // HPCC replaces DCQCN: no CNPs, no reaction point
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
		HPCC:             hp,
		ControlWire:      int32(spec.NIC.ControlWire),
		CNPOnAck:         spec.NIC.CNP == "ack",
		ActiveQPs:        spec.NIC.ActiveQPs,
	})
	t.OnDelivered = delivered
	s.RoCE = t
	return &connLayer[roce.QP]{t: t, nic: func(h int) metrics.Counters { return t.NICs[h].C }, delivered: &t.DeliveredPayload,
		probe: roceProbe(t, int64(spec.NIC.MTU))}, nil
}

// newUETLayer attaches Ultra Ethernet NICs (one connection per lab
// connection).
func newUETLayer(s *Sim, net *fabric.Network, delivered func(msg int32, now sim.Time)) (hostTransport, error) {
	spec := s.Job.Spec
	cfg := scenario.UETConfig(spec)
	if cfg.NSCC.TargetDelay == 0 && len(net.HostPorts) > 1 {
		cfg.NSCC.TargetDelay = net.BaseRTT(0, len(net.HostPorts)-1, cfg.MTU+cfg.Overhead, cfg.ControlWire) / 2
	}
	t := uet.New(net, cfg)
	t.OnDelivered = delivered
	return &connLayer[uet.Conn]{t: t, nic: func(h int) metrics.Counters { return t.NICs[h].C }, delivered: &t.DeliveredPayload,
		probe: uetProbe(t, int64(spec.NIC.MTU))}, nil
}

// connTransport is a transport with connections (RoCE's queue pairs, TCP's
// byte streams), C being its connection handle.
type connTransport[C any] interface {
	Connect(src, dst int) C
	Post(c C, msg int32, bytes int64)
	Tuple(c C) (src, dst, sqp, dqp int32)
	Counters() metrics.Counters
	SetName(h int, name string)
}

// connLayer runs one transport connection per lab connection.
type connLayer[C any] struct {
	t         connTransport[C]
	conns     []C
	nic       func(h int) metrics.Counters // a host's transport counters
	delivered *int64                       // the transport's delivered payload
	probe     connProbe[C]                 // per-flow telemetry
	watched   map[int32]*flowWatch         // the messages it follows (nil: none)
	// framer is t when its post frames messages at the receiver (TCP;
	// nil otherwise), found once.
	framer framedPost[C]
}

func (l *connLayer[C]) connect(conn int32, src, dst int) {
	if int(conn) != len(l.conns) {
		panic("lab: connections out of order")
	}
	l.conns = append(l.conns, l.t.Connect(src, dst))
}

// setEntropy gives connection conn the UDP source port port, for the
// transports whose packets carry one (nic.entropy: qp-aware).
func (l *connLayer[C]) setEntropy(conn, port int32) bool {
	if e, ok := l.t.(interface{ SetEntropy(C, int32) }); ok {
		e.SetEntropy(l.conns[conn], port)
		return true
	}
	return false
}

func (l *connLayer[C]) post(conn, msg int32, _, _ int, bytes int64) {
	if l.watched != nil {
		l.follow(conn, msg, bytes)
	}
	l.t.Post(l.conns[conn], msg, bytes)
}

// framedPost is a connection transport whose post also frames the
// message at its receiver (TCP: where it ends in the byte stream), in two
// halves that a partitioned run calls in the sender's and the receiver's
// parts (partition_framing.go).
type framedPost[C any] interface {
	Submit(c C, msg int32, bytes int64)
	Expect(c C, msg int32, bytes int64)
	Framed(c C) int64
}

// frames reports whether the transport's post frames the message at the
// receiver (framedPost).
func (l *connLayer[C]) frames() bool { return l.framer != nil }

// postSend is post's sending half, for a transport that frames (frames).
func (l *connLayer[C]) postSend(conn, msg int32, bytes int64) {
	if l.watched != nil {
		l.follow(conn, msg, bytes)
	}
	l.framer.Submit(l.conns[conn], msg, bytes)
}

// expect is post's receiving half (frames).
func (l *connLayer[C]) expect(conn, msg int32, bytes int64) {
	l.framer.Expect(l.conns[conn], msg, bytes)
}

// framed is where the last message framed at conn's receiver ends in
// its stream (frames).
func (l *connLayer[C]) framed(conn int32) int64 {
	return l.framer.Framed(l.conns[conn])
}

func (l *connLayer[C]) tuple(conn, _ int32, _, _ int) (s, d, sqp, dqp int32) {
	return l.t.Tuple(l.conns[conn])
}

func (l *connLayer[C]) nicCounters(h int) metrics.Counters { return l.nic(h) }
func (l *connLayer[C]) counters() metrics.Counters         { return l.t.Counters() }
func (l *connLayer[C]) deliveredPayload() int64            { return *l.delivered }
func (l *connLayer[C]) setName(h int, name string)         { l.t.SetName(h, name) }
