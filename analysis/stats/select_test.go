package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		v := make([]int64, 1+r.IntN(60))
		for i := range v {
			v[i] = r.Int64N(int64(1 + r.IntN(20)))
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		k := r.IntN(len(v))
		if got := Select(slices.Clone(v), k); got != sorted[k] {
			t.Fatalf("Select(%v, %d) = %d, want %d", v, k, got, sorted[k])
		}
	}
}

// TestMedian compares the selection median with sorting, on odd and even
// lengths, ties and already-sorted inputs.
func TestMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 1; n < 200; n++ {
		for _, gen := range []func(int) float64{
			func(int) float64 { return rng.NormFloat64() },
			func(int) float64 { return float64(rng.IntN(3)) },
			func(i int) float64 { return float64(i) },
			func(i int) float64 { return float64(-i) },
		} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i)
			}
			s := slices.Clone(xs)
			slices.Sort(s)
			want := s[n/2]
			if n%2 == 0 {
				want = (s[n/2-1] + s[n/2]) / 2
			}
			if got := Median(xs); got != want {
				t.Fatalf("n %d: median %v, want %v", n, got, want)
			}
		}
	}
}

// TestMedianEmpty: the median of nothing is NaN, not a panic.
func TestMedianEmpty(t *testing.T) {
	if m := Median(nil); !math.IsNaN(m) {
		t.Errorf("Median(nil) = %g, want NaN", m)
	}
}
