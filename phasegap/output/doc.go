// Package output is the one tail of every PhaseGap run: it builds the
// run's report.Config from its parameters and what its transport adds
// (Config), and writes the run's files — results.csv, manifest.json,
// trace.json and rank<i>.xplane.pb — the same way for the simulator, the
// real backend and MPI (Write).
package output
