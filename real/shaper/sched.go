//go:build linux

package shaper

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Release timing. See the package doc.
const (
	// spinGuard is how long before a release the scheduler stops sleeping
	// and starts spinning: ppoll with a 1 ns timer slack wakes some tens
	// of µs late on a VM, less under SCHED_FIFO.
	spinGuard = 100_000 // ns
	// spinWindow and spinBudget bound the spinning: at most spinBudget ns
	// of it per spinWindow ns, after which the scheduler sleeps until the
	// release itself until the window ends. Under SCHED_FIFO a spinning
	// thread owns its CPU, so a stream of releases closer than spinGuard
	// must not keep it spinning for good.
	spinWindow = 10_000_000 // ns
	spinBudget = 5_000_000  // ns
	// rtPriority is the SCHED_FIFO priority of the scheduler's thread:
	// above every normal thread, below the kernel's own real-time threads
	// (the threaded interrupt handlers run at 50, migration and watchdogs
	// at 99).
	rtPriority = 40
	// inputBatch is how many frames the scheduler reads from one port
	// before it looks at the heap again.
	inputBatch = 64
)

// item is one copy of a frame waiting for its release.
type item struct {
	at      int64  // release time, ns since Run started
	arrival int64  // when the frame arrived, on the same clock
	seq     uint64 // order in which the model produced it, for ties
	port    int    // output port
	link    *dlink // the directed link it went through
	frame   []byte
}

// itemPool keeps written items for new copies, so that relaying a frame
// allocates nothing once the pool has grown to the copies in flight: a
// garbage collection in the shaper's process could make the real-time
// thread assist it, or wait for it, on a busy machine.
type itemPool struct {
	mu   sync.Mutex
	free []*item
}

// get returns an item holding a copy of frame; its other fields are
// stale.
func (p *itemPool) get(frame []byte) *item {
	p.mu.Lock()
	var it *item
	if n := len(p.free); n > 0 {
		it, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if it == nil {
		it = &item{frame: make([]byte, 0, max(len(frame), 1536))}
	}
	it.frame = append(it.frame[:0], frame...)
	return it
}

// put returns it to the pool once it has been written.
func (p *itemPool) put(it *item) {
	it.link = nil
	p.mu.Lock()
	p.free = append(p.free, it)
	p.mu.Unlock()
}

// itemHeap orders items by release time, then by seq.
type itemHeap []*item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

// scheduler writes queued items at their release times and reads the
// ports it polls (see the package doc). push may be called from any
// goroutine; run from one.
type scheduler struct {
	clock func() int64 // ns since Run started, CLOCK_REALTIME
	efd   int          // eventfd that wakes run's ppoll
	fds   []unix.PollFd
	log   *slog.Logger

	mu  sync.Mutex
	q   itemHeap
	seq uint64

	// anyThread says that every thread of the process runs under
	// SCHED_FIFO (setProcessRealTime), so that run need not lock its
	// goroutine to a thread of its own; set before run. A locked
	// goroutine depends on the runtime's other threads whenever it is
	// preempted, which the runtime does to any goroutine that runs 10 ms
	// without blocking: it goes to the run queue, and its thread sleeps
	// until another thread takes it off the queue and hands its thread a
	// processor slot back. Execution traces of a shaper child beside two
	// CPU hogs (20 s, 400 to 800 preemptions) had the goroutine back
	// after 88 µs at the median and 1.3 ms at worst with SCHED_OTHER
	// helpers, 57 µs and 0.4 ms with SCHED_FIFO ones (two wake-ups across
	// CPUs on this VM); unlocked, where the preempted thread takes it up
	// again itself, 7.5 µs and 0.34 ms.
	anyThread   bool
	realTime    atomic.Bool   // run's thread is under SCHED_FIFO
	spinCapped  atomic.Uint64 // releases slept for because of spinBudget
	wakeLate    lateness      // how late ppoll returned when its timeout expired
	readLag     lateness      // clock read at forward minus the frame's kernel stamp
	spinWindowT int64         // start of the current spin window
	spinUsed    int64         // ns spun in it
}

// newScheduler returns a scheduler on clock that also polls the file
// descriptors in; run calls its input function with the index in in of
// each that is readable. The descriptors must stay open until run returns.
func newScheduler(clock func() int64, in []int, log *slog.Logger) (*scheduler, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shaper: eventfd: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &scheduler{clock: clock, efd: efd, log: log}
	s.fds = append(s.fds, unix.PollFd{Fd: int32(efd), Events: unix.POLLIN})
	for _, fd := range in {
		s.fds = append(s.fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	return s, nil
}

// push queues it, stamping its seq; it never blocks beyond the heap's
// mutex. wake says whether run must be woken if it is the new head: not
// when run itself pushes.
func (s *scheduler) push(it *item, wake bool) {
	s.mu.Lock()
	it.seq = s.seq
	s.seq++
	heap.Push(&s.q, it)
	head := s.q[0] == it
	s.mu.Unlock()
	if head && wake {
		s.wake()
	}
}

// wake interrupts run's sleep.
func (s *scheduler) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(s.efd, one[:]) // EAGAIN: a wake-up is already pending
}

// close releases the eventfd; run must have returned.
func (s *scheduler) close() { unix.Close(s.efd) }

// setRealTime puts the calling thread under SCHED_FIFO at rtPriority;
// threads it would clone revert to SCHED_OTHER (the Go runtime does not
// clone a locked thread anyway).
func setRealTime() error {
	return unix.SchedSetAttr(0, &unix.SchedAttr{
		Policy:   unix.SCHED_FIFO,
		Priority: rtPriority,
		Flags:    unix.SCHED_FLAG_RESET_ON_FORK,
	}, 0)
}

// setProcessRealTime puts every thread of the calling process that is
// not under SCHED_FIFO yet under SCHED_FIFO at prio, and so every thread
// they start later (the policy is inherited). It passes over the
// process's threads until a pass finds none to change, since a thread
// not yet changed may start another meanwhile. Programs the process
// starts later inherit the policy too.
//
// A shaper child calls it so that its scheduler's goroutine need not be
// locked to a thread of its own (see scheduler.anyThread).
func setProcessRealTime(prio int) error {
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("shaper: list the process's threads: %w", err)
		}
		changed := 0
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			attr, err := unix.SchedGetAttr(tid, 0)
			if err != nil || attr.Policy == unix.SCHED_FIFO {
				continue // exited, or done
			}
			err = unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(prio)}, 0)
			switch {
			case err == unix.ESRCH:
				continue // exited meanwhile
			case err != nil:
				return fmt.Errorf("shaper: SCHED_FIFO for thread %d: %w", tid, err)
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
}

// popDue pops the head of the queue if it is due at now; otherwise it
// returns nil and the head (nil if the queue is empty).
func (s *scheduler) popDue(now int64) (due, next *item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return nil, nil
	}
	if s.q[0].at <= now {
		return heap.Pop(&s.q).(*item), nil
	}
	return nil, s.q[0]
}

// maySpin reports whether the spin budget lets run spin now, and
// accounts the spun time spun (ns) to it.
func (s *scheduler) maySpin(now, spun int64) bool {
	if now-s.spinWindowT >= spinWindow {
		s.spinWindowT, s.spinUsed = now, 0
	}
	s.spinUsed += spun
	return s.spinUsed < spinBudget
}

// run releases items until ctx is done, write fails or input does; write
// gets the item and the clock reading taken just before the write, input
// the index of a readable descriptor (see newScheduler).
//
// Unless anyThread is set, it locks its goroutine to an OS thread for
// good (the thread, whose timer slack and scheduling policy it changes,
// is discarded when run returns) and puts that thread under SCHED_FIFO
// if the process may. With anyThread, every thread of the process is
// under SCHED_FIFO already (setProcessRealTime), and the goroutine runs
// on whichever thread the Go scheduler gives it.
func (s *scheduler) run(ctx context.Context, write func(it *item, now int64) error, input func(i int) error) error {
	if s.anyThread {
		// Under SCHED_FIFO the kernel gives the thread's sleeps no
		// timer slack.
		s.realTime.Store(true)
	} else {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("shaper: set the scheduler's timer slack: %w", err)
		}
		if err := setRealTime(); err != nil {
			s.log.Info("shaper: release thread stays SCHED_OTHER (no SCHED_FIFO: needs root or CAP_SYS_NICE)", "err", err)
		} else {
			s.realTime.Store(true)
			s.log.Debug("shaper: release thread under SCHED_FIFO", "priority", rtPriority)
		}
	}
	rt := s.realTime.Load()
	defer context.AfterFunc(ctx, s.wake)()
	var drain [8]byte
	spun := int64(0) // ns spun since the last maySpin
	for ctx.Err() == nil {
		now := s.clock()
		due, next := s.popDue(now)
		if due != nil {
			if err := write(due, now); err != nil {
				return err
			}
			continue
		}
		var timeout *unix.Timespec
		var ts unix.Timespec
		spinning := false
		var wait int64
		if next != nil {
			wait = next.at - now
		}
		switch {
		case next == nil:
			// sleep until woken or a port is readable
		case wait > spinGuard:
			ts = unix.NsecToTimespec(wait - spinGuard)
			timeout = &ts
		case s.maySpin(now, spun):
			// Spin until the release, looking at the ports between looks
			// at the clock; without SCHED_FIFO, yield the CPU to any
			// other runnable thread (a receiver, say) as well.
			spinning = true
			timeout = &ts // zero: return at once
			if !rt {
				unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			}
		default:
			s.spinCapped.Add(1)
			ts = unix.NsecToTimespec(wait)
			timeout = &ts
		}
		spun = 0
		sleep := ts.Nano() // ppoll overwrites ts with the time left
		n, err := unix.Ppoll(s.fds, timeout, nil)
		switch {
		case spinning:
			spun = s.clock() - now
		case n == 0 && timeout != nil:
			s.wakeLate.record(s.clock() - now - sleep)
		}
		if err != nil && err != unix.EINTR {
			return fmt.Errorf("shaper: scheduler ppoll: %w", err)
		}
		if n <= 0 {
			continue
		}
		if s.fds[0].Revents != 0 {
			_, _ = unix.Read(s.efd, drain[:])
		}
		for i := 1; i < len(s.fds); i++ {
			if s.fds[i].Revents != 0 {
				if err := input(i - 1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
