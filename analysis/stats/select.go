package stats

import (
	"cmp"
	"math"
	"slices"
)

// Select reorders v so that v[k] is its k-th smallest element (k from 0),
// everything before it ≤ and everything after ≥, and returns v[k]: Hoare's
// selection with a median-of-three pivot, expected linear time and
// deterministic.
func Select[T cmp.Ordered](v []T, k int) T {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		a, b, c := v[lo], v[mid], v[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// Median returns the median of v, the mean of the two middle values when
// len(v) is even, NaN when v is empty. It reorders v.
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	hi := Select(v, n/2)
	if n%2 == 1 {
		return hi
	}
	return (slices.Max(v[:n/2]) + hi) / 2
}
