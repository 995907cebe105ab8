// Package engine is the seam between the harness root and its workload
// adapters: the interface an adapter implements (Protocol), the optional
// interfaces the root asks it for instead of checking its type (Ender,
// AsRunner, LateTimers, Judge), what an adapter sees of the run (Truth, its
// directory, Artifact, Version, the units its figures print in) and the
// Registry that finds an adapter by the scenario's workload and protocol
// kinds.
//
// It is the seam between the root and its backends too: the interface a
// backend implements (Backend: run, flush, record, close; the simulator's
// is harness/simbackend) and what every backend and adapter shares: the
// failure record of a run that panicked (Failure, Tracker,
// RecordFailure, failure.txt), progress (Progress), the run directory
// (Manifest, its file names, StagingDir, Commit, CheckOwner, the lock
// LockRunDir) and the network counters (NetworkStats).
//
// An adapter package (harness/phasegaprun) or a backend package
// (harness/simbackend, harness/realbackend) imports engine, never the
// harness root; the root imports the adapter and registers it in one line
// (harness/adapters.go), and chooses the backend by Options.Backend. The
// root keeps what composes a run: the run's lifecycle (runIn, runWith),
// how a run is judged (the backend's conditions, then the workload's),
// and summary.json's schema, to which an adapter adds its section through
// Sections.
package engine
