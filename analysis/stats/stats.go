// Package stats summarises samples: count, mean, quantiles and extremes, as
// every report of the project prints them.
package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Summary describes a sample. Quantiles use the empirical distribution
// (gonum's stat.Empirical): the smallest value whose cumulative frequency
// reaches p.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Summarize returns the summary of xs (which it does not modify). An empty
// sample gives the zero Summary.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mean, std := stat.MeanStdDev(s, nil)
	if math.IsNaN(std) {
		std = 0
	}
	return Summary{
		N:    len(s),
		Mean: mean,
		Std:  std,
		Min:  s[0],
		P50:  stat.Quantile(0.50, stat.Empirical, s, nil),
		P95:  stat.Quantile(0.95, stat.Empirical, s, nil),
		P99:  stat.Quantile(0.99, stat.Empirical, s, nil),
		Max:  s[len(s)-1],
	}
}

// Abs returns |x| for every x, in a new slice.
func Abs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	return out
}
