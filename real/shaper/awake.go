//go:build linux

package shaper

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// keepAwake keeps every CPU of the machine from idling until the returned
// function is called (which waits for it to stop): one thread per CPU,
// pinned to it under SCHED_IDLE, spins.
//
// On a virtual machine an idle vCPU halts, and the host takes tens of µs
// to milliseconds to run it again when a timer or a frame wakes the
// shaper's thread on it: measured on the 2-vCPU VM this was written on, a
// SCHED_FIFO thread's 300 µs sleep overslept by 26 µs at the median and
// 2 ms at the 99th percentile, and by 6 µs and 19 µs with such spinners
// running. SCHED_IDLE threads run only when nothing else wants the CPU,
// so every other thread (the nodes, the daemons) preempts them at once;
// the cost is that the machine looks busy to its host.
//
// The spinners hold one Go processor slot each, so keepAwake raises
// GOMAXPROCS by as many, keeping the slots the rest of the process had,
// and puts it back when stopped. A spinner whose thread cannot be made
// SCHED_IDLE or pinned stops at once, so it never competes with real
// work; ok reports whether every CPU got its spinner.
func keepAwake() (stop func(), ok bool) {
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		return func() {}, false
	}
	var list []int
	for c := 0; c < len(cpus)*64 && len(list) < cpus.Count(); c++ {
		if cpus.IsSet(c) {
			list = append(list, c)
		}
	}
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + len(list))
	var quit atomic.Bool
	var wg sync.WaitGroup
	var started atomic.Int64
	ready := make(chan struct{}, len(list))
	for _, c := range list {
		wg.Go(func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			var one unix.CPUSet
			one.Set(c)
			err := unix.SchedSetaffinity(0, &one)
			if err == nil {
				err = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0)
			}
			if err == nil {
				started.Add(1)
			}
			ready <- struct{}{}
			if err != nil {
				return
			}
			for !quit.Load() {
			}
		})
	}
	for range list {
		<-ready
	}
	return func() {
		quit.Store(true)
		wg.Wait()
		runtime.GOMAXPROCS(procs)
	}, started.Load() == int64(len(list))
}
