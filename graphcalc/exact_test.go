package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
	"gonum.org/v1/gonum/mat"
)

// TestExactRecovery solves noise-free rounds with offsets up to ±1 s and
// rates up to ±200 ppm and wants every node within 1 ns and 1e-12, and the
// model's conversions to reproduce the true global time.
func TestExactRecovery(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    graph
		ref  int
		both bool
		opt  graphcalc.Options
	}{
		{"mesh8", mesh(8), 0, true, graphcalc.Options{}},
		{"ring32", ring(32), 5, true, graphcalc.Options{}},
		{"ring32-one-way", ring(32), 31, false, graphcalc.Options{}},
		{"regular64x4", randomRegular(t, 64, 4, 1), 3, true, graphcalc.Options{}},
		{"regular400x6-sketch", randomRegular(t, 400, 6, 2), 0, true, graphcalc.Options{}},
		{"regular300x4-mixed-one-way", randomRegular(t, 300, 4, 3), 7, false, graphcalc.Options{ExactCovarianceLimit: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClocks(tc.g.n, rand.New(rand.NewPCG(uint64(tc.g.n), 1)))
			in := build(c, tc.g, tc.ref, tc.both, mixed, nil)
			s, err := graphcalc.Solve(in, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Nodes) != tc.g.n || s.Rejected != 0 || s.Passes != 1 || len(s.Components) != 1 {
				t.Fatalf("nodes %d rejected %d passes %d components %d", len(s.Nodes), s.Rejected, s.Passes, len(s.Components))
			}
			if s.RMSResidual > 1e-3 || s.MaxResidual > 1e-2 {
				t.Errorf("residuals rms %g max %g ns, want ~0", s.RMSResidual, s.MaxResidual)
			}
			var worstU, worstR, worstG float64
			for i := 0; i < tc.g.n; i++ {
				m, ok := s.Model(i)
				if !ok {
					t.Fatalf("node %d missing", i)
				}
				u, r := c.truth(i, tc.ref)
				worstU = max(worstU, math.Abs(m.U-u))
				worstR = max(worstR, math.Abs(m.Rate-r))
				if i == tc.ref && (m.U != 0 || m.Rate != 1 || m.Sigma != 0) {
					t.Errorf("reference model %+v", m)
				}
				if i != tc.ref && !(m.Sigma > 0 && m.RateSigma > 0) {
					t.Errorf("node %d: sigmas %g %g", i, m.Sigma, m.RateSigma)
				}
				ws := c.start(i)
				for _, local := range []int64{ws, ws + 123_456_789, ws + 999_999_999} {
					want := c.global(i, tc.ref, local)
					viaOffset := float64(local) - m.OffsetAt(local)
					viaDrift := float64(local) - m.OffsetAt(ws) - m.DriftPPM()*1e-6*float64(local-ws)
					worstG = max(worstG, math.Abs(viaOffset-want), math.Abs(viaDrift-want), math.Abs(m.Linear().Global(local)-want))
				}
			}
			t.Logf("worst |ΔU| %.3g ns, |ΔRate| %.3g, |Δg| %.3g ns", worstU, worstR, worstG)
			if worstU >= 1 || worstR >= 1e-12 || worstG >= 1 {
				t.Errorf("worst |ΔU| %g ns (want < 1), |ΔRate| %g (want < 1e-12), |Δg| %g ns (want < 1)", worstU, worstR, worstG)
			}
		})
	}
}

// TestMatchesDense compares the conjugate-gradient solution of a noisy
// round with a dense Cholesky solve of the same normal equations.
func TestMatchesDense(t *testing.T) {
	g := randomRegular(t, 96, 5, 9)
	c := newClocks(g.n, rand.New(rand.NewPCG(2, 2)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(3, 3)))
	s, err := graphcalc.Solve(in, graphcalc.Options{MaxRejectRounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Unknowns are nodes 1..n-1 at column i-1.
	m := g.n - 1
	nr, no := mat.NewSymDense(m, nil), mat.NewSymDense(m, nil)
	br, bo := mat.NewVecDense(m, nil), mat.NewVecDense(m, nil)
	add := func(a *mat.SymDense, b *mat.VecDense, e graphcalc.Edge, c, w, t float64) {
		coef := map[int]float64{e.Dst: 1}
		coef[e.Src] -= c
		for i, ci := range coef {
			if i == 0 {
				continue
			}
			b.SetVec(i-1, b.AtVec(i-1)+w*ci*t)
			for j, cj := range coef {
				if j != 0 && j >= i {
					a.SetSym(i-1, j-1, a.At(i-1, j-1)+w*ci*cj)
				}
			}
		}
	}
	for _, e := range in.Edges {
		add(nr, br, e, 1, 1/(e.AlphaSigma*e.AlphaSigma), math.Log1p(e.Alpha))
		add(no, bo, e, 1+e.Alpha, 1/(e.Sigma*e.Sigma), e.Alpha*float64(in.Origin-e.SrcOrigin)+e.Beta)
	}
	var chr, cho mat.Cholesky
	if !chr.Factorize(nr) || !cho.Factorize(no) {
		t.Fatal("normal matrices not positive definite")
	}
	var xr, xo mat.VecDense
	if err := chr.SolveVecTo(&xr, br); err != nil {
		t.Fatal(err)
	}
	if err := cho.SolveVecTo(&xo, bo); err != nil {
		t.Fatal(err)
	}
	var inv mat.SymDense
	if err := cho.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	// One step of iterative refinement takes the dense solution to the
	// accuracy of its residual, which rounding in the factorisation limits
	// to ~κ·ε·|U| ≈ 1e-4 ns.
	var ax, corr mat.VecDense
	ax.MulVec(no, &xo)
	ax.SubVec(bo, &ax)
	if err := cho.SolveVecTo(&corr, &ax); err != nil {
		t.Fatal(err)
	}
	xo.AddVec(&xo, &corr)
	var worst float64
	for i := 1; i < g.n; i++ {
		md, _ := s.Model(i)
		worst = max(worst, math.Abs(md.U-xo.AtVec(i-1)))
		if d := math.Abs(md.U - xo.AtVec(i-1)); d > 1e-3 {
			t.Errorf("node %d: U %v, dense %v", i, md.U, xo.AtVec(i-1))
		}
		if d := math.Abs(md.Rate - math.Exp(xr.AtVec(i-1))); d > 1e-15 {
			t.Errorf("node %d: Rate %v, dense %v", i, md.Rate, math.Exp(xr.AtVec(i-1)))
		}
		if sd := math.Sqrt(inv.At(i-1, i-1)); math.Abs(md.Sigma-sd) > 1e-9*sd {
			t.Errorf("node %d: Sigma %v, dense %v", i, md.Sigma, sd)
		}
	}
	t.Logf("worst |U − dense| %.3g ns (refinement step %.3g ns)", worst, mat.Norm(&corr, math.Inf(1)))
}

// TestLargeClocks shifts every clock reading by 1.7e18 ns (Unix time):
// the solution depends on readings only through differences, so it must
// not change, and OffsetAt must keep sub-ns precision there.
func TestLargeClocks(t *testing.T) {
	const epoch = 1_700_000_000_000_000_000
	g := randomRegular(t, 40, 4, 71)
	c := newClocks(g.n, rand.New(rand.NewPCG(72, 73)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(74, 75)))
	base, err := graphcalc.Solve(in, graphcalc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in.Origin += epoch
	for k := range in.Edges {
		in.Edges[k].SrcOrigin += epoch
	}
	shifted, err := graphcalc.Solve(in, graphcalc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range shifted.Nodes {
		b := base.Nodes[i]
		if m.U != b.U || m.Rate != b.Rate || m.Origin != b.Origin+epoch {
			t.Errorf("node %d: shifted %+v, base %+v", m.Node, m, b)
		}
		for _, local := range []int64{-3_000_000_000, 0, 777_777_777} {
			if d := m.OffsetAt(local+epoch) - b.OffsetAt(local); math.Abs(d) > 1e-9 {
				t.Errorf("node %d: OffsetAt differs by %g ns at %d", m.Node, d, local)
			}
		}
	}
}
