package syncrun

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/scenario"
)

// TestExplain: a node-round without a model is explained only by a fault
// active around its round that can keep that node out.
func TestExplain(t *testing.T) {
	n := func(v int) *int { return &v }
	d := func(v time.Duration) *time.Duration { return &v }
	crash5 := scenario.Fault{At: 10 * time.Second, Kind: scenario.FaultCrash, Node: n(5), RestartAfter: d(2 * time.Second)}
	part := scenario.Fault{At: 20 * time.Second, Kind: scenario.FaultPartition, Groups: [][]int{{0, 1, 2}, {3, 4, 5}}, HealAfter: d(3 * time.Second)}
	isolateRef := scenario.Fault{At: 20 * time.Second, Kind: scenario.FaultPartition, Groups: [][]int{{0}, {1, 2, 3, 4, 5}}, HealAfter: d(3 * time.Second)}
	flap := scenario.Fault{At: 30 * time.Second, Kind: scenario.FaultLinkFlap, Between: []int{2, 3}, Down: time.Second, Up: time.Second, Count: 2}
	crash0 := scenario.Fault{At: 40 * time.Second, Kind: scenario.FaultCrash, Node: n(0)}
	step := scenario.Fault{At: 9 * time.Second, Kind: scenario.FaultClockStep, Node: n(5), By: time.Millisecond}
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	tests := []struct {
		name      string
		faults    []scenario.Fault
		nodes     []int
		cut       []int
		from, til float64 // s
		want      string
	}{
		{"the crashed node", []scenario.Fault{crash5}, []int{5}, nil, 9, 13, "crash of node 5 at 10s"},
		{"not another node", []scenario.Fault{crash5}, []int{4}, nil, 9, 13, ""},
		{"not before the crash", []scenario.Fault{crash5}, []int{5}, nil, 5, 9.5, ""},
		{"not after the restart", []scenario.Fault{crash5}, []int{5}, nil, 12.5, 16, ""},
		{"a clock step explains nothing", []scenario.Fault{step}, []int{5}, nil, 8, 12, ""},
		{"the far side of a partition", []scenario.Fault{part}, []int{3, 4, 5}, nil, 19, 24, "partition at 20s"},
		{"not the master's side", []scenario.Fault{part}, []int{1}, nil, 19, 24, ""},
		{"a cut-off reference: the whole round", []scenario.Fault{isolateRef}, []int{0, 1, 2, 3, 4, 5}, nil, 19, 24, "partition at 20s"},
		{"a flap's ends and what it cuts off", []scenario.Fault{flap}, []int{3, 4}, []int{4}, 29, 33, "link flap 2-3 at 30s"},
		{"a flap does not explain a node it leaves alone", []scenario.Fault{flap}, []int{1}, nil, 29, 33, ""},
		{"the master's crash: everything", []scenario.Fault{crash0}, []int{1, 2}, nil, 45, 50, "crash of node 0 at 40s"},
		{"two faults together", []scenario.Fault{crash5, part}, []int{3, 5}, nil, 9, 24, "crash of node 5 at 10s, partition at 20s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := explain(tc.faults, tc.nodes, tc.cut, 0, 0, s(tc.from), s(tc.til))
			if got != tc.want {
				t.Errorf("explain = %q; want %q", got, tc.want)
			}
		})
	}
}
