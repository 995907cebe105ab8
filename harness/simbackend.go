package harness

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

// simBackend runs a scenario in the deterministic simulator.
type simBackend struct {
	*sim.Sim
	duration time.Duration
	files    []Artifact
	open     closers         // the event log's files
	end      <-chan struct{} // closed when the workload has ended (nil: none ends)
	ended    bool            // the run stopped at the workload's end
}

// newSimBackend builds the simulator for sc, writing its event log into dir
// (unless opts.NoEventLog) and to opts.TraceEvents.
func newSimBackend(sc *scenario.Scenario, r *scenario.Resolved, dir string, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (_ backend, err error) {
	b := &simBackend{duration: r.Duration, end: engine.EndOf(proto), files: []Artifact{{Name: FileCheckpoints, What: "event-log hash every 1024 events, for replay"}}}
	defer func() {
		if err != nil {
			b.open.close()
		}
	}()
	var sinks []io.Writer
	if !opts.NoEventLog {
		b.files = append(b.files, Artifact{Name: FileEvents, What: "the event log, one line per event (docs/event-log.md)"})
		f, err := os.Create(filepath.Join(dir, FileEvents))
		if err != nil {
			return nil, fmt.Errorf("create event log: %w", err)
		}
		b.open.add(FileEvents, f)
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		b.open.add(FileEvents, zw)
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
	w, err := sim.New(simConfig(sc.Seed, r), proto.Program, sim.Options{EventLog: events, Log: log, LogLevel: slog.LevelInfo})
	if err != nil {
		return nil, fmt.Errorf("build world for %s: %w", sc.Name, err)
	}
	b.Sim = w
	tr.clock = func() (time.Duration, uint64) { return w.Now(), w.Events() }
	return b, nil
}

// Backend names the simulator.
func (b *simBackend) Backend() string { return "sim" }

func (b *simBackend) artifacts() []Artifact { return b.files }

// run runs the simulation in 200 steps; a panic in the world or in
// protocol code becomes a *Failure that says where it happened. The
// simulator does not look at ctx: a simulated run is not interrupted.
func (b *simBackend) run(_ context.Context, bar *progress, observe func(time.Duration)) (f *Failure, wall time.Duration, _ error) {
	start := time.Now()
	defer func() {
		wall = time.Since(start)
		if r := recover(); r != nil {
			f = &Failure{Phase: phaseSimulation, Backend: "sim", Virtual: b.Now(), Events: b.Events(), Panic: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	const chunks = 200
	for i := 1; i <= chunks; i++ {
		b.Run(b.duration * time.Duration(i) / chunks)
		bar.set(b.Now())
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

func (b *simBackend) flush() error { return b.Flush() }

// network sums the simulator's link counters.
func (b *simBackend) network() NetworkStats {
	n := NetworkStats{Dropped: b.Drops()}
	for from := range b.Nodes() {
		for to := range b.Nodes() {
			st, ok := b.LinkStats(world.NodeID(from), world.NodeID(to))
			if !ok {
				continue
			}
			n.add(st)
		}
	}
	return n
}

// record writes the checkpoints and puts the event log's count and hash
// into the manifest and the summary.
func (b *simBackend) record(dir string, m *Manifest, s *Summary) error {
	ev := b.EventLog()
	ck, err := os.Create(filepath.Join(dir, FileCheckpoints))
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
	s.Events, s.EventHash = m.Events, m.EventHash
	if b.ended {
		s.Virtual = b.Now().Seconds() // the workload's end, before the duration
	}
	return nil
}

// judge: a simulated run honours its scenario by construction (its faults
// are the scenario's own), so it measures no conditions of its own; a
// workload that did not finish within the scenario's duration did not,
// and a round that left nodes without a model, which no scheduled fault
// explains, is not what the scenario asked for.
func (b *simBackend) judge(s *Summary) {
	var cs conditions
	judgeUnsolved(&cs, s)
	judgeSelfCheck(&cs, s)
	judgeSections(&cs, s)
	s.Conditions, s.Status = cs, cs.status()
}

func (b *simBackend) close() error { return b.open.close() }
