package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/simbackend"
	"github.com/chronosync/chronosync/scenario"
)

// backend is a world as the root drives it: the engine's Backend (the
// simulator of harness/simbackend, or harness/realbackend) and how the
// root judges its run, measuring the run's conditions against their bounds
// into the summary (Status, Conditions) once the protocol has summarised
// the run.
type backend struct {
	worldBackend
	judge func(s *Summary)
}

// worldBackend names engine.Backend as backend embeds it (its field name
// must not shadow the Backend method).
type worldBackend = engine.Backend

// newBackend builds the world opts.Backend names for sc, running proto's
// programs; it logs to log and tells tr how to read the world's time.
func newBackend(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (backend, error) {
	if opts.Backend == "real" {
		return newReal(sc, r, opts, proto, log, tr)
	}
	b, err := simbackend.New(sc, r, dir, simbackend.Options{TraceEvents: opts.TraceEvents, EventLog: opts.EventLog}, proto, log, tr.Tracker)
	if err != nil {
		return backend{}, err
	}
	return backend{b, judgeSimulated}, nil
}

// judgeSimulated: a simulated run honours its scenario by construction
// (its faults are the scenario's own), so it measures no conditions of its
// own; a workload that did not finish within the scenario's duration did
// not, and a round that left nodes without a model, which no scheduled
// fault explains, is not what the scenario asked for.
func judgeSimulated(s *Summary) {
	var cs conditions
	judgeUnsolved(&cs, s)
	judgeSelfCheck(&cs, s)
	judgeSections(&cs, s)
	s.Conditions, s.Status = cs, cs.status()
}

// runWith runs b: it attaches proto's recorders, runs the world, and
// records the outcome. files are the run directory's files so far.
func runWith(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, tr *tracker,
	b backend, proto protocol, files []Artifact, yml []byte) (*Result, error) {
	// The backend itself, not the root's wrapper: protocols ask it for
	// more (engine.RealWorlder).
	if err := proto.Attach(b.worldBackend, dir); err != nil {
		return nil, fmt.Errorf("start recording: %w", err)
	}
	files = append(append(files, b.Artifacts()...), proto.Artifacts()...)

	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	bar := engine.NewProgress(opts.Progress, sc.Name, r.Duration)
	if opts.Progress == nil {
		bar = engine.NewProgressLines(opts.ProgressLines, sc.Name, r.Duration)
	}
	tr.Phase = engine.PhaseRun(b.Backend())
	failure, wall, runErr := b.Run(ctx, bar, opts.Observe)
	bar.Done()
	tr.Phase = phaseRecord
	if failure != nil {
		return nil, failAfter(dir, sc, opts, failure, func() error { return errors.Join(b.Flush(), proto.Finish()) })
	}
	flushErr := b.Flush()
	if err := proto.Finish(); err != nil {
		return nil, recordFailed(dir, sc, opts, tr, err)
	}
	if err := errors.Join(runErr, flushErr); err != nil {
		return nil, fmt.Errorf("run %s on the %s backend: %w", sc.Name, b.Backend(), err)
	}

	m := Manifest{
		Schema: ManifestSchema, Chronosync: Version(), Go: goVersion(), Backend: b.Backend(),
		Scenario: sc.Name, ScenarioFile: opts.ScenarioFile, Seed: sc.Seed,
		ScenarioAsRun: string(yml), Files: files,
	}
	sum := Summary{
		Scenario: sc.Name, Seed: sc.Seed, Backend: b.Backend(), Nodes: b.Nodes(),
		Virtual: r.Duration.Seconds(), Protocol: string(sc.Protocol.Kind),
		Network: b.Network(),
	}
	tr.Phase = phaseCheckpoints
	if err := b.Record(dir, &m, &sum.Virtual, &sum); err != nil {
		return nil, err
	}
	sum.Events, sum.EventHash = m.Events, m.EventHash
	tr.Phase = phaseSummary
	proto.Summarize(&sum)
	b.judge(&sum)
	if err := writeJSON(dir, FileSummary, sum); err != nil {
		return nil, err
	}
	tr.Phase = phaseManifest
	if err := writeJSON(dir, FileManifest, m); err != nil {
		return nil, err
	}
	return newResult(m, sum, wall, proto), nil
}
