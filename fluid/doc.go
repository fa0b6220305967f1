// Package fluid is the flow-level engine (sim.engine: flow): a fluid
// simulation of a job's plan with max-min fair rates, for the sizes and
// scales the packet engine (package lab) cannot reach. It is an
// engine.Engine on the same seam: the same topology (topo.Build), plan
// (plan.CompileOptions: DAG, connections, 5-tuples), failures and pinned
// routes (plan.Failures, plan.Routes, plan.ApplyRoutes), the same DAG
// executor (workload.Executor: releases, markers, earliest starts,
// DAG.Until cuts) and the same measurements (package measure, with
// measure.TopologyBounds), so a row reads like a packet row. Supports
// says which jobs it can express.
//
// # The model, term by term
//
// Flows. A connection of the plan (a RoCE queue pair, a TCP connection)
// is one fluid flow while it has messages to send; it sends them one after
// the other, as a QP does. A message starts when the executor releases it.
// Its wire bytes (payload plus nic.overhead per nic.mtu packet, so the
// payload efficiency MTU/(MTU+overhead) is built in) drain at the flow's
// rate; the next message on the connection follows at once, at the same
// rate. The message is delivered a latency after its last byte left: the
// propagation (and switch latency) of every hop plus the store-and-forward
// of its last packet on every hop but the slowest, on the path a packet
// takes alone — the terms of measure.FabricBounds.AloneFCT, so a message
// alone on the fabric takes exactly its alone bound — and never before the
// message ahead of it on its connection.
//
// Paths. Exactly the packet engine's: a static policy's next hop
// (fabric.Switch.NextHop: the seeded ECMP hash of the plan's 5-tuple of
// each connection, or d-mod-k), switch.routes_file pins, links failed at
// time 0 routed around. A dynamic policy (spray-random, spray-rr,
// adaptive, adaptive-flowlet) splits a flow evenly over the live
// equal-cost next hops at every switch: the flow puts 1/k of its rate on
// each of k hops (per tier, with switch.forwarding_tiers).
//
// Rates. Max-min fair by progressive filling over the links (egress
// ports, wire bits per second), with a flow's share on a link as its
// weight. ACKs (84 B per nic.ack_every full data packets, the transports'
// control frame) load the reverse path: they have the higher priority, so
// a link gives data what the ACKs of the current rates leave; the links
// whose ACK load moves are solved again (twice at most; in large plans
// the ACK load lags one event). nic.max_inflight caps a flow at the window
// over the unloaded round trip of a full packet and its ACK. Rates change
// only when flows start or finish (or a link fails): simultaneous events
// are one event, followed by one computation over the connected component
// (flows sharing links, transitively) of the links that changed.
//
// PFC congestion spreading. With PFC on and no congestion control that
// acts before queues reach XOFF (RoCE with DCQCN off, or ECN off; TCP
// without ECN), senders push at their NIC's round-robin rate and only PFC
// holds them back. A link that saturates while a flow crossing it has
// links upstream (it is not the flow's own NIC) is then congested: its
// queue fills, PFC pauses every ingress feeding it, and the pause climbs
// hop by hop to the sources. So every link upstream of the congestion on
// such a flow's path is paused, and every other flow on a paused link —
// the other queue pairs of a paused NIC (round-robin), the other flows of
// a paused switch queue (first come, first served) — is fixed at the
// congested flow's rate: a victim, although nothing on its own path is
// full. Victims pause nothing themselves; ACKs (another priority) are not
// paused. What it approximates: the steady state of the pauses. A real
// fabric only pauses once an ingress holds XOFF bytes, so for transfers
// not much longer than the time the congested queue takes to fill the
// model overstates the spreading (+11% on a recursive-halving step below),
// and a paused switch queue shares its output in proportion to what
// arrives, taken here as equal shares. With DCQCN (or DCTCP) the rates are
// plain max-min.
//
// DCQCN. Modeled as the rates converged congestion control reaches
// (max-min, no spreading); its transient — the cut on the first CNPs and
// the climb back at the preset's increase steps — is not. Tuned presets
// come within a few percent; the vendor-default preset, whose climb back
// outlasts a collective, is much slower in packets than here (−32% in the
// cross-validation).
//
// Failures. A link that fails mid-run carries nothing: the flows on it
// stall, except that flows split by a dynamic policy leave it at once;
// topology.convergence later the routes are recomputed around it (and the
// routes file re-pinned where it still can be) and every flow moves to its
// new path. The packet engine also loses what was queued on the link and
// recovers by go-back-N or its RTO, which the fluid model does not see.
//
// Not modeled: queueing delay (the fluid has no queues), packet loss and
// retransmission (a lossy fabric whose buffers overflow), per-packet
// load-balancing imperfections (the even split is exact), Homa's
// receiver-driven priorities, messages workloads, explain mode (Supports
// refuses those jobs), the flowlet policy's random re-hashing (refused).
//
// # Results
//
// The trace holds every message's start and delivery, so CCT, algbw,
// busbw, % of ideal, per-flow records, FCT and slowdown distributions,
// per-rank figures and the rank×rank matrix come out of measure as for
// packets. Trace.Fabric is nil, the existing mark of an engine without
// fabric counters: PFC pauses, ECN marks, CNPs, drops, retransmissions,
// per-port counters and the byte-conservation check are not measured
// (they are zero in the row, not counted). Trace.Events counts event
// times.
//
// # Cost
//
// An event costs the rate computation of its component: O(P + S log L)
// for P path entries of the component's flows over L links with S share
// updates (an indexed heap of the links that more than one flow crosses,
// its keys refreshed lazily since a link's share only grows as flows
// freeze; a link one flow crosses alone is a ceiling of that flow), plus
// the component's search. The state is flat arrays indexed by int32 (a
// struct of arrays per connection and per path entry) and the
// component's flows are taken in connection order, so the passes over a
// million flows run forward through memory.
// A large all-to-all is one component, and max-min gives nearly every
// flow a finish time of its own, so two approximations bound the work on
// plans with at least 4,096 connections or flows (see quantizeConns and
// batchFlows): a message's end of sending is rounded up by at most 1/1024
// of its sending time, so that nearly simultaneous finishes share an
// event; and the capacity finishing flows free is handed to the others
// only once 1/64 of the flows active at the last computation have
// finished (a starting flow gets its rate at once). Each computation then
// costs in proportion to the flows left, so the whole run costs about 64
// full computations. Smaller plans are exact.
//
// The run allocates nothing per event in steady state: connections,
// paths (computed once per connection and routing generation), per-link
// lists and the solver's scratch are reused. It is deterministic: slices
// only, ties broken by index, no map iteration.
package fluid
