package syncrun

import (
	"fmt"
	"path/filepath"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
)

// CalibrationResult is one run's uncertainty calibration against its
// ground truth (see groundtruth.Calibration).
type CalibrationResult struct {
	Dir      string
	Scenario string
	Seed     uint64
	// From is the first round counted: the scenario's converged_from.
	From uint64
	groundtruth.Calibration
}

// Calibrate measures how well the uncertainties in a sync run's
// offsets.jsonl contain its errors against truth.jsonl, from the
// scenario's converged_from round on. Runs without ground truth (real
// runs) are an error. offsets.jsonl is read as combine and estimate read
// it (offsets.ReadStrict): a torn last line, a second record of one round
// and node, or a round with fewer records than rounds.jsonl says were
// solved is an error, not a calibration of what is left.
func Calibrate(dir string) (*CalibrationResult, error) {
	sc, err := scenario.LoadUntilStopped(filepath.Join(dir, engine.FileScenario)) // a node run until stopped has duration 0
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: %w", dir, err)
	}
	if sc.Protocol.Kind != scenario.ProtocolSync {
		return nil, fmt.Errorf("calibrate %s: the run's protocol is %q, not sync: it exported no clock models; calibrate a run of a scenario with protocol: {kind: sync}", dir, sc.Protocol.Kind)
	}
	info, offs, err := offsets.ReadStrict(filepath.Join(dir, FileOffsets)) // as combine and estimate read it
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: %w", dir, err)
	}
	_, truth, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: no ground truth (simulated runs and real runs on one host record truth.jsonl; a cluster rank records its own node's only): %w", dir, err)
	}
	from := uint64(sc.Protocol.Sync.ConvergedFrom)
	return &CalibrationResult{
		Dir: dir, Scenario: sc.Name, Seed: sc.Seed, From: from,
		Calibration: groundtruth.Calibrate(offs, truth, info.Meta.Reference, from),
	}, nil
}
