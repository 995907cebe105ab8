package sim

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/rng"
	"github.com/chronosync/chronosync/sim/eventlog"
	"github.com/chronosync/chronosync/world"
)

// node is one simulated node: its clocks and, while it is up, the state of
// its current incarnation.
type node struct {
	s      *Sim
	id     world.NodeID
	host   *clockmodel.Clock
	tracer *clockmodel.Tracer

	up   bool
	inc  uint64 // incarnation: bumped at every crash, invalidating pending callbacks
	slow int64  // extra callback delay while the node is slow
	busy int64  // true time until which charged work holds the node's callbacks
	// nicTx and nicRx are when the node's interface finishes sending and
	// receiving the stream messages queued at it so far (Config.NICRate).
	nicTx, nicRx int64
	timerID      int64
	rand         *rand.Rand
	logger       *slog.Logger
	conns        map[uint16]*packetConn // lookup only
	lsns         map[uint16]*listener   // lookup only
	streams      []*stream              // open streams, in creation order
}

// deferIfSlow re-schedules h while the node is busy with charged work
// (to when it ends) or slow (by the extra delay); it reports whether it
// did, in which case the caller returns without running its callback.
// Bit 63 of arg marks an event that was already deferred once for
// slowness; work charged since may defer it again.
func (n *node) deferIfSlow(h interface{ Fire(uint64) }, arg uint64) bool {
	const deferred = 1 << 63
	if n.busy > n.s.k.Now() {
		_ = n.s.k.At(n.busy, h, arg) // busy lies ahead: At cannot refuse it
		return true
	}
	if n.slow == 0 || arg&deferred != 0 {
		return false
	}
	n.s.k.After(n.slow, h, arg|deferred)
	return true
}

type bootEvent struct{ n *node }

func (e bootEvent) Fire(uint64) { e.n.boot() }

func (n *node) boot() {
	n.up = true
	n.inc++
	n.busy = 0 // a fresh boot owes no work
	n.conns = make(map[uint16]*packetConn)
	n.lsns = make(map[uint16]*listener)
	n.streams = nil
	n.rand = rng.Stream(n.s.cfg.Seed, fmt.Sprintf("node/%d/program/%d", n.id, n.inc))
	n.logger = slog.New(&logHandler{n: n, h: n.s.logOut.WithAttrs([]slog.Attr{slog.Int("node", int(n.id))})})
	n.s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Boot, A: int64(n.inc)})
	if err := n.s.newProg(n.id).Start(n); err != nil {
		n.logger.Error("program failed to start", "err", err)
	}
}

func (n *node) crash() {
	if !n.up {
		return
	}
	n.s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Crash, A: int64(n.inc)})
	n.up = false // pending callbacks die now, and with the next boot's new incarnation
	for _, st := range n.streams {
		st.reset()
	}
	n.streams = nil
	n.conns = nil
	n.lsns = nil
}

// alive reports whether a callback scheduled for incarnation inc may run.
func (n *node) alive(inc uint64) bool { return n.up && n.inc == inc }

// Env implementation.

func (n *node) Node() world.NodeID    { return n.id }
func (n *node) Nodes() int            { return len(n.s.nodes) }
func (n *node) Peers() []world.NodeID { return n.s.peers[n.id] }
func (n *node) Host() world.Clock     { return hostClock{n} }
func (n *node) Tracer() world.Clock   { return tracerClock{n} }
func (n *node) Rand() *rand.Rand      { return n.rand }
func (n *node) Logger() *slog.Logger  { return n.logger }

// Charge implements world.Charger: the node's callbacks wait until d of
// its host clock from now has passed.
func (n *node) Charge(d time.Duration) {
	if d <= 0 {
		return
	}
	n.busy = max(n.busy, n.trueAfter(int64(d)))
	n.s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Busy, A: n.busy - n.s.k.Now()})
}
func (n *node) now() world.Time         { return world.Time(n.host.Read(n.s.k.Now())) }
func (n *node) trueAfter(d int64) int64 { return n.host.TrueAfter(n.s.k.Now(), d) }

type hostClock struct{ n *node }

func (c hostClock) Now() world.Time { return c.n.now() }

type tracerClock struct{ n *node }

func (c tracerClock) Now() world.Time { return world.Time(c.n.tracer.Read(c.n.s.k.Now())) }

// timer is a pending AfterFunc.
type timer struct {
	n     *node
	inc   uint64
	id    int64
	f     func()
	state int8 // 0 pending, 1 fired, 2 stopped
}

func (n *node) AfterFunc(d time.Duration, f func()) world.Timer {
	n.timerID++
	t := &timer{n: n, inc: n.inc, id: n.timerID, f: f}
	at := n.s.k.Now()
	if d > 0 {
		at = n.trueAfter(int64(d))
	}
	// at >= now by construction.
	_ = n.s.k.At(at, t, 0)
	return t
}

func (t *timer) Fire(arg uint64) {
	if t.state != 0 || !t.n.alive(t.inc) {
		return
	}
	if t.n.deferIfSlow(t, arg) {
		return
	}
	t.state = 1
	t.n.s.record(eventlog.Record{Node: int32(t.n.id), Kind: eventlog.Timer, A: t.id})
	t.f()
}

func (t *timer) Stop() bool {
	if t.state != 0 {
		return false
	}
	t.state = 2
	return true
}

// logHandler stamps every record with the virtual true time, since the OS
// time would make logs differ between runs.
type logHandler struct {
	n *node
	h slog.Handler
}

func (l *logHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.h.Enabled(ctx, lv) }

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.Duration("vt", time.Duration(l.n.s.k.Now())))
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{n: l.n, h: l.h.WithAttrs(as)}
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{n: l.n, h: l.h.WithGroup(name)}
}
