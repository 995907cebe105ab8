package estimate

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

// MinFilter parameters.
const (
	minFilterSegments = 8
	minFilterFraction = 0.05
	// Below this many residual degrees of freedom the residual spread of the
	// kept points is itself too uncertain to trust alone.
	minFilterFewDOF = 8
)

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
// lowRTT splits the window (the x span of the midpoints) into 8 equal
// segments and keeps in each the ⌈fraction⌉ (at least one) probes of lowest
// round-trip delay, ties broken by send order, in their original order. It
// also returns the smallest and largest kept round-trip delay.
func lowRTT(s []sample, fraction float64) (kept []sample, minR, maxR int64, err error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range s {
		x := s[i].midX()
		lo, hi = min(lo, x), max(hi, x)
	}
	span := hi - lo
	if !(span > 0) {
		return nil, 0, 0, errDegenerate
	}
	seg := make([]uint8, len(s))
	var count [minFilterSegments]int
	for i := range s {
		k := int((s[i].midX() - lo) / span * minFilterSegments)
		k = max(0, min(minFilterSegments-1, k))
		seg[i] = uint8(k)
		count[k]++
	}
	// Group the RTTs by segment, then find in each the RTT at or under
	// which its lowest ⌈fraction⌉ lie, and how many probes exactly at that RTT
	// may still be taken.
	var start, fill [minFilterSegments + 1]int
	for k := range minFilterSegments {
		start[k+1] = start[k] + count[k]
	}
	copy(fill[:], start[:])
	rtts := make([]int64, len(s))
	for i := range s {
		rtts[fill[seg[i]]] = s[i].rtt()
		fill[seg[i]]++
	}
	var thr [minFilterSegments]int64
	var atThr [minFilterSegments]int
	for k := range minFilterSegments {
		if count[k] == 0 {
			continue
		}
		g := rtts[start[k]:start[k+1]]
		keep := max(1, int(math.Ceil(fraction*float64(count[k]))))
		thr[k] = stats.Select(g, keep-1)
		below := 0
		for _, r := range g {
			if r < thr[k] {
				below++
			}
		}
		atThr[k] = keep - below
	}
	kept = make([]sample, 0, int(fraction*float64(len(s)))+minFilterSegments)
	minR, maxR = int64(math.MaxInt64), int64(math.MinInt64)
	for i := range s {
		p := &s[i]
		k, r := seg[i], p.rtt()
		switch {
		case r < thr[k]:
		case r == thr[k] && atThr[k] > 0:
			atThr[k]--
		default:
			continue
		}
		kept = append(kept, *p)
		minR, maxR = min(minR, r), max(maxR, r)
	}
	return kept, minR, maxR, nil
}

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
