package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/scenario"
)

// FileFailure is written into the run directory of a run that failed.
const FileFailure = "failure.txt"

// The phases of a run, as a Failure names them.
const (
	phaseSetup       = "during setup"
	phaseSimulation  = "during the simulation"
	phaseRealRun     = "during the run"
	phaseRecord      = "during output recording (offsets, traces, combine)"
	phaseCheckpoints = "during the world's own records (checkpoints, timestamp counters)"
	phaseSummary     = "during summary"
	phaseManifest    = "during manifest writing"
)

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

// tracker follows a run through its phases, so that a panic can say where
// and when it happened.
type tracker struct {
	phase   string
	backend string
	// clock returns the world's time and event count, once there is a
	// world.
	clock func() (time.Duration, uint64)
}

func newTracker(backend string) *tracker {
	if backend == "" {
		backend = "sim"
	}
	return &tracker{phase: phaseSetup, backend: backend}
}

// failure describes a panic with value v in the current phase.
func (t *tracker) failure(v any, stack []byte) *Failure {
	f := &Failure{Phase: t.phase, Backend: t.backend, Panic: fmt.Sprint(v), Stack: string(stack)}
	if t.clock != nil {
		f.Virtual, f.Events = t.clock()
	}
	return f
}

// catch, deferred by runIn, turns a panic anywhere in the run into a
// *Failure recorded in dir, so that the run directory is kept and moved
// into place like that of a simulation that panicked.
func (t *tracker) catch(err *error, dir string, sc *scenario.Scenario, opts Options) {
	v := recover()
	if v == nil {
		return
	}
	ferr := fail(dir, sc, opts, t.failure(v, debug.Stack()))
	if *err != nil {
		ferr = errors.Join(ferr, *err)
	}
	*err = ferr
}

// failAfter records the outputs of a run that failed with f (record: the
// world's and the protocol's flush), then f in dir. An error or a panic
// in record is noted in f.Also rather than put in f's place.
func failAfter(dir string, sc *scenario.Scenario, opts Options, f *Failure, record func() error) error {
	if err := guarded(record); err != nil {
		f.Also = "record outputs after the failure: " + err.Error()
	}
	return fail(dir, sc, opts, f)
}

// guarded runs f, turning a panic into an error.
func guarded(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return f()
}

// reproduce is the command line that runs sc again as it failed.
func reproduce(sc *scenario.Scenario, opts Options) string {
	file := opts.ScenarioFile
	if file == "" {
		file = "SCENARIO"
	}
	if opts.Backend == "real" {
		return fmt.Sprintf("chronosync run %s --seed %d --backend real", file, sc.Seed)
	}
	return fmt.Sprintf("chronosync run %s --seed %d --trace-events events.txt", file, sc.Seed)
}

// fail records a failed run's failure.txt in dir and returns the error.
// Paths in the panic and its stack that name dir, a staging directory,
// are rewritten to opts.Out, where the run directory will be.
func fail(dir string, sc *scenario.Scenario, opts Options, err error) error {
	var f *Failure
	if !errors.As(err, &f) {
		return err
	}
	if opts.Out != "" && opts.Out != dir {
		for _, s := range []*string{&f.Panic, &f.Stack, &f.Also} {
			*s = strings.ReplaceAll(*s, dir, opts.Out)
		}
	}
	f.Reproduce = reproduce(sc, opts)
	text := fmt.Sprintf("scenario %s seed %d backend %s\nfailed %s %s\npanic: %s\n",
		sc.Name, sc.Seed, f.Backend, f.Phase, f.when(true), f.Panic)
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

// recordFailed is the error of recording a run's outputs: a panic in a
// goroutine of combine (a *combine.PanicError, which no recover of this
// goroutine sees) is a *Failure recorded in dir like any other panic;
// anything else is an error.
func recordFailed(dir string, sc *scenario.Scenario, opts Options, tr *tracker, err error) error {
	var pe *combine.PanicError
	if !errors.As(err, &pe) {
		return fmt.Errorf("record outputs: %w", err)
	}
	f := tr.failure(fmt.Sprintf("%s: %v", pe.What, pe.Value), pe.Stack)
	return fail(dir, sc, opts, f)
}
