package real

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/rng"
	"github.com/chronosync/chronosync/real/tsudp"
	"github.com/chronosync/chronosync/world"
)

// warmUp is how long Start waits after opening its first timestamping
// socket, for the kernel to turn receive timestamps on.
const warmUp = 20 * time.Millisecond

// World runs nodes' programs on the operating system. Create it with [New],
// boot the nodes with [World.Start], end the run with [World.Stop].
type World struct {
	cfg    Config
	base   timebase
	nodes  []*node
	byAddr map[netip.Addr]world.NodeID
	serial sync.Mutex
	log    *slog.Logger

	// failure is the first panic of a callback (a *CallbackPanic), if any.
	failMu  sync.Mutex
	failure error

	// notNode counts datagrams from an address that is no node's;
	// readErrors datagrams lost to a socket read error.
	notNode, readErrors atomic.Uint64
	// notNodeStreams counts connections refused for coming from an
	// address that is no node's.
	notNodeStreams atomic.Uint64
	// backlogDrops counts datagrams dropped because their node's loop
	// held maxBacklog callbacks from the network already.
	backlogDrops atomic.Uint64
	// auth counts what did not open under the cluster's key.
	auth authCounters

	// warm holds a timestamping socket open for the whole run: the kernel
	// turns receive timestamps on for the machine asynchronously when the
	// first such socket appears, and datagrams received before that carry
	// none.
	warm *tsudp.Conn
}

// New builds the world; nothing runs until Start.
func New(cfg Config) (*World, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// One spelling of each address (the caller's slice is not touched):
	// the kernel reports an IPv4 datagram's source as IPv4.
	cfg.Nodes = slices.Clone(cfg.Nodes)
	for i := range cfg.Nodes {
		cfg.Nodes[i].Addr = CanonicalAddr(cfg.Nodes[i].Addr)
	}
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	w := &World{cfg: cfg, base: newTimebase(cfg.UnixEpoch), byAddr: make(map[netip.Addr]world.NodeID, len(cfg.Nodes))}
	var h slog.Handler = slog.NewTextHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel})
	if cfg.LogJSON {
		h = slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel})
	}
	w.log = slog.New(&logHandler{w: w, h: h})
	for i, nc := range cfg.Nodes {
		id := world.NodeID(i)
		// The OS clock has its own read noise and granularity.
		nc.Clock.ReadNoise, nc.Clock.Granularity = 0, 0
		nc.Tracer.ReadNoise, nc.Tracer.Granularity = 0, 0
		model, err := clockmodel.New(nc.Clock, rng.Stream(cfg.Seed, fmt.Sprintf("node/%d/clock/wander", i)), nil)
		if err != nil {
			return nil, fmt.Errorf("real: node %d clock: %w", i, err)
		}
		tracer, err := clockmodel.NewTracer(model, nc.Tracer, nil)
		if err != nil {
			return nil, fmt.Errorf("real: node %d tracer: %w", i, err)
		}
		peers := w.peersOf(i)
		n := &node{
			w: w, id: id, cfg: nc, peers: peers,
			clock: &hostClock{base: w.base, model: model, tracer: tracer, custom: nc.TracerClock},
		}
		if cfg.Key != nil {
			n.keys = newKeyring(cfg.Key, id, len(cfg.Nodes))
		}
		w.nodes = append(w.nodes, n)
		w.byAddr[nc.Addr] = id
	}
	return w, nil
}

func (w *World) peersOf(i int) []world.NodeID {
	if w.cfg.Peers != nil {
		ps := slices.Clone(w.cfg.Peers[i])
		slices.Sort(ps)
		return slices.Compact(ps)
	}
	var ps []world.NodeID
	for j := range w.cfg.Nodes {
		if j != i {
			ps = append(ps, world.NodeID(j))
		}
	}
	return ps
}

// Start boots every local node (Config.Local): node i runs newProgram(i).Start, one node after
// the other, and only then do the event loops start, so that, as in the
// simulator, every node is listening before any callback runs. It returns
// the Start errors of the programs (which are also logged): on real hosts a
// port in use or an address that is not this host's is fatal to the run;
// the nodes still run until Stop.
func (w *World) Start(newProgram func(world.NodeID) world.Program) error {
	if c, err := tsudp.Listen(netip.MustParseAddrPort("127.0.0.1:0")); err == nil {
		w.warm = c
		time.Sleep(warmUp)
	}
	if w.cfg.Key == nil {
		w.log.Warn("the cluster is unauthenticated (no key): datagrams and streams are accepted from the nodes' addresses only, but any process that can send from one of them can forge or replay")
	} else {
		w.log.Info("the cluster is authenticated: every datagram and stream frame carries an HMAC-SHA256 tag over its sender, receiver and sequence number", "bytes_per_message", auth.Overhead)
	}
	var errs []error
	for _, n := range w.local() {
		if err := n.boot(newProgram(n.id)); err != nil {
			errs = append(errs, fmt.Errorf("node %d: start: %w", n.id, err))
		}
	}
	for _, n := range w.local() {
		n.lp().start()
	}
	return errors.Join(errs...)
}

// local returns the nodes this process runs.
func (w *World) local() []*node {
	if w.cfg.Local == nil {
		return w.nodes
	}
	out := make([]*node, 0, len(w.cfg.Local))
	for _, id := range w.cfg.Local {
		out = append(out, w.nodes[id])
	}
	return out
}

// Stop ends the run: every loop stops after its current callback, then
// every socket closes. It returns the first panic of a callback, a
// *CallbackPanic, if any.
func (w *World) Stop() error {
	for _, n := range w.nodes {
		n.shutdown()
	}
	if w.warm != nil {
		w.warm.Close()
	}
	w.failMu.Lock()
	defer w.failMu.Unlock()
	return w.failure
}

// Failure returns the first panic of a callback, a *CallbackPanic, or nil.
func (w *World) Failure() error {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	return w.failure
}

// CallbackPanic is a panic in a node's callback (its program's Start, a
// timer, a datagram or stream handler), recovered by the node's event
// loop, as World.Failure and World.Stop return it.
type CallbackPanic struct {
	Node  world.NodeID
	Value any // the value the callback panicked with
	// Stack is the stack of the callback's goroutine, taken while it
	// panicked (runtime/debug.Stack): its frames lead to the panic.
	Stack string
}

// Error names the node and the panic value (not the stack).
func (p *CallbackPanic) Error() string {
	return fmt.Sprintf("node %d: panic in a callback: %v", p.Node, p.Value)
}

// PanicStack returns the stack of the *CallbackPanic in err's chain, or ""
// when err carries none.
func PanicStack(err error) string {
	var p *CallbackPanic
	if errors.As(err, &p) {
		return p.Stack
	}
	return ""
}

// fail records the panic v of node id's callback, if it is the first. It
// is called by the loop's deferred recover, while the callback's goroutine
// panics, so that the stack taken here still holds the callback's frames.
func (w *World) fail(id world.NodeID, v any) {
	stack := string(debug.Stack())
	w.failMu.Lock()
	defer w.failMu.Unlock()
	if w.failure == nil {
		w.failure = &CallbackPanic{Node: id, Value: v, Stack: stack}
	}
}

// Nodes returns the number of nodes.
func (w *World) Nodes() int { return len(w.nodes) }

// Now returns the run's true time: nanoseconds since the world was built,
// on CLOCK_REALTIME.
func (w *World) Now() time.Duration { return time.Duration(w.base.now()) }

// HostIdeal returns node i's host clock S now.
func (w *World) HostIdeal(i world.NodeID) int64 { return w.nodes[i].clock.at(w.base.now()) }

// HostIdealAt returns node i's host clock S at true time t: the ground
// truth for error measurement.
func (w *World) HostIdealAt(i world.NodeID, t int64) int64 { return w.nodes[i].clock.at(t) }

// HostTrueTime returns the true time at which node i's host clock reads
// local, found by Newton steps from the current time.
func (w *World) HostTrueTime(i world.NodeID, local int64) int64 {
	c := w.nodes[i].clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model.TrueTime(local, w.base.now())
}

// Drops returns how many datagrams were dropped on receipt: from an
// address that is no node's, or lost to a read error
// (NotNodeDrops + ReadErrors).
func (w *World) Drops() uint64 { return w.NotNodeDrops() + w.ReadErrors() }

// NotNodeDrops returns how many datagrams came from an address that is no
// node's and were dropped: traffic from outside the cluster, which says
// nothing of the run's own losses.
func (w *World) NotNodeDrops() uint64 { return w.notNode.Load() }

// NotNodeStreams returns how many stream connections were refused for
// coming from an address that is no node's.
func (w *World) NotNodeStreams() uint64 { return w.notNodeStreams.Load() }

// ReadErrors returns how many datagrams the nodes' sockets lost to a read
// error: a loss of the run's own.
func (w *World) ReadErrors() uint64 { return w.readErrors.Load() }

// BacklogDrops returns how many datagrams were dropped because their
// node's loop could not keep up (it held its limit of callbacks from the
// network).
func (w *World) BacklogDrops() uint64 { return w.backlogDrops.Load() }

// TimerLateness returns how late the timers of this process's nodes fired
// (true time run minus true time due), over the run so far.
func (w *World) TimerLateness() Lateness {
	var all lateHist
	for _, n := range w.local() {
		all.add(&n.late)
	}
	return all.summary()
}

// Stats returns the timestamp sources used so far, summed over every node's
// datagram endpoints.
func (w *World) Stats() TimestampStats {
	var s TimestampStats
	for _, n := range w.nodes {
		n.addStats(&s)
	}
	return s
}

// addrOf returns the OS address of a world address.
func (w *World) addrOf(a world.Addr) (netip.AddrPort, error) {
	if a.Node < 0 || int(a.Node) >= len(w.nodes) {
		return netip.AddrPort{}, fmt.Errorf("real: no node %d", a.Node)
	}
	return netip.AddrPortFrom(w.cfg.Nodes[a.Node].Addr, a.Port), nil
}

// worldAddr returns the world address of an OS address.
func (w *World) worldAddr(a netip.AddrPort) (world.Addr, bool) {
	id, ok := w.byAddr[a.Addr().Unmap()]
	return world.Addr{Node: id, Port: a.Port()}, ok
}

// node is one node: its clocks, loop and open endpoints.
type node struct {
	w     *World
	id    world.NodeID
	cfg   NodeConfig
	peers []world.NodeID
	clock *hostClock
	loop  atomic.Pointer[loop] // the running incarnation's; nil before boot
	// incarnation counts the node's boots (Restart boots it again).
	incarnation int
	slow        time.Duration // SetSlow's, for a loop booted later
	rand        *rand.Rand
	log         *slog.Logger

	timers timers   // touched only on the loop (and in Start, before it runs)
	late   lateHist // how late the timers fired
	keys   *keyring // nil in an unauthenticated world

	mu      sync.Mutex
	closers []io.Closer // every endpoint and stream opened, closed at shutdown
	conns   []*packetConn
}

func (n *node) boot(p world.Program) (err error) {
	n.incarnation++
	n.rand = rng.Stream(n.w.cfg.Seed, fmt.Sprintf("node/%d/program/%d", n.id, n.incarnation))
	n.log = n.w.log.With("node", int(n.id))
	var serial *sync.Mutex
	if n.w.cfg.Serialize {
		serial = &n.w.serial
	}
	l := newLoop(serial, func(v any) { n.w.fail(n.id, v) })
	l.slow.Store(int64(n.slow))
	n.loop.Store(l)
	l.call(func() {
		if err = p.Start(n); err != nil {
			n.log.Error("program failed to start", "err", err)
		}
	})
	return err
}

// lp is the node's loop.
func (n *node) lp() *loop { return n.loop.Load() }

func (n *node) shutdown() {
	if l := n.lp(); l != nil {
		l.stop(false)
	}
	if n.timers.rt != nil {
		n.timers.rt.Stop()
	}
	n.mu.Lock()
	cs := n.closers
	n.closers = nil
	n.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

func (n *node) track(c io.Closer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closers = append(n.closers, c)
}

func (n *node) enter(f func() error) error {
	if n.cfg.Enter == nil {
		return f()
	}
	return n.cfg.Enter(f)
}

// Env implementation.

func (n *node) Node() world.NodeID    { return n.id }
func (n *node) Nodes() int            { return len(n.w.nodes) }
func (n *node) Peers() []world.NodeID { return n.peers }
func (n *node) Host() world.Clock     { return n.clock }
func (n *node) Tracer() world.Clock   { return tracerClock{n.clock} }

// ReadPair implements world.PairReader.
func (n *node) ReadPair() (host, tracer world.Time) { return n.clock.pair() }
func (n *node) Rand() *rand.Rand                    { return n.rand }
func (n *node) Logger() *slog.Logger                { return n.log }

// timer is a pending AfterFunc. Timers live in their node's heap and are
// touched only on the node's loop.
type timer struct {
	at    int64  // true time it is due
	seq   uint64 // creation order, breaking ties
	f     func()
	state int8 // 0 pending, 1 fired, 2 stopped
}

// timers is a node's pending timers, ordered by (at, seq), with one runtime
// timer armed for the earliest: firing order never depends on how the Go
// runtime schedules timer goroutines.
type timers struct {
	h    []*timer
	seq  uint64
	rt   *time.Timer
	next int64 // what rt is armed for; 0 when unarmed
}

func (q *timers) less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *timers) push(t *timer) {
	q.h = append(q.h, t)
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *timers) pop() *timer {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h[last] = nil
	q.h = q.h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q.h) && q.less(l, m) {
			m = l
		}
		if r < len(q.h) && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

func (n *node) AfterFunc(d time.Duration, f func()) world.Timer {
	q := &n.timers
	q.seq++
	t := &timer{seq: q.seq, f: f}
	if d <= 0 {
		n.lp().post(t.fire)
		return t
	}
	t.at = n.w.base.now() + int64(n.clock.trueAfter(d))
	q.push(t)
	n.arm()
	return t
}

// AfterFuncAt implements [world.AbsoluteTimers]: f runs once the host
// clock reads at.
func (n *node) AfterFuncAt(at world.Time, f func()) world.Timer {
	now := n.w.base.now()
	c := n.clock
	c.mu.Lock()
	due := c.model.TrueTime(int64(at), now)
	c.mu.Unlock()
	if due <= now {
		return n.AfterFunc(0, f)
	}
	q := &n.timers
	q.seq++
	t := &timer{seq: q.seq, f: f, at: due}
	q.push(t)
	n.arm()
	return t
}

// arm points the runtime timer at the earliest pending timer.
func (n *node) arm() {
	q := &n.timers
	for len(q.h) > 0 && q.h[0].state != 0 {
		q.pop() // stopped
	}
	if len(q.h) == 0 || q.h[0].at == q.next {
		return
	}
	q.next = q.h[0].at
	wait := time.Duration(q.next - n.w.base.now())
	if q.rt == nil {
		q.rt = time.AfterFunc(wait, func() { n.lp().post(n.runTimers) })
		return
	}
	q.rt.Reset(wait)
}

// runTimers fires every due timer in (due time, creation) order, then
// re-arms.
func (n *node) runTimers() {
	q := &n.timers
	q.next = 0
	now := n.w.base.now()
	for len(q.h) > 0 && q.h[0].at <= now {
		t := q.pop()
		if t.state == 0 {
			n.late.record(n.w.base.now() - t.at)
		}
		t.fire()
	}
	n.arm()
}

func (t *timer) fire() {
	if t.state != 0 {
		return
	}
	t.state = 1
	t.f()
}

func (t *timer) Stop() bool {
	if t.state != 0 {
		return false
	}
	t.state = 2
	return true
}

// logHandler stamps every record with the run's true time.
type logHandler struct {
	w *World
	h slog.Handler
}

func (l *logHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.h.Enabled(ctx, lv) }

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.Duration("t", l.w.Now()))
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{w: l.w, h: l.h.WithAttrs(as)}
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{w: l.w, h: l.h.WithGroup(name)}
}
