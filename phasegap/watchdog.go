package phasegap

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The stall watchdog's automatic limit (Params.StallTimeout =
// params.StallAuto): StallFactor × the slowest warmup iteration, at least
// StallFloor; StallNoWarmup while no warmup iteration has been timed.
const (
	StallFactor   = 20
	StallFloor    = time.Second
	StallNoWarmup = time.Minute
)

// StallError is the watchdog's report: an iteration (or the phase before
// the loop) ran longer than the limit, as when a neighbour was stopped
// and the exchange cannot complete.
type StallError struct {
	Rank    int
	Iter    int    // the iteration in progress (counting the warmup); -1 before the first
	Phase   string // what the rank was doing: "iteration", "pure-communication pass", …
	Elapsed time.Duration
	Limit   time.Duration
	Auto    bool // the limit is the automatic one
}

func (e *StallError) Error() string {
	how := "--stall-timeout"
	if e.Auto {
		how = fmt.Sprintf("%d× the slowest warmup iteration, at least %v; --stall-timeout sets it", StallFactor, StallFloor)
	}
	return fmt.Sprintf("stall: rank %d: %s %d has run %v, over the stall limit %v (%s): a rank stopped or an exchange that cannot complete",
		e.Rank, e.Phase, e.Iter, e.Elapsed.Round(time.Millisecond), e.Limit.Round(time.Millisecond), how)
}

// watchdog ends a run whose master stopped making progress: the master
// beats at every iteration (and inside the long passes), and a goroutine
// checks the time since the last beat against the limit, on the wall
// clock. It calls onStall once, from its own goroutine.
type watchdog struct {
	rank    int
	auto    bool
	start   time.Time
	limit   atomic.Int64 // ns
	beat    atomic.Int64 // ns since start
	iter    atomic.Int64
	phase   atomic.Int32 // a stage
	stop    chan struct{}
	stopped sync.WaitGroup
}

// startWatchdog starts a watchdog with limit (0: none is started, nil
// returned), calling onStall once on a stall.
func startWatchdog(rank int, limit time.Duration, auto bool, onStall func(error)) *watchdog {
	if limit <= 0 || onStall == nil {
		return nil
	}
	w := &watchdog{rank: rank, auto: auto, start: time.Now(), stop: make(chan struct{})}
	w.limit.Store(int64(limit))
	w.progress(-1, stageSetup)
	w.stopped.Add(1)
	go w.watch(onStall)
	return w
}

// watch checks every tick (a tenth of the limit, between 5 ms and
// 250 ms) until stopped or stalled.
func (w *watchdog) watch(onStall func(error)) {
	defer w.stopped.Done()
	tick := time.NewTicker(min(max(time.Duration(w.limit.Load())/10, 5*time.Millisecond), 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			now := time.Since(w.start)
			elapsed := now - time.Duration(w.beat.Load())
			if limit := time.Duration(w.limit.Load()); elapsed > limit {
				onStall(&StallError{Rank: w.rank, Iter: int(w.iter.Load()), Phase: stage(w.phase.Load()).String(),
					Elapsed: elapsed, Limit: limit, Auto: w.auto})
				return
			}
		}
	}
}

// stage is what the master is doing, for the watchdog's report.
type stage int32

const (
	stageSetup stage = iota
	stageWarmup
	stagePureComm
	stagePureWork
	stageIter
	stageCheck
)

func (s stage) String() string {
	return [...]string{"setup", "warmup iteration", "pure-communication pass after iteration",
		"pure-work pass after iteration", "iteration", "check after iteration"}[s]
}

// progress records a beat: the master is at iteration it, in stage s.
// Safe on a nil watchdog; allocates nothing.
func (w *watchdog) progress(it int, s stage) {
	if w == nil {
		return
	}
	w.iter.Store(int64(it))
	w.phase.Store(int32(s))
	w.beat.Store(int64(time.Since(w.start)))
}

// setLimit changes the limit (the automatic one, once the warmup is
// timed). Safe on a nil watchdog.
func (w *watchdog) setLimit(d time.Duration) {
	if w != nil {
		w.limit.Store(int64(d))
	}
}

// close stops the watchdog. Safe on a nil watchdog.
func (w *watchdog) close() {
	if w == nil {
		return
	}
	close(w.stop)
	w.stopped.Wait()
}

// autoLimit is the automatic limit for a slowest warmup iteration of
// slowest ns (0: none timed).
func autoLimit(slowest int64) time.Duration {
	if slowest <= 0 {
		return StallNoWarmup
	}
	return max(StallFactor*time.Duration(slowest), StallFloor)
}
