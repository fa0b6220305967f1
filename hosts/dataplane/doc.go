// Package dataplane is a fabriclab agent's data plane: the sockets that
// move a run's bytes between agents over the real network, and the
// counters of what happened. The agent's control channel drives it; it
// knows nothing of workloads, only connections, messages, streams and
// flows.
//
// # Safety
//
// Config.Allowed is asked before every dial (before the socket exists, so
// no SYN leaves) and before every UDP flow starts; a refused destination
// fails that request and nothing is sent. Inbound connections from a
// refused address are closed before anything is written to them (the
// kernel has already answered the SYN; no payload or ack follows). The
// UDP receiver never sends. UDP rates above Config.MaxRate are refused.
//
// # TCP framing
//
// One TCP connection per QP. The client opens with a 32-byte hello (magic,
// version, session, conn, from, to) and waits for the server's helloOK, so
// Dial reports a connection only when the receiving plane took it. Then
// every write or message is a 20-byte header (kind, id, length) followed by
// length payload bytes, and the receiver answers each complete frame with
// a 20-byte ack (same id and length) in order; the sender matches every
// ack to its oldest outstanding frame (frame.go has the layout).
//
// # Copies and allocation
//
// Payload is zeros from one read-only 1 MiB buffer per plane: the header
// and the first chunk go out in one writev (net.Buffers), the rest in
// 1 MiB writes, and no write allocates. The receiver reads into one
// 256 KiB buffer per connection, counts and drops; headers are decoded in
// place and all acks of one read leave in one write. What Go does not
// allow: true zero copy. The net package has no MSG_ZEROCOPY or
// io_uring, and its sendfile/splice paths need a file or socket as the
// source (a payload from memory is always copied into the kernel once);
// on loopback the kernel copies once more on receive whatever the sender
// does. So one user→kernel copy per byte sent and one kernel→user copy
// per byte received is the floor here.
//
// # Goroutines
//
// Per dialled connection a writer and an ack reader; per accepted
// connection one reader (which also writes the acks); per local endpoint
// an acceptor and a UDP reader; per UDP flow a sender; one event
// forwarder. Close cancels them all, closes every socket and waits.
package dataplane
