package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// asymmetric makes link (a, b) of a round built with both directions look
// as a path asymmetry makes it: both directions see dst − src off by the
// same bias in the sense a→b (an extra one-way delay d gives bias d/2).
func asymmetric(in *graphcalc.Input, a, b int, bias float64) {
	for k, e := range in.Edges {
		switch {
		case e.Src == a && e.Dst == b:
			in.Edges[k].Beta += bias
		case e.Src == b && e.Dst == a:
			in.Edges[k].Beta -= bias
		}
	}
}

// TestAsymmetricLink gives one link of rings and meshes of 4, 6 and 8
// nodes a 5 µs asymmetry bias (10 µs of extra one-way delay) over edges of
// 10 ns. A ring's single loop cannot say which link is wrong: the fit must
// say it is inconsistent, name the loop, and cover every node's error with
// its Sigma. A mesh's many loops single the link out: it is rejected and
// the rest is consistent and accurate. Over 20 noise draws at most 1% of
// the node errors (or one) lie beyond 3σ of what they report, and none
// beyond 4.5σ.
func TestAsymmetricLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		g        graph
		a, b     int
		rejected bool
	}{
		{"ring4", ring(4), 1, 2, false},
		{"ring6", ring(6), 2, 3, false},
		{"ring8", ring(8), 3, 4, false},
		{"mesh4", mesh(4), 1, 2, true},
		{"mesh6", mesh(6), 2, 3, true},
		{"mesh8", mesh(8), 2, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			worst, points, beyond := 0.0, 0, 0
			for seed := uint64(0); seed < 20; seed++ {
				c := newClocks(tc.g.n, rand.New(rand.NewPCG(70, seed)))
				in := build(c, tc.g, 0, true, flat, rand.New(rand.NewPCG(71, seed)))
				asymmetric(&in, tc.a, tc.b, 5000)
				s, err := graphcalc.Solve(in, graphcalc.Options{})
				if err != nil {
					t.Fatal(err)
				}
				con := s.Consistency
				if tc.rejected {
					if s.Rejected != 2 || !con.Consistent {
						t.Fatalf("seed %d: rejected %d edges, consistent %v; want the link's 2 rejected and the rest consistent: %s",
							seed, s.Rejected, con.Consistent, con.Warning())
					}
					for k, e := range s.Edges {
						if bad := e.Src == tc.a && e.Dst == tc.b || e.Src == tc.b && e.Dst == tc.a; e.Rejected != bad {
							t.Errorf("seed %d: edge %d (%d->%d) rejected %v", seed, k, e.Src, e.Dst, e.Rejected)
						}
					}
				} else {
					if s.Rejected != 0 || con.Consistent || !con.Ambiguous || len(con.Loops) == 0 || len(con.Loops[0].Nodes) != tc.g.n+1 {
						t.Fatalf("seed %d: rejected %d, consistent %v, ambiguous %v, loops %v; want the ring's loop named, nothing rejected",
							seed, s.Rejected, con.Consistent, con.Ambiguous, con.Loops)
					}
					if w := con.Warning(); !strings.Contains(w, "inconsistent loops") || !strings.Contains(w, "cannot tell") {
						t.Errorf("warning %q", w)
					}
					if l := con.Loops[0]; math.Abs(math.Abs(l.ClosureNS)-5000) > 100 {
						t.Errorf("loop closes at %.1f ns, want ±5 µs (the bias)", l.ClosureNS)
					}
				}
				for _, m := range s.Nodes {
					u, _ := c.truth(m.Node, 0)
					if m.Node == 0 {
						continue
					}
					z := math.Abs(m.U-u) / m.Sigma
					worst = max(worst, z)
					points++
					if z > 3 {
						beyond++
					}
					if z > 4.5 {
						t.Errorf("seed %d node %d: error %.1f ns is %.2fσ (σ %.1f ns, fit σ %.1f)", seed, m.Node, m.U-u, z, m.Sigma, m.FitSigma)
					}
					if tc.rejected && m.Sigma > 3*m.FitSigma {
						t.Errorf("seed %d node %d: σ %.1f ns inflated from %.1f in a consistent fit", seed, m.Node, m.Sigma, m.FitSigma)
					}
				}
			}
			if beyond > max(1, points/100) {
				t.Errorf("%d of %d node errors beyond 3σ", beyond, points)
			}
			t.Logf("worst node error %.2fσ; %d of %d beyond 3σ", worst, beyond, points)
		})
	}
}

// TestConsistentRound: a round with honest Sigmas is consistent in about
// 999 of 1000 draws, nothing is rejected, and its Sigmas are inflated by
// at most the Birge ratio (never for a χ² below its degrees of freedom).
func TestConsistentRound(t *testing.T) {
	inconsistent := 0
	const draws = 300
	for seed := uint64(0); seed < draws; seed++ {
		g := mesh(6)
		if seed%2 == 1 {
			g = ring(8)
		}
		c := newClocks(g.n, rand.New(rand.NewPCG(80, seed)))
		in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(81, seed)))
		s, err := graphcalc.Solve(in, graphcalc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		con := s.Consistency
		if !con.Consistent {
			inconsistent++
		}
		if s.Rejected != 0 {
			t.Errorf("seed %d: rejected %d edges of an honest round", seed, s.Rejected)
		}
		if want := max(1, con.Birge); math.Abs(con.Scale-want) > 1e-12 {
			t.Errorf("seed %d: scale %.3f, want max(1, Birge %.3f)", seed, con.Scale, con.Birge)
		}
		for _, m := range s.Nodes {
			if m.Node != 0 && math.Abs(m.Sigma-m.FitSigma*con.Scale) > 1e-9*m.Sigma {
				t.Errorf("seed %d node %d: σ %.3f, fit σ %.3f × scale %.3f", seed, m.Node, m.Sigma, m.FitSigma, con.Scale)
			}
		}
	}
	if inconsistent > 3 {
		t.Errorf("%d of %d honest rounds called inconsistent, want about %d", inconsistent, draws, draws/1000)
	}
}

// TestSystematicBias gives every link i→j (i < j) of an 8-node mesh the
// same 500 ns bias, a pattern consistent around every loop: the χ² cannot
// see all of it, and node 7's error reaches about 1.75 times the bias. With the
// edges' SysSigma saying so, every node's Sigma covers its error; with
// SysSigma 0 the same round, inflated only by its Birge ratio, leaves
// errors beyond 3σ.
func TestSystematicBias(t *testing.T) {
	c := newClocks(8, rand.New(rand.NewPCG(90, 1)))
	base := build(c, mesh(8), 0, true, flat, rand.New(rand.NewPCG(91, 1)))
	for _, sys := range []float64{500, 0} {
		in := base
		in.Edges = append([]graphcalc.Edge(nil), base.Edges...)
		for k, e := range in.Edges {
			if e.Src < e.Dst {
				in.Edges[k].Beta += 500
			} else {
				in.Edges[k].Beta -= 500
			}
			in.Edges[k].SysSigma = sys
			in.Edges[k].Sigma = math.Hypot(e.Sigma, sys)
		}
		s, err := graphcalc.Solve(in, graphcalc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, m := range s.Nodes {
			if m.Node == 0 {
				continue
			}
			u, _ := c.truth(m.Node, 0)
			worst = max(worst, math.Abs(m.U-u)/m.Sigma)
		}
		t.Logf("SysSigma %v: worst node error %.2fσ, consistent %v", sys, worst, s.Consistency.Consistent)
		if sys > 0 && worst > 3 {
			t.Errorf("with SysSigma %v: worst node error %.2fσ, want ≤ 3", sys, worst)
		}
		if sys == 0 && worst < 3 {
			t.Errorf("without SysSigma: worst node error %.2fσ; the test no longer shows the problem", worst)
		}
	}
}
