// Package real implements the world on the operating system: the protocol
// code that runs in the simulator runs here unchanged, on OS clocks,
// kernel-timestamped UDP sockets and TCP streams, with each node optionally
// in its own Linux network namespace.
//
// # Clocks and ground truth
//
// Every node on one machine shares the kernel clock, so the untransformed
// CLOCK_REALTIME is true time. A node's host clock S is that clock shifted
// to the run's epoch and transformed by the scenario's injected clock model
// (offset, drift, wander and steps of [clockmodel.Clock], read noise-free:
// the OS adds its own noise), so a run on one machine keeps its ground truth:
// [World.HostIdealAt] and [World.HostTrueTime] answer it as the simulator's
// methods of the same names do. Datagram timestamps are the kernel's
// software timestamps (package tsudp), mapped through the same transform.
// The tracer clock R is CLOCK_MONOTONIC_RAW transformed by the scenario's
// tracer model, or a clock the caller supplies (the ROCm HSA timestamp).
//
// # One callback at a time
//
// Each node has one event-loop goroutine that runs its callbacks in order;
// sockets have reader goroutines that only hand events to the loop. With
// [Config.Serialize] every node's loop also takes one world-wide lock around
// each callback, so observers shared between nodes (the harness's
// recorders) need no locks of their own.
package real
