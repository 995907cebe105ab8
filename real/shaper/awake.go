//go:build linux

package shaper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// spinnerMode is childEnv's value in the spinner process a shaper child
// starts (startSpinners); MaybeChild makes such a process spin.
const spinnerMode = "spinners"

// spinners is a running spinner process (startSpinners). Spinners keep
// every CPU of the machine from idling while a shaper child runs: one
// thread per CPU, pinned to it under SCHED_IDLE, spins.
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
// For the same reason a spinner may not run for a second or more while
// other processes keep every CPU busy, so the spinners live in a process
// of their own, never in the shaper's: there each held one of the Go
// runtime's processor slots, and a stop of the world (a garbage
// collection's, say) waited until every slot's goroutine reached a safe
// point, the starved spinners' too, while the shaper's thread stood
// still (see the package doc).
type spinners struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startSpinners starts the spinner process, exe (this program, which
// calls MaybeChild first), and returns once it spins; pinned of cpus
// CPUs got their spinner. The process's other messages go to stderr. It
// spins until stop is called or this process dies (its stdin closes).
func startSpinners(exe string, stderr io.Writer) (sp *spinners, pinned, cpus int, err error) {
	cmd := exec.Command(exe, "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+spinnerMode)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("shaper: spinners: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("shaper: spinners: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, 0, fmt.Errorf("shaper: spinners: start %s: %w", exe, err)
	}
	sp = &spinners{cmd: cmd, stdin: stdin}
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	if _, err := fmt.Sscanf(line, "spinners %d of %d\n", &pinned, &cpus); err != nil {
		werr := sp.stop()
		return nil, 0, 0, fmt.Errorf("shaper: spinners: the process did not start them (got %q): %w", line, errors.Join(rerr, werr))
	}
	return sp, pinned, cpus, nil
}

// stop ends the spinner process and waits for it.
func (sp *spinners) stop() error {
	sp.stdin.Close()
	if err := sp.cmd.Wait(); err != nil {
		return fmt.Errorf("shaper: spinners: %w", err)
	}
	return nil
}

// spinnerMain is the spinner process: it starts a spinner on every CPU
// it may run on, writes "spinners K of N" (K of its N CPUs got one) to
// stdout, and spins until stdin closes.
func spinnerMain(stdin io.Reader, stdout io.Writer) int {
	cpus, err := affinity()
	if err != nil {
		fmt.Fprintf(stdout, "spinners 0 of 0 (%v)\n", err)
		return 1
	}
	// One slot per spinner and one for this goroutine; no collection,
	// nothing here allocates once started.
	runtime.GOMAXPROCS(len(cpus) + 1)
	debug.SetGCPercent(-1)
	var quit atomic.Bool
	var wg sync.WaitGroup
	tids := spin(cpus, &quit, &wg)
	fmt.Fprintf(stdout, "spinners %d of %d\n", len(tids), len(cpus))
	io.Copy(io.Discard, stdin) // returns when the shaper child closes it or dies
	// Beside CPU hogs a SCHED_IDLE thread may wait seconds for a CPU, to
	// see quit or to die with the process, and the shaper child waits for
	// this process to exit: make the spinners ordinary threads first
	// (where permitted), then exit without waiting for them.
	for _, tid := range tids {
		_ = unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0)
	}
	quit.Store(true)
	return 0
}

// affinity returns the CPUs the calling thread may run on.
func affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("shaper: sched_getaffinity: %w", err)
	}
	var list []int
	for c := 0; c < len(set)*64 && len(list) < set.Count(); c++ {
		if set.IsSet(c) {
			list = append(list, c)
		}
	}
	return list, nil
}

// spin starts a spinner goroutine per CPU of cpus, each locked to its
// thread, pinned to its CPU under SCHED_IDLE, spinning until quit is set
// (wg waits for them), and returns the thread ids of those that could be
// pinned and made SCHED_IDLE. A spinner that could not stops at once, so
// that it never competes with real work. The caller's process needs a
// processor slot (GOMAXPROCS) per spinner besides its own.
func spin(cpus []int, quit *atomic.Bool, wg *sync.WaitGroup) (tids []int) {
	ready := make(chan int, len(cpus)) // a spinner's thread id, 0 if it stopped
	for _, c := range cpus {
		wg.Go(func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			var one unix.CPUSet
			one.Set(c)
			err := unix.SchedSetaffinity(0, &one)
			if err == nil {
				err = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0)
			}
			if err != nil {
				ready <- 0
				return
			}
			ready <- unix.Gettid()
			for !quit.Load() {
			}
		})
	}
	for range cpus {
		if tid := <-ready; tid != 0 {
			tids = append(tids, tid)
		}
	}
	return tids
}

// keepAwakeInProcess is the strategy of 2026-11-22, kept for
// BenchmarkShaperLoad's comparison: the spinners run in the shaper's own
// process, which raises GOMAXPROCS by one slot per spinner and puts it
// back when stopped. A busy machine starves them and, through them, every
// stop of the world of the shaper's runtime (see spinners). ok reports
// whether every CPU got its spinner.
func keepAwakeInProcess() (stop func(), ok bool) {
	cpus, err := affinity()
	if err != nil {
		return func() {}, false
	}
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + len(cpus))
	var quit atomic.Bool
	var wg sync.WaitGroup
	pinned := spin(cpus, &quit, &wg)
	return func() {
		quit.Store(true)
		wg.Wait()
		runtime.GOMAXPROCS(procs)
	}, len(pinned) == len(cpus)
}
