package agent

import (
	"context"
	"net/netip"
	"time"

	"fabriclab/hosts/wire"
)

// Plane is a run's data plane as the agent drives it: package dataplane's
// Plane behind wire's types (dataplane.go adapts it), or a fake in tests.
// Its methods may be called concurrently; Close makes a Dial in progress
// return.
type Plane interface {
	Dial(ctx context.Context, conns []wire.Conn) []wire.ConnFailure
	StartStreams(start, until time.Time, s []wire.Stream) error
	StartUDP(start, until time.Time, f []wire.UDPFlow) error
	Post(conn int, msg, bytes int64) error
	// Events are the DAG mode's message events; the channel closes when
	// the plane does (or never, and the agent stops reading at Close).
	Events() <-chan wire.Event
	Snapshot() wire.Checkpoint
	Close() error
}

// PlaneSpec is what a run's plane is built from, after Prepare's checks.
type PlaneSpec struct {
	CC string
	// Allowed is the run's endpoint addresses ∩ the agent's --allow: the
	// plane refuses any other destination itself too.
	Allowed func(netip.Addr) bool
	MaxRate int64
	// Session is the run's number, the same on every agent of the run, so
	// planes tell its traffic from an earlier run's stragglers.
	Session uint64
	Local   []wire.Endpoint
	Peers   []wire.Endpoint // every endpoint of the run, local ones too
}
