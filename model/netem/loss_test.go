package netem

import (
	"math"
	"testing"
)

// lossPattern sends n packets through a link with loss model m and nothing
// else, and returns 1 for each lost packet, 0 for each delivered one.
func lossPattern(t *testing.T, m Loss, n int) []float64 {
	t.Helper()
	l := mustNew(t, Params{Loss: m}, 11)
	xs := make([]float64, n)
	for i := range xs {
		r := l.Send(int64(i), 100)
		if r.N == 0 && r.Drop != DropLoss {
			t.Fatalf("packet %d dropped for %v", i, r.Drop)
		}
		xs[i] = indicator(r.N == 0)
	}
	return xs
}

// checkLossProcess compares a loss pattern's loss rate and mean burst
// length (consecutive losses) with the closed forms rate and burst = rate /
// P(a packet is lost and the one before it is not).
func checkLossProcess(t *testing.T, xs []float64, rate, burst float64) {
	t.Helper()
	starts := make([]float64, len(xs))
	for i := 1; i < len(xs); i++ {
		starts[i] = (1 - xs[i-1]) * xs[i]
	}
	l, seL := batchMean(xs, 100)
	s, seS := batchMean(starts, 100)
	within(t, "loss rate", l, rate, zTol*seL+1e-12)
	if burst == 0 {
		return
	}
	within(t, "run starts per packet", s, rate/burst, zTol*seS+1e-12)
	// Delta method, ignoring the (positive) covariance of the two: an
	// upper bound of the ratio's standard error.
	rel := math.Hypot(seL/l, seS/s)
	within(t, "mean burst length", l/s, burst, zTol*burst*rel)
}

func TestRandomLoss(t *testing.T) {
	const n = 500_000
	cases := []struct {
		name        string
		p, corr     float64
		rate, burst float64
	}{
		{"none", 0, 0, 0, 0},
		{"all", 1, 0, 1, 0},
		{"10%", 0.1, 0, 0.1, 1 / 0.9},
		// netem's correlated generator is not uniform: with correlation
		// 50% it is the Fabius random variable, P(x <= 1/4) = 5/72.
		{"25% 50%", 0.25, 0.5, 5.0 / 72, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := lossPattern(t, Loss{Model: LossRandom, Probability: tc.p, Correlation: tc.corr}, n)
			checkLossProcess(t, xs, tc.rate, tc.burst)
		})
	}
}

// geClosedForm returns the stationary loss rate and mean burst length of
// netem's Gilbert-Elliott model: the state S_n a packet finds is a
// two-state chain (good to bad with p, bad to good with r), and the packet
// is lost with probability lG = 1-k in good, lB = 1-h in bad.
func geClosedForm(p, r, lB, lG float64) (rate, burst float64) {
	piB := p / (p + r)
	piG := 1 - piB
	rate = piG*lG + piB*lB
	// P(lost_n-1 = 0, lost_n = 1) = sum_s pi_s (1-l_s) sum_s' P(s,s') l_s'.
	start := piG*(1-lG)*((1-p)*lG+p*lB) + piB*(1-lB)*(r*lG+(1-r)*lB)
	return rate, rate / start
}

func TestGilbertElliott(t *testing.T) {
	const n = 1_000_000
	cases := []struct {
		name            string
		p, r, lB, lG    float64
		wantRate, wantB float64 // textbook values, as a check of the closed form
	}{
		// Simple Gilbert: all lost in bad, none in good: rate p/(p+r),
		// bursts geometric with mean 1/r.
		{"gilbert", 0.01, 0.3, 1, 0, 0.01 / 0.31, 1 / 0.3},
		// Bernoulli: never leaves good.
		{"bernoulli", 0, 1, 1, 0.02, 0.02, 1 / 0.98},
		{"gilbert-elliott", 0.05, 0.4, 0.7, 0.01, -1, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rate, burst := geClosedForm(tc.p, tc.r, tc.lB, tc.lG)
			if tc.wantRate >= 0 {
				within(t, "closed-form rate", rate, tc.wantRate, 1e-12)
				within(t, "closed-form burst", burst, tc.wantB, 1e-9)
			}
			xs := lossPattern(t, Loss{Model: LossGEModel, P: tc.p, R: tc.r, OneMinusH: tc.lB, OneMinusK: tc.lG}, n)
			checkLossProcess(t, xs, rate, burst)
		})
	}
}

// fourStateClosedForm returns the stationary loss rate and mean burst
// length of netem's 4-state model, whose packet is lost when the chain
// moves to state 3 or 4. The balance equations give
// pi4 = p14 pi1, pi3 = (p13/p31) pi1, pi2 = (p32/p23) pi3.
func fourStateClosedForm(p13, p31, p32, p23, p14 float64) (rate, burst float64) {
	pi1 := 1 / (1 + p14 + p13/p31 + p13*p32/(p31*p23))
	pi3 := pi1 * p13 / p31
	pi2 := pi3 * p32 / p23
	pi4 := pi1 * p14
	rate = pi3 + pi4
	start := pi1*(p13+p14) + pi2*p23
	return rate, rate / start
}

func TestFourStateLoss(t *testing.T) {
	const n = 1_000_000
	cases := []struct {
		name                    string
		p13, p31, p32, p23, p14 float64
	}{
		// tc's defaults for "loss state 5%": a Bernoulli model.
		{"tc defaults", 0.05, 0.95, 0, 1, 0},
		{"bursty", 0.02, 0.4, 0.2, 0.3, 0.01},
		{"isolated only", 0, 1, 0, 1, 0.03},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rate, burst := fourStateClosedForm(tc.p13, tc.p31, tc.p32, tc.p23, tc.p14)
			xs := lossPattern(t, Loss{Model: LossState, P13: tc.p13, P31: tc.p31, P32: tc.p32, P23: tc.p23, P14: tc.p14}, n)
			checkLossProcess(t, xs, rate, burst)
		})
	}
}
