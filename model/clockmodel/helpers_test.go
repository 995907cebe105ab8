package clockmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rng returns a deterministic stream for tests.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// mustNew builds a clock with fixed seeds or fails the test.
func mustNew(t testing.TB, p Params) *Clock {
	t.Helper()
	c, err := New(p, rng(1), rng(2))
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return c
}

// meanSD returns the mean and sample standard deviation of xs.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// fitLine returns the least-squares slope and intercept of y over x.
func fitLine(x, y []float64) (slope, intercept float64) {
	mx, _ := meanSD(x)
	my, _ := meanSD(y)
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	slope = sxy / sxx
	return slope, my - slope*mx
}
