// Package align maps a node's trace timestamps onto the global timeline:
// tracer clock R to host clock S by interpolating between the node's
// (S, R) snapshot pairs, then S to global time with the clock model of the
// GraphCalc window that covers the reading. Each mapped time carries a 1σ
// uncertainty propagated from both steps.
package align

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Pair is one snapshot: the host clock S and the tracer clock R read back
// to back.
type Pair struct{ Sys, Tracer int64 }

// ErrSnapshots reports snapshot pairs that cannot define a mapping.
var ErrSnapshots = errors.New("align: unusable snapshot pairs")

// minSigma is the floor of every reported uncertainty, ns: readings are
// whole ns.
const minSigma = 1.0

// Snapshots maps R to S piecewise linearly through the snapshot pairs.
type Snapshots struct {
	p []Pair // sorted by Tracer, strictly increasing in both clocks
	// sigma is the 1σ error of one pair's S at its R, estimated from how
	// far each inner pair lies off the line through its neighbours.
	sigma float64
}

// NewSnapshots sorts the pairs by R and checks them: at least two, and S
// strictly increasing with R (a clock that stands still or runs backwards
// between two snapshots cannot be interpolated).
func NewSnapshots(pairs []Pair) (*Snapshots, error) {
	if len(pairs) < 2 {
		return nil, fmt.Errorf("%w: %d pairs, need at least 2", ErrSnapshots, len(pairs))
	}
	p := slices.Clone(pairs)
	slices.SortStableFunc(p, func(a, b Pair) int { return cmp.Compare(a.Tracer, b.Tracer) })
	for i := 1; i < len(p); i++ {
		if p[i].Tracer <= p[i-1].Tracer || p[i].Sys <= p[i-1].Sys {
			return nil, fmt.Errorf("%w: pairs %d and %d (R %d, %d; S %d, %d) are not strictly increasing in both clocks",
				ErrSnapshots, i-1, i, p[i-1].Tracer, p[i].Tracer, p[i-1].Sys, p[i].Sys)
		}
	}
	return &Snapshots{p: p, sigma: pairSigma(p)}, nil
}

// pairSigma estimates one pair's error from the second differences: with
// independent errors of σ on every pair, an inner pair b lies off the chord
// of its neighbours a and c, at fraction u of the way from a to c, by
// e_b − (1−u)·e_a − u·e_c, of variance σ²·(1 + (1−u)² + u²). The read skew
// of a pair (the time between its two reads) and any curvature of R against
// S over two periods both show up there. With fewer than three pairs
// nothing can be estimated and minSigma is returned.
func pairSigma(p []Pair) float64 {
	if len(p) < 3 {
		return minSigma
	}
	var ss float64
	for k := 1; k+1 < len(p); k++ {
		a, b, c := p[k-1], p[k], p[k+1]
		u := float64(b.Tracer-a.Tracer) / float64(c.Tracer-a.Tracer)
		d := float64(b.Sys-a.Sys) - u*float64(c.Sys-a.Sys)
		ss += d * d / (1 + (1-u)*(1-u) + u*u)
	}
	return max(minSigma, math.Sqrt(ss/float64(len(p)-2)))
}

// Len is the number of pairs.
func (m *Snapshots) Len() int { return len(m.p) }

// PairSigma is the estimated 1σ error of one pair, ns.
func (m *Snapshots) PairSigma() float64 { return m.sigma }

// Span returns the first and last pair's R.
func (m *Snapshots) Span() (first, last int64) { return m.p[0].Tracer, m.p[len(m.p)-1].Tracer }

// ToHost maps a tracer reading r to the host clock, rounded to the ns.
// Between two pairs it interpolates, and the uncertainty is that of the two
// pairs' errors weighted by the interpolation; outside the pairs it
// extrapolates along the nearest segment and reports extrapolated, and the
// uncertainty grows with the distance in units of that segment's length
// (the rate between the clocks is known no better than from that segment).
// The arithmetic is done on differences from the segment's first pair, so
// clocks of any magnitude (epoch ns included) keep ns precision.
func (m *Snapshots) ToHost(r int64) (s int64, sigma float64, extrapolated bool) {
	p := m.p
	k, _ := slices.BinarySearchFunc(p, r, func(q Pair, r int64) int { return cmp.Compare(q.Tracer, r) })
	// p[k-1].Tracer < r <= p[k].Tracer: the segment [k-1, k].
	k = max(1, min(len(p)-1, k))
	a, b := p[k-1], p[k]
	u := diff(r, a.Tracer) / float64(b.Tracer-a.Tracer)
	s = a.Sys + int64(math.Round(u*float64(b.Sys-a.Sys)))
	extrapolated = u < 0 || u > 1
	sigma = m.sigma * math.Sqrt((1-u)*(1-u)+u*u)
	return s, max(minSigma, sigma), extrapolated
}

// diff returns a − b as a float64, exactly when it fits in an int64.
func diff(a, b int64) float64 {
	d := a - b
	if (d < a) != (b > 0) { // overflowed
		return float64(a) - float64(b)
	}
	return float64(d)
}
