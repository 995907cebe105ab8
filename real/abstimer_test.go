package real_test

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/world"
)

// TestAfterFuncAt: a periodic task armed at due times on a drifting,
// offset host clock (world.AbsoluteTimers) fires at them: its ticks read
// the host clock no earlier than due, and no later than the world's own
// lateness (TimerLateness) says; the number of ticks matches the elapsed
// host time, lateness not adding up.
func TestAfterFuncAt(t *testing.T) {
	a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
	cfg := real.Config{Seed: 1, LogLevel: 8, Nodes: []real.NodeConfig{
		{Addr: netip.AddrFrom4([4]byte{127, a, b, 1}), Clock: clockmodel.Params{Offset: 10 * time.Millisecond, PPM: 50}},
	}}
	w, err := real.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const step, ticks = 500 * time.Microsecond, 400
	var early, lates []int64
	done := make(chan struct{})
	_ = w.Start(func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			at, ok := env.(world.AbsoluteTimers)
			if !ok {
				t.Error("the real backend's Env does not implement world.AbsoluteTimers")
				close(done)
				return nil
			}
			due := int64(env.Host().Now())
			n := 0
			var tick func()
			tick = func() {
				now := int64(env.Host().Now())
				if now < due {
					early = append(early, due-now)
				}
				lates = append(lates, now-due)
				if n++; n == ticks {
					close(done)
					return
				}
				due += int64(step)
				at.AfterFuncAt(world.Time(due), tick)
			}
			due += int64(step)
			at.AfterFuncAt(world.Time(due), tick)
			return nil
		})
	})
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ticks did not finish in 20s")
	}
	w.Stop()
	// Each tick is late by what its own timer was, never by the sum of
	// those before it: the last one no later than the latest timer plus
	// the loop's turn. (A timer armed from the late callback, d after it,
	// would be late by the sum.)
	last := lates[len(lates)-1]
	lt := w.TimerLateness()
	if time.Duration(last) > lt.Max+time.Millisecond {
		t.Errorf("the last tick was %v late, more than the latest timer (%v): lateness adds up", time.Duration(last), lt.Max)
	}
	if len(early) > 0 {
		t.Errorf("%d ticks fired before their due time, by up to %d ns", len(early), slices.Max(early))
	}
	slices.Sort(lates)
	t.Logf("%d ticks: host-clock lateness p50 %v p99 %v; TimerLateness %+v", len(lates), time.Duration(lates[len(lates)/2]), time.Duration(lates[len(lates)*99/100]), lt)
}
