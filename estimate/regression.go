package estimate

import (
	"errors"
	"math"
)

// errDegenerate reports probes that span no time, so no slope is defined.
var errDegenerate = errors.New("the used probes span no time")

// minSigma is the floor of every reported Beta uncertainty, ns: timestamps
// are integers of ns, nothing is known better than that.
const minSigma = 1.0

// line is an ordinary least squares fit y = a·x + b through midpoints.
type line struct {
	a, b float64
	s    float64 // residual standard deviation, √(RSS/(n−2))
	deff float64 // pair design effect, see midpointFit
	n    int
	xbar float64
	sxx  float64 // Σ(x−x̄)²
}

// midpointFit fits y = a·x + b by least squares through the midpoints of s,
// in passes about the means (well conditioned however far x lies from
// Origin). nPairs bounds the samples' pair numbers.
//
// It also returns the pair design effect Σ_pairs(Σ r)² / Σ r² over the
// residuals r: the factor by which correlation between the two probes of a
// pair inflates the fit's variance. It is about 1 when the probes' errors
// are independent and 2 when both probes of every pair met the same delays
// (as the two probes of a pure pair largely do), for then a pair carries one
// observation, not two. The two probes of a pair lie at nearly the same x,
// so the factor applies alike to intercept and slope.
func midpointFit(s []sample, nPairs int) (line, error) {
	n := len(s)
	if n < 3 {
		return line{}, errDegenerate
	}
	var sx, sy float64
	for i := range s {
		p := &s[i]
		sx += p.midX()
		sy += p.midY()
	}
	xbar, ybar := sx/float64(n), sy/float64(n)
	var sxx, sxy float64
	for i := range s {
		p := &s[i]
		dx := p.midX() - xbar
		sxx += dx * dx
		sxy += dx * (p.midY() - ybar)
	}
	if !(sxx > 0) {
		return line{}, errDegenerate
	}
	l := line{a: sxy / sxx, n: n, xbar: xbar, sxx: sxx, deff: 1}
	l.b = ybar - l.a*xbar
	sums := make([]float64, nPairs)
	var rss float64
	for i := range s {
		p := &s[i]
		r := p.midY() - (l.a*p.midX() + l.b)
		rss += r * r
		sums[p.pair] += r
	}
	l.s = math.Sqrt(rss / float64(n-2))
	if rss > 0 {
		var cs float64
		for _, v := range sums {
			cs += v * v
		}
		l.deff = cs / rss
	}
	return l, nil
}

// sigmas returns the standard errors of the intercept (at x = 0) and the
// slope for a residual standard deviation s.
func (l line) sigmas(s float64) (sb, sa float64) {
	sa = s / math.Sqrt(l.sxx)
	sb = s * math.Sqrt(1/float64(l.n)+l.xbar*l.xbar/l.sxx)
	return sb, sa
}

// setLine stores a least squares fit and its standard errors in fit, with s
// floored so that Sigma is at least minSigma.
func setLine(fit *Fit, l line, s float64) {
	fit.Alpha, fit.Beta = l.a, l.b
	fit.Sigma, fit.AlphaSigma = l.sigmas(s)
	if fit.Sigma < minSigma {
		// Scale both: the ratio between them is set by the geometry.
		k := minSigma / fit.Sigma
		if math.IsInf(k, 0) || math.IsNaN(k) {
			fit.Sigma, fit.AlphaSigma = minSigma, minSigma/math.Sqrt(l.sxx)
		} else {
			fit.Sigma, fit.AlphaSigma = minSigma, fit.AlphaSigma*k
		}
	}
}

// fitRegression is ordinary least squares through the midpoints of every
// used probe. Sigma and AlphaSigma are the textbook standard errors of the
// intercept and slope, scaled by √(pair design effect) so that they stay
// right when the two probes of a pair share their error. nPairs bounds the
// samples' pair numbers.
func fitRegression(s []sample, nPairs int, fit *Fit) error {
	l, err := midpointFit(s, nPairs)
	if err != nil {
		return err
	}
	setLine(fit, l, l.s*math.Sqrt(l.deff))
	fit.Used = len(s)
	return nil
}
