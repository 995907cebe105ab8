// Package engine is the seam between the harness root and its workload
// adapters: the interface an adapter implements (Protocol), the optional
// interfaces the root asks it for instead of checking its type (Ender,
// AsRunner, LateTimers, Judge), what an adapter sees of the run (Truth, its
// directory, Artifact, Version) and the Registry that finds an adapter by
// the scenario's workload kind.
//
// An adapter package (harness/phasegaprun) imports engine, never the
// harness root; the root imports the adapter and registers it in one line
// (harness/adapters.go). The root keeps what composes a run: the
// backends, the run directory's lifecycle and summary.json's schema, to
// which an adapter adds its section through Sections.
package engine
