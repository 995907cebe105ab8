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

// Snapshots maps R to S piecewise linearly through the snapshot samples.
type Snapshots struct {
	// p holds one pair per sample, the centroid of its burst (see
	// NewSnapshots), sorted by Tracer, strictly increasing in both clocks;
	// v[i] is the variance of p[i]'s S at its R, ns².
	p []Pair
	v []float64
	// slope[k] and inv[k] are segment [k-1, k]'s dS/dR and 1/ΔR, worked
	// out once: a division per reading would stall the rounding after it.
	slope, inv []float64
	// segs holds the same per segment, for Node.AlignSpan's fast path (see
	// span.go).
	segs []segment
	// read is the variance of one reading's own error, ns²: that of one
	// pair, which holds a reading of either clock.
	read float64
	// first and last are the first and last pair's R, of all pairs read.
	first, last int64
	pairs       int // pairs read, pairs of equal R merged
	// steps are the host clock's steps placed on the tracer clock, in
	// order (NewSnapshotsStepped); the pairs' S has them taken out.
	steps []tracerStep
}

// NewSnapshots sorts the pairs by R, merges pairs of equal R (see
// mergeEqualR), and checks them: at least two, and S strictly increasing
// with R (a clock that stands still or runs backwards between two
// snapshots cannot be interpolated).
//
// Pairs that follow each other within burstGap of R form a burst: the
// pairs a sampler reads in quick succession at one sample. A burst counts
// as one pair at its centroid, as precise as its pairs' mean, and the
// scatter of its pairs about a line through it (over a few ms, where
// neither clock can wander) measures the error of one pair directly.
// burstGap 0 makes every pair its own burst, and so do pairs that would
// all fall in one. See bursts.go.
func NewSnapshots(pairs []Pair, burstGap int64) (*Snapshots, error) {
	if len(pairs) < 2 {
		return nil, fmt.Errorf("%w: %d pairs, need at least 2", ErrSnapshots, len(pairs))
	}
	p := slices.Clone(pairs)
	slices.SortStableFunc(p, func(a, b Pair) int { return cmp.Compare(a.Tracer, b.Tracer) })
	p = mergeEqualR(p)
	if len(p) < 2 {
		return nil, fmt.Errorf("%w: %d distinct pairs, need at least 2", ErrSnapshots, len(p))
	}
	for i := 1; i < len(p); i++ {
		if p[i].Tracer <= p[i-1].Tracer || p[i].Sys <= p[i-1].Sys {
			return nil, fmt.Errorf("%w: pairs %d and %d (R %d, %d; S %d, %d) are not strictly increasing in both clocks",
				ErrSnapshots, i-1, i, p[i-1].Tracer, p[i].Tracer, p[i-1].Sys, p[i].Sys)
		}
	}
	m := &Snapshots{first: p[0].Tracer, last: p[len(p)-1].Tracer, pairs: len(p)}
	bs := bursts(p, burstGap)
	if len(bs) < 2 { // one burst is no mapping: take its pairs one by one
		bs = bursts(p, 0)
	}
	m.fit(bs)
	return m, nil
}

// mergeEqualR replaces each run of pairs with the same R (the same
// snapshot taken twice, or a tracer clock too coarse to tell two
// snapshots apart) by one pair at their mean S. p is sorted by R.
func mergeEqualR(p []Pair) []Pair {
	out := p[:0]
	for i := 0; i < len(p); {
		j, sum := i, 0.0
		for ; j < len(p) && p[j].Tracer == p[i].Tracer; j++ {
			sum += float64(p[j].Sys - p[i].Sys)
		}
		out = append(out, Pair{Tracer: p[i].Tracer, Sys: p[i].Sys + int64(math.Round(sum/float64(j-i)))})
		i = j
	}
	return out
}

// pairSigma estimates one pair's error from the second differences: with
// independent errors of σ on every pair, an inner pair b lies off the chord
// of its neighbours a and c, at fraction u of the way from a to c, by
// e_b − (1−u)·e_a − u·e_c, of variance σ²·(1 + (1−u)² + u²). The read skew
// of a pair (the time between its two reads) and any curvature of R against
// S over two periods both show up there.
//
// A run often has only a handful of pairs (one every 4 s), and a variance
// estimated from k second differences is itself uncertain by √(2/k); so
// the returned σ is the estimate's upper 95% confidence bound,
// σ̂·√(k/χ²₀.₀₅(k)) (×3.0 for k = 3, ×2.1 for k = 5, ×1.4 for k = 20). With
// fewer than three pairs nothing can be estimated and minSigma is returned.
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
	k := float64(len(p) - 2)
	return max(minSigma, math.Sqrt(ss/k)*math.Sqrt(k/chi2Lower(k)))
}

// chi2Lower is the 5% quantile of the χ² distribution with k degrees of
// freedom, by the Wilson–Hilferty approximation (within 7% of the exact
// value for k ≥ 1; floored so that k = 1 gives a factor of about 5).
func chi2Lower(k float64) float64 {
	const z = -1.6449 // the standard normal's 5% quantile
	h := 2 / (9 * k)
	c := 1 - h + z*math.Sqrt(h)
	return max(k/25, k*c*c*c)
}

// Len is the number of pairs (pairs of equal R counted once).
func (m *Snapshots) Len() int { return m.pairs }

// Samples is the number of samples: bursts of pairs, each one pair of the
// mapping.
func (m *Snapshots) Samples() int { return len(m.p) }

// PairSigma is the estimated 1σ error of one pair, ns (an upper
// confidence bound, see fit).
func (m *Snapshots) PairSigma() float64 { return max(minSigma, math.Sqrt(m.read)) }

// Span returns the first and last pair's R.
func (m *Snapshots) Span() (first, last int64) { return m.first, m.last }

// ToHost maps a tracer reading r to the host clock, rounded to the ns.
// Between two samples it interpolates, and the uncertainty is that of the
// two samples' errors weighted by the interpolation plus the reading's own
// (taken as large as a pair's); outside the samples it extrapolates along
// the nearest segment, and the uncertainty grows with the distance in
// units of that segment's length (the rate between the clocks is known no
// better than from that segment). A reading before the first pair read or
// after the last is reported extrapolated.
// The arithmetic is done on differences from the segment's first pair, so
// clocks of any magnitude (epoch ns included) keep ns precision. A reading
// that maps beyond the int64 range of ns gives a meaningless s here;
// Node.Align flags it Overflow.
func (m *Snapshots) ToHost(r int64) (s int64, sigma float64, extrapolated bool) {
	k := 0
	return m.toHost(r, &k)
}

// toHost is ToHost starting from the segment *seg (0: none), which it
// sets to the segment used: successive readings of a trace mostly fall in
// the segment of the last one, and checking that is cheaper than a
// search. The result is ToHost's, whatever *seg holds.
func (m *Snapshots) toHost(r int64, seg *int) (s int64, sigma float64, extrapolated bool) {
	s, q, f := m.toHostQ(r, seg)
	return s, sigmaOf(q), f&Extrapolated != 0
}

// toHostQ is toHost with the uncertainty left as its variance q, ns², which
// sigmaOf turns into it, and what it assumed as Flags: Extrapolated, and
// Overflow where s lies beyond the int64 range.
func (m *Snapshots) toHostQ(r int64, seg *int) (s int64, q float64, f Flags) {
	p := m.p
	// The segment [k-1, k] with p[k-1].Tracer < r <= p[k].Tracer, the
	// first and last segments extended outwards.
	k := *seg
	if k < 1 || k > len(p)-1 || (k > 1 && p[k-1].Tracer >= r) || (k < len(p)-1 && r > p[k].Tracer) {
		k, _ = slices.BinarySearchFunc(p, r, func(q Pair, r int64) int { return cmp.Compare(q.Tracer, r) })
		k = max(1, min(len(p)-1, k))
		*seg = k
	}
	a := p[k-1]
	dr := diff(r, a.Tracer)
	u := dr * m.inv[k]
	x := dr * m.slope[k]
	d := round(x)
	s = a.Sys + d
	if r < m.first || r > m.last {
		f = Extrapolated
	}
	// Overflowed: the sum went the wrong way, or x was beyond round's
	// reach.
	if (s < a.Sys) != (d < 0) || !(x >= -1<<63 && x < 1<<63) {
		f |= Overflow
	}
	// The samples' errors, weighted by the interpolation, and the
	// reading's own: a tracer reading is as noisy as a pair at most.
	return s, (1-u)*(1-u)*m.v[k-1] + u*u*m.v[k] + m.read, f
}

// sigmaOf is the uncertainty of a reading whose toHostQ gave q; it grows
// with q.
func sigmaOf(q float64) float64 { return max(minSigma, math.Sqrt(q)) }

// round is int64(math.Round(x)), rounding halves away from zero, and
// faster where |x| < 2^62.
func round(x float64) int64 {
	if x > -1<<62 && x < 1<<62 {
		return roundNear(x)
	}
	return int64(math.Round(x))
}

// roundNear is round for |x| < 2^62, small enough to be inlined.
func roundNear(x float64) int64 {
	t := int64(x) // towards zero
	// x − t is exact (they are within 1 of each other, or x is whole),
	// and so is its double, which truncates to +1 from a half up, to −1
	// from a half down, and to 0 between: no branch to mispredict on the
	// fraction.
	return t + int64(2*(x-float64(t)))
}

// diff returns a − b as a float64, exactly when it fits in an int64.
func diff(a, b int64) float64 {
	d := a - b
	if (d < a) != (b > 0) { // overflowed
		return float64(a) - float64(b)
	}
	return float64(d)
}
