package estimate

import "math"

// MinFilter parameters.
const (
	minFilterFraction = 0.05
	// Below this many residual degrees of freedom the residual spread of the
	// kept points is itself too uncertain to trust alone.
	minFilterFewDOF = 8
)

// lowRTT splits the window (the x span of the midpoints) into 8 equal
// segments and keeps in each the ⌈fraction⌉ (at least one) probes of lowest
// round-trip delay, ties broken by send order, in their original order. It
// also returns the smallest and largest kept round-trip delay.
func lowRTT(s []sample, fraction float64) (kept []sample, minR, maxR int64, err error) {
	g, err := newSegments(s)
	if err != nil {
		return nil, 0, 0, err
	}
	var keep [nSegments]int
	for k := range nSegments {
		if n := g.count(k); n > 0 {
			keep[k] = max(1, int(math.Ceil(fraction*float64(n))))
		}
	}
	rtt := make([]float64, len(s))
	for i := range s {
		rtt[i] = float64(s[i].rtt())
	}
	all := countBelow(g.of, rtt, math.Inf(1))
	idx := lowestPerSegment(make([]int32, 0, int(fraction*float64(len(s)))+nSegments), g.of, rtt, &keep, math.Inf(1), &all, make([]float64, len(s)+nSegments))
	kept = make([]sample, len(idx))
	minR, maxR = int64(math.MaxInt64), int64(math.MinInt64)
	for j, i := range idx {
		kept[j] = s[i]
		r := s[i].rtt()
		minR, maxR = min(minR, r), max(maxR, r)
	}
	return kept, minR, maxR, nil
}

// fitMinFilter splits the window (the x span of the midpoints) into 8 equal
// segments, keeps in each the ⌈5%⌉ (at least one) probes of lowest
// round-trip delay, ties broken by send order, and fits a least squares line
// through their midpoints. A low round-trip delay bounds how asymmetric the
// probe's delays can have been, which is what makes the kept midpoints good.
//
// Sigma and AlphaSigma are that fit's standard errors, scaled by the square
// root of the pair design effect over the kept probes (see midpointFit): the
// two probes of a pure pair often both make the cut, with the same error.
// With fewer than 8 residual degrees of freedom the residual spread is floored by the spread
// the kept delays allow: a midpoint's error is at most half its excess
// round-trip delay, so the floor is (max−min kept RTT)/(2√3), the standard
// deviation of a uniform error over that range. Fewer than 3 kept probes
// (at most two non-empty segments) falls back to every probe. nPairs bounds
// the samples' pair numbers.
func fitMinFilter(s []sample, nPairs int, fit *Fit) error {
	kept, minR, maxR, err := lowRTT(s, minFilterFraction)
	if err != nil {
		return err
	}
	if len(kept) < 3 {
		return fitRegression(s, nPairs, fit)
	}
	l, err := midpointFit(kept, nPairs)
	if err != nil {
		return err
	}
	sd := l.s * math.Sqrt(l.deff)
	if l.n-2 < minFilterFewDOF {
		sd = max(sd, float64(maxR-minR)/(2*math.Sqrt(3)))
	}
	setLine(fit, l, sd)
	fit.Used = len(kept)
	return nil
}
