package groundtruth

import (
	"math"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestCalibrate: node 1's model is off by a known amount in each round,
// against a stated σ; the points within 1, 2 and 3σ, the worst point, the
// unsolved window and the verdict follow.
func TestCalibrate(t *testing.T) {
	rec := func(round uint64, node int, off, unc float64) offsets.Offset {
		return offsets.Offset{Type: "offset", RoundID: round, NodeID: node, WindowStartNS: 0, WindowEndNS: 1000, OffsetNS: off, UncertaintyNS: unc}
	}
	// The truth: node 1's clock reads the reference's, so a model offset
	// of x is an error of −x.
	window := func(round uint64) Window {
		return Window{Round: round, Node: 1, Points: []Point{{Local: 0, Ref: 0}, {Local: 500, Ref: 500}, {Local: 1000, Ref: 1000}}}
	}
	var offs []offsets.Offset
	var truth []Window
	for r, e := range []float64{0.5, 1.5, 2.5, 3.5, 10} { // errors in σ of 10 ns
		round := uint64(r + 1)
		offs = append(offs, rec(round, 0, 0, 0), rec(round, 1, 10*e, 10))
		truth = append(truth, window(round))
	}
	truth = append(truth, window(6)) // no model: unsolved
	truth = append(truth, Window{Round: 1, Node: 0, Points: []Point{{}}})
	c := Calibrate(offs, truth, 0, 2)
	if c.Points != 12 || c.Unsolved != 1 {
		t.Fatalf("points %d, unsolved %d; want 12 (rounds 2-5), 1", c.Points, c.Unsolved)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"within 1σ", c.Within1, 0},
		{"within 2σ", c.Within2, 0.25},
		{"within 3σ", c.Within3, 0.5},
		{"max σ", c.Sigmas.Max, 10},
		{"RMS σ", c.RMSSigmas, math.Sqrt((1.5*1.5 + 2.5*2.5 + 3.5*3.5 + 100) / 4)},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if len(c.Worst) != WorstPoints || c.Worst[0].Round != 5 || c.Worst[0].ErrorNS != -100 || c.Worst[0].SigmaNS != 10 {
		t.Errorf("worst %+v; want round 5's -100 ns at 10 ns first", c.Worst)
	}
	if c.Calibrated() {
		t.Error("calibrated with half the points beyond 3σ")
	}
	if good := Calibrate(offs[:6], truth[:3], 0, 1); !good.Calibrated() || good.Points != 9 {
		t.Errorf("rounds 1-3: %d points, %.2f within 3σ; want 9, calibrated", good.Points, good.Within3)
	}
}
