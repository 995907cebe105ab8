package graphcalc_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// TestValidation feeds bad inputs and options and wants ErrBadInput (or
// ErrNoEdges), no summary, and a message naming the round, the edge and
// the node at fault.
func TestValidation(t *testing.T) {
	good := func() graphcalc.Input {
		return graphcalc.Input{
			Round: 7, Reference: 0, Nodes: []int{0, 1, 2},
			Edges: []graphcalc.Edge{
				{Src: 0, Dst: 1, Sigma: 1, AlphaSigma: 1e-9},
				{Src: 1, Dst: 2, Sigma: 1, AlphaSigma: 1e-9},
			},
		}
	}
	edge := func(k int, f func(*graphcalc.Edge)) func(*graphcalc.Input) {
		return func(in *graphcalc.Input) { f(&in.Edges[k]) }
	}
	for _, tc := range []struct {
		name   string
		mutate func(*graphcalc.Input)
		opt    graphcalc.Options
		is     error
		want   string
	}{
		{"reference-missing", func(in *graphcalc.Input) { in.Reference = 9 }, graphcalc.Options{}, graphcalc.ErrBadInput,
			"reference 9 is not among the 3 nodes"},
		{"duplicate-node", func(in *graphcalc.Input) { in.Nodes = []int{2, 0, 1, 2} }, graphcalc.Options{}, graphcalc.ErrBadInput,
			"node 2 is listed twice"},
		{"unknown-src", edge(1, func(e *graphcalc.Edge) { e.Src = 7 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (7->2): node 7 is not among the round's nodes"},
		{"unknown-dst", edge(1, func(e *graphcalc.Edge) { e.Dst = -3 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (1->-3): node -3 is not among the round's nodes"},
		{"self-loop", edge(0, func(e *graphcalc.Edge) { e.Dst = 0 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 0 (0->0): src and dst are both node 0"},
		{"alpha-nan", edge(1, func(e *graphcalc.Edge) { e.Alpha = math.NaN() }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (1->2): Alpha is NaN, want finite and within [-0.1, 0.1]"},
		{"alpha-minus-one", edge(0, func(e *graphcalc.Edge) { e.Alpha = -1 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 0 (0->1): Alpha is -1, want finite and within [-0.1, 0.1]"},
		{"beta-inf", edge(0, func(e *graphcalc.Edge) { e.Beta = math.Inf(1) }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 0 (0->1): Beta is +Inf, want finite and within [-1e+18, 1e+18]"},
		{"sigma-zero", edge(1, func(e *graphcalc.Edge) { e.Sigma = 0 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (1->2): Sigma is 0, want finite and within [0.001, 3.6e+12]"},
		{"sigma-negative", edge(1, func(e *graphcalc.Edge) { e.Sigma = -2 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (1->2): Sigma is -2, want finite and within [0.001, 3.6e+12]"},
		{"sigma-nan", edge(0, func(e *graphcalc.Edge) { e.Sigma = math.NaN() }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 0 (0->1): Sigma is NaN, want finite and within [0.001, 3.6e+12]"},
		{"alphasigma-zero", edge(0, func(e *graphcalc.Edge) { e.AlphaSigma = 0 }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 0 (0->1): AlphaSigma is 0, want finite and within [1e-15, 1]"},
		{"alphasigma-inf", edge(1, func(e *graphcalc.Edge) { e.AlphaSigma = math.Inf(1) }), graphcalc.Options{}, graphcalc.ErrBadInput,
			"edge 1 (1->2): AlphaSigma is +Inf, want finite and within [1e-15, 1]"},
		{"no-edges", func(in *graphcalc.Input) { in.Edges = nil }, graphcalc.Options{}, graphcalc.ErrNoEdges,
			"graphcalc: round 7: 3 nodes: no edges"},
		{"option-p", nil, graphcalc.Options{ConsistencyP: 1}, graphcalc.ErrBadInput,
			"option ConsistencyP is 1, want in [0, 1)"},
		{"option-p-nan", nil, graphcalc.Options{ConsistencyP: math.NaN()}, graphcalc.ErrBadInput,
			"option ConsistencyP is NaN, want in [0, 1)"},
		{"option-ratio", nil, graphcalc.Options{RejectMargin: math.Inf(1)}, graphcalc.ErrBadInput,
			"option RejectMargin is +Inf, want finite ≥ 0"},
		{"option-candidates", nil, graphcalc.Options{Candidates: -1}, graphcalc.ErrBadInput,
			"option Candidates is -1, want ≥ 0"},
		{"option-exact-limit", nil, graphcalc.Options{ExactCovarianceLimit: -1}, graphcalc.ErrBadInput,
			"option ExactCovarianceLimit is -1, want ≥ 0"},
		{"option-sketch", nil, graphcalc.Options{SketchDim: -32}, graphcalc.ErrBadInput,
			"option SketchDim is -32, want ≥ 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := good()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			s, err := graphcalc.Solve(in, tc.opt)
			if !errors.Is(err, tc.is) || s != nil {
				t.Fatalf("got %v (summary %v), want %v", err, s != nil, tc.is)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "graphcalc: round 7: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	if _, err := graphcalc.Solve(good(), graphcalc.Options{}); err != nil {
		t.Errorf("the good input fails: %v", err)
	}
}
