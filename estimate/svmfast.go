package estimate

import "math"

// A window of thousands of probes has thousands of points on each side, but
// only the few at the bottom of the forward cloud and the top of the reverse
// cloud can touch the corridor. solveSVMWindowed finds them without building
// the full hulls, and returns what solveSVM would: the same optimal slope
// (the first breakpoint at which d stops rising, as the argument below
// shows for the full problem too), b and d from the same supporting values
// (bit-identical in the tests).
//
// Slope window. For slopes a in [a0−δ, a0+δ], the forward point minimising
// y − a·x has v = y − a0·x ≤ min v + δ·(x span): any point above that is
// beaten by the minimiser of v at every such slope. So the lower hull of the
// forward points kept by that test gives exactly g(a) on the window, and
// likewise the reverse points for h(a). Elsewhere the kept points give a
// d̃(a) ≥ d(a) (fewer constraints). If the maximiser a* of d̃ lies strictly
// inside the window, d(a*) = d̃(a*) ≥ d̃(a) ≥ d(a) for every a: a* is the
// optimum of the full problem. Otherwise the window widens (×8, three times)
// and then the full solve runs. The guess a0 is the exact optimum for the
// per-block extreme points (svmBlocks blocks of consecutive probes each give
// their lowest forward and highest reverse point).
const (
	svmWindowedMin = 1024 // points per side below which solveSVM is as cheap
	svmBlocks      = 64
	svmWindow0     = 2e-7 // first half-width of the slope window
	svmWindowTries = 4
)

// solveSVMWindowed is solveSVM for large point sets; see above. f and r are
// in send order (x nearly sorted) and may be reordered.
func solveSVMWindowed(f, r []pt) (svmLine, error) {
	if min(len(f), len(r)) >= svmWindowedMin {
		if a0, ok := guessSlope(f, r); ok {
			if l, ok := windowedSolve(f, r, a0); ok {
				return l, nil
			}
		}
	}
	return solveSVM(f, r)
}

// guessSlope is the optimal slope for the per-block extreme points.
func guessSlope(f, r []pt) (float64, bool) {
	var bf, br [svmBlocks]pt
	for k := range svmBlocks {
		lo, hi := k*len(f)/svmBlocks, (k+1)*len(f)/svmBlocks
		bf[k] = f[lo]
		for _, p := range f[lo+1 : hi] {
			if p.y < bf[k].y {
				bf[k] = p
			}
		}
		lo, hi = k*len(r)/svmBlocks, (k+1)*len(r)/svmBlocks
		br[k] = r[lo]
		for _, p := range r[lo+1 : hi] {
			if p.y > br[k].y {
				br[k] = p
			}
		}
	}
	guess, err := solveSVM(bf[:], br[:])
	return guess.a, err == nil
}

// windowedSolve tries slope windows around a0; ok is false when none held
// the optimum strictly inside, and the full solve must run. f and r are not
// modified.
func windowedSolve(f, r []pt, a0 float64) (svmLine, bool) {
	spanF, spanR := xSpan(f), xSpan(r)
	kf := make([]pt, 0, 256)
	kr := make([]pt, 0, 256)
	delta := svmWindow0
	for range svmWindowTries {
		kf = keepNear(kf[:0], f, a0, delta*spanF, 1)
		kr = keepNear(kr[:0], r, a0, delta*spanR, -1)
		l, err := solveSVM(kf, kr)
		if err == nil && l.a > a0-delta && l.a < a0+delta {
			return l, true
		}
		delta *= 8
	}
	return svmLine{}, false
}

// keepNear appends to dst the points of p whose v = side·(y − a0·x) is
// within tol (+1 ns for rounding) of the smallest: the forward points
// (side 1) that can be lowest, or the reverse points (side −1) that can be
// highest, for some slope within the window.
func keepNear(dst, p []pt, a0, tol float64, side float64) []pt {
	m := math.Inf(1)
	for _, q := range p {
		m = min(m, side*(float64(q.y)-a0*float64(q.x)))
	}
	lim := m + tol + 1
	for _, q := range p {
		if side*(float64(q.y)-a0*float64(q.x)) <= lim {
			dst = append(dst, q)
		}
	}
	return dst
}

// xSpan is the x range of p (len(p) > 0).
func xSpan(p []pt) float64 {
	lo, hi := p[0].x, p[0].x
	for _, q := range p {
		lo, hi = min(lo, q.x), max(hi, q.x)
	}
	return float64(hi) - float64(lo)
}
