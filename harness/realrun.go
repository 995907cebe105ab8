//go:build linux

package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/hostload"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/real/rocm"
	"github.com/chronosync/chronosync/real/shaper"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// maxRealNodes is the most nodes the real backend runs on one machine.
const maxRealNodes = 64

// realBackend runs a scenario on the real backend: every node in its own
// network namespace, links through a bridge or the userspace shaper, the
// same protocol code; or one node of a multi-host cluster. It writes the
// same run directory as the simulator, less the event log and
// checkpoints, which only a deterministic run has.
type realBackend struct {
	*real.World
	program  func(world.NodeID) world.Program
	duration time.Duration
	net      *Network     // nil for a cluster node
	rank     *int         // the cluster node's rank
	addrs    []netip.Addr // the cluster's addresses, by rank
	rocm     *rocm.Clock
	wall     time.Duration
	phases   RealPhases
	stopErr  error
	// For the run's conditions (conditions_real.go): the scenario, the
	// machine's counters at the start and what they read at the end.
	sc       *scenario.Scenario
	resolved *scenario.Resolved
	load     hostload.Sample
	reading  hostload.Reading
	need     cpuNeed
	// The faults: the run log they are logged to, and what was applied.
	log    io.Writer
	faults []RealFault
	attack func(ctx context.Context, enter func(i int, f func() error) error, addr func(i int) netip.Addr) // Options.attack
	// end is closed when the workload has ended (nil: none ends), and
	// workloadEnded says the run stopped there, not at its duration.
	end           <-chan struct{}
	workloadEnded bool
}

// newRealBackend builds the real world for sc: it refuses what the real
// backend cannot honour, then builds the namespaces and links (or joins
// the cluster of opts.Cluster).
func newRealBackend(sc *scenario.Scenario, r *scenario.Resolved, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (_ *realBackend, err error) {
	if err := realRefusals(sc, r); err != nil {
		return nil, err
	}
	b := &realBackend{program: proto.Program, end: engine.EndOf(proto), duration: r.Duration, sc: sc, resolved: r, attack: opts.attack}
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
		if err := c.configure(&cfg); err != nil {
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

// newReal builds the real backend as the root drives it, judged by its
// own conditions (conditions_real.go).
func newReal(sc *scenario.Scenario, r *scenario.Resolved, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (backend, error) {
	b, err := newRealBackend(sc, r, opts, proto, log, tr)
	if err != nil {
		return backend{}, err
	}
	return backend{b, b.judge}, nil
}

// Backend names the real backend.
func (b *realBackend) Backend() string { return "real" }

// RealWorld implements engine.RealWorlder: Options.OnStats hands the
// world to a node's host services, which read its counters.
func (b *realBackend) RealWorld() *real.World { return b.World }

// Artifacts: none besides those every run has.
func (b *realBackend) Artifacts() []Artifact { return nil }

// Run starts the nodes' loops and stops them when the scenario's duration
// has passed, ctx is done (SIGINT) or a callback panicked; then it stops
// the shaper, whose counters are final from then on.
func (b *realBackend) Run(ctx context.Context, bar *engine.Progress, _ func(time.Duration)) (*Failure, time.Duration, error) {
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
	injected := make(chan []RealFault, 1)
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
		return &Failure{Phase: engine.PhaseRealRun, Backend: "real", Virtual: at, Panic: panicked.Error(), Stack: real.PanicStack(panicked)}, b.wall, nil
	}
	return nil, b.wall, runErr
}

// RealPhases is how long a real run's phases took in wall-clock time: the
// nodes' boot, the protocol's run (the scenario's duration, unless
// interrupted) and the stop of the loops and the shaper.
type RealPhases struct {
	Start time.Duration `json:"start_ns"`
	Run   time.Duration `json:"run_ns"`
	Stop  time.Duration `json:"stop_ns"`
}

// Flush returns the shaper's error on stopping, if any: the loops wrote
// nothing of their own.
func (b *realBackend) Flush() error { return b.stopErr }

// Network returns the shaper's link counters and the drops of the nodes'
// own sockets.
func (b *realBackend) Network() NetworkStats {
	if b.net == nil {
		return NetworkStats{Dropped: worldDrops(b.World)}
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
func (b *realBackend) Record(_ string, _ *Manifest, virtual *float64, s engine.Sections) error {
	*virtual = b.phases.Run.Seconds()
	ts := b.Stats()
	rs := &RealSummary{
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
func (b *realBackend) Close() error {
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
	if len(errs) > 0 {
		return fmt.Errorf("scenario %s cannot run on the real backend: %w", sc.Name, errors.Join(errs...))
	}
	return nil
}

// Network is a real run's namespaces and, when links are impaired, the
// shaper relaying between them. Other programs (the reference daemons of
// peers) can run on the same links.
type Network struct {
	lab    *netlab.Lab
	shaper *shaper.Process
	// shaperStopped: shaper has stopped and its counters are final.
	shaperStopped bool
	impairment    string
	log           io.Writer // the run log
}

// impaired reports whether any link of the scenario has parameters that
// only a shaper can apply.
func impaired(r *scenario.Resolved) bool {
	if r.DefaultLink != (netem.Params{}) {
		return true
	}
	for _, e := range r.Edges {
		if e.Link != (netem.Params{}) {
			return true
		}
	}
	return false
}

// StartNetwork builds the namespaces and links of sc (at its own seed) as
// a real run would, logging to log (nil discards). Close removes them.
func StartNetwork(sc *scenario.Scenario, log io.Writer) (*Network, error) {
	r, err := sc.Resolve(sc.Seed)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	return startNetwork(sc, r, &lockedWriter{w: log})
}

// Lab returns the network's namespaces.
func (n *Network) Lab() *netlab.Lab { return n.lab }

// Impairment names what applies the links' parameters: none or userspace.
func (n *Network) Impairment() string { return n.impairment }

func startNetwork(sc *scenario.Scenario, r *scenario.Resolved, log io.Writer) (*Network, error) {
	if err := netlab.Available(); err != nil {
		return nil, fmt.Errorf("the real backend needs network namespaces (run as root): %w", err)
	}
	kind, impairment := netlab.Bridge, "none"
	switch {
	case impaired(r) || linkFaults(r):
		kind, impairment = netlab.Relay, "userspace"
	case len(r.Nodes) == 2:
		kind = netlab.Direct
	}
	lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: len(r.Nodes), Kind: kind})
	if err != nil {
		return nil, err
	}
	n := &Network{lab: lab, impairment: impairment, log: log}
	fmt.Fprintf(log, "real backend: namespaces %s-n0..%s-n%d (%s topology, impairment %s); after a crash remove them with: chronosync netns sweep --prefix %s\n",
		lab.Prefix(), lab.Prefix(), len(r.Nodes)-1, kind, impairment, lab.Prefix())
	if kind != netlab.Relay {
		return n, nil
	}
	var ports []shaper.Port
	err = lab.DoSwitch(func() error {
		for _, name := range lab.SwitchPorts() {
			p, err := shaper.OpenPacketPort(name)
			if err != nil {
				return err
			}
			ports = append(ports, p)
		}
		return nil
	})
	if err == nil {
		// StartProcess closes the ports, whatever happens.
		n.shaper, err = shaper.StartProcess(ports, shaper.Config{Links: linkModel(r), Seed: sc.Seed}, log)
	} else {
		for _, p := range ports {
			p.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(err, lab.Close())
	}
	return n, nil
}

// linkModel gives the shaper the scenario's links: a topology edge's own
// parameters, else the default link (the rest of the network), as the
// simulator does.
func linkModel(r *scenario.Resolved) func(from, to int) (netem.Params, bool) {
	edges := make(map[[2]int]netem.Params, len(r.Edges))
	for _, e := range r.Edges {
		edges[[2]int{e.From, e.To}] = e.Link
	}
	return func(from, to int) (netem.Params, bool) {
		if p, ok := edges[[2]int{from, to}]; ok {
			return p, true
		}
		return r.DefaultLink, true
	}
}

// Close stops the shaper, then removes the namespaces, whatever happened.
func (n *Network) Close() error {
	return errors.Join(n.stopShaper(), n.lab.Close())
}

// stopShaper stops the shaper, if any and not yet stopped, and logs its
// counters; its Stats are valid from then on.
func (n *Network) stopShaper() error {
	if n.shaper == nil || n.shaperStopped {
		return nil
	}
	n.shaperStopped = true
	err := n.shaper.Stop()
	n.logStats()
	if err != nil {
		return fmt.Errorf("shaper: %w", err)
	}
	return nil
}

// logStats writes the shaper's per-link counters and release lateness to
// the run log.
func (n *Network) logStats() {
	info := n.shaper.Info()
	fmt.Fprintf(n.log, "shaper: real-time %v, frames dated by the kernel %d, by the clock %d, releases slept for the spin cap %d\n",
		info.RealTime, info.KernelStamps, info.ClockStamps, info.SpinCapped)
	fmt.Fprintf(n.log, "shaper: wake lateness p50 %v p99 %v max %v; frame read lag p50 %v p99 %v max %v\n",
		info.WakeLate.P50, info.WakeLate.P99, info.WakeLate.Max, info.ReadLag.P50, info.ReadLag.P99, info.ReadLag.Max)
	for _, st := range n.shaper.Stats() {
		if !st.Connected || st.Sent == 0 {
			continue
		}
		fmt.Fprintf(n.log, "shaper: link %d->%d: sent %d delivered %d lost %d queue-dropped %d cross %d; written %d write-dropped %d; release lateness p50 %v p99 %v max %v\n",
			st.From, st.To, st.Sent, st.Delivered, st.Lost, st.QueueDropped, st.CrossSent, st.Written, st.WriteDropped, st.Late.P50, st.Late.P99, st.Late.Max)
	}
}

// stats are the shaper's link counters, as the simulator's would be.
func (n *Network) stats(w *real.World) NetworkStats {
	out := NetworkStats{Dropped: worldDrops(w)}
	if n.shaper == nil {
		return out
	}
	var partitioned, down uint64
	for _, st := range n.shaper.Stats() {
		out.Add(st.Stats)
		partitioned += st.Partitioned
		down += st.LinkDown
	}
	for why, k := range map[string]uint64{"loss": out.Lost, "queue": out.QueueDrops, "partition": partitioned, "linkdown": down} {
		if k > 0 {
			out.Dropped[why] = k
		}
	}
	return out
}

func (n *Network) lateP99() int64 {
	var worst time.Duration
	if n.shaper != nil {
		for _, st := range n.shaper.Stats() {
			worst = max(worst, st.Late.P99)
		}
	}
	return int64(worst)
}

// lockedWriter serialises writes to the run log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
