package graphcalc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRejectCutsAndLoops pins the rejection rules on fabricated rows
// (x_i = 100·i, every Sigma 1 ns, the listed rows corrupted by 1 ms): a
// link whose removal would disconnect the graph is never removed, though
// one of its two directions may go alone; in a single loop no link stands
// out and none is rejected; in a mesh the corrupted link goes.
func TestRejectCutsAndLoops(t *testing.T) {
	both := func(ls ...[2]int32) [][2]int32 {
		var out [][2]int32
		for _, l := range ls {
			out = append(out, l, [2]int32{l[1], l[0]})
		}
		return out
	}
	ring6 := both([2]int32{0, 1}, [2]int32{1, 2}, [2]int32{2, 3}, [2]int32{3, 4}, [2]int32{4, 5}, [2]int32{5, 0})
	for _, tc := range []struct {
		name  string
		n     int
		links [][2]int32
		bad   map[int]float64 // row → added to its t
		want  []int           // rows rejected
	}{
		{"one-way ring", 6, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}}, map[int]float64{1: 1e6}, nil},
		// An asymmetric link: both directions see the same bias.
		{"ring both ways, one link", 6, ring6, map[int]float64{4: 1e6, 5: -1e6}, nil},
		{"ring both ways, one direction", 6, ring6, map[int]float64{4: 1e6}, []int{4}},
		// The two directions of a pendant link disagree: either may be
		// wrong, and removing both would cut node 3 off.
		{"pendant pair", 4, [][2]int32{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 2}}, map[int]float64{3: 1e6}, nil},
		{"mesh4 link", 4, both([2]int32{0, 1}, [2]int32{0, 2}, [2]int32{0, 3}, [2]int32{1, 2}, [2]int32{1, 3}, [2]int32{2, 3}), map[int]float64{6: 1e6, 7: -1e6}, []int{6, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := newRows(len(tc.links))
			for e, l := range tc.links {
				tv := 100 * float64(l[1]-l[0])
				tv += tc.bad[e]
				all.add(l[0], l[1], 1, 1, tv, e)
			}
			kept := make([]bool, len(tc.links))
			for e := range kept {
				kept[e] = true
			}
			o, _ := Options{}.withDefaults()
			f := &fitter{n: tc.n, ref: 0, all: &all, kept: kept, o: o}
			x := make([]float64, tc.n)
			if err := newSystem(tc.n, 0, &all, kept).solve(x); err != nil {
				t.Fatal(err)
			}
			f.reject(x, []int{0, 1, 2, 3, 4, 5})
			var got []int
			for e, k := range kept {
				if !k {
					got = append(got, e)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rejected rows %v, want %v", got, tc.want)
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
