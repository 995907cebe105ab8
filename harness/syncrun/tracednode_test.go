package syncrun

import (
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
	"github.com/chronosync/chronosync/workload/training"
	"github.com/chronosync/chronosync/world"
)

// TestTracedNodeNegativeDuration: an event that ends before it starts on
// the tracer clock (one that stepped back) is written with duration 0 and
// counted, instead of panicking the plane builder; the others keep theirs.
func TestTracedNodeNegativeDuration(t *testing.T) {
	ev := func(id uint64, plane training.Plane, start, end world.Time) tracedEvent {
		return tracedEvent{ev: training.Event{ID: id, Plane: plane, Line: 1, Name: "k", StartR: start, EndR: end}}
	}
	for _, tc := range []struct {
		name     string
		events   []tracedEvent
		wantDurs []int64 // ns, by event in the node's order (plane, line, start)
		wantNeg  int
	}{
		{"none", []tracedEvent{ev(1, training.GPUPlane, 100, 150), ev(2, training.GPUPlane, 200, 200)}, []int64{50, 0}, 0},
		{"one back", []tracedEvent{ev(1, training.GPUPlane, 100, 150), ev(2, training.GPUPlane, 200, 120)}, []int64{50, 0}, 1},
		{"both planes", []tracedEvent{ev(1, training.HostPlane, 10, 5), ev(2, training.GPUPlane, 300, 1), ev(3, training.GPUPlane, 400, 450)}, []int64{0, 0, 50}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &tracedNode{p: &tracedProtocol{nodes: make([]*tracedNode, 2)}, id: 1, events: tc.events}
			space, neg := n.space("run", nil)
			if neg != tc.wantNeg {
				t.Errorf("%d negative durations, want %d", neg, tc.wantNeg)
			}
			var durs []int64
			for _, p := range space.Planes {
				for _, l := range p.Lines {
					for _, e := range l.Events {
						if _, ok := xspace.StatByName(p, e.Stats, statEventID); ok {
							durs = append(durs, e.DurationPs/1000)
						}
					}
				}
			}
			if len(durs) != len(tc.wantDurs) {
				t.Fatalf("%d events, want %d", len(durs), len(tc.wantDurs))
			}
			for i := range durs {
				if durs[i] != tc.wantDurs[i] {
					t.Errorf("durations %v ns, want %v", durs, tc.wantDurs)
					break
				}
			}
		})
	}
}
