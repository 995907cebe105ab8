// Package sim is the deterministic simulated world: nodes with modelled
// clocks, links with netem's semantics, faults on a schedule, all driven by
// one discrete-event kernel in virtual true time.
//
// Protocol code runs in it through the [world.Env] each node gets. The
// simulator never reads the OS clock, never starts goroutines, draws every
// random value from a named stream derived from the seed, and never lets
// map order decide anything, so the same Config and seed give the same
// event log, byte for byte, whatever GOMAXPROCS is.
package sim

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/model/rng"
	"github.com/chronosync/chronosync/sim/eventlog"
	"github.com/chronosync/chronosync/sim/kernel"
	"github.com/chronosync/chronosync/world"
)

// Sim is a simulated world. It is not safe for concurrent use.
type Sim struct {
	cfg     Config
	k       kernel.Kernel
	log     *eventlog.Log
	nodes   []*node
	peers   [][]world.NodeID
	links   map[int64]*netem.Link // key: from*n+to; lookup only, never iterated
	down    map[int64]int         // directed links currently down, with a nesting count
	group   []int                 // partition group per node; nil when there is no partition
	newProg func(world.NodeID) world.Program
	logOut  slog.Handler
	sid     int64
	timeout int64
	drops   [eventlog.NumReasons]uint64
	free    []*delivery // the delivery pool (packet.go)
}

// Options are the optional parts of a simulation.
type Options struct {
	// EventLog, if not nil, receives one line per event (see package
	// eventlog for the format).
	EventLog io.Writer
	// Log receives the nodes' structured logs; nil discards them.
	Log io.Writer
	// LogLevel is the minimum level of node logs.
	LogLevel slog.Level
}

// New builds the world of cfg. newProgram makes the program a node runs at
// boot and again after each restart.
func New(cfg Config, newProgram func(world.NodeID) world.Program, opts Options) (*Sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sim config: %w", err)
	}
	s := &Sim{
		cfg:     cfg,
		log:     eventlog.New(opts.EventLog),
		links:   make(map[int64]*netem.Link),
		down:    make(map[int64]int),
		newProg: newProgram,
		timeout: int64(cfg.StreamTimeout),
	}
	if s.timeout <= 0 {
		s.timeout = int64(time.Second)
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	s.logOut = slog.NewTextHandler(logw, &slog.HandlerOptions{Level: opts.LogLevel, ReplaceAttr: dropTime})
	n := len(cfg.Nodes)
	s.peers = make([][]world.NodeID, n)
	for _, l := range cfg.Links {
		link, err := netem.New(l.Params, rng.Stream(cfg.Seed, fmt.Sprintf("link/%d/%d", l.From, l.To)))
		if err != nil {
			return nil, fmt.Errorf("link %d→%d: %w", l.From, l.To, err)
		}
		key := s.key(l.From, l.To)
		if _, dup := s.links[key]; dup {
			return nil, fmt.Errorf("link %d→%d given twice", l.From, l.To)
		}
		s.links[key] = link
		s.peers[l.From] = append(s.peers[l.From], world.NodeID(l.To))
	}
	for i := range s.peers {
		slices.Sort(s.peers[i])
	}
	if err := cfg.DefaultLink.Validate(); err != nil {
		return nil, fmt.Errorf("default link: %w", err)
	}
	for i, nc := range cfg.Nodes {
		nd, err := s.newNode(i, nc)
		if err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, nd)
	}
	for i := range s.nodes {
		s.k.After(0, bootEvent{s.nodes[i]}, 0)
	}
	for _, f := range cfg.Faults {
		s.scheduleFault(f)
	}
	return s, nil
}

func (s *Sim) newNode(i int, nc NodeConfig) (*node, error) {
	name := func(what string) string { return fmt.Sprintf("clock/%d/%s", i, what) }
	host, err := clockmodel.New(nc.Clock, rng.Stream(s.cfg.Seed, name("wander")), rng.Stream(s.cfg.Seed, name("noise")))
	if err != nil {
		return nil, fmt.Errorf("node %d clock: %w", i, err)
	}
	tracer, err := clockmodel.NewTracer(host, nc.Tracer, rng.Stream(s.cfg.Seed, name("tracer-noise")))
	if err != nil {
		return nil, fmt.Errorf("node %d tracer clock: %w", i, err)
	}
	return &node{s: s, id: world.NodeID(i), host: host, tracer: tracer}, nil
}

func (s *Sim) key(from, to int) int64 { return int64(from)*int64(len(s.cfg.Nodes)) + int64(to) }

// link returns the directed link from→to, creating a default one for a
// pair the topology does not connect.
func (s *Sim) link(from, to world.NodeID) *netem.Link {
	key := s.key(int(from), int(to))
	if l, ok := s.links[key]; ok {
		return l
	}
	// Validated in New, so New cannot fail here.
	l, err := netem.New(s.cfg.DefaultLink, rng.Stream(s.cfg.Seed, fmt.Sprintf("link/%d/%d", from, to)))
	if err != nil {
		panic(fmt.Sprintf("default link: %v", err))
	}
	s.links[key] = l
	return l
}

// cut reports why traffic from→to cannot pass now (0 if it can).
func (s *Sim) cut(from, to world.NodeID) int64 {
	if s.group != nil && s.group[from] != s.group[to] {
		return eventlog.ReasonPartition
	}
	if s.down[s.key(int(from), int(to))] > 0 {
		return eventlog.ReasonLinkDown
	}
	return 0
}

func (s *Sim) record(r eventlog.Record) {
	r.T = s.k.Now()
	s.log.Add(r)
}

// Run advances the simulation to virtual time t (from the start of the
// run), firing every event up to it.
func (s *Sim) Run(t time.Duration) { s.k.RunUntil(int64(t)) }

// Now returns the virtual true time since the start of the run.
func (s *Sim) Now() time.Duration { return time.Duration(s.k.Now()) }

// Events returns how many events the event log holds.
func (s *Sim) Events() uint64 { return s.log.Count() }

// Hash returns the running hash of the event log.
func (s *Sim) Hash() uint64 { return s.log.Hash() }

// EventLog returns the summary of the event log (count, hash, checkpoints).
func (s *Sim) EventLog() eventlog.Summary { return s.log.Summary() }

// Flush writes out buffered event-log lines.
func (s *Sim) Flush() error { return s.log.Flush() }

// Nodes returns the number of nodes.
func (s *Sim) Nodes() int { return len(s.nodes) }

// HostIdeal returns node i's noise-free host clock reading at the current
// virtual time: the ground truth against which estimates are measured.
func (s *Sim) HostIdeal(i world.NodeID) int64 { return s.nodes[i].host.Ideal(s.k.Now()) }

// HostIdealAt returns node i's noise-free host clock reading at true time t,
// which may lie in the past or the future: the ground truth for error
// measurement.
func (s *Sim) HostIdealAt(i world.NodeID, t int64) int64 { return s.nodes[i].host.Ideal(t) }

// HostTrueTime returns the true time at which node i's noise-free host clock
// reads local, found by Newton steps from the current time. Around a clock
// step, where a reading occurs twice or never, it returns one of the
// candidates.
func (s *Sim) HostTrueTime(i world.NodeID, local int64) int64 {
	return s.nodes[i].host.TrueTime(local, s.k.Now())
}

// HostSteps returns how many steps node i's host clock has taken by true
// time t and their sum in ns.
func (s *Sim) HostSteps(i world.NodeID, t int64) (int, int64) { return s.nodes[i].host.StepsAt(t) }

// TracerIdeal returns node i's noise-free tracer clock reading now.
func (s *Sim) TracerIdeal(i world.NodeID) int64 { return s.nodes[i].tracer.Ideal(s.k.Now()) }

// Up reports whether node i is running.
func (s *Sim) Up(i world.NodeID) bool { return s.nodes[i].up }

// LinkStats returns the counters of the directed link from→to, and false
// if no packet has used it.
func (s *Sim) LinkStats(from, to world.NodeID) (netem.Stats, bool) {
	l, ok := s.links[s.key(int(from), int(to))]
	if !ok {
		return netem.Stats{}, false
	}
	return l.Stats(), true
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
