//go:build linux

package shaper

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// spinGuard is how long before a release the scheduler stops sleeping and
// starts spinning: ppoll with a 1 ns timer slack wakes some tens of µs
// late at the median on a VM.
const spinGuard = 100_000 // ns

// item is one copy of a frame waiting for its release.
type item struct {
	at    int64  // release time, ns since Run started
	seq   uint64 // order in which the model produced it, for ties
	port  int    // output port
	link  *dlink // the directed link it went through
	frame []byte
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

// scheduler writes queued items at their release times (see the package
// doc). push may be called from any goroutine; run from one.
type scheduler struct {
	clock func() int64 // ns since Run started, monotonic
	efd   int          // eventfd that wakes run's ppoll

	mu  sync.Mutex
	q   itemHeap
	seq uint64
}

func newScheduler(clock func() int64) (*scheduler, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shaper: eventfd: %w", err)
	}
	return &scheduler{clock: clock, efd: efd}, nil
}

// push queues it, stamping its seq; it never blocks beyond the heap's
// mutex.
func (s *scheduler) push(it *item) {
	s.mu.Lock()
	it.seq = s.seq
	s.seq++
	heap.Push(&s.q, it)
	head := s.q[0] == it
	s.mu.Unlock()
	if head {
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

// run releases items until ctx is done or write fails; write gets the
// item and the clock reading taken just before the write. It locks its
// goroutine to an OS thread for good (the thread, whose timer slack it
// changes, is discarded when run returns).
func (s *scheduler) run(ctx context.Context, write func(it *item, now int64) error) error {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("shaper: set the scheduler's timer slack: %w", err)
	}
	defer context.AfterFunc(ctx, s.wake)()
	fds := []unix.PollFd{{Fd: int32(s.efd), Events: unix.POLLIN}}
	var drain [8]byte
	for ctx.Err() == nil {
		s.mu.Lock()
		var next *item
		if len(s.q) > 0 {
			next = s.q[0]
		}
		now := s.clock()
		if next != nil && next.at <= now {
			heap.Pop(&s.q)
			s.mu.Unlock()
			if err := write(next, now); err != nil {
				return err
			}
			continue
		}
		s.mu.Unlock()
		var timeout *unix.Timespec
		switch {
		case next == nil:
			// sleep until woken
		case next.at-now > spinGuard:
			ts := unix.NsecToTimespec(next.at - now - spinGuard)
			timeout = &ts
		default:
			// Spin until the release, yielding the CPU to any other
			// runnable thread (a receiver, say) between looks at the clock.
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		if _, err := unix.Ppoll(fds, timeout, nil); err != nil && err != unix.EINTR {
			return fmt.Errorf("shaper: scheduler ppoll: %w", err)
		}
		_, _ = unix.Read(s.efd, drain[:])
	}
	return nil
}
