package graphcalc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRejectPassBridges pins the bridge rule on fabricated residuals:
// rows whose removal would disconnect the graph are kept however large
// their residual.
func TestRejectPassBridges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		links [][2]int32
		res   map[int]float64 // fabricated residuals, ns (others 0)
		want  []bool          // kept after the pass
	}{
		{
			// A one-way ring: no row is a bridge until one goes, and then
			// every other row is one.
			name:  "ring",
			n:     6,
			links: [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}},
			res:   map[int]float64{1: 1000, 4: 900},
			want:  []bool{true, false, true, true, true, true},
		},
		{
			// A triangle with a pendant node 3 hung on one row.
			name:  "pendant",
			n:     4,
			links: [][2]int32{{0, 1}, {1, 2}, {2, 0}, {2, 3}},
			res:   map[int]float64{3: 1e6},
			want:  []bool{true, true, true, true},
		},
		{
			// The pendant node hung on two rows: one of them may go.
			name:  "pendant-pair",
			n:     4,
			links: [][2]int32{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 2}},
			res:   map[int]float64{3: 1e6, 4: 1e6},
			want:  []bool{true, true, true, false, true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := newRows(len(tc.links))
			for e, l := range tc.links {
				all.add(l[0], l[1], 1, 1, 0, e)
			}
			res, sigma := make([]float64, len(tc.links)), make([]float64, len(tc.links))
			kept := make([]bool, len(tc.links))
			for e := range res {
				res[e], sigma[e], kept[e] = tc.res[e], 1, true
			}
			got := rejectPass(tc.n, 0, &all, sigma, res, make([]float64, tc.n), kept, 5, 4)
			want := 0
			for e, k := range tc.want {
				if !k {
					want++
				}
				if kept[e] != k {
					t.Errorf("row %d: kept %v, want %v", e, kept[e], k)
				}
			}
			if got != want {
				t.Errorf("rejected %d, want %d", got, want)
			}
		})
	}
}

// TestDiff wants int64 differences exact where they fit and no wrap
// where they do not.
func TestDiff(t *testing.T) {
	const big = 1 << 62
	for _, tc := range []struct {
		a, b int64
		want float64
	}{
		{5, 3, 2}, {3, 5, -2}, {-5, 0, -5}, {0, 0, 0},
		{big + 3, big, 3}, {-big - 3, -big, -3},
		{math.MaxInt64, -1, math.MaxInt64 + 1.0}, {math.MinInt64, 1, math.MinInt64 - 1.0},
		{big, -big, 2 * big}, {-big, big, -2 * big},
	} {
		if got := diff(tc.a, tc.b); got != tc.want {
			t.Errorf("diff(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestDenseFallback checks the dense Cholesky path that backs conjugate
// gradients against them on a noisy ring with a chord.
func TestDenseFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 50
	all := newRows(2*n + 2)
	for i := int32(0); i < n; i++ {
		j := (i + 1) % n
		all.add(i, j, 1+1e-4*rng.NormFloat64(), 1/(1+rng.Float64()), 1e6*rng.NormFloat64(), 0)
		all.add(j, i, 1+1e-4*rng.NormFloat64(), 1/(1+rng.Float64()), 1e6*rng.NormFloat64(), 0)
	}
	all.add(3, 30, 1, 1, 5e5, 0)
	kept := make([]bool, len(all.src))
	for e := range kept {
		kept[e] = true
	}
	s := newSystem(n, 7, &all, kept)
	b := s.rhs()
	cg, dense := make([]float64, n), make([]float64, n)
	if err := s.solve(cg); err != nil {
		t.Fatal(err)
	}
	if err := s.denseSolve(dense, b); err != nil {
		t.Fatal(err)
	}
	for i := range cg {
		if math.Abs(cg[i]-dense[i]) > 1e-6 {
			t.Errorf("node %d: cg %.9f, dense %.9f", i, cg[i], dense[i])
		}
	}
	if cg[7] != 0 || dense[7] != 0 {
		t.Errorf("reference not pinned: %v %v", cg[7], dense[7])
	}
}
