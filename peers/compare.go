package peers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
)

// WarmUpFraction is the part of each daemon run, from its start, whose
// samples Compare discards: 20 %, as chronosync's figures leave out its
// first two rounds (converged_from: 3) of ten.
const WarmUpFraction = 0.2

// The tools of the daemon rows, in the order Compare runs them.
const (
	ToolChronyBasic  = "chrony-basic"
	ToolChronyXLeave = "chrony-xleave"
	ToolPTP4l        = "ptp4l"
)

// ToolChronosync prefixes chronosync's rows: chronosync-<estimator> for
// each estimator re-run on the recorded probes, chronosync-exported for
// what the run exported.
const ToolChronosync = "chronosync"

// CompareConfig says what Compare runs.
type CompareConfig struct {
	// Scenarios are run in order; their names must differ. Each needs the
	// sync protocol and at least two nodes.
	Scenarios []*scenario.Scenario
	// Files, if not nil, has one entry per scenario: the path it was
	// loaded from, recorded in chronosync's manifest ("" for none).
	Files []string
	// Duration is how long each daemon pair runs; zero means the
	// scenario's own duration. chronosync always runs the scenario as is.
	Duration time.Duration
	// Dir receives, per scenario, <name>/chronosync (the run directory)
	// and <name>/<tool> for each daemon (configurations, logs, the
	// network's log). Required.
	Dir string
	// Log, if not nil, receives a line as each step starts and ends.
	Log io.Writer
}

// Compare runs, for each scenario in turn, chronosync on the real backend
// (harness.Run), then chrony in basic mode, chrony in interleaved mode and
// ptp4l, each on a fresh network built like chronosync's (harness.
// StartNetwork: the same links and shaper parameters at the scenario's
// seed), and tabulates their |offset error|.
//
// The daemons' server or master runs on node 0 and their client or slave
// on node 1: in a scenario of more nodes only that pair is compared, while
// chronosync's figures cover every node against its reference. Each daemon
// row leaves out the samples of the first WarmUpFraction of its run; the
// chronosync rows are the run's own summary, from its converged_from round
// on. A daemon whose binary is not on $PATH gets a row noted NotInstalled.
//
// On an error, or when ctx is done (its namespaces are removed either
// way), Compare returns the rows measured so far with the error.
func Compare(ctx context.Context, cfg CompareConfig) (*Table, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tab := &Table{}
	for i, sc := range cfg.Scenarios {
		file := ""
		if cfg.Files != nil {
			file = cfg.Files[i]
		}
		rows, err := compareScenario(ctx, cfg, sc, file)
		tab.Rows = append(tab.Rows, rows...)
		if err != nil {
			return tab, fmt.Errorf("peers: scenario %s: %w", sc.Name, err)
		}
	}
	return tab, nil
}

func (c CompareConfig) validate() error {
	var errs []error
	switch {
	case len(c.Scenarios) == 0:
		errs = append(errs, errors.New("no scenarios"))
	case c.Files != nil && len(c.Files) != len(c.Scenarios):
		errs = append(errs, fmt.Errorf("%d files for %d scenarios", len(c.Files), len(c.Scenarios)))
	}
	if c.Dir == "" {
		errs = append(errs, errors.New("no Dir"))
	}
	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("negative Duration %v", c.Duration))
	}
	var names []string
	for i, sc := range c.Scenarios {
		switch {
		case sc == nil:
			errs = append(errs, fmt.Errorf("scenario %d is nil", i))
			continue
		case slices.Contains(names, sc.Name):
			errs = append(errs, fmt.Errorf("scenario %s given twice", sc.Name))
		case sc.Protocol.Kind != scenario.ProtocolSync:
			errs = append(errs, fmt.Errorf("scenario %s: protocol %s; the comparison needs the sync protocol", sc.Name, sc.Protocol.Kind))
		case sc.Nodes < 2:
			errs = append(errs, fmt.Errorf("scenario %s: %d node(s); the comparison needs two", sc.Name, sc.Nodes))
		}
		names = append(names, sc.Name)
	}
	if len(errs) > 0 {
		return fmt.Errorf("peers: compare: %w", errors.Join(errs...))
	}
	return nil
}

// compareScenario runs every tool on sc and returns its rows.
func compareScenario(ctx context.Context, cfg CompareConfig, sc *scenario.Scenario, file string) ([]Row, error) {
	dir := filepath.Join(cfg.Dir, sc.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	logf(cfg.Log, "%s: chronosync on the real backend for %v", sc.Name, sc.Duration)
	rows, err := runChronosync(ctx, sc, file, filepath.Join(dir, ToolChronosync))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		logRow(cfg.Log, r)
	}
	dur := cfg.Duration
	if dur == 0 {
		dur = sc.Duration
	}
	for _, d := range daemons() {
		if err := ctx.Err(); err != nil {
			return rows, fmt.Errorf("interrupted before %s: %w", d.tool, context.Cause(ctx))
		}
		logf(cfg.Log, "%s: %s, node 0 -> node 1, for %v", sc.Name, d.tool, dur)
		r, err := runDaemon(ctx, sc, d, filepath.Join(dir, d.tool), dur)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", d.tool, err)
		}
		logRow(cfg.Log, r)
		rows = append(rows, r)
	}
	return rows, nil
}

// runChronosync runs sc on the real backend into dir and returns a row per
// estimator, sorted by name, then the exported estimate's.
func runChronosync(ctx context.Context, sc *scenario.Scenario, file, dir string) ([]Row, error) {
	res, err := harness.Run(sc, harness.Options{Backend: "real", Out: dir, ScenarioFile: file, Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("chronosync: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chronosync interrupted: %w", context.Cause(ctx))
	}
	sy := res.Summary.Sync
	if sy == nil {
		return nil, fmt.Errorf("chronosync: run %s has no sync summary", dir)
	}
	var rows []Row
	for _, name := range slices.Sorted(maps.Keys(sy.Estimators)) {
		rows = append(rows, summaryRow(sc.Name, ToolChronosync+"-"+name, sy.Estimators[name].OffsetError))
	}
	rows = append(rows, summaryRow(sc.Name, ToolChronosync+"-exported", sy.Online.OffsetError))
	return rows, nil
}

// logf writes one line to w, if not nil.
func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "peers: "+format+"\n", args...)
	}
}

// logRow logs a row's outcome.
func logRow(w io.Writer, r Row) {
	if r.Samples == 0 {
		logf(w, "%s: %s: no samples %s", r.Scenario, r.Tool, r.Note)
		return
	}
	logf(w, "%s: %s: %d samples, |error| p50 %s µs, p99 %s µs", r.Scenario, r.Tool, r.Samples, micros(r.P50), micros(r.P99))
}
