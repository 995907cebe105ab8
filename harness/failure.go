package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/scenario"
)

// FileFailure is written into the run directory of a run that failed.
const FileFailure = "failure.txt"

// Failure is a run that stopped because the world or protocol code
// panicked. Its run directory keeps the logs up to the failure.
type Failure struct {
	Virtual   time.Duration // virtual time of the failure
	Events    uint64        // events logged before it
	Panic     string
	Stack     string
	Dir       string // the run directory, once moved into place
	Reproduce string // the command line that reproduces it
}

func (f *Failure) Error() string {
	msg := fmt.Sprintf("run failed at virtual time %v after %d events: panic: %s", f.Virtual, f.Events, f.Panic)
	if f.Dir != "" {
		msg += fmt.Sprintf("\n  logs and event log up to the failure: %s (see %s)", f.Dir, FileFailure)
	}
	return msg + "\n  reproduce with: " + f.Reproduce
}

// fail records a failed run's failure.txt in dir and returns the error.
func fail(dir string, sc *scenario.Scenario, file string, err error) error {
	var f *Failure
	if !errors.As(err, &f) {
		return err
	}
	if file == "" {
		file = "SCENARIO"
	}
	f.Reproduce = fmt.Sprintf("chronosync run %s --seed %d --trace-events events.txt", file, sc.Seed)
	text := fmt.Sprintf("scenario %s seed %d\nfailed at virtual time %v (%d ns) after %d events\npanic: %s\nreproduce with: %s\n\n%s",
		sc.Name, sc.Seed, f.Virtual, int64(f.Virtual), f.Events, f.Panic, f.Reproduce, f.Stack)
	if werr := os.WriteFile(filepath.Join(dir, FileFailure), []byte(text), 0o644); werr != nil {
		return errors.Join(err, fmt.Errorf("write %s: %w", FileFailure, werr))
	}
	return f
}
