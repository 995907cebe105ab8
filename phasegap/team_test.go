package phasegap

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamForkJoinsAfterEarlyWake: the last worker of one fork may wake
// the master late, when the master, having seen that fork end by
// spinning, already sleeps in the next one. fork must still wait for
// the next fork's workers (it once returned at that early wake, with
// the worker still in its share: CI's race detector caught the master
// writing the next fork's function as the worker read it).
func TestTeamForkJoinsAfterEarlyWake(t *testing.T) {
	tm, err := newTeam(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.close()
	var forks atomic.Int64
	tm.testHookDone = func() {
		if forks.Load() != 1 {
			return
		}
		// The first fork's last worker: hold its wake until the master
		// sleeps in the second fork.
		for !tm.masterSleeping.Load() {
			runtime.Gosched()
		}
	}
	var workerDone atomic.Int64
	f := func(tid int) {
		if tid == 1 && forks.Load() == 2 {
			time.Sleep(20 * time.Millisecond) // well past the master's wake
		}
		if tid == 1 {
			workerDone.Add(1)
		}
	}
	for i := int64(1); i <= 3; i++ {
		forks.Store(i)
		tm.fork(f)
		if got := workerDone.Load(); got != i {
			t.Fatalf("fork %d returned with the worker's share run %d times, want %d", i, got, i)
		}
	}
}

// TestTeamForkStress: many forks of every team size each run every
// thread's share once before fork returns.
func TestTeamForkStress(t *testing.T) {
	for _, threads := range []int{2, 3} {
		tm, err := newTeam(threads, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, threads) // plain ints: the race detector checks the join
		f := func(tid int) { counts[tid]++ }
		const forks = 200
		for i := 1; i <= forks; i++ {
			tm.fork(f)
			for tid, c := range counts {
				if c != i {
					tm.close()
					t.Fatalf("T=%d: after fork %d thread %d ran %d times", threads, i, tid, c)
				}
			}
		}
		tm.close()
	}
}
