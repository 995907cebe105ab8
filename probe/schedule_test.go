package probe

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// handNode is a node of the shared hand-driven net (an alias, so that
// embedding it keeps its Node method).
type handNode = worldtest.Node

// atEnv is a worldtest.Node whose timers may fire late (world.AbsoluteTimers): it
// records the host times the prober arms its ticks at.
type atEnv struct {
	*handNode
	armedAt []int64
}

func (e *atEnv) AfterFuncAt(at world.Time, f func()) world.Timer {
	e.armedAt = append(e.armedAt, int64(at))
	return e.AfterFunc(0, f)
}

// TestScheduleAbsolute: where timers may fire late, each tick is armed a
// step after the previous one was due, not after it ran, so lateness does
// not thin the cadence; a tick more than a step behind gives up the slots
// it missed (Stats.PairsMissed) instead of sending them in a burst. A
// world without AbsoluteTimers (the simulator's) arms relative timers as
// before.
func TestScheduleAbsolute(t *testing.T) {
	const step = int64(time.Millisecond) // one peer, cadence 1 ms
	for _, tc := range []struct {
		name   string
		late   []int64 // how late each tick runs after it was due, ns
		armed  []int64 // the host times, after the window's start, of the ticks armed
		missed int
	}{
		{"on time", []int64{0, 0, 0}, []int64{1, 2, 3}, 0},
		{"late ticks keep the schedule", []int64{0, 300_000, 900_000}, []int64{1, 2, 3}, 0},
		{"a step behind is caught up", []int64{0, 1_000_000}, []int64{1, 2}, 0},
		{"more than a step behind skips", []int64{0, 3_500_000}, []int64{1, 4}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNet(t)
			e := &atEnv{handNode: n.Node(0)}
			p, err := New(e, e.PeerIDs, time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			start := p.Open(1, 1)
			due := start
			for i, late := range tc.late {
				n.Clock = due - e.Offset + late
				n.fire(0)
				if i < len(e.armedAt) {
					due = e.armedAt[i]
				}
			}
			var got []int64
			for _, at := range e.armedAt {
				got = append(got, (at-start)/step)
			}
			if len(got) != len(tc.armed) {
				t.Fatalf("armed at steps %v, want %v", got, tc.armed)
			}
			for i := range got {
				if got[i] != tc.armed[i] || (e.armedAt[i]-start)%step != 0 {
					t.Fatalf("armed at %v ns after the start, want steps %v", e.armedAt, tc.armed)
				}
			}
			if p.Stats().PairsMissed != tc.missed {
				t.Errorf("PairsMissed %d, want %d", p.Stats().PairsMissed, tc.missed)
			}
		})
	}
}
