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
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/simbackend"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/report"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
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
	// EventLog writes events.log.gz, the whole event log, into the run
	// directory; without it the run keeps the checkpoints (events.ckpt)
	// only, which is enough to replay it and to locate a divergence to
	// a block of events.
	EventLog bool
	// Progress, if not nil, shows a progress bar there.
	Progress io.Writer
	// ProgressLines, if not nil and Progress is nil, gets a line at each
	// tenth of the run's duration (for output that is not a terminal).
	ProgressLines io.Writer
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
	// RotateBytes is the size of offsets.jsonl at which a run until
	// stopped (duration 0) rotates its offsets.jsonl and rounds.jsonl
	// (offsets.Rotate); 0 is offsets.DefaultRotateBytes. See harness/syncrun/runfiles.go.
	RotateBytes int64
	// Key, if not nil, seals every datagram and stream frame of a real run
	// with the cluster's shared key (package auth); a cluster node takes
	// its cluster file's. The simulator has no use for one.
	Key *auth.Key
	// LogLevel is the least severe record a real run's nodes write to
	// run.log (the zero value: info), and LogJSON writes them as JSON
	// lines instead of text (chronosync --log-level, --log-format).
	LogLevel slog.Level
	LogJSON  bool
	// OnModel, if not nil, is called with each clock model a node of a
	// sync run takes (rounds.ModelObserver): after each round the master
	// solved it, the node's own record of the round, equal to its line in
	// offsets.jsonl; in consensus mode each update. It runs on the node's
	// event loop (the simulator's one loop; a real node's own goroutine),
	// must return quickly and must not call back into the run: it is
	// where a node publishes its model to the host (shared memory, chrony,
	// metrics, status).
	OnModel func(node world.NodeID, m rounds.Model)
	// OnRound, if not nil, is called on the master's node with each round
	// it gathered, after the round is appended to the run files
	// (rounds.Observer.Round). Like OnModel it runs on the node's event
	// loop, must return quickly, must not call back into the run and must
	// not keep r past its return (r is the run's own record); a real node
	// feeds its metrics with it (metrics.Metrics.ObserveRound).
	OnRound func(r *rounds.RoundReport)
	// OnWindow, if not nil, is called on every node of a sync run with
	// each window it closed (rounds.Observer.Window): the probe stream of
	// each out-edge and the fits it reports, after they are in probes.bin.
	// Like OnModel it runs on the node's event loop, must return quickly,
	// must not call back into the run and must not keep blocks or data
	// past its return (they are the run's); a real node feeds its metrics
	// (metrics.Metrics.ObserveWindow) and its status's peers with it. Nil
	// in the simulator, and a run with it is the run without it.
	OnWindow func(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData)
	// OnStats, if not nil, is called right after OnWindow, on the same
	// node's event loop, with the node's counters so far (NodeStats: its
	// prober's, its protocol's and, on the real backend, the world's).
	// The same rules as OnWindow's hold.
	OnStats func(node world.NodeID, st NodeStats)
	// Report writes the run directory's report.html (package report) once
	// the run is in place; a report that cannot be written is a warning
	// (Result.ReportErr), not a failed run. chronosync run sets it unless
	// --no-report.
	Report bool

	// inPlace: the run writes into Out from the start and continues what
	// a previous incarnation wrote there (a run until stopped).
	inPlace bool
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
	// Report is the path of the report.html written (Options.Report), and
	// ReportErr why it could not be written.
	Report    string
	ReportErr error
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
	out := opts.Out
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-seed%d", run.Name, run.Seed))
	}
	if run.Duration == 0 {
		return runUntilStopped(&run, out, opts)
	}
	if opts.Backend != "real" {
		if err := simbackend.CheckMemory(&run, opts.memAvailable); err != nil {
			return nil, err
		}
	}
	// One writer a run directory, from the checks to the rename.
	lock, rank, err := claimRunDir(out, opts, checkReplaceable)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
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
	if opts.Report {
		res.Report, res.ReportErr = report.Write(out, "")
	}
	return res, nil
}

// runUntilStopped runs sc, of duration 0, until opts.Context is done
// (SIGINT, SIGTERM): on the real backend only, the sync protocol only. It
// writes into out in place from the start (a long-running node's files
// must be there as it goes), holding out's lock the whole time, and
// continues what a previous incarnation left there (see harness/syncrun/runfiles.go). out
// must be absent, empty, or a run directory of this rank (checkOwner).
func runUntilStopped(sc *scenario.Scenario, out string, opts Options) (*Result, error) {
	switch {
	case opts.Backend != "real":
		return nil, fmt.Errorf("run %s: duration 0 (until stopped) runs on the real backend only (chronosync node, or run --backend=real); the simulator needs a duration > 0", sc.Name)
	case sc.Protocol.Kind != scenario.ProtocolSync || sc.Workload.Kind == scenario.WorkloadTraining:
		return nil, fmt.Errorf("run %s: duration 0 (until stopped) runs the sync protocol only, without a training workload (protocol %q, workload %q): give a duration > 0", sc.Name, sc.Protocol.Kind, sc.Workload.Kind)
	}
	lock, _, err := claimRunDir(out, opts, engine.CheckContinuable)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory %s: %w", out, err)
	}
	opts.Out, opts.inPlace = out, true
	res, err := runIn(sc, out, opts)
	var failure *Failure
	if errors.As(err, &failure) {
		failure.Dir = out
	}
	if err != nil {
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
		{Name: FileManifest, What: "what ran: scenario, seed, versions, event-log hash"},
		{Name: FileScenario, What: "the scenario as run (seed included)"},
		{Name: FileSummary, What: "the outcome"},
		{Name: FileLog, What: "the nodes' logs (log/slog text), stamped with virtual time"},
	}
	proto := opts.protocol
	if proto == nil {
		if proto, err = newProtocol(sc, resolved); err != nil {
			return nil, err
		}
	}
	if a, ok := proto.(engine.AsRunner); ok {
		a.AsRun(sc)
	}
	yml, err := sc.Marshal()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, FileScenario), yml, 0o644); err != nil {
		return nil, fmt.Errorf("write scenario: %w", err)
	}

	logFlags, logSize := os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 4096
	if opts.inPlace {
		// A run until stopped appends to the log of its earlier
		// incarnations, and writes each line through (a buffer of 1:
		// bufio writes what does not fit straight to the file), so that a
		// kill loses none of it.
		logFlags, logSize = os.O_WRONLY|os.O_CREATE|os.O_APPEND, 1
	}
	logFile, err := os.OpenFile(filepath.Join(dir, FileLog), logFlags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create run log: %w", err)
	}
	defer closeInto(&err, logFile, FileLog)
	logBuf := bufio.NewWriterSize(logFile, logSize)
	defer flushInto(&err, logBuf, FileLog)
	if opts.inPlace {
		fmt.Fprintf(logBuf, "run until stopped (duration 0): pid %d, chronosync %s, started %s\n", os.Getpid(), Version(), time.Now().UTC().Format(time.RFC3339))
	}

	if opts.inPlace {
		ip, ok := proto.(engine.InPlacer)
		if !ok {
			return nil, fmt.Errorf("run %s until stopped: the %T protocol cannot run in place", sc.Name, proto)
		}
		ip.RunInPlace(opts.RotateBytes, logFile) // an *os.File: one write(2) a line, safe beside the nodes' logging
	}
	if lt, ok := proto.(engine.LateTimers); ok && opts.Backend == "real" {
		lt.TimersFireLate()
	}
	if h, ok := proto.(engine.Hooked); ok {
		h.SetHooks(engine.Hooks{OnModel: opts.OnModel, OnRound: opts.OnRound, OnWindow: opts.OnWindow, OnStats: opts.OnStats})
	}
	b, err := newBackend(sc, resolved, dir, opts, proto, logBuf, tr)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := b.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("run %s on the %s backend: %w", sc.Name, b.Backend(), cerr)
		}
	}()
	return runWith(sc, resolved, dir, opts, tr, b, proto, files, yml)
}

// newResult is a finished run's result.
func newResult(m Manifest, sum Summary, wall time.Duration, proto protocol) *Result {
	res := &Result{Manifest: m, Summary: sum, Wall: wall}
	if e, ok := proto.(engine.Estimator[EstimateResult]); ok {
		res.Estimates = e.Estimates()
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

// claimRunDir locks out for this process, then checks it with check (what
// the run may do with what is there) and checkOwner (another cluster
// rank's run is never touched). It returns the lock, to be released when
// the run is done, and the cluster rank (nil outside a cluster).
func claimRunDir(out string, opts Options, check func(string) error) (*RunDirLock, *int, error) {
	lock, err := LockRunDir(out)
	if err != nil {
		return nil, nil, err
	}
	var rank *int
	if opts.Cluster != nil {
		rank = &opts.Cluster.Rank
	}
	err = check(out)
	if err == nil {
		err = checkOwner(out, rank)
	}
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	return lock, rank, nil
}
