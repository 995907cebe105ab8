package real

import (
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/world"
)

// timebase maps the OS clocks onto the run's true time: nanoseconds since
// the run's epoch on CLOCK_REALTIME, and the same origin carried over to
// CLOCK_MONOTONIC_RAW for tracer clocks.
type timebase struct {
	epoch int64 // CLOCK_REALTIME reading of true time 0
	raw0  int64 // CLOCK_MONOTONIC_RAW reading at true time rawAt
	rawAt int64
}

// newTimebase starts true time now, or at the Unix epoch. The two OS
// clocks are anchored to each other by a sandwich (see sandwich), so that
// the raw time line does not start a clock read's duration late.
func newTimebase(unix bool) timebase {
	now, raw, _ := sandwich(realtime, monoRaw)
	b := timebase{epoch: now, raw0: raw}
	if unix {
		b.epoch, b.rawAt = 0, now
	}
	return b
}

// sandwichTries is how many sandwiches sandwich takes, keeping the
// narrowest: a read can be preempted, or slow after the thread slept.
const sandwichTries = 4

// sandwich reads clock a, clock b, clock a again, sandwichTries times,
// and returns the pair of the narrowest sandwich: the mean of its two a
// readings, its b reading, and its width (the time between its two a
// readings). Two clock reads back to back are far from simultaneous on a
// virtual machine: 0.7 µs apart at the median on the VM this was written
// on (1.45 µs for a sandwich, 4.8 µs at the 99th percentile), so a pair
// read one after the other carries a bias of that size, where a
// sandwich's midpoint carries none and its width bounds its error.
func sandwich(a, b func() int64) (at, bt, width int64) {
	width = math.MaxInt64
	for range sandwichTries {
		a0 := a()
		b0 := b()
		a1 := a()
		if w := a1 - a0; w < width {
			at, bt, width = a0+w/2, b0, w
		}
	}
	return at, bt, width
}

func realtime() int64 { return time.Now().UnixNano() }

// now returns the current true time.
func (b timebase) now() int64 { return time.Now().UnixNano() - b.epoch }

// fromRealtime converts a CLOCK_REALTIME reading (a kernel timestamp) to
// true time.
func (b timebase) fromRealtime(ns int64) int64 { return ns - b.epoch }

// rawNow returns true time as measured on CLOCK_MONOTONIC_RAW, which NTP
// never slews.
func (b timebase) rawNow() int64 { return monoRaw() - b.raw0 + b.rawAt }

// fromRaw converts t, a true time measured on CLOCK_MONOTONIC_RAW
// (rawNow's), to true time on CLOCK_REALTIME: the two time lines agree at
// the start (rawAt) and part at the rate NTP slews CLOCK_REALTIME, taken
// as constant since then and measured now by a sandwich.
func (b timebase) fromRaw(t int64) int64 {
	now, raw, _ := sandwich(b.now, b.rawNow)
	if raw == b.rawAt {
		return t
	}
	return t + int64(math.Round(float64(now-raw)*float64(t-b.rawAt)/float64(raw-b.rawAt)))
}

func monoRaw() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts); err != nil {
		// CLOCK_MONOTONIC_RAW exists on every Linux since 2.6.28.
		panic("real: clock_gettime(CLOCK_MONOTONIC_RAW): " + err.Error())
	}
	return ts.Nano()
}

// hostClock is a node's host clock S: the injected model evaluated at true
// time. The model caches its position, so reads are locked: the harness
// reads other nodes' clocks for ground truth.
type hostClock struct {
	mu     sync.Mutex
	base   timebase
	model  *clockmodel.Clock
	tracer *clockmodel.Tracer
	custom func() int64
}

func (c *hostClock) at(t int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model.Ideal(t)
}

func (c *hostClock) rate(t int64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model.Rate(t)
}

func (c *hostClock) Now() world.Time { return world.Time(c.at(c.base.now())) }

// trueAfter returns how long in true time the clock takes to advance d.
func (c *hostClock) trueAfter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d)/c.rate(c.base.now()) + 0.999)
}

type tracerClock struct{ c *hostClock }

func (r tracerClock) Now() world.Time {
	if r.c.custom != nil {
		return world.Time(r.c.custom())
	}
	t := r.c.base.rawNow()
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	return world.Time(r.c.tracer.Ideal(t))
}

// pair reads the host and tracer clocks as one pair (world.PairReader):
// the OS clocks as a sandwich (host, tracer, host), then the models.
func (c *hostClock) pair() (host, tracer world.Time) {
	tracerNow := c.base.rawNow
	if c.custom != nil {
		tracerNow = c.custom
	}
	now, r, _ := sandwich(c.base.now, tracerNow)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.custom == nil {
		r = c.tracer.Ideal(r)
	}
	return world.Time(c.model.Ideal(now)), world.Time(r)
}
