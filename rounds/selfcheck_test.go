package rounds

import (
	"math"
	"math/big"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// TestPredictOffset: the prediction of dst's clock less src's is exact
// to well under a nanosecond for clocks on the Unix epoch (1.7e18 ns),
// where a float64 global time keeps only 256 ns, and follows the steps of
// the models it comes from. The reference: big.Float arithmetic of the
// records' model.
func TestPredictOffset(t *testing.T) {
	const epoch = int64(1_764_000_000_000_000_000)
	for _, tc := range []struct {
		name   string
		pi, pj offsets.Offset
	}{
		{"near zero", offsets.Offset{WindowStartNS: 1e9, WindowEndNS: 3e9, OffsetNS: 1234.5, DriftPPM: 12.25},
			offsets.Offset{WindowStartNS: 1e9 + 40e3, WindowEndNS: 3e9 + 40e3, OffsetNS: -40_000_321.75, DriftPPM: -88.5}},
		{"epoch", offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 5_000_123.25, DriftPPM: 150.125},
			offsets.Offset{WindowStartNS: epoch + 7e6, WindowEndNS: epoch + 7e6 + 2e9, OffsetNS: -2_000_456.5, DriftPPM: -199.75}},
		{"a step of dst", offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 300.5, DriftPPM: 1},
			offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 900.25, DriftPPM: -3,
				Steps: []offsets.Step{{AtNS: epoch + 1e9, SizeNS: 40_000.5}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := tc.pi.WindowEndNS + 1e9 // the next window's middle
			got, lj := predictOffset(tc.pi, tc.pj, x)
			// global = L − offset − drift·(L − start) − (1 − drift)·Σ size
			global := func(o offsets.Offset, l int64) *big.Float {
				f := new(big.Float).SetPrec(200)
				d := new(big.Float).SetPrec(200).SetFloat64(o.DriftPPM * 1e-6)
				f.SetInt64(l)
				f.Sub(f, new(big.Float).SetFloat64(o.OffsetNS))
				span := new(big.Float).SetPrec(200).SetInt64(l - o.WindowStartNS)
				f.Sub(f, span.Mul(span, d))
				for _, s := range o.Steps {
					one := new(big.Float).SetPrec(200).SetFloat64(1)
					sz := new(big.Float).SetPrec(200).SetFloat64(s.SizeNS)
					f.Sub(f, sz.Mul(sz, one.Sub(one, d)))
				}
				return f
			}
			gi, gj := global(tc.pi, x), global(tc.pj, lj)
			// dst reads lj when src reads x: the same global time, to
			// within dst's rate over the rounding of lj to whole ns.
			diff, _ := new(big.Float).Sub(gi, gj).Float64()
			if math.Abs(diff) > 0.6 {
				t.Errorf("src at %d and dst at %d are %.3f ns apart in global time; want the same instant", x, lj, diff)
			}
			if want := float64(lj - x); math.Abs(got-want) > 1 {
				t.Errorf("predicted %.3f ns, dst's reading less src's %.0f", got, want)
			}
		})
	}
}

// TestSelfCheckLinks: both directions of a link are one prediction, their
// residuals averaged; a rejected edge and the edges of a node with a step
// recorded are not predicted; every prediction counts for both its nodes.
// Three nodes at offset 0 with σ 30 ns, each edge measured to 40 ns.
func TestSelfCheckLinks(t *testing.T) {
	rec := func(round uint64, node int, steps ...offsets.Step) offsets.Offset {
		return offsets.Offset{RoundID: round, NodeID: node, WindowStartNS: 1e9, WindowEndNS: 2e9, UncertaintyNS: 30, Steps: steps}
	}
	edge := func(src, dst int, beta float64) *syncpb.EdgeAlphaBeta {
		return &syncpb.EdgeAlphaBeta{SrcNodeId: int32(src), DstNodeId: int32(dst), Beta: beta, SigmaNs: 40}
	}
	prev := map[int]offsets.Offset{0: rec(1, 0), 1: rec(1, 1), 2: rec(1, 2)}
	none := func(offsets.Offset, int64) (float64, bool) { return 0, true }
	// σ of one direction: √(30² + 30² + 40²) ≈ 58.3 ns; of a link's mean
	// over both: √(30² + 30² + 40²) too (the measurements' σ added, not
	// in quadrature), so a residual of 200 ns is 3.43σ alone and the mean
	// of +200 and −(−100) is 150 ns, 2.57σ.
	for _, tc := range []struct {
		name     string
		edges    []*syncpb.EdgeAlphaBeta
		cur      []offsets.Offset
		rejected map[[2]int]bool
		want     map[int][2]int // node: predictions, within 3σ
	}{
		{"one direction", []*syncpb.EdgeAlphaBeta{edge(0, 1, 200)}, nil, nil,
			map[int][2]int{0: {1, 0}, 1: {1, 0}}},
		{"both directions averaged", []*syncpb.EdgeAlphaBeta{edge(0, 1, 200), edge(1, 0, -100)}, nil, nil,
			map[int][2]int{0: {1, 1}, 1: {1, 1}}},
		{"opposite signs do not cancel", []*syncpb.EdgeAlphaBeta{edge(0, 1, 200), edge(1, 0, -200), edge(1, 2, 10)}, nil, nil,
			map[int][2]int{0: {1, 0}, 1: {2, 1}, 2: {1, 1}}},
		{"rejected", []*syncpb.EdgeAlphaBeta{edge(0, 1, 200), edge(1, 2, 10)}, nil, map[[2]int]bool{{0, 1}: true},
			map[int][2]int{1: {1, 1}, 2: {1, 1}}},
		{"a step recorded", []*syncpb.EdgeAlphaBeta{edge(0, 1, 200), edge(1, 2, 10)},
			[]offsets.Offset{rec(2, 0, offsets.Step{AtNS: 15e8, SizeNS: 200}), rec(2, 1), rec(2, 2)}, nil,
			map[int][2]int{1: {1, 1}, 2: {1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := tc.cur
			if cur == nil {
				cur = []offsets.Offset{rec(2, 0), rec(2, 1), rec(2, 2)}
			}
			reports := []*syncpb.NodeWindowData{{WindowStartNs: 1e9 + 1e9, WindowEndNs: 2e9 + 1e9, Edges: tc.edges}}
			got := SelfCheck(2, prev, reports, cur, tc.rejected, none)
			if len(got) != len(tc.want) {
				t.Errorf("checks on %d nodes; want %d: %v", len(got), len(tc.want), got)
			}
			for n, w := range tc.want {
				c := got[n]
				if c == nil || c.Predictions != w[0] || c.Within3Sigma != w[1] {
					t.Errorf("node %d: %+v; want %d predictions, %d within 3σ", n, c, w[0], w[1])
				}
			}
		})
	}
}
