// Package training is a traced multi-node training loop: the workload whose
// per-node GPU traces the sync protocol exists to align. Every node runs the
// same steps; a host thread launches compute and collective kernels, the
// GPU runs them on its streams, and every event is stamped with the node's
// tracer clock R at the instant it starts and ends. A collective cannot
// complete on any node before it has started on every node in true time:
// at its start a node tells every other node so over a stream, and it
// completes only after it heard from all of them.
//
// It is protocol code: it uses only its [world.Env].
//
// # Timeline of a node
//
// After Start a node listens on [Config.Port], dials every node with a
// higher ID (retrying with backoff until the peer listens) and accepts the
// others. Step 0 begins once the node is connected to every other node and
// [Config.StartDelay] has passed on its host clock.
//
// A step is a sequence of ComputePerStep compute kernels and
// CollectivesPerStep collectives, the compute kernels spread evenly before
// the collectives. The host thread launches them in that order: each launch
// is a [LaunchName] host event lasting LaunchDuration, followed by
// LaunchGap of host time. A launched kernel runs when its stream is free:
// kernels on one stream run one after another, in launch order. Compute
// kernels round-robin over streams 0..Streams-2 and collectives run on
// stream Streams-1 (one stream: all on stream 0). A collective also waits
// for every compute kernel launched before it in the step (it consumes
// their results, as a gradient all-reduce does), while later compute
// kernels overlap it. A step ends when all its kernels have finished; the
// next starts StepGap later. Durations are drawn per kernel, uniform within
// ±Spread of the configured mean, and elapse on the host clock.
//
// # Collectives
//
// When collective c of step s starts on a node's GPU, the node sends
// ARRIVE(s, c) to every other node. The collective ends a drawn
// CollectiveDuration after the later of its own start and the arrival of
// the last peer's ARRIVE(s, c). Since a message arrives after it was sent,
// no node's collective ends, in true time, before every node's started.
// The nodes thus stay in lockstep through the collectives.
//
// Wire format, one stream message each (world streams preserve message
// boundaries): HELLO = 'H' node:uint32, sent once by the dialer so the
// acceptor knows who called; ARRIVE = 'A' step:uint32 index:uint32. Integers
// are big-endian. ARRIVEs from one peer must come in collective order (the
// stream is ordered, and every node runs the collectives in the same
// order). Malformed or unexpected messages are logged, counted and ignored.
//
// # Faults
//
// The workload assumes a fault-free run. If a stream to a peer breaks after
// it was connected, the node logs it and stalls at the next collective; a
// node that restarts after a crash gets a fresh Program that does not
// resume the training (it waits for a mesh its surviving peers no longer
// form).
//
// # Randomness and sharing an Env
//
// Start draws one value from env.Rand() to seed the node's own generator,
// from which every kernel duration is drawn, so that a program sharing the
// Env (the sync protocol beside it) sees its random draws shifted by one
// draw at most. The node uses its own port, its own timers and no state
// outside itself, so several programs can share one Env.
package training

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chronosync/chronosync/world"
)

// Message types.
const (
	msgHello  = 'H'
	msgArrive = 'A'

	helloSize  = 1 + 4
	arriveSize = 1 + 4 + 4
)

// Redial backoff after a failed dial.
const (
	minRedial = 10 * time.Millisecond
	maxRedial = time.Second
)

// Stats are a node's counters.
type Stats struct {
	Events      int // events finished (host and GPU)
	Collectives int // collectives completed
	Steps       int // steps completed
	Malformed   int // messages ignored: malformed, unexpected or out of order
	PeersLost   int // streams to connected peers that broke
}

// kernel is one kernel of the current step, with its launch.
type kernel struct {
	kind   Kind
	name   string
	hloOp  string
	index  int // among its kind
	pos    int // launch order in the step
	stream int
	corr   uint64

	launched bool
	started  bool
	ending   bool // for a collective: its end is scheduled
	done     bool
	id       uint64
	startR   world.Time
	dur      time.Duration
}

// Node is the training program of one node. Create it with [New].
type Node struct {
	cfg Config
	obs Observer

	env   world.Env
	me    world.NodeID
	n     int
	rng   *rand.Rand
	peers []peer               // by node ID; peers[me] unused
	ids   map[world.Stream]int // dialed or identified streams → node; lookup only

	connected int // peers with a usable stream
	delayed   bool
	begun     bool
	finished  bool

	step     int
	kernels  []kernel
	launch   int     // next kernel to launch
	inflight *kernel // the collective that started and has not ended
	nextID   uint64
	nextCorr uint64
	stats    Stats
}

// peer is the node's view of another node.
type peer struct {
	st      world.Stream // nil until connected and identified
	arrived int          // ARRIVEs received: the global collective numbers 0..arrived-1
	backoff time.Duration
	lost    bool
}

// New returns the training program of one node. cfg's zero fields take
// their defaults. obs may be nil.
func New(cfg Config, obs Observer) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Node{cfg: cfg.WithDefaults(), obs: obs}, nil
}

// Config returns the node's configuration, defaults applied.
func (t *Node) Config() Config { return t.cfg }

// Done reports whether the node finished every step.
func (t *Node) Done() bool { return t.finished }

// Stats returns the node's counters so far.
func (t *Node) Stats() Stats { return t.stats }

// Start listens for the other nodes, dials those with higher IDs and
// schedules the first step. It implements [world.Program].
func (t *Node) Start(env world.Env) error {
	t.env, t.me, t.n = env, env.Node(), env.Nodes()
	seed := env.Rand().Uint64()
	t.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	t.peers = make([]peer, t.n)
	t.ids = make(map[world.Stream]int)
	if t.n > 1 {
		if _, err := env.Listen(t.cfg.Port, t); err != nil {
			return fmt.Errorf("training: node %d: %w", t.me, err)
		}
	}
	for j := int(t.me) + 1; j < t.n; j++ {
		if err := t.dial(j); err != nil {
			return fmt.Errorf("training: node %d: %w", t.me, err)
		}
	}
	if t.cfg.StartDelay > 0 {
		env.AfterFunc(t.cfg.StartDelay, func() { t.delayed = true; t.maybeBegin() })
	} else {
		t.delayed = true
	}
	env.Logger().Info("training started", "nodes", t.n, "steps", t.cfg.Steps, "port", t.cfg.Port)
	t.maybeBegin()
	return nil
}

func (t *Node) dial(j int) error {
	st, err := t.env.Dial(world.Addr{Node: world.NodeID(j), Port: t.cfg.Port}, t)
	if err != nil {
		return fmt.Errorf("dial node %d: %w", j, err)
	}
	t.ids[st] = j
	return nil
}

func (t *Node) maybeBegin() {
	if t.begun || !t.delayed || t.connected < t.n-1 {
		return
	}
	t.begun = true
	t.env.Logger().Info("training: mesh connected, step 0 begins")
	t.beginStep()
}

// OnOpen implements [world.StreamHandler]. A dialed stream is usable at
// once; an accepted one once its HELLO names the caller.
func (t *Node) OnOpen(s world.Stream) {
	j, ok := t.ids[s]
	if !ok {
		return // accepted: wait for HELLO
	}
	var msg [helloSize]byte
	msg[0] = msgHello
	binary.BigEndian.PutUint32(msg[1:], uint32(t.me))
	if err := s.Send(msg[:]); err != nil {
		t.env.Logger().Error("training: hello failed", "peer", j, "err", err)
		return
	}
	t.connect(j, s)
}

func (t *Node) connect(j int, s world.Stream) {
	t.peers[j].st = s
	t.peers[j].backoff = 0
	t.connected++
	t.maybeBegin()
}

// OnClose implements [world.StreamHandler]: a failed dial is retried, a
// lost peer is logged (the workload does not recover from it).
func (t *Node) OnClose(s world.Stream, err error) {
	j, ok := t.ids[s]
	if !ok {
		return // an unidentified accepted stream
	}
	delete(t.ids, s)
	p := &t.peers[j]
	if p.st != s {
		// A dial that never connected: retry with backoff.
		p.backoff = min(max(2*p.backoff, minRedial), maxRedial)
		t.env.Logger().Debug("training: dial failed; retrying", "peer", j, "err", err, "after", p.backoff)
		t.env.AfterFunc(p.backoff, func() {
			if err := t.dial(j); err != nil {
				t.env.Logger().Error("training: redial failed", "peer", j, "err", err)
			}
		})
		return
	}
	p.st, p.lost = nil, true
	t.stats.PeersLost++
	t.env.Logger().Error("training: lost peer; the workload stalls", "peer", j, "err", err)
}

// OnMessage implements [world.StreamHandler].
func (t *Node) OnMessage(s world.Stream, msg []byte) {
	j, known := t.ids[s]
	switch {
	case len(msg) == helloSize && msg[0] == msgHello && !known:
		from := int(binary.BigEndian.Uint32(msg[1:]))
		if from < 0 || from >= int(t.me) || t.peers[from].st != nil || t.peers[from].lost {
			t.malformed(s, "unexpected hello", "claims", from)
			return
		}
		t.ids[s] = from
		t.connect(from, s)
	case len(msg) == arriveSize && msg[0] == msgArrive && known && t.peers[j].st == s:
		step := int64(binary.BigEndian.Uint32(msg[1:]))
		index := int64(binary.BigEndian.Uint32(msg[5:]))
		if step >= int64(t.cfg.Steps) || index >= int64(t.cfg.CollectivesPerStep) {
			t.malformed(s, "arrive out of range", "step", step, "index", index)
			return
		}
		p := &t.peers[j]
		if g := int(step)*t.cfg.CollectivesPerStep + int(index); g != p.arrived {
			t.malformed(s, "arrive out of order", "step", step, "index", index, "want", p.arrived)
			return
		}
		p.arrived++
		t.tryEnd()
	default:
		t.malformed(s, "malformed message", "len", len(msg))
	}
}

func (t *Node) malformed(s world.Stream, what string, args ...any) {
	t.stats.Malformed++
	t.env.Logger().Warn("training: "+what+"; ignored", append([]any{"from", s.RemoteAddr()}, args...)...)
}

// beginStep lays out the kernels of step t.step and starts launching.
func (t *Node) beginStep() {
	c, k := t.cfg.CollectivesPerStep, t.cfg.ComputePerStep
	t.kernels = t.kernels[:0]
	computeStreams := max(t.cfg.Streams-1, 1)
	collStream := t.cfg.Streams - 1
	ci := 0
	for coll := range c {
		for ; ci < (coll+1)*k/c; ci++ {
			t.kernels = append(t.kernels, kernel{kind: Compute, name: ComputeName(ci), index: ci, stream: ci % computeStreams})
		}
		name, hlo := CollectiveName(coll)
		t.kernels = append(t.kernels, kernel{kind: Collective, name: name, hloOp: hlo, index: coll, stream: collStream})
	}
	for i := range t.kernels {
		t.nextCorr++
		t.kernels[i].pos, t.kernels[i].corr = i, t.nextCorr
	}
	t.launch = 0
	t.launchNext()
}

// launchNext runs the host's next launch call.
func (t *Node) launchNext() {
	if t.launch == len(t.kernels) {
		return
	}
	k := &t.kernels[t.launch]
	startR := t.env.Tracer().Now()
	id := t.start()
	t.env.AfterFunc(t.cfg.LaunchDuration, func() {
		endR := t.env.Tracer().Now()
		t.finish(Event{ID: id, Plane: HostPlane, Line: HostThread, Name: LaunchName, Kind: Launch,
			Step: t.step, Index: k.pos, Correlation: k.corr, StartR: startR, EndR: endR})
		k.launched = true
		t.launch++
		if t.launch < len(t.kernels) {
			t.env.AfterFunc(t.cfg.LaunchGap, t.launchNext)
		}
		t.pump()
	})
}

// start numbers an event that just started and tells the observer.
func (t *Node) start() uint64 {
	t.nextID++
	if t.obs != nil {
		t.obs.Started(t.me, t.nextID)
	}
	return t.nextID
}

func (t *Node) finish(ev Event) {
	t.stats.Events++
	if t.obs != nil {
		t.obs.Finished(t.me, ev)
	}
}

// pump starts, on every stream, the first unfinished kernel if it is
// launched, not yet running and its inputs are ready; and ends the step
// once every kernel finished.
func (t *Node) pump() {
	for s := range t.cfg.Streams {
		for i := range t.kernels {
			k := &t.kernels[i]
			if k.stream != s || k.done {
				continue
			}
			if !k.started && k.launched && t.ready(k) {
				t.run(k)
			}
			break
		}
	}
	if t.launch < len(t.kernels) {
		return
	}
	for i := range t.kernels {
		if !t.kernels[i].done {
			return
		}
	}
	t.stats.Steps++
	t.step++
	if t.step == t.cfg.Steps {
		t.finished = true
		t.env.Logger().Info("training finished", "steps", t.step, "events", t.stats.Events)
		return
	}
	t.env.AfterFunc(t.cfg.StepGap, t.beginStep)
}

// ready reports whether k's inputs are ready: for a collective, every
// compute kernel launched before it has finished.
func (t *Node) ready(k *kernel) bool {
	if k.kind != Collective {
		return true
	}
	for i := range k.pos {
		if o := &t.kernels[i]; o.kind == Compute && !o.done {
			return false
		}
	}
	return true
}

// draw returns a duration uniform within ±Spread of mean.
func (t *Node) draw(mean time.Duration) time.Duration {
	f := 1 + t.cfg.Spread*(2*t.rng.Float64()-1)
	return max(time.Duration(f*float64(mean)), 1)
}

// run starts kernel k on its stream now.
func (t *Node) run(k *kernel) {
	k.started = true
	k.startR = t.env.Tracer().Now()
	k.id = t.start()
	if k.kind == Compute {
		k.dur = t.draw(t.cfg.ComputeDuration)
		t.env.AfterFunc(k.dur, func() { t.end(k) })
		return
	}
	k.dur = t.draw(t.cfg.CollectiveDuration)
	var msg [arriveSize]byte
	msg[0] = msgArrive
	binary.BigEndian.PutUint32(msg[1:], uint32(t.step))
	binary.BigEndian.PutUint32(msg[5:], uint32(k.index))
	for j := range t.peers {
		if st := t.peers[j].st; st != nil {
			if err := st.Send(msg[:]); err != nil {
				t.env.Logger().Error("training: arrive send failed", "peer", j, "err", err)
			}
		}
	}
	t.inflight = k
	t.tryEnd()
}

// tryEnd schedules the end of the collective in flight once every peer's
// ARRIVE for it has come.
func (t *Node) tryEnd() {
	k := t.inflight
	if k == nil || k.ending {
		return
	}
	g := t.step*t.cfg.CollectivesPerStep + k.index
	for j := range t.peers {
		if j != int(t.me) && t.peers[j].arrived <= g {
			return
		}
	}
	k.ending = true
	t.env.AfterFunc(k.dur, func() {
		t.inflight = nil
		t.stats.Collectives++
		t.end(k)
	})
}

// end finishes kernel k now.
func (t *Node) end(k *kernel) {
	endR := t.env.Tracer().Now()
	k.done = true
	t.finish(Event{ID: k.id, Plane: GPUPlane, Line: k.stream, Name: k.name, HloOp: k.hloOp, Kind: k.kind,
		Step: t.step, Index: k.index, Correlation: k.corr, StartR: k.startR, EndR: endR})
	t.pump()
}

var _ world.Program = (*Node)(nil)
var _ world.StreamHandler = (*Node)(nil)
