// Package worldtest is the conformance suite every implementation of
// [world.Env] must pass: the simulator now, the real backend later.
//
// An implementation provides a [World] that boots n nodes running the
// suite's programs; the suite checks clocks, timers, datagrams, streams and
// the one-callback-at-a-time rule through what those programs observe.
//
// It also holds [Net], the one hand-driven world protocol unit tests share:
// nothing happens in it until the test fires a timer, moves the clock,
// delivers or drops a datagram or a stream frame, or crashes a node.
package worldtest

import (
	"sync"
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

// World runs programs on a fresh set of nodes.
type World interface {
	// Run boots n nodes, node i running newProgram(i), all linked to each
	// other by reliable low-latency links, and runs until done returns
	// true or limit has passed (in the world's own time). done is safe to
	// call from any goroutine. Run returns when the nodes are stopped.
	Run(t *testing.T, n int, newProgram func(world.NodeID) world.Program, done func() bool, limit time.Duration)
}

// Run runs the whole suite against w.
func Run(t *testing.T, w World) {
	tests := []struct {
		name string
		f    func(*testing.T, World)
	}{
		{"Identity", testIdentity},
		{"TimersFireInOrder", testTimersFireInOrder},
		{"TimerStop", testTimerStop},
		{"ZeroTimerRunsAfterCallback", testZeroTimer},
		{"HostClockAdvancesWithTimers", testHostClock},
		{"DatagramEcho", testDatagramEcho},
		{"DatagramToClosedPort", testDatagramToClosedPort},
		{"StreamOrderedDelivery", testStreamOrdered},
		{"StreamDialRefused", testStreamRefused},
		{"StreamLimits", testStreamLimits},
		{"OneCallbackAtATime", testOneCallbackAtATime},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, w) })
	}
}

// recorder collects what programs observed; programs of different nodes may
// run on different goroutines, so it locks.
type recorder struct {
	mu     sync.Mutex
	vals   map[string][]int64
	finish int
}

func newRecorder() *recorder { return &recorder{vals: make(map[string][]int64)} }

func (r *recorder) errorf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Errorf(format, args...)
}

func (r *recorder) add(key string, v int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.vals[key] = append(r.vals[key], v)
}

func (r *recorder) get(key string) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.vals[key]...)
}

func (r *recorder) done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finish++
}

// doneAfter returns a done function that is true once n programs called
// r.done.
func (r *recorder) doneAfter(n int) func() bool {
	return func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.finish >= n
	}
}

const limit = 10 * time.Second

func testIdentity(t *testing.T, w World) {
	r := newRecorder()
	const n = 3
	w.Run(t, n, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			if env.Node() != id {
				r.errorf(t, "node %d: Node() = %d", id, env.Node())
			}
			if env.Nodes() != n {
				r.errorf(t, "node %d: Nodes() = %d, want %d", id, env.Nodes(), n)
			}
			peers := env.Peers()
			for i, p := range peers {
				if p == id || p < 0 || int(p) >= n || (i > 0 && peers[i-1] >= p) {
					r.errorf(t, "node %d: Peers() = %v: want sorted other nodes", id, peers)
				}
			}
			if env.Rand() == nil || env.Logger() == nil || env.Host() == nil || env.Tracer() == nil {
				r.errorf(t, "node %d: nil Rand, Logger or clock", id)
			}
			env.Logger().Info("identity checked")
			r.done()
			return nil
		})
	}, r.doneAfter(n), limit)
	if !r.doneAfter(n)() {
		t.Fatal("not every node started")
	}
}

func testTimersFireInOrder(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 1, func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			for _, ms := range []int64{30, 10, 20, 40} {
				env.AfterFunc(time.Duration(ms)*time.Millisecond, func() {
					r.add("order", ms)
					if ms == 40 {
						r.done()
					}
				})
			}
			return nil
		})
	}, r.doneAfter(1), limit)
	got := r.get("order")
	want := []int64{10, 20, 30, 40}
	if len(got) != len(want) {
		t.Fatalf("timers fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("timers fired %v, want %v", got, want)
		}
	}
}

func testTimerStop(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 1, func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			stopped := env.AfterFunc(5*time.Millisecond, func() { r.add("stopped fired", 1) })
			fired := env.AfterFunc(time.Millisecond, func() { r.add("fired", 1) })
			env.AfterFunc(20*time.Millisecond, func() {
				if fired.Stop() {
					r.errorf(t, "Stop after firing returned true")
				}
				r.done()
			})
			if !stopped.Stop() {
				r.errorf(t, "first Stop returned false")
			}
			if stopped.Stop() {
				r.errorf(t, "second Stop returned true")
			}
			return nil
		})
	}, r.doneAfter(1), limit)
	if len(r.get("stopped fired")) != 0 {
		t.Error("a stopped timer fired")
	}
	if len(r.get("fired")) != 1 {
		t.Error("the timer that was not stopped did not fire exactly once")
	}
}

func testZeroTimer(t *testing.T, w World) {
	r := newRecorder()
	w.Run(t, 1, func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			returned := false
			env.AfterFunc(0, func() {
				if !returned {
					r.errorf(t, "AfterFunc(0) ran inside the callback that scheduled it")
				}
				r.done()
			})
			returned = true
			return nil
		})
	}, r.doneAfter(1), limit)
	if !r.doneAfter(1)() {
		t.Fatal("AfterFunc(0) never ran")
	}
}

func testHostClock(t *testing.T, w World) {
	r := newRecorder()
	const d = 50 * time.Millisecond
	w.Run(t, 1, func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			start := env.Host().Now()
			rStart := env.Tracer().Now()
			env.AfterFunc(d, func() {
				r.add("elapsed", int64(env.Host().Now().Sub(start)))
				r.add("tracer", int64(env.Tracer().Now().Sub(rStart)))
				r.done()
			})
			return nil
		})
	}, r.doneAfter(1), limit)
	el := r.get("elapsed")
	if len(el) != 1 {
		t.Fatal("timer did not fire")
	}
	// The host clock may run up to a few hundred ppm off; a timer measured
	// on it must not fire early by more than that, nor absurdly late.
	if got := time.Duration(el[0]); got < d-d/1000 || got > d+time.Second {
		t.Errorf("host clock advanced %v over a %v timer", got, d)
	}
	if tr := time.Duration(r.get("tracer")[0]); tr < d/2 || tr > 2*d+time.Second {
		t.Errorf("tracer clock advanced %v over a %v timer", tr, d)
	}
}
