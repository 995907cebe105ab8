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
// the default exact limit; ExactCovarianceLimit 1 forces the sketch), and
// on a ring of 400, the worst case of the control variate (its m_i is
// furthest from N⁻¹ e_i there). A plain ±1 sketch of k projections
// estimates each variance with relative standard deviation ≤ √(2/k), so σ
// is off by about √(1/2k) (17.7% at the default k = 16: a median of 0.108
// for U and 0.121 for Rate on the regular graph); the control variate
// halves that there. The bounds are on the median and the worst node, and
// the regular graph's medians at k ≤ 32 are below what the plain sketch
// gives.
func TestSketchAccuracy(t *testing.T) {
	for _, gc := range []struct {
		name string
		g    graph
		want []sketchBound
	}{
		{"8-regular 256", randomRegular(t, 256, 8, 5), []sketchBound{{16, 0.09, 0.6}, {32, 0.07, 0.4}, {128, 0.03, 0.15}}},
		{"ring 400", ring(400), []sketchBound{{16, 0.15, 0.6}, {32, 0.1, 0.45}}},
	} {
		c := newClocks(gc.g.n, rand.New(rand.NewPCG(6, 6)))
		in := build(c, gc.g, 0, true, mixed, rand.New(rand.NewPCG(7, 7)))
		exact, err := graphcalc.Solve(in, graphcalc.Options{ExactCovarianceLimit: gc.g.n})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range gc.want {
			var relU, relR []float64
			for seed := uint64(0); seed < 4; seed++ {
				sk, err := graphcalc.Solve(in, graphcalc.Options{ExactCovarianceLimit: 1, SketchDim: tc.dim, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				for i, m := range sk.Nodes {
					e := exact.Nodes[i]
					if m.U != e.U || m.Rate != e.Rate {
						t.Fatalf("%s: node %d: the sketch changed the solution", gc.name, m.Node)
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
				t.Logf("%s, SketchDim %d, σ of %s: relative error median %.3f, p90 %.3f, max %.3f (√(1/2k) = %.3f)",
					gc.name, tc.dim, q.name, med, q.rel[len(q.rel)*9/10], worst, math.Sqrt(1/float64(2*tc.dim)))
				if med > tc.wantMedian || worst > tc.wantMax {
					t.Errorf("%s, SketchDim %d, σ of %s: median %.3f (want ≤ %.3f), max %.3f (want ≤ %.3f)",
						gc.name, tc.dim, q.name, med, tc.wantMedian, worst, tc.wantMax)
				}
			}
		}
	}
}

// sketchBound bounds the relative error of sketched σ at SketchDim dim.
type sketchBound struct {
	dim                 int
	wantMedian, wantMax float64
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
