package phasegap

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// spinLimit is how many times a waiting thread checks before it sleeps:
// tens of microseconds, as libgomp spins before its futex wait. Waking a
// sleeping thread costs tens of microseconds on a VM (BenchmarkTeamFork),
// more than most interiors.
const spinLimit = 1 << 15

// team is the T threads of a rank, as an OpenMP parallel region's: the
// caller is thread 0 (the master, which alone calls the Comm), and T−1
// worker goroutines, each locked to its own OS thread, started once for
// the whole run. fork runs f on every thread and returns when all are
// done: one fork is the fork/join (the barrier) of one `omp for`. Waiting
// threads spin, then sleep; nothing allocates per fork.
type team struct {
	f        func(tid int)
	epoch    atomic.Uint64 // bumped by each fork
	pending  atomic.Int64  // workers still running the current fork
	quit     atomic.Bool
	sleeping []atomic.Bool // worker i−1 sleeps on wake[i−1]
	wake     []chan struct{}
	// The master's sleep while it waits for the workers.
	masterSleeping atomic.Bool
	masterWake     chan struct{}
	// testHookDone, when set (by tests only), runs on a worker between
	// its share's end and its wake of the master.
	testHookDone func()
}

// newTeam starts the workers; with cpus, thread t (the caller too) is
// pinned to cpus[t mod len(cpus)].
func newTeam(threads int, cpus []int) (*team, error) {
	if len(cpus) > 0 {
		if err := pin(cpus[0]); err != nil {
			return nil, fmt.Errorf("bind thread 0 to CPU %d: %w", cpus[0], err)
		}
	}
	t := &team{sleeping: make([]atomic.Bool, threads-1), wake: make([]chan struct{}, threads-1), masterWake: make(chan struct{}, 1)}
	for w := range t.wake {
		t.wake[w] = make(chan struct{}, 1)
	}
	errs := make(chan error, threads)
	for i := 1; i < threads; i++ {
		go t.worker(i, cpus, errs)
	}
	for i := 1; i < threads; i++ {
		if err := <-errs; err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// size is T.
func (t *team) size() int { return len(t.wake) + 1 }

func (t *team) worker(tid int, cpus []int, started chan<- error) {
	runtime.LockOSThread()
	if len(cpus) > 0 {
		if err := pin(cpus[tid%len(cpus)]); err != nil {
			started <- fmt.Errorf("bind thread %d to CPU %d: %w", tid, cpus[tid%len(cpus)], err)
			return
		}
	}
	started <- nil
	var seen uint64
	for {
		seen = t.await(tid-1, seen)
		if t.quit.Load() {
			return
		}
		t.f(tid)
		if t.pending.Add(-1) != 0 {
			continue
		}
		if t.testHookDone != nil {
			t.testHookDone()
		}
		// The last worker wakes the master if it sleeps. The master may
		// already be asleep in the next fork (it saw pending reach 0
		// by spinning and went on): that wake is early, and fork
		// checks pending again after every wake.
		if t.masterSleeping.CompareAndSwap(true, false) {
			t.masterWake <- struct{}{}
		}
	}
}

// await returns the epoch once it differs from seen: spinning, then
// asleep until fork wakes worker w.
func (t *team) await(w int, seen uint64) uint64 {
	for spins := 0; ; spins++ {
		if e := t.epoch.Load(); e != seen {
			return e
		}
		if spins < spinLimit {
			continue
		}
		t.sleeping[w].Store(true)
		if e := t.epoch.Load(); e != seen {
			if !t.sleeping[w].CompareAndSwap(true, false) {
				<-t.wake[w] // fork took the flag: its wake is on the way
			}
			return e
		}
		<-t.wake[w]
		spins = 0
	}
}

// start bumps the epoch and wakes the sleeping workers.
func (t *team) start() {
	t.epoch.Add(1)
	for w := range t.wake {
		if t.sleeping[w].CompareAndSwap(true, false) {
			t.wake[w] <- struct{}{}
		}
	}
}

// fork runs f(tid) on every thread, the master's share on the caller, and
// waits for all.
func (t *team) fork(f func(tid int)) {
	if len(t.wake) == 0 {
		f(0)
		return
	}
	t.f = f
	t.pending.Store(int64(len(t.wake)))
	t.start()
	f(0)
	for spins := 0; t.pending.Load() != 0; spins++ {
		if spins < spinLimit {
			continue
		}
		t.masterSleeping.Store(true)
		if t.pending.Load() == 0 && t.masterSleeping.CompareAndSwap(true, false) {
			break
		}
		// Asleep until a worker takes the flag; its wake may be the
		// last one of the previous fork, so the loop checks pending.
		<-t.masterWake
		spins = 0
	}
}

// close ends the workers.
func (t *team) close() {
	t.quit.Store(true)
	t.start()
}

// share is thread tid's static share of [lo, hi) among n threads.
func share(lo, hi, tid, n int) (int, int) {
	span := hi - lo
	return lo + span*tid/n, lo + span*(tid+1)/n
}
