package real

import (
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

// newTimebase starts true time now, or at the Unix epoch.
func newTimebase(unix bool) timebase {
	now := time.Now().UnixNano()
	b := timebase{epoch: now, raw0: monoRaw()}
	if unix {
		b.epoch, b.rawAt = 0, now
	}
	return b
}

// now returns the current true time.
func (b timebase) now() int64 { return time.Now().UnixNano() - b.epoch }

// fromRealtime converts a CLOCK_REALTIME reading (a kernel timestamp) to
// true time.
func (b timebase) fromRealtime(ns int64) int64 { return ns - b.epoch }

// rawNow returns true time as measured on CLOCK_MONOTONIC_RAW, which NTP
// never slews.
func (b timebase) rawNow() int64 { return monoRaw() - b.raw0 + b.rawAt }

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
