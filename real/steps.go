package real

import (
	"math"

	"github.com/chronosync/chronosync/world"
)

// HostSteps returns how many steps node i's injected host clock has taken
// by true time t and their sum in ns.
func (w *World) HostSteps(i world.NodeID, t int64) (int, int64) {
	c := w.nodes[i].clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model.StepsAt(t)
}

// TracerTrueTime returns the true time at which node i's tracer clock read
// r: the injected tracer model inverted by Newton steps on
// CLOCK_MONOTONIC_RAW's time line, carried over to true time
// (CLOCK_REALTIME's) by the drift measured between the two since the
// world was built (timebase.fromRaw). The ground truth of a traced event is thus its own
// tracer reading, not a second clock read taken a moment later (which a
// preemption can make milliseconds late). ok is false where the tracer is
// not the model (Config's TracerClock, ROCm's), whose relation to true
// time is unknown.
func (w *World) TracerTrueTime(i world.NodeID, r int64) (t int64, ok bool) {
	c := w.nodes[i].clock
	if c.custom != nil {
		return 0, false
	}
	raw := c.base.rawNow()
	c.mu.Lock()
	t = raw
	for range 8 {
		d := r - c.tracer.Ideal(t)
		if d == 0 {
			break
		}
		t += int64(math.Round(float64(d) / c.tracer.Rate(t)))
	}
	c.mu.Unlock()
	return c.base.fromRaw(t), true
}
