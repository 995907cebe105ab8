package estimate

import (
	"cmp"
	"math/bits"
	"slices"
)

// pt is a point with integer ns coordinates (x relative to Origin). The hulls
// are built with exact 128-bit orientation tests, so no rounding can make a
// hull non-convex however far the points lie from Origin.
type pt struct{ x, y int64 }

func cmpPt(p, q pt) int {
	if c := cmp.Compare(p.x, q.x); c != 0 {
		return c
	}
	return cmp.Compare(p.y, q.y)
}

// sortPoints sorts by x, then y. The points arrive nearly sorted (send
// order: the forward points' T1 are in order, the reverse points' T4 only
// swap with a neighbour or two), so an insertion sort does it in close to
// linear time; past a budget of 8 moves per point (a src clock step inside
// the window with step detection off, say) it hands over to pdqsort.
func sortPoints(p []pt) {
	budget := 8 * len(p)
	for i := 1; i < len(p); i++ {
		q := p[i]
		j := i
		for j > 0 && cmpPt(p[j-1], q) > 0 {
			p[j] = p[j-1]
			j--
		}
		p[j] = q
		if budget -= i - j; budget < 0 {
			slices.SortFunc(p, cmpPt)
			return
		}
	}
}

// lowerHull returns the lower convex hull of p, left to right, with strictly
// increasing x and strictly increasing edge slopes (no collinear vertices).
// p is sorted in place.
func lowerHull(p []pt) []pt { return hull(p, 1) }

// upperHull returns the upper convex hull of p, left to right, with strictly
// increasing x and strictly decreasing edge slopes. p is sorted in place.
func upperHull(p []pt) []pt { return hull(p, -1) }

// hull is Andrew's monotone chain: the lower hull for side 1, the upper for
// side −1. Of points sharing an x it keeps the lowest (lower hull) or the
// highest (upper hull).
func hull(p []pt, side int) []pt {
	sortPoints(p)
	small := smallSpan(p)
	h := make([]pt, 0, 64)
	for i, q := range p {
		if side > 0 && i > 0 && q.x == p[i-1].x || side < 0 && i+1 < len(p) && p[i+1].x == q.x {
			continue
		}
		for len(h) >= 2 {
			o, a := h[len(h)-2], h[len(h)-1]
			var turn int
			if small {
				turn = cmp.Compare((a.x-o.x)*(q.y-o.y), (a.y-o.y)*(q.x-o.x))
			} else {
				turn = orient(o, a, q)
			}
			if side*turn > 0 {
				break
			}
			h = h[:len(h)-1]
		}
		h = append(h, q)
	}
	return h
}

// smallSpan reports whether every cross product of coordinate differences
// within p fits in int64: x span and y span together need at most 62 bits.
func smallSpan(p []pt) bool {
	if len(p) == 0 {
		return true
	}
	xlo, xhi, ylo, yhi := p[0].x, p[0].x, p[0].y, p[0].y
	for _, q := range p {
		xlo, xhi = min(xlo, q.x), max(xhi, q.x)
		ylo, yhi = min(ylo, q.y), max(yhi, q.y)
	}
	// Spans are computed in uint64, which cannot overflow.
	return bits.Len64(uint64(xhi)-uint64(xlo))+bits.Len64(uint64(yhi)-uint64(ylo)) <= 62
}

// slope is the slope of the segment p→q (p.x < q.x).
func slope(p, q pt) float64 { return float64(q.y-p.y) / float64(q.x-p.x) }

// orient is the sign of the cross product (a−o)×(b−o): > 0 for a left
// (counter-clockwise) turn o→a→b, < 0 for a right turn, 0 when collinear.
// It is exact, in 128 bits, for coordinate differences that fit in int64.
func orient(o, a, b pt) int {
	h1, l1 := mul128(a.x-o.x, b.y-o.y)
	h2, l2 := mul128(a.y-o.y, b.x-o.x)
	if h1 != h2 {
		return cmp.Compare(h1, h2)
	}
	return cmp.Compare(l1, l2)
}

// mul128 returns the exact two's complement 128-bit product a·b.
func mul128(a, b int64) (hi int64, lo uint64) {
	neg := (a < 0) != (b < 0)
	h, l := bits.Mul64(uabs(a), uabs(b))
	if neg {
		l = ^l + 1
		h = ^h
		if l == 0 {
			h++
		}
	}
	return int64(h), l
}

func uabs(v int64) uint64 {
	if v < 0 {
		return uint64(^v) + 1
	}
	return uint64(v)
}
