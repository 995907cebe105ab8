package main

import (
	"fmt"

	"github.com/chronosync/chronosync/harness"
)

// failedRun is the error of a run whose status is failed (it measured
// nothing of its scenario: a cluster node that never saw a round), so
// that its command exits 1, as for any run that failed; nil otherwise.
// The run directory is written and the summary printed before.
func failedRun(res *harness.Result) error {
	if res.Summary.Status != harness.StatusFailed {
		return nil
	}
	return fmt.Errorf("the run failed: %s (run directory %s)", res.Summary.StatusReason, res.Dir)
}
