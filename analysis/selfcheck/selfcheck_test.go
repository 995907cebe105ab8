package selfcheck

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestFails: a count fails when its predictions beyond 3σ are more than
// 1 % of them and improbable for honest σ (0.27 % beyond 3σ) at 1e-3, or
// when one is beyond 10σ.
func TestFails(t *testing.T) {
	for _, tc := range []struct {
		n, beyond int
		want      bool
		worst     float64
	}{
		{0, 0, false, 0},
		{100, 3, false, 0}, // 3 %, but p = 0.0026
		{10, 0, false, 0},
		{10, 1, false, 0}, // 10 %, but one of ten is chance (p = 0.027)
		{10, 2, true, 0},  // p = 3.2e-4
		{126, 1, false, 0},
		{126, 3, false, 0}, // p = 0.005
		{126, 4, true, 0},  // 3.2 %, p = 5e-4
		{1000, 10, false, 0},
		{1000, 11, true, 0}, // 1.1 %, p ≈ 3e-4
		{1000, 8, false, 0},
		{100000, 999, false, 0},
		{100000, 1001, true, 0},
		{1, 1, false, 9.5}, // one of one at 9.5σ: a heavy tail's chance
		{1, 1, true, 12},   // no chance
		{1000, 1, true, 392267},
	} {
		c := Count{Predictions: tc.n, Within3Sigma: tc.n - tc.beyond, MaxSigma: tc.worst}
		if got := c.Fails(); got != tc.want {
			t.Errorf("%d of %d beyond 3σ, worst %.1fσ: Fails() = %v, want %v", tc.beyond, tc.n, tc.worst, got, tc.want)
		}
	}
}

// TestSummarize adds node-rounds up from a round on (the run's figures
// half their sums, each prediction counting for two nodes) and names the
// nodes that fail, worst first.
func TestSummarize(t *testing.T) {
	rec := func(round uint64, node, n, within int, worst float64) offsets.Offset {
		return offsets.Offset{RoundID: round, NodeID: node, SelfCheck: &offsets.SelfCheck{Predictions: n, Within3Sigma: within, MaxSigma: worst}}
	}
	offs := []offsets.Offset{
		rec(1, 1, 50, 40, 30), // before from: not counted
		rec(2, 0, 50, 50, 1.5),
		rec(2, 1, 50, 50, 2),
		rec(2, 2, 50, 45, 9),
		rec(3, 0, 50, 50, 2.5),
		rec(3, 1, 50, 45, 4),
		{RoundID: 3, NodeID: 2}, // no prediction
	}
	s := Summarize(offs, 2)
	if s.Predictions != 125 || s.Within3Sigma != 120 || s.MaxSigma != 9 {
		t.Errorf("overall %+v; want 120 of 125, worst 9", s.Count)
	}
	var got []string
	for _, n := range s.Nodes {
		got = append(got, fmt.Sprintf("%d:%d/%d", n.Node, n.Within3Sigma, n.Predictions))
	}
	if want := []string{"0:100/100", "1:95/100", "2:45/50"}; !slices.Equal(got, want) {
		t.Errorf("nodes %v; want %v", got, want)
	}
	if !slices.Equal(s.Failing, []int{2, 1}) || !s.Fails() {
		t.Errorf("failing %v (fails %v); want [2 1], the worst share first", s.Failing, s.Fails())
	}
	if honest := Summarize(offs[1:2], 0); honest.Fails() || len(honest.Failing) != 0 {
		t.Errorf("an honest run fails: %+v", honest)
	}
}
