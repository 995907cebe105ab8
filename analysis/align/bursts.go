package align

import "math"

// bursts splits p (sorted by R, strictly increasing) into runs of pairs
// whose R follow each other within gap; gap <= 0 gives one run per pair.
func bursts(p []Pair, gap int64) [][]Pair {
	var out [][]Pair
	start := 0
	for i := 1; i <= len(p); i++ {
		if i == len(p) || gap <= 0 || diff(p[i].Tracer, p[i-1].Tracer) > float64(gap) {
			out = append(out, p[start:i])
			start = i
		}
	}
	return out
}

// fit sets m's samples, one per burst at its centroid, and the variances
// of the samples and of one reading; bs holds at least two bursts.
//
// Two estimates of error meet here. Within a burst, the pairs lie off a
// line of the clocks' rate through their centroid only by the error of
// one pair σ_r (read noise and read skew; over a burst's few ms neither
// clock wanders): n−1 degrees of freedom per burst of n, the rate being
// that of the chord of the neighbouring samples, seconds long and so
// known far better than a burst could tell it. Between samples, the
// centroids' second differences (pairSigma) measure σ_b, which adds
// whatever the clocks did between samples (wander, curvature) to the
// centroids' own noise, σ_r²/n. Both are upper 95% confidence bounds. A
// sample's variance is the larger of σ_b² and σ_r²/n, and a reading's own
// is σ_r² (a tracer reading is no noisier than a pair, which holds two
// readings).
//
// The second differences see nothing of errors that happen to lie on a
// line; with a handful of samples that is not rare, and with single pairs
// σ_b is then all there is: a run of five pairs whose errors are 22, 17,
// 10, −1 and −10 ns fits a line to 2.5 ns. Bursts measure σ_r whatever the
// samples' errors look like, with as many degrees of freedom as the
// sampler cares to read pairs. Without them, σ_r is taken to be σ_b.
func (m *Snapshots) fit(bs [][]Pair) {
	m.p = make([]Pair, len(bs))
	m.v = make([]float64, len(bs))
	for i, b := range bs {
		m.p[i] = centroid(b)
	}
	var ss, dof float64
	for i, b := range bs {
		if len(b) > 1 {
			a, c := m.p[max(0, i-1)], m.p[min(len(bs)-1, i+1)]
			ss += scatter(b, m.p[i], diff(c.Sys, a.Sys)/diff(c.Tracer, a.Tracer))
			dof += float64(len(b) - 1)
		}
	}
	sb := pairSigma(m.p)
	m.read = sb * sb
	if dof > 0 {
		m.read = max(minSigma*minSigma, ss/chi2Lower(dof))
	}
	for i, b := range bs {
		m.v[i] = max(sb*sb, m.read/float64(len(b)))
	}
	m.slope, m.inv = make([]float64, len(bs)), make([]float64, len(bs))
	for k := 1; k < len(m.p); k++ {
		a, b := m.p[k-1], m.p[k]
		m.slope[k] = float64(b.Sys-a.Sys) / float64(b.Tracer-a.Tracer)
		m.inv[k] = 1 / float64(b.Tracer-a.Tracer)
	}
	m.segs = segmentsOf(m)
}

// centroid is the mean pair of b, rounded to the ns; it lies within b's
// span in both clocks, so centroids of successive bursts keep their
// order. The arithmetic is on differences from b's first pair.
func centroid(b []Pair) Pair {
	var sr, ss float64
	for _, q := range b[1:] {
		sr += diff(q.Tracer, b[0].Tracer)
		ss += diff(q.Sys, b[0].Sys)
	}
	n := float64(len(b))
	return Pair{Tracer: b[0].Tracer + round(sr/n), Sys: b[0].Sys + round(ss/n)}
}

// scatter is the sum of squares of b's pairs' S off the line of slope
// dS/dR = rate through their mean, ns²; c is b's centroid (the mean to
// within rounding, which the mean of the deviations removes).
func scatter(b []Pair, c Pair, rate float64) float64 {
	n := float64(len(b))
	var sum, sq float64
	for _, q := range b {
		e := diff(q.Sys, c.Sys) - rate*diff(q.Tracer, c.Tracer)
		sum += e
		sq += e * e
	}
	return math.Max(0, sq-sum*sum/n)
}
