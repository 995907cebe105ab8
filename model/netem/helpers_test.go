package netem

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Statistical tests compare an estimate with its closed form and accept a
// difference of up to zTol standard errors, the standard error coming from
// the sample size (and, for correlated samples, from batch means). With
// fixed seeds the tests are deterministic; zTol = 5 keeps them valid for
// any seed but a one-in-a-million draw.
const zTol = 5

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6e6574656d)) }

func mustNew(t testing.TB, p Params, seed uint64) *Link {
	t.Helper()
	l, err := New(p, newRand(seed))
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return l
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// meanVar returns the sample mean and (unbiased) variance of xs.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// lag1 returns the lag-1 sample autocorrelation of xs.
func lag1(xs []float64) float64 {
	m, v := meanVar(xs)
	var c float64
	for i := 1; i < len(xs); i++ {
		c += (xs[i] - m) * (xs[i-1] - m)
	}
	return c / float64(len(xs)-1) / v
}

// batchMean returns the mean of xs and its standard error by the method
// of batch means (nb batches), valid for correlated samples whose
// correlation time is much shorter than a batch.
func batchMean(xs []float64, nb int) (mean, se float64) {
	size := len(xs) / nb
	means := make([]float64, nb)
	for b := range nb {
		var s float64
		for _, x := range xs[b*size : (b+1)*size] {
			s += x
		}
		means[b] = s / float64(size)
	}
	m, v := meanVar(means)
	return m, math.Sqrt(v / float64(nb))
}

// within fails the test unless |got - want| <= tol.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g ± %.3g", what, got, want, tol)
	} else {
		t.Logf("%s = %.6g, want %.6g ± %.3g", what, got, want, tol)
	}
}

// indicator returns 1 for true and 0 for false.
func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
