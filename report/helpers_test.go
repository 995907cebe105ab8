package report

import (
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/chronosync/chronosync/analysis/validate"
)

func toXYs(xy []struct{ X, Y float64 }) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i, p := range xy {
		out[i] = plotter.XY{X: p.X, Y: p.Y}
	}
	return out
}

// TestSpreads: the k-th invocation of a key on each node is one
// invocation; its spread is the latest start minus the earliest; a key on
// one node only has none.
func TestSpreads(t *testing.T) {
	nodes := []validate.Node{
		{ID: 0, Ops: []validate.Op{{Key: "ar", StartNs: 100}, {Key: "ar", StartNs: 1000}, {Key: "solo", StartNs: 5}}},
		{ID: 1, Ops: []validate.Op{{Key: "ar", StartNs: 1030}, {Key: "ar", StartNs: 130}}},
		{ID: 2, Ops: []validate.Op{{Key: "ar", StartNs: 90}}},
	}
	got := spreads(nodes)
	if len(got) != 1 {
		t.Fatalf("keys %v, want ar only", got)
	}
	want := []float64{40, 30} // (130-90), (1030-1000)
	if len(got["ar"]) != 2 || got["ar"][0] != want[0] || got["ar"][1] != want[1] {
		t.Errorf("spreads %v, want %v", got["ar"], want)
	}
	if m := lowerMedian([]float64{5, 1, 3, 2}); m != 2 {
		t.Errorf("lowerMedian %g, want 2 (the lower middle)", m)
	}
}
