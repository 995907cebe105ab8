// Package harness runs scenarios: it loads a scenario, builds the world for
// it, runs the nodes' programs, checks and summarises the outcome, and
// records everything in a run directory from which the run can be replayed.
//
// It is one of the two places (with cmd) that know both the protocol
// packages and the worlds they run in.
package harness

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim"
)

// Options control a run.
type Options struct {
	// Seed overrides the scenario's seed when not nil.
	Seed *uint64
	// Out is the run directory; "" means runs/<scenario>-seed<seed>.
	Out string
	// ScenarioFile is the path the scenario came from, for the manifest.
	ScenarioFile string
	// TraceEvents, if not "", is a file that receives the event log, one
	// line per event.
	TraceEvents string
	// NoEventLog leaves events.log.gz out of the run directory (the
	// checkpoints are always kept).
	NoEventLog bool
	// Progress, if not nil, shows a progress bar there.
	Progress io.Writer
	// Backend is "sim" (the default) or "real".
	Backend string
	// Observe, if not nil, is called 200 times during the run with the
	// virtual time reached (benchmarks sample memory with it).
	Observe func(now time.Duration)
	// Context, if not nil, ends a real-backend run early when it is done
	// (SIGINT); the run still cleans up and records what it measured.
	Context context.Context
	// Cluster, if not nil, runs one node of a multi-host cluster on the
	// real backend (chronosync node) instead of every node in namespaces.
	Cluster *ClusterNode

	// protocol replaces the scenario's protocol (tests only).
	protocol protocol
}

// Result is what a run produced.
type Result struct {
	Dir      string
	Manifest Manifest
	Summary  Summary
	Wall     time.Duration // wall-clock time of the simulation itself
	// Estimates are a sync run's estimators re-run on its probe stream,
	// with their GraphCalc wall times.
	Estimates []EstimateResult
}

// Run runs sc and writes its run directory.
func Run(sc *scenario.Scenario, opts Options) (*Result, error) {
	switch opts.Backend {
	case "", "sim", "real":
	default:
		return nil, fmt.Errorf("run %s: unknown backend %q (want sim or real)", sc.Name, opts.Backend)
	}
	run := *sc
	if opts.Seed != nil {
		run.Seed = *opts.Seed
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-seed%d", run.Name, run.Seed))
	}
	if err := checkReplaceable(out); err != nil {
		return nil, err
	}
	opts.Out = out
	staged, err := stagingDir(out)
	if err != nil {
		return nil, err
	}
	// The staging directory goes, whatever happens, unless it became out.
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staged)
		}
	}()
	res, err := runIn(&run, staged, opts)
	var failure *Failure
	if err != nil && !errors.As(err, &failure) {
		return nil, err
	}
	// A failed run keeps what it wrote: its logs lead to the failure.
	if cerr := commit(staged, out); cerr != nil {
		return nil, errors.Join(err, cerr)
	}
	committed = true
	if failure != nil {
		failure.Dir = out
		return nil, err
	}
	res.Dir = out
	return res, nil
}

// runIn runs sc in dir. A panic anywhere in it, after the simulation as
// well as in it, becomes a *Failure recorded in dir's failure.txt.
func runIn(sc *scenario.Scenario, dir string, opts Options) (_ *Result, err error) {
	tr := newTracker(opts.Backend)
	defer tr.catch(&err, dir, sc, opts)
	resolved, err := sc.Resolve(sc.Seed)
	if err != nil {
		return nil, err
	}
	files := []Artifact{
		{FileManifest, "what ran: scenario, seed, versions, event-log hash"},
		{FileScenario, "the scenario as run (seed included)"},
		{FileSummary, "the outcome"},
		{FileLog, "the nodes' logs (log/slog text), stamped with virtual time"},
		{FileCheckpoints, "event-log hash every 1024 events, for replay"},
	}
	yml, err := sc.Marshal()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, FileScenario), yml, 0o644); err != nil {
		return nil, fmt.Errorf("write scenario: %w", err)
	}

	logFile, err := os.Create(filepath.Join(dir, FileLog))
	if err != nil {
		return nil, fmt.Errorf("create run log: %w", err)
	}
	defer closeInto(&err, logFile, FileLog)
	logBuf := bufio.NewWriter(logFile)
	defer flushInto(&err, logBuf, FileLog)

	proto := opts.protocol
	if proto == nil {
		if proto, err = newProtocol(sc, resolved); err != nil {
			return nil, err
		}
	}
	if opts.Backend == "real" {
		return runReal(sc, resolved, dir, opts, proto, logBuf, files[:len(files)-1], yml, tr)
	}

	var eventSinks []io.Writer
	if !opts.NoEventLog {
		files = append(files, Artifact{FileEvents, "the event log, one line per event (docs/event-log.md)"})
		f, ferr := os.Create(filepath.Join(dir, FileEvents))
		if ferr != nil {
			return nil, fmt.Errorf("create event log: %w", ferr)
		}
		defer closeInto(&err, f, FileEvents)
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		defer closeInto(&err, zw, FileEvents)
		eventSinks = append(eventSinks, zw)
	}
	if opts.TraceEvents != "" {
		f, ferr := os.Create(opts.TraceEvents)
		if ferr != nil {
			return nil, fmt.Errorf("create --trace-events file: %w", ferr)
		}
		defer closeInto(&err, f, opts.TraceEvents)
		eventSinks = append(eventSinks, f)
	}
	var events io.Writer
	if len(eventSinks) > 0 {
		events = io.MultiWriter(eventSinks...)
	}

	cfg := simConfig(sc.Seed, resolved)
	w, err := sim.New(cfg, proto.program, sim.Options{EventLog: events, Log: logBuf, LogLevel: slog.LevelInfo})
	if err != nil {
		return nil, fmt.Errorf("build world for %s: %w", sc.Name, err)
	}
	tr.clock = func() (time.Duration, uint64) { return w.Now(), w.Events() }
	if err := proto.attach(w, dir); err != nil {
		return nil, fmt.Errorf("start recording: %w", err)
	}
	files = append(files, proto.artifacts()...)

	bar := newProgress(opts.Progress, sc.Name, resolved.Duration)
	start := time.Now()
	tr.phase = phaseSimulation
	failure := simulate(w, resolved.Duration, bar, opts.Observe)
	wall := time.Since(start)
	bar.done()
	tr.phase = phaseRecord
	if failure != nil {
		return nil, failAfter(dir, sc, opts, failure, func() error { return errors.Join(w.Flush(), proto.finish()) })
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := proto.finish(); err != nil {
		return nil, recordFailed(dir, sc, opts, tr, err)
	}
	return record(sc, resolved, dir, opts, tr, w, proto, files, yml, wall)
}

// record writes a finished simulation's checkpoints, summary and manifest.
func record(sc *scenario.Scenario, resolved *scenario.Resolved, dir string, opts Options, tr *tracker,
	w *sim.Sim, proto protocol, files []Artifact, yml []byte, wall time.Duration) (*Result, error) {
	tr.phase = phaseCheckpoints
	ev := w.EventLog()
	ck, err := os.Create(filepath.Join(dir, FileCheckpoints))
	if err != nil {
		return nil, fmt.Errorf("create checkpoints: %w", err)
	}
	if _, err := ev.WriteTo(ck); err != nil {
		ck.Close()
		return nil, fmt.Errorf("write checkpoints: %w", err)
	}
	if err := ck.Close(); err != nil {
		return nil, fmt.Errorf("write checkpoints: %w", err)
	}

	m := Manifest{
		Schema:        ManifestSchema,
		Chronosync:    Version(),
		Go:            goVersion(),
		Backend:       "sim",
		Scenario:      sc.Name,
		ScenarioFile:  opts.ScenarioFile,
		Seed:          sc.Seed,
		Events:        ev.Count,
		EventHash:     fmt.Sprintf("%016x", ev.Hash),
		ScenarioAsRun: string(yml),
		Files:         files,
	}
	sum := Summary{
		Scenario:  sc.Name,
		Seed:      sc.Seed,
		Backend:   "sim",
		Nodes:     w.Nodes(),
		Virtual:   resolved.Duration.Seconds(),
		Events:    ev.Count,
		EventHash: m.EventHash,
		Protocol:  string(sc.Protocol.Kind),
	}
	tr.phase = phaseSummary
	proto.summarize(&sum)
	if err := writeJSON(dir, FileSummary, sum); err != nil {
		return nil, err
	}
	tr.phase = phaseManifest
	if err := writeJSON(dir, FileManifest, m); err != nil {
		return nil, err
	}
	return newResult(m, sum, wall, proto), nil
}

// newResult is a finished run's result.
func newResult(m Manifest, sum Summary, wall time.Duration, proto protocol) *Result {
	res := &Result{Manifest: m, Summary: sum, Wall: wall}
	switch sp := proto.(type) {
	case *syncProtocol:
		res.Estimates = sp.graphcalc
	case *tracedProtocol:
		res.Estimates = sp.graphcalc
	}
	return res
}

// simulate runs w for d in 200 steps; a panic in the world or in protocol
// code becomes a *Failure that says where it happened.
func simulate(w *sim.Sim, d time.Duration, bar *progress, observe func(time.Duration)) (f *Failure) {
	defer func() {
		if r := recover(); r != nil {
			f = &Failure{Phase: phaseSimulation, Backend: "sim", Virtual: w.Now(), Events: w.Events(), Panic: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	const chunks = 200
	for i := 1; i <= chunks; i++ {
		w.Run(d * time.Duration(i) / chunks)
		bar.set(w.Now())
		if observe != nil {
			observe(w.Now())
		}
	}
	return nil
}

func closeInto(err *error, c io.Closer, what string) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close %s: %w", what, cerr)
	}
}

func flushInto(err *error, w *bufio.Writer, what string) {
	if ferr := w.Flush(); ferr != nil && *err == nil {
		*err = fmt.Errorf("flush %s: %w", what, ferr)
	}
}
