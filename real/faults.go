package real

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/world"
)

// Faults on real nodes. The harness schedules them as a scenario's faults
// section says; each applies at once. A node's network faults (partition,
// link flap) belong to the links and are the shaper's (see real/shaper's
// Shaper.SetCut).

// Crash stops node i as a crash would: its loop stops after the callback
// running now, its pending timers are dropped and every socket and stream
// it opened closes (its peers see their streams end). Its counters stay.
// Crashing a node that is down does nothing.
func (w *World) Crash(i world.NodeID) {
	if !w.Up(i) {
		return
	}
	n := w.nodes[i]
	n.shutdown()
	n.timers = timers{}
	n.log.Warn("node crashed (fault)", "incarnation", n.incarnation)
}

// Restart boots node i again, after a Crash, with a fresh program: a new
// incarnation, with a random stream of its own, as the simulator's restart
// gives it. It returns the program's Start error. Restarting a node that
// runs is an error.
func (w *World) Restart(i world.NodeID, p world.Program) error {
	if w.Up(i) {
		return fmt.Errorf("real: restart node %d: it is running", i)
	}
	n := w.nodes[i]
	err := n.boot(p)
	n.lp().start()
	n.log.Warn("node restarted (fault)", "incarnation", n.incarnation)
	return err
}

// Up reports whether node i runs (booted and not crashed).
func (w *World) Up(i world.NodeID) bool {
	l := w.nodes[i].lp()
	return l != nil && !l.isClosed()
}

// SetSlow makes node i handle every event d late, from its arrival (a
// datagram, a stream's data, a timer's expiry) to its callback, as a node
// whose CPU is taken elsewhere would; 0 ends it. Events already queued
// keep the delay they were queued with.
func (w *World) SetSlow(i world.NodeID, d time.Duration) {
	n := w.nodes[i]
	n.slow = d
	if l := n.lp(); l != nil {
		l.slow.Store(int64(d))
	}
}

// StepClock steps node i's injected host clock by by, now: an NTP-like
// step of the time the node reads, which its tracer clock does not follow.
// It returns the true time of the step.
func (w *World) StepClock(i world.NodeID, by time.Duration) (at int64, err error) {
	c := w.nodes[i].clock
	c.mu.Lock()
	defer c.mu.Unlock()
	// Not before any reading already handed out (another node's loop,
	// the harness's truth): those readings must not change.
	at = max(c.base.now(), c.model.Horizon())
	if err := c.model.AddStep(clockmodel.Step{At: time.Duration(at), By: by}); err != nil {
		return 0, fmt.Errorf("real: step node %d's clock: %w", i, err)
	}
	return at, nil
}
