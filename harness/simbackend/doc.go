// Package simbackend is the harness's simulator backend: it builds the
// deterministic simulator (package sim) for a scenario, runs the nodes'
// programs in it as an engine.Backend, and records what only a
// deterministic run has (the event log, its checkpoints and hash); it
// also refuses, up front, a world that would not fit the machine's
// memory.
//
// With the harness root it is the one package that imports the simulator
// (ci/layers' seam rule).
package simbackend
