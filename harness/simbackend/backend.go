package simbackend

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// backend runs a scenario in the deterministic simulator.
type backend struct {
	*sim.Sim
	duration time.Duration
	files    []engine.Artifact
	open     closers         // the event log's files
	end      <-chan struct{} // closed when the workload has ended (nil: none ends)
	ended    bool            // the run stopped at the workload's end
}

// Options are what a run asks of the simulator's outputs.
type Options struct {
	// TraceEvents, if not "", is a file that receives the event log, one
	// line per event.
	TraceEvents string
	// EventLog writes events.log.gz into the run directory (the
	// checkpoints are always kept).
	EventLog bool
}

// New builds the simulator for sc, running proto's programs, writing its
// event log into dir (with opts.EventLog) and to opts.TraceEvents; it
// logs to log and tells tr how to read the world's time.
func New(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, proto engine.Protocol, log *bufio.Writer, tr *engine.Tracker) (_ engine.Backend, err error) {
	b := &backend{duration: r.Duration, end: engine.EndOf(proto), files: []engine.Artifact{{Name: engine.FileCheckpoints, What: "event-log hash every 1024 events, for replay"}}}
	defer func() {
		if err != nil {
			b.open.close()
		}
	}()
	var sinks []io.Writer
	if opts.EventLog {
		b.files = append(b.files, engine.Artifact{Name: engine.FileEvents, What: "the event log, one line per event (docs/event-log.md)"})
		f, err := os.Create(filepath.Join(dir, engine.FileEvents))
		if err != nil {
			return nil, fmt.Errorf("create event log: %w", err)
		}
		b.open.add(engine.FileEvents, f)
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		b.open.add(engine.FileEvents, zw)
		sinks = append(sinks, zw)
	}
	if opts.TraceEvents != "" {
		f, err := os.Create(opts.TraceEvents)
		if err != nil {
			return nil, fmt.Errorf("create --trace-events file: %w", err)
		}
		b.open.add(opts.TraceEvents, f)
		sinks = append(sinks, f)
	}
	var events io.Writer
	if len(sinks) > 0 {
		events = io.MultiWriter(sinks...)
	}
	w, err := sim.New(Config(sc.Seed, r), proto.Program, sim.Options{EventLog: events, Log: log, LogLevel: slog.LevelInfo})
	if err != nil {
		return nil, fmt.Errorf("build world for %s: %w", sc.Name, err)
	}
	b.Sim = w
	tr.Clock = func() (time.Duration, uint64) { return w.Now(), w.Events() }
	return b, nil
}

// Backend names the simulator.
func (b *backend) Backend() string { return "sim" }

// Artifacts are the event log and its checkpoints.
func (b *backend) Artifacts() []engine.Artifact { return b.files }

// simGCPercent is the collector's target while the simulator runs, unless
// GOGC says otherwise: most of a large simulation's heap is the probers'
// open windows, which hold no pointers, so collecting at a quarter of the
// live heap instead of all of it costs little CPU (issue 34, 1,024 nodes
// 8-regular, two rounds: 1.17 GiB resident at 50, 964 MiB at 25).
const simGCPercent = 25

// Run runs the simulation in 200 steps (the collector's target at
// simGCPercent); a panic in the world or in
// protocol code becomes a *Failure that says where it happened. The
// simulator does not look at ctx: a simulated run is not interrupted.
func (b *backend) Run(_ context.Context, bar *engine.Progress, observe func(time.Duration)) (f *engine.Failure, wall time.Duration, _ error) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(simGCPercent))
	}
	start := time.Now()
	defer func() {
		wall = time.Since(start)
		if r := recover(); r != nil {
			f = &engine.Failure{Phase: engine.PhaseSimulation, Backend: "sim", Virtual: b.Now(), Events: b.Events(), Panic: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	const chunks = 200
	for i := 1; i <= chunks; i++ {
		b.Sim.Run(b.duration * time.Duration(i) / chunks)
		bar.Set(b.Now())
		if observe != nil {
			observe(b.Now())
		}
		select {
		case <-b.end:
			b.ended = true
			return nil, 0, nil // the workload ran all it had to
		default:
		}
	}
	return nil, 0, nil
}

// Flush writes the event log's buffer out.
func (b *backend) Flush() error { return b.Sim.Flush() }

// Network sums the simulator's link counters.
func (b *backend) Network() engine.NetworkStats {
	n := engine.NetworkStats{Dropped: b.Drops()}
	for from := range b.Nodes() {
		for to := range b.Nodes() {
			st, ok := b.LinkStats(world.NodeID(from), world.NodeID(to))
			if !ok {
				continue
			}
			n.Add(st)
		}
	}
	return n
}

// Record writes the checkpoints and puts the event log's count and hash
// into the manifest; a workload that ended before the scenario's duration
// ended the run there.
func (b *backend) Record(dir string, m *engine.Manifest, virtual *float64, _ engine.Sections) error {
	ev := b.EventLog()
	ck, err := os.Create(filepath.Join(dir, engine.FileCheckpoints))
	if err != nil {
		return fmt.Errorf("create checkpoints: %w", err)
	}
	if _, err := ev.WriteTo(ck); err != nil {
		ck.Close()
		return fmt.Errorf("write checkpoints: %w", err)
	}
	if err := ck.Close(); err != nil {
		return fmt.Errorf("write checkpoints: %w", err)
	}
	m.Events, m.EventHash = ev.Count, fmt.Sprintf("%016x", ev.Hash)
	if b.ended {
		*virtual = b.Now().Seconds() // the workload's end, before the duration
	}
	return nil
}

// Close closes the event log's files.
func (b *backend) Close() error { return b.open.close() }

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
