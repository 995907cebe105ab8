package estimate

import (
	"errors"
	"math"
)

// errUnbounded reports point sets that a steep enough line separates by any
// margin: every reverse point lies right of every forward point, or left.
var errUnbounded = errors.New("svm: unbounded margin (forward and reverse points do not interleave in time)")

// svmLine is the maximum-margin corridor: centre y = a·x + b, half-width d.
type svmLine struct{ a, b, d float64 }

// solveSVM finds the line y = a·x + b maximising d subject to
// y_f − (a·x_f + b) ≥ d for every forward point and (a·x_r + b) − y_r ≥ d for
// every reverse point, exactly.
//
// For a fixed slope a, g(a) = min_f(y_f − a·x_f) is concave and
// h(a) = max_r(y_r − a·x_r) convex, both piecewise linear, and the best
// d(a) = (g(a) − h(a))/2 with b = (g(a) + h(a))/2. g's breakpoints are the
// edge slopes of the forward points' lower hull, h's those of the reverse
// points' upper hull; between breakpoints d'(a) = (x_r* − x_f*)/2 where x_f*
// is the lower-hull vertex supporting slope a (moving right as a grows) and
// x_r* the upper-hull vertex (moving left). Walking the two sorted slope
// sequences in increasing order, the optimum is the first breakpoint at
// which d' stops being positive. O(n log n) for the sort (close to O(n) for
// nearly sorted input), O(n) for the rest. f and r are reordered.
func solveSVM(f, r []pt) (svmLine, error) {
	if len(f) == 0 || len(r) == 0 {
		return svmLine{}, errDegenerate
	}
	F, R := lowerHull(f), upperHull(r)
	i, j := 0, len(R)-1
	a, moved := 0.0, false
	for {
		if R[j].x <= F[i].x { // d'(a) ≤ 0 from here on
			if !moved {
				if R[j].x < F[i].x {
					return svmLine{}, errUnbounded
				}
				// d is flat to the left: take the first breakpoint, or
				// slope 0 when there is none.
				if nf, nr, ok := nextSlopes(F, R, i, j); ok {
					a = min(nf, nr)
				}
			}
			break
		}
		nf, nr, ok := nextSlopes(F, R, i, j)
		if !ok {
			return svmLine{}, errUnbounded
		}
		a, moved = min(nf, nr), true
		if nf == a {
			i++
		}
		if nr == a {
			j--
		}
	}
	g := float64(F[i].y) - a*float64(F[i].x)
	h := float64(R[j].y) - a*float64(R[j].x)
	return svmLine{a: a, b: (g + h) / 2, d: (g - h) / 2}, nil
}

// nextSlopes returns the next breakpoints of g and h after the current
// vertices (+Inf where a hull has none left); ok is false when neither has.
func nextSlopes(F, R []pt, i, j int) (nf, nr float64, ok bool) {
	nf, nr = math.Inf(1), math.Inf(1)
	if i+1 < len(F) {
		nf = slope(F[i], F[i+1])
	}
	if j > 0 {
		nr = slope(R[j-1], R[j])
	}
	return nf, nr, i+1 < len(F) || j > 0
}

// svmEdgeK is how many points nearest each corridor edge estimate that
// edge's noise.
const svmEdgeK = 10

// fitSVM fits the maximum-margin line through the forward and reverse
// points of every used probe (fitCorridor), then refines it (refineSVM) and
// keeps the refined line when its Sigma is the smaller. nPairs bounds the
// samples' pair numbers.
func fitSVM(s []sample, nPairs int, fit *Fit) error {
	l, err := fitCorridor(s, fit)
	if err != nil {
		return err
	}
	if e, ok := refineSVM(s, nPairs, l); ok {
		fit.Alpha, fit.Beta = e.a, (e.bf+e.br)/2
		fit.Sigma, fit.AlphaSigma = floorSigma(svmRefineSigmaScale*e.sigma, svmRefineSigmaScale*e.aSigma)
		fit.Refined = true
	}
	return nil
}

// fitCorridor stores in fit the exact maximum-margin corridor of the
// samples' forward and reverse points; see solveSVM for the solver,
// solveSVMWindowed for how large windows are sped up, and svmSigma for the
// uncertainty rule.
func fitCorridor(s []sample, fit *Fit) (svmLine, error) {
	f := make([]pt, len(s))
	r := make([]pt, len(s))
	xlo, xhi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range s {
		p := &s[i]
		f[i] = pt{p.fx, p.fy}
		r[i] = pt{p.rx, p.ry}
		xlo, xhi = min(xlo, p.fx, p.rx), max(xhi, p.fx, p.rx)
	}
	l, err := solveSVMWindowed(f, r)
	if err != nil {
		return l, err
	}
	fit.Alpha, fit.Beta, fit.Margin = l.a, l.b, l.d
	fit.Used = len(s)
	fit.Sigma, fit.AlphaSigma = svmSigma(f, r, l, float64(xlo), float64(xhi))
	return l, nil
}

// svmSigma derives the uncertainty of the svm fit from how sharply the two
// corridor edges are determined. For each side it takes the svmEdgeK points
// nearest the edge; their distances from it are the lowest order statistics
// of delay-plus-noise near its floor, and their standard deviation σ_side
// says how densely points crowd the edge. The edge is fixed by the one or
// two most extreme points, not by an average of the k, so there is no 1/√k:
// the extreme's own fluctuation is comparable to that spread (about 1× when
// points crowd the floor uniformly, as under exponential jitter without read
// noise; about 2× for a Gaussian-tailed edge, as when read noise dominates
// the last few ns). The corridor centre moves by half the difference of the
// edges, so one end of the window is pinned to within
//
//	σ_e = svmSigmaScale · 0.5·√(σ_f² + σ_r²),   svmSigmaScale = 1.75,
//
// the scale calibrated by TestCalibration and the regimes in it (observed
// ratios of true to reported error from 0.62 to 1.15 for Beta, 0.67 to 1.21
// for Alpha). The line
// rests on support points near both ends of the window, whose errors are
// independent, so the centre at relative position u of the x span
// [x_lo, x_hi] (u = 0 at x_lo) has σ(u) = σ_e·√((1−u)² + u²); Beta is at
// Origin (x = 0, normally u = 0). The slope gets σ_e·√3/span, the ratio
// between slope and end-point errors of a least squares line over evenly
// spread points: the support points' lever arm is shorter than the span, and
// √2/span (ends pinned exactly at x_lo and x_hi) under-reports by about 1.4.
// Sigma is floored at 1 ns (AlphaSigma scaled with it).
func svmSigma(f, r []pt, l svmLine, xlo, xhi float64) (sigma, alphaSigma float64) {
	var nf, nr kSmallest
	for _, p := range f {
		nf.add(float64(p.y) - (l.a*float64(p.x) + l.b) - l.d)
	}
	for _, p := range r {
		nr.add((l.a*float64(p.x) + l.b) - float64(p.y) - l.d)
	}
	sf, sr := nf.stddev(), nr.stddev()
	se := svmSigmaScale * 0.5 * math.Sqrt(sf*sf+sr*sr)
	span := xhi - xlo
	if !(span > 0) {
		return max(se, minSigma), max(se, minSigma)
	}
	u := -xlo / span
	sigma = se * math.Sqrt((1-u)*(1-u)+u*u)
	alphaSigma = se * math.Sqrt(3) / span
	if sigma < minSigma {
		k := minSigma / sigma
		if math.IsInf(k, 0) || math.IsNaN(k) {
			return minSigma, minSigma * math.Sqrt(3) / span
		}
		sigma, alphaSigma = minSigma, alphaSigma*k
	}
	return sigma, alphaSigma
}

// svmSigmaScale calibrates svmSigma; see TestCalibration.
const svmSigmaScale = 1.75

// kSmallest keeps the svmEdgeK smallest values added, sorted ascending.
type kSmallest struct {
	v [svmEdgeK]float64
	n int
}

// add offers x.
func (k *kSmallest) add(x float64) {
	if k.n == svmEdgeK {
		if x >= k.v[svmEdgeK-1] {
			return
		}
		k.n--
	}
	i := k.n
	for i > 0 && k.v[i-1] > x {
		k.v[i] = k.v[i-1]
		i--
	}
	k.v[i] = x
	k.n++
}

// stddev is the sample standard deviation of the kept values (0 for < 2).
func (k *kSmallest) stddev() float64 {
	if k.n < 2 {
		return 0
	}
	var m float64
	for _, x := range k.v[:k.n] {
		m += x
	}
	m /= float64(k.n)
	var ss float64
	for _, x := range k.v[:k.n] {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(k.n-1))
}
