package graphcalc

import (
	"errors"
	"math"
	"testing"
)

// TestCheckFinite: the last guard of Solve names the first NaN or
// infinity of a summary, wrapping ErrNotFinite, and passes a finite one.
func TestCheckFinite(t *testing.T) {
	good := func() *RoundSummary {
		return &RoundSummary{
			Nodes: []Model{{Node: 0, Rate: 1}, {Node: 2, U: 1000, Rate: 1, Sigma: 1, FitSigma: 1, RateSigma: 1e-9}},
			Edges: []EdgeResult{{Src: 0, Dst: 2, Residual: 0.5, Normalized: 0.25}},
		}
	}
	for _, tc := range []struct {
		name  string
		spoil func(s *RoundSummary)
		want  string
	}{
		{"finite", func(*RoundSummary) {}, ""},
		{"u-nan", func(s *RoundSummary) { s.Nodes[1].U = math.NaN() }, "node 2: U is NaN: solution not finite"},
		{"rate-nan", func(s *RoundSummary) { s.Nodes[1].Rate = math.NaN() }, "node 2: Rate is NaN: solution not finite"},
		{"sigma-inf", func(s *RoundSummary) { s.Nodes[0].Sigma = math.Inf(1) }, "node 0: Sigma is +Inf: solution not finite"},
		{"rate-sigma-nan", func(s *RoundSummary) { s.Nodes[1].RateSigma = math.NaN() }, "node 2: RateSigma is NaN: solution not finite"},
		{"residual-nan", func(s *RoundSummary) { s.Edges[0].Normalized = math.NaN() }, "edge 0 (0->2): residual 0.5 (NaN σ): solution not finite"},
		{"max-residual-inf", func(s *RoundSummary) { s.MaxResidual = math.Inf(1) }, "MaxResidual is +Inf: solution not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.spoil(s)
			err := checkFinite(s)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotFinite) || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
