package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
	"gonum.org/v1/gonum/stat"
)

// TestCovarianceHonest draws Beta and Alpha with Gaussian errors of the
// stated Sigma and AlphaSigma and wants the solution's errors, divided by
// the reported σ, to have a standard deviation near 1.
func TestCovarianceHonest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		g      graph
		trials int
		opt    graphcalc.Options
	}{
		{"regular24x4-exact", randomRegular(t, 24, 4, 21), 200, graphcalc.Options{}},
		{"ring16-exact", ring(16), 200, graphcalc.Options{}},
		{"regular300x6-sketch", randomRegular(t, 300, 6, 22), 16, graphcalc.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClocks(tc.g.n, rand.New(rand.NewPCG(31, 32)))
			var zu, zr []float64
			for trial := 0; trial < tc.trials; trial++ {
				in := build(c, tc.g, 0, true, mixed, rand.New(rand.NewPCG(uint64(trial), 33)))
				o := tc.opt
				o.MaxRejectRounds, o.Seed = -1, uint64(trial)
				s, err := graphcalc.Solve(in, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range s.Nodes {
					if m.Node == in.Reference {
						continue
					}
					u, r := c.truth(m.Node, in.Reference)
					zu = append(zu, (m.U-u)/m.Sigma)
					zr = append(zr, (m.Rate-r)/m.RateSigma)
				}
			}
			mu, su := stat.MeanStdDev(zu, nil)
			mr, sr := stat.MeanStdDev(zr, nil)
			t.Logf("%d samples: U error/σ mean %+.3f sd %.3f; Rate error/σ mean %+.3f sd %.3f", len(zu), mu, su, mr, sr)
			if su < 0.7 || su > 1.3 || sr < 0.7 || sr > 1.3 {
				t.Errorf("error/σ sd: U %.3f, Rate %.3f; want both in [0.7, 1.3]", su, sr)
			}
		})
	}
}

// TestLoopInconsistency solves a triangle whose betas close to 50 ns
// instead of 0: least squares spreads the closure over the three edges in
// proportion to their variances, so the residuals sum to the closure.
// Rejection is off but for the uniform triangle, whose equal residuals
// (MAD 0) must not trip it.
func TestLoopInconsistency(t *testing.T) {
	for _, sig := range [][3]float64{{1, 1, 1}, {1, 2, 3}, {10, 1, 1}} {
		o := graphcalc.Options{MaxRejectRounds: -1}
		if sig == [3]float64{1, 1, 1} {
			o = graphcalc.Options{}
		}
		in := graphcalc.Input{Round: 4, Reference: 0, Origin: 5000, Nodes: []int{0, 1, 2}}
		for k, beta := range []float64{100, 200, -250} {
			in.Edges = append(in.Edges, graphcalc.Edge{
				Src: k, Dst: (k + 1) % 3, Beta: beta, Sigma: sig[k], AlphaSigma: 1e-9, SrcOrigin: int64(1000 * k),
			})
		}
		s, err := graphcalc.Solve(in, o)
		if err != nil {
			t.Fatal(err)
		}
		var total, sum float64
		for _, v := range sig {
			total += v * v
		}
		for k, e := range s.Edges {
			want := 50 * sig[k] * sig[k] / total
			if math.Abs(e.Residual-want) > 1e-9 || math.Abs(e.Normalized-want/sig[k]) > 1e-9 {
				t.Errorf("σ %v edge %d: residual %.12g normalized %.12g, want %.12g", sig, k, e.Residual, e.Normalized, want)
			}
			sum += e.Residual
		}
		if math.Abs(sum-50) > 1e-9 || s.Rejected != 0 {
			t.Errorf("σ %v: residuals sum to %.12g (want 50), %d rejected", sig, sum, s.Rejected)
		}
	}
}

// TestNormalEquations checks the least-squares optimality of a noisy
// solve: at every node but the reference, Σ w·r·∂(row)/∂u_i = 0 over its
// kept edges (w = 1/Sigma², ∂ = +1 as Dst and −(1+Alpha) as Src), to the
// solver's relative tolerance against the size of the terms w·t of the
// right-hand side (t = Alpha·(G0 − SrcOrigin) + Beta, up to ±1 s here).
func TestNormalEquations(t *testing.T) {
	g := randomRegular(t, 200, 5, 23)
	c := newClocks(g.n, rand.New(rand.NewPCG(41, 42)))
	in := build(c, g, 3, false, mixed, rand.New(rand.NewPCG(43, 44)))
	s, err := graphcalc.Solve(in, graphcalc.Options{MaxRejectRounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	grad, scale := make([]float64, g.n), make([]float64, g.n)
	for k, e := range in.Edges {
		wr := s.Edges[k].Residual / (e.Sigma * e.Sigma)
		grad[e.Dst] += wr
		grad[e.Src] -= (1 + e.Alpha) * wr
		wt := math.Abs(e.Alpha*float64(in.Origin-e.SrcOrigin)+e.Beta) / (e.Sigma * e.Sigma)
		scale[e.Dst] += wt
		scale[e.Src] += wt
	}
	for i := range grad {
		if i != in.Reference && math.Abs(grad[i]) > 1e-12*scale[i] {
			t.Errorf("node %d: gradient %g against scale %g", i, grad[i], scale[i])
		}
	}
}
