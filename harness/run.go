// Package harness runs scenarios: it loads a scenario, builds the world for
// it, runs the nodes' programs, checks and summarises the outcome, and
// records everything in a run directory from which the run can be replayed.
//
// It is one of the two places (with cmd) that know both the protocol
// packages and the worlds they run in.
package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/scenario"
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
	// Force runs a real-backend scenario that clearly needs more CPU than
	// the machine has, instead of refusing it; the run is then degraded.
	Force bool
	// Cluster, if not nil, runs one node of a multi-host cluster on the
	// real backend (chronosync node) instead of every node in namespaces.
	Cluster *ClusterNode
	// Key, if not nil, seals every datagram and stream frame of a real run
	// with the cluster's shared key (package auth); a cluster node takes
	// its cluster file's. The simulator has no use for one.
	Key *auth.Key

	// protocol replaces the scenario's protocol (tests only).
	protocol protocol
	// attack, if not nil, runs beside a real run on one machine once its
	// nodes booted, until ctx ends (tests only): it may open sockets in
	// node i's namespace (enter) and from its address.
	attack func(ctx context.Context, enter func(i int, f func() error) error, addr func(i int) netip.Addr)
	// memAvailable replaces the machine's available memory (tests only).
	memAvailable func() (int64, error)
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
	if opts.Key != nil && opts.Backend != "real" {
		return nil, fmt.Errorf("run %s: a key authenticates the real backend's messages; the simulator's cannot be forged", sc.Name)
	}
	run := *sc
	if opts.Seed != nil {
		run.Seed = *opts.Seed
	}
	if opts.Backend != "real" {
		if err := checkMemory(&run, opts.memAvailable); err != nil {
			return nil, err
		}
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-seed%d", run.Name, run.Seed))
	}
	// One writer a run directory, from the checks to the rename.
	lock, err := LockRunDir(out)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var rank *int
	if opts.Cluster != nil {
		rank = &opts.Cluster.Rank
	}
	if err := checkReplaceable(out); err != nil {
		return nil, err
	}
	if err := checkOwner(out, rank); err != nil {
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
	if cerr := commit(staged, out, rank); cerr != nil {
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
	}
	phasegapAsRun(sc)
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
	if pp, ok := proto.(*phasegapProtocol); ok && opts.Backend == "real" {
		pp.spin = realSpin
	}
	b, err := newBackend(sc, resolved, dir, opts, proto, logBuf, tr)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := b.close(); cerr != nil && err == nil {
			err = fmt.Errorf("run %s on the %s backend: %w", sc.Name, b.Backend(), cerr)
		}
	}()
	return runWith(sc, resolved, dir, opts, tr, b, proto, files, yml)
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
