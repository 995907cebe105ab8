package harness

import (
	"io"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/syncrun"
)

// The names of the sync adapter (package harness/syncrun) that callers of
// the harness use, kept here so that they need not know where it lives.

// Files a sync run writes (syncrun's).
const (
	FileOffsets      = syncrun.FileOffsets
	FileRounds       = syncrun.FileRounds
	FileProbes       = syncrun.FileProbes
	FileTruth        = syncrun.FileTruth
	FileIncarnations = syncrun.FileIncarnations
)

// EstimateOptions configure [Estimate] (syncrun.EstimateOptions).
type EstimateOptions = syncrun.EstimateOptions

// EstimateResult is one estimator's outcome over a run's probe stream
// (syncrun.EstimateResult).
type EstimateResult = syncrun.EstimateResult

// CalibrationResult is one run's uncertainty calibration against its
// ground truth (syncrun.CalibrationResult).
type CalibrationResult = syncrun.CalibrationResult

// Incarnation is one start of a run until stopped on its run directory
// (syncrun.Incarnation).
type Incarnation = syncrun.Incarnation

// Estimate re-runs estimators and GraphCalc offline over the probe stream
// a run recorded (syncrun.Estimate).
func Estimate(dir string, o EstimateOptions) ([]EstimateResult, error) {
	return syncrun.Estimate(dir, o)
}

// Calibrate measures a run's reported uncertainties against its ground
// truth (syncrun.Calibrate).
func Calibrate(dir string) (*CalibrationResult, error) { return syncrun.Calibrate(dir) }

// PrintCalibration writes a calibration's figures
// (syncrun.PrintCalibration).
func PrintCalibration(w io.Writer, c *groundtruth.Calibration) { syncrun.PrintCalibration(w, c) }

// NodeStats are one node's counters after a window it closed, as
// Options.OnStats gets them (engine.NodeStats).
type NodeStats = engine.NodeStats
