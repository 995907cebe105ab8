package estimate

import "math"

// offsetOnly fits the pairs [from, to) of all, too few for a fit of their
// own, from other, the fit of the same edge's pairs [ofrom, oto) on the
// other side of a clock step: a step moves the offset, not the rate, nor
// the paths' delays. So the slope is other's, and the offset is placed in
// the probes' corridor as other's line sits in its own: each forward
// point lies its delay above the line and each reverse point its delay
// below, and the smallest delays of each direction on the other side (the
// floors) are taken to hold here too. The lowest forward intercept less
// the forward floor and the highest reverse intercept plus the reverse
// floor both estimate the offset, each high or low by how far the few
// probes here stayed above their floors; Beta is their mean and Sigma half
// their difference, with other's Sigma and the slope's error carried from
// the points' mean x to Origin.
func offsetOnly(all []sample, from, to int, other Fit, ofrom, oto int) Fit {
	a, b := other.Alpha, other.Beta
	up, low := math.Inf(1), math.Inf(-1)       // intercepts here
	floorF, floorR := math.Inf(1), math.Inf(1) // delays of the other side
	var sx float64
	n := 0
	for i := range all {
		s := &all[i]
		fi, ri := float64(s.fy)-a*float64(s.fx), float64(s.ry)-a*float64(s.rx)
		switch k := int(s.pair); {
		case k >= from && k < to:
			up, low = min(up, fi), max(low, ri)
			sx += s.midX()
			n++
		case k >= ofrom && k < oto:
			floorF, floorR = min(floorF, fi-b), min(floorR, b-ri)
		}
	}
	hi, lo := up-floorF, low+floorR
	sigma := math.Sqrt(max((hi-lo)*(hi-lo)/4, minSigma*minSigma) + other.Sigma*other.Sigma +
		(other.AlphaSigma*sx/float64(n))*(other.AlphaSigma*sx/float64(n)))
	return Fit{
		Kind: other.Kind, Alpha: a, Beta: (hi + lo) / 2, Sigma: sigma, AlphaSigma: other.AlphaSigma,
		Pairs: to - from, Used: n, Margin: (up - low) / 2,
	}
}
