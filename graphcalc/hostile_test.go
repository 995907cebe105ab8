package graphcalc_test

import (
	"errors"
	"math"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// TestHostileEdges feeds Solve edges whose values are finite but beyond
// the stated bounds (Edge.Check): each must fail with ErrBadInput naming
// the edge and the field, never give NaN or infinite models. Values at the
// bounds are accepted and solve to finite models.
func TestHostileEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(e *graphcalc.Edge)
		want string // the whole error; "" for a finite solution
	}{
		{"6c-sigma-1e-300", func(e *graphcalc.Edge) { e.Sigma = 1e-300 },
			"graphcalc: round 7: edge 1 (1->2): Sigma is 1e-300, want finite and within [0.001, 3.6e+12]: bad input"},
		{"sigma-below-floor", func(e *graphcalc.Edge) { e.Sigma = 9e-4 },
			"graphcalc: round 7: edge 1 (1->2): Sigma is 0.0009, want finite and within [0.001, 3.6e+12]: bad input"},
		{"sigma-1e300", func(e *graphcalc.Edge) { e.Sigma = 1e300 },
			"graphcalc: round 7: edge 1 (1->2): Sigma is 1e+300, want finite and within [0.001, 3.6e+12]: bad input"},
		{"alpha-sigma-1e-300", func(e *graphcalc.Edge) { e.AlphaSigma = 1e-300 },
			"graphcalc: round 7: edge 1 (1->2): AlphaSigma is 1e-300, want finite and within [1e-15, 1]: bad input"},
		{"alpha-sigma-2", func(e *graphcalc.Edge) { e.AlphaSigma = 2 },
			"graphcalc: round 7: edge 1 (1->2): AlphaSigma is 2, want finite and within [1e-15, 1]: bad input"},
		{"sys-sigma-1e300", func(e *graphcalc.Edge) { e.SysSigma = 1e300 },
			"graphcalc: round 7: edge 1 (1->2): SysSigma is 1e+300, want finite and within [0, 3.6e+12]: bad input"},
		{"alpha-1e300", func(e *graphcalc.Edge) { e.Alpha = 1e300 },
			"graphcalc: round 7: edge 1 (1->2): Alpha is 1e+300, want finite and within [-0.1, 0.1]: bad input"},
		{"alpha-0.5", func(e *graphcalc.Edge) { e.Alpha = 0.5 },
			"graphcalc: round 7: edge 1 (1->2): Alpha is 0.5, want finite and within [-0.1, 0.1]: bad input"},
		{"beta-1e300", func(e *graphcalc.Edge) { e.Beta = -1e300 },
			"graphcalc: round 7: edge 1 (1->2): Beta is -1e+300, want finite and within [-1e+18, 1e+18]: bad input"},
		{"at-the-bounds", func(e *graphcalc.Edge) {
			e.Sigma, e.AlphaSigma, e.SysSigma = graphcalc.MinSigma, graphcalc.MinAlphaSigma, 0
		}, ""},
		{"at-the-upper-bounds", func(e *graphcalc.Edge) {
			e.Alpha, e.Beta = graphcalc.MaxAlpha, graphcalc.MaxBeta
			e.Sigma, e.AlphaSigma, e.SysSigma = graphcalc.MaxSigma, graphcalc.MaxAlphaSigma, graphcalc.MaxSigma
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := graphcalc.Input{Round: 7, Reference: 0, Nodes: []int{0, 1, 2}, Edges: []graphcalc.Edge{
				{Src: 0, Dst: 1, Beta: 1000, Sigma: 2, AlphaSigma: 1e-9},
				{Src: 1, Dst: 2, Beta: 500, Sigma: 2, AlphaSigma: 1e-9},
				{Src: 0, Dst: 2, Beta: 1500, Sigma: 2, AlphaSigma: 1e-9},
			}}
			tc.set(&in.Edges[1])
			s, err := graphcalc.Solve(in, graphcalc.Options{})
			if tc.want != "" {
				if s != nil || !errors.Is(err, graphcalc.ErrBadInput) || err.Error() != tc.want {
					t.Fatalf("got %v (summary %v), want %q", err, s != nil, tc.want)
				}
				if cerr := in.Edges[1].Check(); cerr == nil || !errors.Is(cerr, graphcalc.ErrBadInput) {
					t.Errorf("Edge.Check: %v, want ErrBadInput", cerr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range s.Nodes {
				for _, v := range []float64{m.U, m.Rate, m.Sigma, m.FitSigma, m.SysSigma, m.RateSigma} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("node %d: model %+v is not finite", m.Node, m)
					}
				}
			}
		})
	}
}
