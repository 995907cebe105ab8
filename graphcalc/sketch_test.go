package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// TestSketchAccuracy measures the sketched σ of U and of Rate against the
// exact ones on a random 8-regular graph of 256 nodes (255 unknowns, within
// the default exact limit; ExactCovarianceLimit 1 forces the sketch).
// A ±1 sketch of k projections estimates each variance with relative
// standard deviation ≤ √(2/k), so σ is off by about √(1/2k): 12.5% at the
// default k = 32. The bounds are on the median and the worst node.
func TestSketchAccuracy(t *testing.T) {
	g := randomRegular(t, 256, 8, 5)
	c := newClocks(g.n, rand.New(rand.NewPCG(6, 6)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(7, 7)))
	exact, err := graphcalc.Solve(in, graphcalc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dim                 int
		wantMedian, wantMax float64
	}{
		{16, 0.2, 0.8},
		{32, 0.15, 0.6},
		{128, 0.075, 0.3},
	} {
		var relU, relR []float64
		for seed := uint64(0); seed < 4; seed++ {
			sk, err := graphcalc.Solve(in, graphcalc.Options{ExactCovarianceLimit: 1, SketchDim: tc.dim, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range sk.Nodes {
				e := exact.Nodes[i]
				if m.U != e.U || m.Rate != e.Rate {
					t.Fatalf("node %d: the sketch changed the solution", m.Node)
				}
				if m.Node == in.Reference {
					continue
				}
				relU = append(relU, math.Abs(m.Sigma/e.Sigma-1))
				relR = append(relR, math.Abs(m.RateSigma/e.RateSigma-1))
			}
		}
		for _, q := range []struct {
			name string
			rel  []float64
		}{{"U", relU}, {"Rate", relR}} {
			slices.Sort(q.rel)
			med, worst := q.rel[len(q.rel)/2], q.rel[len(q.rel)-1]
			t.Logf("SketchDim %d, σ of %s: relative error median %.3f, p90 %.3f, max %.3f (√(1/2k) = %.3f)",
				tc.dim, q.name, med, q.rel[len(q.rel)*9/10], worst, math.Sqrt(1/float64(2*tc.dim)))
			if med > tc.wantMedian || worst > tc.wantMax {
				t.Errorf("SketchDim %d, σ of %s: median %.3f (want ≤ %.3f), max %.3f (want ≤ %.3f)",
					tc.dim, q.name, med, tc.wantMedian, worst, tc.wantMax)
			}
		}
	}
}

// TestDeterministic wants identical summaries from identical inputs, and
// the sketch to follow Options.Seed.
func TestDeterministic(t *testing.T) {
	g := randomRegular(t, 300, 6, 8)
	c := newClocks(g.n, rand.New(rand.NewPCG(8, 8)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(9, 9)))
	a, err := graphcalc.Solve(in, graphcalc.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := graphcalc.Solve(in, graphcalc.Options{Seed: 1})
	if !reflect.DeepEqual(a, b) {
		t.Error("two solves of one input differ")
	}
	other, _ := graphcalc.Solve(in, graphcalc.Options{Seed: 2})
	if reflect.DeepEqual(a.Nodes, other.Nodes) {
		t.Error("the sketch ignores Options.Seed")
	}
}
