package syncrun

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/scenario"
)

// EstimateOptions configure [Estimate].
type EstimateOptions struct {
	// Estimators to run; empty runs every estimator.
	Estimators []estimate.Kind
	// Out is where each estimator's offsets and rounds files go; empty
	// means RUN_DIR/estimates. NoWrite writes nothing.
	Out     string
	NoWrite bool
	// Ranks are the run directories of a cluster's other ranks (`chronosync
	// node`): each recorded its own node's probes and ground truth, which
	// are merged with RUN_DIR's; the result's first row is then what the
	// master exported (RUN_DIR/offsets.jsonl) against the merged truth.
	Ranks []string
}

// EstimateResult is one estimator's outcome over a run's probe stream.
type EstimateResult struct {
	Estimator string
	Rounds    int // rounds in the probe stream
	Solved    int // rounds GraphCalc solved (fully or for the reference's component)
	// Accuracy against truth.jsonl; nil when the run has no ground truth
	// (a real run).
	Accuracy *groundtruth.Accuracy
	// Calibration is, for what the run exported, whether its reported σ
	// contain its errors; nil for the estimators re-run here.
	Calibration *groundtruth.Calibration
	// GraphCalc is the wall time of each round's solve, ns.
	GraphCalc stats.Summary
	Files     []string // files written
	offsets   []offsets.Offset
}

// Offsets are the clock models the estimator's offline run exported, as
// offsets.jsonl's records.
func (r *EstimateResult) Offsets() []offsets.Offset { return r.offsets }

// Estimate re-runs estimators and GraphCalc offline over the probe stream a
// run recorded (probes.bin), with the protocol settings of its
// scenario.yaml, and measures them against truth.jsonl when the run has one.
func Estimate(dir string, o EstimateOptions) ([]EstimateResult, error) {
	sc, err := scenario.LoadUntilStopped(filepath.Join(dir, engine.FileScenario)) // a node run until stopped has duration 0
	if err != nil {
		return nil, err
	}
	if sc.Protocol.Kind != scenario.ProtocolSync {
		return nil, fmt.Errorf("estimate %s: the run's protocol is %q, not sync: it recorded no probes; estimate a run of a scenario with protocol: {kind: sync}", dir, sc.Protocol.Kind)
	}
	res, err := sc.Resolve(sc.Seed)
	if err != nil {
		return nil, err
	}
	cfg := Config(sc, res)
	kinds := o.Estimators
	if len(kinds) == 0 {
		kinds = estimate.Kinds()
	}
	path := filepath.Join(dir, FileProbes)
	var (
		blocks  []probelog.Block
		reports [][]rounds.OfflineRound
		meta    probelog.Meta
	)
	if len(o.Ranks) == 0 {
		// One stream: fitted window by window, never held whole.
		floors := func(m probelog.Meta, eo *estimate.Options) {
			timestampFloors(&cfg.Estimate, m.Source)
			*eo = cfg.Estimate
		}
		reports, meta, err = streamReports(path, cfg.Estimate, kinds, floors, nil)
	} else {
		blocks, meta, err = ReadProbes(path)
		if err == nil {
			timestampFloors(&cfg.Estimate, meta.Source)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("estimate %s: %w", dir, err)
	}
	truth, err := readTruth(dir)
	if err != nil {
		return nil, err
	}
	var results []EstimateResult
	if len(o.Ranks) > 0 {
		for _, rd := range o.Ranks {
			b, m, err := ReadProbes(filepath.Join(rd, FileProbes))
			if err != nil {
				return nil, fmt.Errorf("estimate: rank %s: %w", rd, err)
			}
			if m.RunID != meta.RunID {
				return nil, fmt.Errorf("estimate: rank %s is of run %q, %s of run %q: the ranks of one cluster run share its run id", rd, m.RunID, dir, meta.RunID)
			}
			w, err := readTruth(rd)
			if err != nil {
				return nil, err
			}
			blocks, truth = append(blocks, b...), append(truth, w...)
		}
		slices.SortStableFunc(blocks, func(a, b probelog.Block) int { return cmp.Compare(a.RoundID, b.RoundID) })
		_, exported, err := offsets.ReadStrict(filepath.Join(dir, FileOffsets)) // as calibrate and combine read it
		if err != nil {
			return nil, fmt.Errorf("estimate %s: %w", dir, err)
		}
		from := uint64(sc.Protocol.Sync.ConvergedFrom)
		acc := groundtruth.Evaluate(exported, truth, int(cfg.Reference), from)
		cal := groundtruth.Calibrate(exported, truth, int(cfg.Reference), from)
		results = append(results, EstimateResult{Estimator: "exported (" + string(cfg.Estimate.Kind) + ")", Accuracy: &acc, Calibration: &cal})
		reports = rounds.ReportsKinds(blocks, cfg.Estimate, kinds)
		blocks = nil
	}
	out := o.Out
	if out == "" {
		out = filepath.Join(dir, "estimates")
	}
	for _, r := range solveAll(reports, cfg, kinds, truth, uint64(sc.Protocol.Sync.ConvergedFrom)) {
		k := estimate.Kind(r.Estimator)
		if !o.NoWrite {
			files, err := writeEstimate(out, meta.RunID, cfg, k, r)
			if err != nil {
				return nil, err
			}
			r.Files = files
		}
		results = append(results, r)
	}
	return results, nil
}

// solveAll solves each estimator's reports, reports[i] those of kinds[i]
// (rounds.ReportsKinds, which finds the steps of each window once for all
// of them), in order.
func solveAll(reports [][]rounds.OfflineRound, cfg rounds.Config, kinds []estimate.Kind, truth []groundtruth.Window, from uint64) []EstimateResult {
	out := make([]EstimateResult, len(kinds))
	for i, k := range kinds {
		out[i] = estimateOne(reports[i], cfg, k, truth, from)
	}
	return out
}

// estimateOne solves one estimator's reports.
func estimateOne(rs []rounds.OfflineRound, cfg rounds.Config, k estimate.Kind, truth []groundtruth.Window, from uint64) EstimateResult {
	nodes := make([]int, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		nodes[i] = int(n)
	}
	r := EstimateResult{Estimator: string(k)}
	var times []float64
	r.Rounds = len(rs)
	solver := rounds.NewSolver(nodes, int(cfg.Reference), cfg.GraphCalc, cfg.Estimate.StepThreshold)
	for i := range rs {
		start := time.Now()
		rs[i].Solve(solver)
		times = append(times, float64(time.Since(start)))
		if rs[i].Summary != nil {
			r.Solved++
		}
		r.offsets = append(r.offsets, rs[i].Offsets...)
	}
	r.GraphCalc = stats.Summarize(times)
	if truth != nil {
		acc := groundtruth.Evaluate(r.offsets, truth, int(cfg.Reference), from)
		r.Accuracy = &acc
	}
	return r
}

func writeEstimate(dir, runID string, cfg rounds.Config, k estimate.Kind, r EstimateResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	meta := offsetsMeta(offsets.Meta{RunID: runID, Reference: int(cfg.Reference), Estimator: string(k), Mode: string(cfg.Mode)}, "offsets")
	path := filepath.Join(dir, string(k)+"."+FileOffsets)
	w, err := offsets.Create(path, meta)
	if err != nil {
		return nil, err
	}
	recs := make([]any, len(r.offsets))
	for i, o := range r.offsets {
		recs[i] = o
	}
	if err := w.Append(recs...); err != nil {
		w.Close()
		return nil, err
	}
	return []string{path}, w.Close()
}

// ReadProbes reads a whole probe stream (probes.bin).
func ReadProbes(path string) ([]probelog.Block, probelog.Meta, error) {
	f, err := infile.Open(path, infile.ProbeLog)
	if err != nil {
		return nil, probelog.Meta{}, err
	}
	defer f.Close()
	r, err := probelog.NewReader(f)
	if err != nil {
		return nil, probelog.Meta{}, fmt.Errorf("%s: %w", path, err)
	}
	var out []probelog.Block
	for {
		b, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Meta(), nil
		}
		if err != nil {
			return out, r.Meta(), fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, *b)
	}
}

// readTruth reads dir's truth.jsonl; none (a run without ground truth) is
// no error.
func readTruth(dir string) ([]groundtruth.Window, error) {
	_, w, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("estimate %s: %w", dir, err)
	}
	return w, nil
}
