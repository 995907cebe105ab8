package groundtruth

import (
	"slices"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestEvaluateNoTruth: a cluster's master has truth for its own node, the
// reference, alone; the other nodes' models are unmeasured, which Evaluate
// says (NoTruth, no error points), rather than a table of zeros. With the
// other ranks' truth merged in, node 1 is measured.
func TestEvaluateNoTruth(t *testing.T) {
	var offs []offsets.Offset
	for r := uint64(1); r <= 3; r++ {
		for n := range 3 {
			offs = append(offs, offsets.Offset{Type: "offset", RoundID: r, NodeID: n, WindowEndNS: 1000, OffsetNS: float64(10 * n)})
		}
	}
	win := func(r uint64, n int) Window {
		return Window{Round: r, Node: n, Points: []Point{{Local: 0, Ref: 0}, {Local: 1000, Ref: 1000}}}
	}
	master := []Window{win(1, 0), win(2, 0), win(3, 0)}
	acc := Evaluate(offs, master, 0, 2)
	if acc.OffsetError.N != 0 || !slices.Equal(acc.NoTruth, []int{1, 2}) {
		t.Errorf("master's truth alone: %d error points, no truth for %v; want 0 and [1 2]", acc.OffsetError.N, acc.NoTruth)
	}
	merged := append(master, win(2, 1), win(3, 1))
	acc = Evaluate(offs, merged, 0, 2)
	if acc.OffsetError.N != 4 || acc.OffsetError.Max != 10 || !slices.Equal(acc.NoTruth, []int{2}) {
		t.Errorf("with node 1's truth: %d points, max %v ns, no truth for %v; want 4, 10, [2]", acc.OffsetError.N, acc.OffsetError.Max, acc.NoTruth)
	}
}
