package graphcalc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWithoutMatchesNewSystem wants system.without to give, bit for bit,
// the normal matrix and right-hand side that newSystem and rhs assemble
// from scratch without the removed rows: every link of small graphs (with
// the reference at either end, links measured once, twice or three times,
// already-rejected rows elsewhere), removed whole and by single rows.
func TestWithoutMatchesNewSystem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		ref   int
		links [][2]int32
	}{
		{"triangle both ways", 3, 0, [][2]int32{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}}},
		{"mesh5 one way", 5, 2, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}},
		{"repeats", 4, 3, [][2]int32{{0, 1}, {1, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 0}, {2, 0}, {0, 2}, {3, 1}}},
		{"ring6 both ways", 6, 4, [][2]int32{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}, {3, 4}, {4, 3}, {4, 5}, {5, 4}, {5, 0}, {0, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 1))
			all := newRows(len(tc.links))
			for e, l := range tc.links {
				// Weights, coefficients and targets of mixed magnitudes
				// make the sums' order matter.
				w := math.Exp(rng.NormFloat64() * 5)
				c := 1 + rng.NormFloat64()*1e-4
				all.add(l[0], l[1], c, w, rng.NormFloat64()*1e6, e)
			}
			inc := newIncidence(tc.n, &all)
			kept := make([]bool, len(tc.links))
			for e := range kept {
				kept[e] = e != 2 // one row already rejected
			}
			base := newSystem(tc.n, tc.ref, &all, kept)
			b := base.rhs()
			tried := 0
			for e := range tc.links {
				if !kept[e] {
					continue
				}
				a, z := all.src[e], all.dst[e]
				var link []int
				for o := range tc.links {
					if kept[o] && min(all.src[o], all.dst[o]) == min(a, z) && max(all.src[o], all.dst[o]) == max(a, z) {
						link = append(link, o)
					}
				}
				for _, rows := range [][]int{{e}, link} {
					k2 := slices.Clone(kept)
					for _, r := range rows {
						k2[r] = false
					}
					want := newSystem(tc.n, tc.ref, &all, k2)
					got, gb := base.without(&all, inc, k2, b, int(a), int(z))
					if !sameBits(got.diag, want.diag) || !sameBits(got.val, want.val) || !sameBits(gb, want.rhs()) ||
						!slices.Equal(got.start, want.start) || !slices.Equal(got.col, want.col) {
						t.Errorf("without rows %v: the system differs from newSystem's", rows)
					}
					tried++
				}
			}
			if tried == 0 {
				t.Fatal("nothing tried")
			}
		})
	}
}

// sameBits reports whether a and b hold the same float64 bit patterns.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestTryOutReuses wants tryOut to try the candidates again only when the
// solution or the kept rows changed since its latest call.
func TestTryOutReuses(t *testing.T) {
	links := [][2]int32{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}, {2, 3}, {3, 2}, {3, 0}, {0, 3}}
	all := newRows(len(links))
	for e, l := range links {
		tv := 100 * float64(l[1]-l[0])
		if e == 4 {
			tv += 1e6
		}
		all.add(l[0], l[1], 1, 1, tv, e)
	}
	kept := make([]bool, len(links))
	for e := range kept {
		kept[e] = true
	}
	o, _ := Options{}.withDefaults()
	f := &fitter{n: 4, ref: 0, all: &all, kept: kept, o: o}
	x := make([]float64, 4)
	if err := newSystem(4, 0, &all, kept).solve(x); err != nil {
		t.Fatal(err)
	}
	_, first := f.tryOut(x, 1e12, 7)
	moved := slices.Clone(x)
	moved[1] = math.Nextafter(moved[1], math.Inf(1))
	for _, tc := range []struct {
		name  string
		x     []float64
		drop  int // a row no longer kept, or −1
		fresh bool
	}{
		{"same", x, -1, false},
		{"solution moved", moved, -1, true},
		{"row rejected", x, 4, true},
	} {
		f.last = &tried{x: slices.Clone(x), kept: slices.Clone(kept), cands: first}
		f.kept = slices.Clone(kept)
		if tc.drop >= 0 {
			f.kept[tc.drop] = false
		}
		_, got := f.tryOut(tc.x, 1e12, 7)
		if fresh := &got[0] != &first[0]; fresh != tc.fresh {
			t.Errorf("%s: tried again %v, want %v", tc.name, fresh, tc.fresh)
		}
	}
}
