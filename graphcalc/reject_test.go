package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// TestRejectCorrupted corrupts one edge's Beta by 50 µs in noisy rounds
// (Sigma 10 ns) and wants that edge, and only it, rejected, the other
// residuals within 5σ and every node within 5σ of the truth. On the
// ring, where each link is measured both ways, the honest reverse
// direction carries nearly as much residual as the corrupted one
// (n−1 : n+1), and on the random graph a nearby edge gets 1.8 µs: both
// fall back once the corrupted edge is downdated away, before they are
// judged.
func TestRejectCorrupted(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    graph
		bad  int
	}{
		{"mesh8", mesh(8), 9},
		{"ring32", ring(32), 0},
		{"ring32-late", ring(32), 41},
		{"regular64x4", randomRegular(t, 64, 4, 51), 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClocks(tc.g.n, rand.New(rand.NewPCG(52, 53)))
			in := build(c, tc.g, 0, true, flat, rand.New(rand.NewPCG(54, 55)))
			in.Edges[tc.bad].Beta += 50_000
			s, err := graphcalc.Solve(in, graphcalc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Rejected != 1 || !s.Edges[tc.bad].Rejected || s.Passes != 2 {
				t.Fatalf("rejected %d (edge %d: %v), passes %d; want only edge %d, 2 passes",
					s.Rejected, tc.bad, s.Edges[tc.bad].Rejected, s.Passes, tc.bad)
			}
			if r := s.Edges[tc.bad].Residual; math.Abs(r-50_000) > 100 {
				t.Errorf("rejected edge's residual %.1f ns, want ≈ 50 µs", r)
			}
			for k, e := range s.Edges {
				if k != tc.bad && math.Abs(e.Normalized) > 5 {
					t.Errorf("edge %d: residual %.1f ns (%.1fσ)", k, e.Residual, e.Normalized)
				}
			}
			for _, m := range s.Nodes {
				if u, _ := c.truth(m.Node, 0); math.Abs(m.U-u) > 5*m.Sigma+1e-9 {
					t.Errorf("node %d: U off by %.1f ns, σ %.1f", m.Node, m.U-u, m.Sigma)
				}
			}
			t.Logf("RMS %.2f ns, max %.2f ns over kept edges", s.RMSResidual, s.MaxResidual)
		})
	}
}

// TestRejectPendant corrupts one direction of the only link of node 8 to
// a mesh. Least squares splits the disagreement between the two
// directions in proportion to their variances, and removing either
// closes it alike: nothing can tell which is wrong. Neither is rejected
// (both together would cut node 8 off); the fit says it is inconsistent
// and ambiguous, names the link, and node 8's Sigma covers either being
// wrong, so its error stays within it.
func TestRejectPendant(t *testing.T) {
	for _, tc := range []struct {
		name            string
		sigGood, sigBad float64
	}{
		{"corrupted-is-less-precise", 5, 20},
		{"corrupted-is-more-precise", 20, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mesh(8)
			g.n = 9
			c := newClocks(g.n, rand.New(rand.NewPCG(56, 57)))
			in := build(c, g, 0, true, flat, nil)
			good, bad := c.edge(0, 8, tc.sigGood, 1e-9), c.edge(8, 0, tc.sigBad, 1e-9)
			bad.Beta += 50_000
			in.Edges = append(in.Edges, good, bad)
			s, err := graphcalc.Solve(in, graphcalc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			con := s.Consistency
			if s.Rejected != 0 || con.Consistent || !con.Ambiguous {
				t.Fatalf("rejected %d, consistent %v, ambiguous %v; want 0, false, true", s.Rejected, con.Consistent, con.Ambiguous)
			}
			if len(con.Suspects) == 0 || con.Suspects[0].A != 0 || con.Suspects[0].B != 8 {
				t.Errorf("suspects %v, want link 0-8 first", con.Suspects)
			}
			if len(con.Loops) == 0 || !slices.Equal(con.Loops[0].Nodes[:2], []int{0, 8}) && !slices.Equal(con.Loops[0].Nodes[:2], []int{8, 0}) {
				t.Errorf("loops %v, want the 0-8-0 loop first", con.Loops)
			}
			m, ok := s.Model(8)
			if !ok || len(s.Components) != 1 {
				t.Fatalf("node 8 solved %v, %d components", ok, len(s.Components))
			}
			u, _ := c.truth(8, 0)
			if e := math.Abs(m.U - u); e > 3*m.Sigma || m.Sigma > 3*50_000 {
				t.Errorf("node 8: |U − truth| = %.1f ns against σ %.1f ns", e, m.Sigma)
			}
			t.Logf("node 8: error %.1f ns, σ %.1f ns (fit σ %.1f); %s", m.U-u, m.Sigma, m.FitSigma, con.Warning())
		})
	}
}
