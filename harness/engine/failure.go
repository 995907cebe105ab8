package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileFailure is written into the run directory of a run that failed.
const FileFailure = "failure.txt"

// The phases of a run, as a Failure names them.
const (
	PhaseSetup       = "during setup"
	PhaseSimulation  = "during the simulation"
	PhaseRealRun     = "during the run"
	PhaseRecord      = "during output recording (offsets, traces, combine)"
	PhaseCheckpoints = "during the world's own records (checkpoints, timestamp counters)"
	PhaseSummary     = "during summary"
	PhaseManifest    = "during manifest writing"
)

// PhaseRun is the phase of a failure during the run itself on backend.
func PhaseRun(backend string) string {
	if backend == "real" {
		return PhaseRealRun
	}
	return PhaseSimulation
}

// Failure is a run that stopped because something panicked: the world,
// protocol code, or the harness recording the run's outputs. Its run
// directory keeps the logs up to the failure.
type Failure struct {
	// Phase says where the run was: "during the simulation", "during
	// output recording (offsets, traces, combine)", "during summary", ...
	Phase   string
	Backend string        // "sim" or "real"
	Virtual time.Duration // time of the failure: virtual, or since a real run's start
	Events  uint64        // events logged before it (simulator only)
	Panic   string
	Stack   string
	// Also is a further error (or panic) in recording the run's outputs
	// after the failure, if any.
	Also string
	Dir  string // the run directory, once moved into place
	// Reproduce is the command line that reproduces it.
	Reproduce string
}

func (f *Failure) Error() string {
	msg := fmt.Sprintf("run failed %s %s: panic: %s", f.Phase, f.when(false), f.Panic)
	if f.Also != "" {
		msg += "\n  also: " + f.Also
	}
	if f.Dir != "" {
		logs := "logs and event log"
		if f.Backend == "real" {
			logs = "logs"
		}
		msg += fmt.Sprintf("\n  %s up to the failure: %s (see %s)", logs, f.Dir, FileFailure)
	}
	return msg + "\n  reproduce with: " + f.Reproduce
}

// when says at what time of the run the failure happened.
func (f *Failure) when(exact bool) string {
	if f.Backend == "real" {
		return fmt.Sprintf("%v into the run", f.Virtual)
	}
	if exact {
		return fmt.Sprintf("at virtual time %v (%d ns) after %d events", f.Virtual, int64(f.Virtual), f.Events)
	}
	return fmt.Sprintf("at virtual time %v after %d events", f.Virtual, f.Events)
}

// Tracker follows a run through its phases, so that a panic can say where
// and when it happened.
type Tracker struct {
	// Phase is where the run is now (Phase*).
	Phase   string
	backend string
	// Clock returns the world's time and event count, once there is a
	// world: the backend sets it when it has built one.
	Clock func() (time.Duration, uint64)
}

// NewTracker returns the tracker of a run on backend ("" is "sim"), in
// its setup phase.
func NewTracker(backend string) *Tracker {
	if backend == "" {
		backend = "sim"
	}
	return &Tracker{Phase: PhaseSetup, backend: backend}
}

// Failure describes a panic with value v in the current phase.
func (t *Tracker) Failure(v any, stack []byte) *Failure {
	f := &Failure{Phase: t.Phase, Backend: t.backend, Panic: fmt.Sprint(v), Stack: string(stack)}
	if t.Clock != nil {
		f.Virtual, f.Events = t.Clock()
	}
	return f
}

// Guarded runs f, turning a panic into an error.
func Guarded(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return f()
}

// Reproduce is the command line that runs a scenario again as it failed:
// file is the scenario's path ("" for one that came from elsewhere).
func Reproduce(file string, seed uint64, backend string) string {
	if file == "" {
		file = "SCENARIO"
	}
	if backend == "real" {
		return fmt.Sprintf("chronosync run %s --seed %d --backend real", file, seed)
	}
	return fmt.Sprintf("chronosync run %s --seed %d --trace-events events.txt", file, seed)
}

// FailedRun is what a failure record names of its run.
type FailedRun struct {
	Scenario string
	Seed     uint64
	// Out is where the run directory will be ("" or the staging
	// directory itself: nothing to rewrite).
	Out string
	// Reproduce is the command line that reproduces the run (Reproduce).
	Reproduce string
}

// RecordFailure records a failed run's failure.txt in dir and returns
// err: a *Failure is recorded, any other error returned as it is. Paths
// in the panic and its stack that name dir, a staging directory, are
// rewritten to run.Out, where the run directory will be.
func RecordFailure(dir string, run FailedRun, err error) error {
	var f *Failure
	if !errors.As(err, &f) {
		return err
	}
	if run.Out != "" && run.Out != dir {
		for _, s := range []*string{&f.Panic, &f.Stack, &f.Also} {
			*s = strings.ReplaceAll(*s, dir, run.Out)
		}
	}
	f.Reproduce = run.Reproduce
	text := fmt.Sprintf("scenario %s seed %d backend %s\nfailed %s %s\npanic: %s\n",
		run.Scenario, run.Seed, f.Backend, f.Phase, f.when(true), f.Panic)
	if f.Also != "" {
		text += "also: " + f.Also + "\n"
	}
	text += "reproduce with: " + f.Reproduce + "\n"
	if f.Backend == "real" {
		text += "(the real backend is not deterministic: a rerun may not fail the same way)\n"
	}
	if f.Stack != "" {
		text += "\n" + f.Stack
	}
	if werr := os.WriteFile(filepath.Join(dir, FileFailure), []byte(text), 0o644); werr != nil {
		return errors.Join(err, fmt.Errorf("write %s: %w", FileFailure, werr))
	}
	return err
}
