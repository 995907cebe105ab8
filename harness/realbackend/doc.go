// Package realbackend is the harness's real backend: it runs a scenario's
// nodes on this machine, each in its own network namespace with links
// through a bridge or the userspace shaper (real/netlab, real/shaper), or
// one node of a multi-host cluster (harness/cluster), with the same
// protocol code as the simulator.
//
// It implements engine.Backend (and engine.RealWorlder: a sync run's
// OnStats reads the real world's counters), applies the scenario's faults
// from one goroutine (faults.go), owns summary.json's real section
// (Summary, Phases, Fault) and measures the run's own conditions against
// their bounds (conditions.go, docs/real-backend.md "Runs that know their
// conditions"): Judge adds them in summary.json's order, before the
// workload's, and SawNothing says why a run that measured nothing failed.
// It imports engine, never the harness root, which chooses it by
// Options.Backend and composes its judge with the workload's.
//
// The backend needs Linux (network namespaces, kernel timestamps); on
// other systems the package holds only its summary section and options.
package realbackend
