package harness

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
)

// FileFailure is written into the run directory of a run that failed
// (engine.FileFailure).
const FileFailure = engine.FileFailure

// The phases of a run, as a Failure names them (engine.Phase*).
const (
	phaseSetup       = engine.PhaseSetup
	phaseSimulation  = engine.PhaseSimulation
	phaseRealRun     = engine.PhaseRealRun
	phaseRecord      = engine.PhaseRecord
	phaseCheckpoints = engine.PhaseCheckpoints
	phaseSummary     = engine.PhaseSummary
	phaseManifest    = engine.PhaseManifest
)

// Failure is a run that stopped because something panicked
// (engine.Failure): the world, protocol code, or the harness recording the
// run's outputs. Its run directory keeps the logs up to the failure.
type Failure = engine.Failure

// tracker follows a run through its phases (engine.Tracker); the root
// adds how a panic is recorded.
type tracker struct{ *engine.Tracker }

func newTracker(backend string) *tracker { return &tracker{engine.NewTracker(backend)} }

// catch, deferred by runIn, turns a panic anywhere in the run into a
// *Failure recorded in dir, so that the run directory is kept and moved
// into place like that of a simulation that panicked.
func (t *tracker) catch(err *error, dir string, sc *scenario.Scenario, opts Options) {
	v := recover()
	if v == nil {
		return
	}
	ferr := fail(dir, sc, opts, t.Failure(v, debug.Stack()))
	if *err != nil {
		ferr = errors.Join(ferr, *err)
	}
	*err = ferr
}

// failAfter records the outputs of a run that failed with f (record: the
// world's and the protocol's flush), then f in dir. An error or a panic
// in record is noted in f.Also rather than put in f's place.
func failAfter(dir string, sc *scenario.Scenario, opts Options, f *Failure, record func() error) error {
	if err := engine.Guarded(record); err != nil {
		f.Also = "record outputs after the failure: " + err.Error()
	}
	return fail(dir, sc, opts, f)
}

// fail records a failed run's failure.txt in dir and returns the error
// (engine.RecordFailure).
func fail(dir string, sc *scenario.Scenario, opts Options, err error) error {
	return engine.RecordFailure(dir, engine.FailedRun{
		Scenario: sc.Name, Seed: sc.Seed, Out: opts.Out,
		Reproduce: engine.Reproduce(opts.ScenarioFile, sc.Seed, opts.Backend),
	}, err)
}

// recordFailed is the error of recording a run's outputs: a panic in a
// goroutine of combine (a *combine.PanicError, which no recover of this
// goroutine sees) is a *Failure recorded in dir like any other panic;
// anything else is an error.
func recordFailed(dir string, sc *scenario.Scenario, opts Options, tr *tracker, err error) error {
	var pe *combine.PanicError
	if !errors.As(err, &pe) {
		return fmt.Errorf("record outputs: %w", err)
	}
	f := tr.Failure(fmt.Sprintf("%s: %v", pe.What, pe.Value), pe.Stack)
	return fail(dir, sc, opts, f)
}
