//go:build linux

package realbackend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/hostload"
	"github.com/chronosync/chronosync/real/rocm"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// maxRealNodes is the most nodes the real backend runs on one machine.
const maxRealNodes = 64

// Backend runs a scenario on the real backend: every node in its own
// network namespace, links through a bridge or the userspace shaper, the
// same protocol code; or one node of a multi-host cluster. It writes the
// same run directory as the simulator, less the event log and
// checkpoints, which only a deterministic run has.
type Backend struct {
	*real.World
	program  func(world.NodeID) world.Program
	duration time.Duration
	net      *Network     // nil for a cluster node
	rank     *int         // the cluster node's rank
	addrs    []netip.Addr // the cluster's addresses, by rank
	rocm     *rocm.Clock
	wall     time.Duration
	phases   Phases
	stopErr  error
	// For the run's conditions (conditions.go): the scenario, the
	// machine's counters at the start and what they read at the end.
	sc       *scenario.Scenario
	resolved *scenario.Resolved
	load     hostload.Sample
	reading  hostload.Reading
	need     cpuNeed
	// The faults: the run log they are logged to, and what was applied.
	log    io.Writer
	faults []Fault
	attack func(ctx context.Context, enter func(i int, f func() error) error, addr func(i int) netip.Addr) // Options.Attack
	// end is closed when the workload has ended (nil: none ends), and
	// workloadEnded says the run stopped there, not at its duration.
	end           <-chan struct{}
	workloadEnded bool
}

// New builds the real world for sc: it refuses what the real
// backend cannot honour, then builds the namespaces and links (or joins
// the cluster of opts.Cluster).
func New(sc *scenario.Scenario, r *scenario.Resolved, opts Options, proto engine.Protocol, log *bufio.Writer, tr *engine.Tracker) (_ *Backend, err error) {
	if err := realRefusals(sc, r); err != nil {
		return nil, err
	}
	b := &Backend{program: proto.Program, end: engine.EndOf(proto), duration: r.Duration, sc: sc, resolved: r, attack: opts.Attack}
	b.need = estimateCPU(sc, r, opts.Cluster != nil)
	if err := b.need.refusal(opts.Force); err != nil {
		return nil, fmt.Errorf("run %s --backend=real: %w", sc.Name, err)
	}
	fmt.Fprintf(log, "real backend: %s\n", b.need)
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	// The nodes' loops and the shaper log from their own goroutines.
	logw := &lockedWriter{w: log}
	b.log = logw
	cfg := real.Config{Seed: sc.Seed, Log: logw, LogLevel: opts.LogLevel, LogJSON: opts.LogJSON, Serialize: true, Key: opts.Key}
	for _, n := range r.Nodes {
		cfg.Nodes = append(cfg.Nodes, real.NodeConfig{Clock: n.Clock, Tracer: n.Tracer})
	}
	cfg.Peers = make([][]world.NodeID, len(r.Nodes))
	for _, e := range r.Edges {
		cfg.Peers[e.From] = append(cfg.Peers[e.From], world.NodeID(e.To))
	}
	if clk, err := rocm.Open(); err != nil {
		fmt.Fprintf(logw, "tracer clock: CLOCK_MONOTONIC_RAW through the scenario's tracer model (ROCm unavailable: %v)\n", err)
	} else {
		b.rocm = clk
		fmt.Fprintf(logw, "tracer clock: the ROCm HSA system timestamp\n")
		for i := range cfg.Nodes {
			cfg.Nodes[i].TracerClock = clk.Now
		}
	}
	if c := opts.Cluster; c != nil {
		if len(r.Faults) > 0 {
			return nil, fmt.Errorf("run %s as a cluster node: faults are injected on one machine's nodes only (the harness crashes, steps and slows the nodes it runs, and cuts links in its shaper): remove the faults: section, or run the scenario without --cluster", sc.Name)
		}
		if impaired(r) {
			return nil, fmt.Errorf("run %s as a cluster node: the scenario's links have parameters (delay, loss, rate, ...), but a cluster runs on the ordinary network, which nothing impairs: remove them from its links section", sc.Name)
		}
		if err := c.Configure(&cfg); err != nil {
			return nil, fmt.Errorf("run %s as a cluster node: %w", sc.Name, err)
		}
		b.rank, b.addrs = &c.Rank, c.Addresses
		fmt.Fprintf(logw, "cluster node %d of %d at %s\n", c.Rank, len(c.Addresses), c.Addresses[c.Rank])
	} else {
		if b.net, err = startNetwork(sc, r, logw); err != nil {
			return nil, fmt.Errorf("run %s --backend=real: %w", sc.Name, err)
		}
		for i := range cfg.Nodes {
			cfg.Nodes[i].Addr = b.net.lab.Addr(i)
			cfg.Nodes[i].Enter = func(f func() error) error { return b.net.lab.Do(i, f) }
		}
	}
	if b.World, err = real.New(cfg); err != nil {
		return nil, fmt.Errorf("build real world for %s: %w", sc.Name, err)
	}
	start := time.Now()
	tr.Clock = func() (time.Duration, uint64) { return time.Since(start), 0 }
	return b, nil
}

// Backend names the real backend.
func (b *Backend) Backend() string { return "real" }

// RealWorld implements engine.RealWorlder: Options.OnStats hands the
// world to a node's host services, which read its counters.
func (b *Backend) RealWorld() *real.World { return b.World }

// Artifacts: none besides those every run has.
func (b *Backend) Artifacts() []engine.Artifact { return nil }

// Run starts the nodes' loops and stops them when the scenario's duration
// has passed, ctx is done (SIGINT) or a callback panicked; then it stops
// the shaper, whose counters are final from then on.
func (b *Backend) Run(ctx context.Context, bar *engine.Progress, _ func(time.Duration)) (*engine.Failure, time.Duration, error) {
	start := time.Now()
	b.load = hostload.Take()
	runErr := b.Start(b.program)
	b.phases.Start = time.Since(start)
	// The scenario's duration counts from the nodes' boot: a slow start
	// (a busy machine) does not shorten the protocol's run.
	// A duration of 0 runs until ctx is done (SIGINT, SIGTERM).
	var cancel context.CancelFunc
	if b.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, b.duration)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	injected := make(chan []Fault, 1)
	if actions := b.faultActions(b.resolved.Faults); runErr == nil && len(actions) > 0 {
		boot := start.Add(b.phases.Start)
		go func() { injected <- inject(ctx, boot, actions, b.log) }()
	} else {
		injected <- nil
	}
	attacked := make(chan struct{})
	if b.attack != nil && b.net != nil && runErr == nil {
		go func() {
			defer close(attacked)
			b.attack(ctx, b.net.lab.Do, b.net.lab.Addr)
		}()
	} else {
		close(attacked)
	}
	if runErr == nil {
		b.workloadEnded = waitReal(ctx, b.World, bar, b.end)
	}
	cancel()
	<-attacked
	b.faults = <-injected // before Stop: no fault touches a stopped world
	b.phases.Run = time.Since(start) - b.phases.Start
	// Stop returns a callback's panic, as waitReal saw it or later.
	panicked := b.Stop()
	at := time.Since(start)
	if b.net != nil {
		b.stopErr = b.net.stopShaper()
	}
	b.wall = time.Since(start)
	b.phases.Stop = b.wall - b.phases.Start - b.phases.Run
	b.reading = b.load.Since()
	if panicked != nil {
		return &engine.Failure{Phase: engine.PhaseRealRun, Backend: "real", Virtual: at, Panic: panicked.Error(), Stack: real.PanicStack(panicked)}, b.wall, nil
	}
	return nil, b.wall, runErr
}

// Flush returns the shaper's error on stopping, if any: the loops wrote
// nothing of their own.
func (b *Backend) Flush() error { return b.stopErr }

// Network returns the shaper's link counters and the drops of the nodes'
// own sockets.
func (b *Backend) Network() engine.NetworkStats {
	if b.net == nil {
		return engine.NetworkStats{Dropped: worldDrops(b.World)}
	}
	return b.net.stats(b.World)
}

// worldDrops are the datagrams and frames the nodes' own sockets dropped,
// by reason: from an address that is no node's (not_a_node, and
// connections from one: not_a_node_stream), lost to a
// read error (read_error), beyond the loop's backlog (loop_backlog), or
// not opening under the key (auth_*).
func worldDrops(w *real.World) map[string]uint64 {
	out := map[string]uint64{}
	a := w.AuthDrops()
	for why, k := range map[string]uint64{
		"not_a_node":        w.NotNodeDrops(),
		"not_a_node_stream": w.NotNodeStreams(),
		"read_error":        w.ReadErrors(),
		"loop_backlog":      w.BacklogDrops(),
		"auth_forged":       a.Forged,
		"auth_replayed":     a.Replayed,
		"auth_misdirected":  a.Misdirected,
	} {
		if k > 0 {
			out[why] = k
		}
	}
	return out
}

// Record puts the real run's own figures into the summary: its length in
// wall-clock time, the timestamp sources, the topology and the shaper's
// lateness.
func (b *Backend) Record(_ string, _ *engine.Manifest, virtual *float64, s engine.Sections) error {
	*virtual = b.phases.Run.Seconds()
	ts := b.Stats()
	rs := &Summary{
		Topology: "cluster", Impairment: "none",
		Timestamps:      ts,
		TimestampSource: ts.Source(),
		Rank:            b.rank,
		Phases:          b.phases,
		Faults:          b.faults,
		Authenticated:   b.Authenticated(),
	}
	if b.net != nil {
		rs.Topology, rs.Impairment = string(b.net.lab.Kind()), b.net.impairment
		rs.ReleaseLateP99NS = b.net.lateP99()
	}
	s.Put(rs)
	return nil
}

// Close removes the namespaces (stopping the shaper if the run did not)
// and closes the ROCm clock.
func (b *Backend) Close() error {
	var errs []error
	if b.net != nil {
		if err := b.net.Close(); err != nil {
			errs = append(errs, fmt.Errorf("clean up: %w", err))
		}
	}
	if b.rocm != nil {
		b.rocm.Close()
	}
	return errors.Join(errs...)
}

// waitReal waits for the run's end (ctx), a callback's panic
// (real.World.Failure) or the workload's end (end closed; ended is then
// true), updating the progress bar.
func waitReal(ctx context.Context, w *real.World, bar *engine.Progress, end <-chan struct{}) (ended bool) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if w.Failure() != nil {
			return false
		}
		bar.Set(w.Now())
		select {
		case <-ctx.Done():
			return false
		case <-end:
			return true
		case <-t.C:
		}
	}
}

// realRefusals names the scenario features the real backend cannot honour,
// up front, rather than dropping them silently.
func realRefusals(sc *scenario.Scenario, r *scenario.Resolved) error {
	var errs []error
	if len(r.Nodes) > maxRealNodes {
		errs = append(errs, fmt.Errorf("%d nodes: the real backend runs at most %d nodes on one machine; set nodes: %d or fewer, or run it with --backend=sim", len(r.Nodes), maxRealNodes, maxRealNodes))
	}
	if sc.Impairment == scenario.ImpairNetem {
		errs = append(errs, errors.New("impairment netem: the kernel netem path is not implemented (and this kernel has no netem qdisc); use impairment: userspace or auto"))
	}
	if r.NICRate > 0 {
		errs = append(errs, errors.New("links.nic: the simulator's model of the nodes' interfaces; the real backend's are the namespaces' veths, which it cannot slow down (remove links.nic, or run it with --backend=sim)"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("scenario %s cannot run on the real backend: %w", sc.Name, errors.Join(errs...))
	}
	return nil
}
