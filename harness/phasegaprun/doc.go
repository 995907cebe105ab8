// Package phasegaprun is the harness's adapter of the phasegap workload:
// it runs one workload/halo rank per node, with no synchronization
// protocol, in the simulator or on the real backend, and writes the same
// phasegap/ files as an MPI run of `chronosync phasegap` (results.csv,
// manifest.json, trace.json), so that one analysis reads both.
//
// It imports harness/engine, never the harness root; the root registers
// it by the workload kind "phasegap" (harness/adapters.go) and keeps its
// summary section (Summary) under summary.json's "phasegap".
package phasegaprun
