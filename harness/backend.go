package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/chronosync/chronosync/scenario"
)

// backend is the world a run runs in, as the harness drives it: the
// simulator (simBackend) or the real backend (realBackend). runIn does
// everything else once for both: the run directory, the protocol's
// recorders, the failure records, the summary and the manifest.
//
// A backend is also the ground truth the protocols measure against.
type backend interface {
	truth
	// artifacts lists the files the backend writes into the run
	// directory, besides those every run has.
	artifacts() []Artifact
	// run runs the nodes' programs for the scenario's duration (a real run
	// ends early when ctx is done), showing progress on bar. A callback's
	// panic comes back as a *Failure; err is a failure to run at all.
	// wall is how long the run took.
	run(ctx context.Context, bar *progress, observe func(time.Duration)) (f *Failure, wall time.Duration, err error)
	// flush makes what the world wrote during the run final (the event
	// log's buffer; the shaper's counters), before the protocol's files
	// are finished.
	flush() error
	// network returns the run's link counters.
	network() NetworkStats
	// record adds the backend's part to the manifest and the summary and
	// writes its files that only exist after the run (the simulator's
	// checkpoints).
	record(dir string, m *Manifest, s *Summary) error
	// judge measures the run's conditions against their bounds into s
	// (Status, Conditions), once the protocol has summarised the run.
	judge(s *Summary)
	// close releases the world (event-log files, namespaces, the shaper),
	// whatever happened.
	close() error
}

// newBackend builds the world opts.Backend names for sc, running proto's
// programs; it logs to log and tells tr how to read the world's time.
func newBackend(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (backend, error) {
	if opts.Backend == "real" {
		return newRealBackend(sc, r, opts, proto, log, tr)
	}
	return newSimBackend(sc, r, dir, opts, proto, log, tr)
}

// runWith runs b: it attaches proto's recorders, runs the world, and
// records the outcome. files are the run directory's files so far.
func runWith(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, tr *tracker,
	b backend, proto protocol, files []Artifact, yml []byte) (*Result, error) {
	if err := proto.Attach(b, dir); err != nil {
		return nil, fmt.Errorf("start recording: %w", err)
	}
	files = append(append(files, b.artifacts()...), proto.Artifacts()...)

	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	bar := newProgress(opts.Progress, sc.Name, r.Duration)
	if opts.Progress == nil {
		bar = newProgressLines(opts.ProgressLines, sc.Name, r.Duration)
	}
	tr.phase = phaseRun(b.Backend())
	failure, wall, runErr := b.run(ctx, bar, opts.Observe)
	bar.done()
	tr.phase = phaseRecord
	if failure != nil {
		return nil, failAfter(dir, sc, opts, failure, func() error { return errors.Join(b.flush(), proto.Finish()) })
	}
	flushErr := b.flush()
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
		Network: b.network(),
	}
	tr.phase = phaseCheckpoints
	if err := b.record(dir, &m, &sum); err != nil {
		return nil, err
	}
	tr.phase = phaseSummary
	proto.Summarize(&sum)
	b.judge(&sum)
	if err := writeJSON(dir, FileSummary, sum); err != nil {
		return nil, err
	}
	tr.phase = phaseManifest
	if err := writeJSON(dir, FileManifest, m); err != nil {
		return nil, err
	}
	return newResult(m, sum, wall, proto), nil
}

// phaseRun is the phase of a failure during the run itself.
func phaseRun(backend string) string {
	if backend == "real" {
		return phaseRealRun
	}
	return phaseSimulation
}

// closers closes what a backend opened, in reverse order, returning the
// first error with the name of what failed to close.
type closers []struct {
	what string
	c    io.Closer
}

func (cs *closers) add(what string, c io.Closer) {
	*cs = append(*cs, struct {
		what string
		c    io.Closer
	}{what, c})
}

func (cs closers) close() error {
	var first error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].c.Close(); err != nil && first == nil {
			first = fmt.Errorf("close %s: %w", cs[i].what, err)
		}
	}
	return first
}
