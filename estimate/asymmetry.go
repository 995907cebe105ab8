package estimate

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

// Path asymmetry. Every estimator assumes that the two directions of a
// path have the same least delay: the offset line lies midway between the
// floor of the forward delays above it and that of the reverse delays
// below it. A constant asymmetry cannot be seen. But queueing on one
// direction (cross traffic) does not only add delay, it thins the bottom of
// that direction's distribution, and the floor it shows sits higher: the
// line, centred between the two floors, is then off by half the difference
// (docs/sync-protocol.md, asym-queueing). That difference shows in the
// shapes: measured from the fitted line, the low quantiles of the two
// directions' delays differ, where on a symmetric path they agree but for
// sampling noise. asymSigma takes the difference D at the asymQuantile
// and, when it is beyond asymSignificance standard deviations of what
// sampling alone gives (so that a symmetric path adds nothing but in about
// 3 windows of 1000), returns half of it as a systematic uncertainty of
// Beta: about the bias it leaves (asym-queueing: D ≈ 2.3 µs against biases
// of 0.5 to 1.7 µs). The quantiles are far noisier than the floors an
// estimator rests on (on a hard floor D's sampling noise is several times
// svm's error), so below significance D says nothing.
const (
	asymQuantile     = 0.05
	asymSignificance = 3
	// asymBand is the half-width, in probability, of the band about the
	// quantile over which the density at it is measured.
	asymBand = 0.02
)

// asymSigma returns the systematic uncertainty of the line (alpha, beta)
// through s, of statistical uncertainty sigma, that the shapes of the two
// directions' delay distributions reveal (see above); 0 on a path whose
// two directions look alike. An error δ of the line itself moves D by 2δ,
// so D's variance on a symmetric path is that of the two quantiles plus
// 4·sigma².
func asymSigma(s []sample, alpha, beta, sigma float64) float64 {
	if len(s) < 40 {
		return 0
	}
	f, r := make([]float64, len(s)), make([]float64, len(s))
	for i := range s {
		p := &s[i]
		f[i] = float64(p.fy) - (alpha*float64(p.fx) + beta)
		r[i] = (alpha*float64(p.rx) + beta) - float64(p.ry)
	}
	qf, vf := quantileVar(f, asymQuantile)
	qr, vr := quantileVar(r, asymQuantile)
	d := qf - qr
	if d*d <= asymSignificance*asymSignificance*(vf+vr+4*sigma*sigma) {
		return 0
	}
	return math.Abs(d) / 2
}

// quantileVar returns the p-quantile of v (which it reorders) and the
// variance of that estimate, p(1−p)/(n·f²), with the density f at the
// quantile measured as 2·asymBand over the spread of the quantiles
// asymBand either side.
func quantileVar(v []float64, p float64) (q, variance float64) {
	n := len(v)
	at := func(p float64) float64 { return stats.Select(v, max(0, min(n-1, int(p*float64(n-1))))) }
	q = at(p)
	spread := at(p+asymBand) - at(max(0, p-asymBand))
	sd := math.Sqrt(p*(1-p)/float64(n)) * spread / (2 * asymBand)
	return q, sd * sd
}
