// Package agent is `fabriclab agent`, the server that runs on every real
// host of a hosts run, and the Client the controller drives it with.
//
// # Control channel
//
// Connect RPC over HTTP/2 on TLS 1.3, with the JSON messages of package
// wire. TLS is always on: without --cert/--key the agent makes an
// ephemeral self-signed certificate at start, which clients cannot verify
// and do not need to, since the token handshake authenticates both ends
// and is bound to the TLS session (see wire's auth.go: a man in the middle
// with two TLS sessions fails it). With --ca the agent requires and
// verifies client certificates (mTLS), and a client given a CA file
// verifies the agent's certificate.
//
// Every request after the handshake carries its session id, which the
// agent accepts only on the TLS connection that authenticated it. Failed
// handshakes are logged (one line, the peer's address, never a secret),
// counted, and answered after a delay, at most a few per second.
//
// # Runs and safety
//
// One run at a time, owned by the session that prepared it. Prepare
// refuses, before anything is built or sent, a run that would make this
// agent send to an address that is not both an endpoint of the run and
// inside its --allow ranges, a UDP rate or a declared NIC rate above
// --max-rate, or a duration above --max-duration (spec.go). The data plane
// is given the same allow check, so it refuses such a send itself too.
//
// A run whose controller goes silent (no request from the owning session
// for the lease, 3 s by default) or whose controller connection closes is
// aborted by the agent; so is a run past its duration (the data plane is
// closed and Stop returns the final counters).
package agent
