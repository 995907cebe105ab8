package phasegap

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBind: with BindCPUs, each thread of the team runs on its CPU alone.
func TestBind(t *testing.T) {
	cpus, err := AllowedCPUs(false)
	if err != nil || len(cpus) == 0 {
		t.Fatalf("AllowedCPUs: %v, %v", cpus, err)
	}
	runtime.LockOSThread() // the master's binding stays with this thread
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &before)
	const threads = 3
	tm, err := newTeam(threads, cpus)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.close()
	got := make([]unix.CPUSet, threads)
	tm.fork(func(tid int) { _ = unix.SchedGetaffinity(0, &got[tid]) })
	for tid, set := range got {
		want := cpus[tid%len(cpus)]
		if set.Count() != 1 || !set.IsSet(want) {
			t.Errorf("thread %d may run on %d CPUs (CPU %d: %v), want CPU %d alone", tid, set.Count(), want, set.IsSet(want), want)
		}
	}
}
