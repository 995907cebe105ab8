// Package kernel is the simulator's discrete-event scheduler: one queue of
// events ordered by (virtual true time, insertion sequence).
//
// The kernel knows nothing of nodes, clocks or links. It runs on the
// caller's goroutine, never reads the OS clock, and never allocates per
// event once its queue has grown to the run's working size: events are
// values in a binary heap, and a handler is an interface value that the
// caller allocates once and schedules many times.
package kernel

import (
	"errors"
	"fmt"
)

// Handler is called when an event fires. arg is the value given when the
// event was scheduled; handlers use it to tell their events apart (a
// sequence number, a generation count, an index into a pool).
type Handler interface {
	Fire(arg uint64)
}

// event is one scheduled callback.
type event struct {
	at  int64
	seq uint64
	h   Handler
	arg uint64
}

func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// ErrPast is returned when an event is scheduled before the current time.
var ErrPast = errors.New("kernel: event scheduled in the past")

// Kernel is a discrete-event scheduler. The zero value is ready to use, at
// virtual time 0. A Kernel is not safe for concurrent use.
type Kernel struct {
	now   int64
	seq   uint64
	fired uint64
	queue []event
}

// Now returns the current virtual true time in nanoseconds.
func (k *Kernel) Now() int64 { return k.now }

// Fired returns how many events have fired so far.
func (k *Kernel) Fired() uint64 { return k.fired }

// Pending returns how many events are queued.
func (k *Kernel) Pending() int { return len(k.queue) }

// Grow makes room for n more queued events without reallocating.
func (k *Kernel) Grow(n int) {
	if cap(k.queue)-len(k.queue) < n {
		q := make([]event, len(k.queue), len(k.queue)+n)
		copy(q, k.queue)
		k.queue = q
	}
}

// At schedules h.Fire(arg) at virtual time at. Events at the same time fire
// in the order they were scheduled. It fails with ErrPast if at < Now().
func (k *Kernel) At(at int64, h Handler, arg uint64) error {
	if at < k.now {
		return fmt.Errorf("at %d, now %d: %w", at, k.now, ErrPast)
	}
	k.seq++
	k.queue = append(k.queue, event{at: at, seq: k.seq, h: h, arg: arg})
	k.up(len(k.queue) - 1)
	return nil
}

// After schedules h.Fire(arg) d nanoseconds from now; d < 0 counts as 0.
func (k *Kernel) After(d int64, h Handler, arg uint64) {
	if d < 0 {
		d = 0
	}
	// Cannot fail: now+d >= now.
	_ = k.At(k.now+d, h, arg)
}

// Next returns the time of the earliest queued event.
func (k *Kernel) Next() (int64, bool) {
	if len(k.queue) == 0 {
		return 0, false
	}
	return k.queue[0].at, true
}

// Step fires the earliest event, advancing Now to its time. It reports
// whether there was one.
func (k *Kernel) Step() bool {
	if len(k.queue) == 0 {
		return false
	}
	e := k.queue[0]
	last := len(k.queue) - 1
	k.queue[0] = k.queue[last]
	k.queue[last] = event{}
	k.queue = k.queue[:last]
	if last > 0 {
		k.down(0)
	}
	k.now = e.at
	k.fired++
	e.h.Fire(e.arg)
	return true
}

// RunUntil fires every event at or before t, then sets Now to t (if t is
// later). It returns how many events fired.
func (k *Kernel) RunUntil(t int64) uint64 {
	start := k.fired
	for len(k.queue) > 0 && k.queue[0].at <= t {
		k.Step()
	}
	if t > k.now {
		k.now = t
	}
	return k.fired - start
}

func (k *Kernel) up(i int) {
	q := k.queue
	for i > 0 {
		p := (i - 1) / 2
		if !q[i].before(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (k *Kernel) down(i int) {
	q := k.queue
	n := len(q)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q[r].before(&q[l]) {
			m = r
		}
		if !q[m].before(&q[i]) {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}
