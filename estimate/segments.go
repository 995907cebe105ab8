package estimate

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

// nSegments is how many equal time segments minfilter and the svm
// refinement split a window into, so that the points they keep are spread
// over the whole window and pin the slope as well as the offset.
const nSegments = 8

// segments assigns the samples of a window to nSegments equal segments of
// the x span of their midpoints.
type segments struct {
	of    []uint8 // segment of each sample
	start [nSegments + 1]int
}

// newSegments splits s; it fails with errDegenerate when every midpoint
// has the same x.
func newSegments(s []sample) (*segments, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range s {
		x := s[i].midX()
		lo, hi = min(lo, x), max(hi, x)
	}
	span := hi - lo
	if !(span > 0) {
		return nil, errDegenerate
	}
	g := &segments{of: make([]uint8, len(s))}
	var count [nSegments]int
	for i := range s {
		k := int((s[i].midX() - lo) / span * nSegments)
		k = max(0, min(nSegments-1, k))
		g.of[i] = uint8(k)
		count[k]++
	}
	for k := range nSegments {
		g.start[k+1] = g.start[k] + count[k]
	}
	return g, nil
}

// count is the number of samples in segment k.
func (g *segments) count(k int) int { return g.start[k+1] - g.start[k] }

// segCounts counts, per segment, the values of v (of[i] is the segment of
// v[i]) and those below limit.
type segCounts struct{ below, total [nSegments]int }

// countBelow returns v's segCounts for limit.
func countBelow(of []uint8, v []float64, limit float64) segCounts {
	var c segCounts
	for i, k := range of {
		c.total[k]++
		c.below[k] += isBelow(v[i], limit)
	}
	return c
}

// lowestPerSegment appends to dst, in order, the indices of the keep[k]
// values of v of lowest value among those of segment k (of[i] is the
// segment of v[i]), all of them when keep[k] exceeds the segment's count;
// ties go to the earlier index. Values at or above limit are looked at only
// in segments with fewer than keep[k] below it (+Inf looks at every
// value); c must be countBelow(of, v, limit). buf is scratch of at least
// len(v) + nSegments.
func lowestPerSegment(dst []int32, of []uint8, v []float64, keep *[nSegments]int, limit float64, c *segCounts, buf []float64) []int32 {
	// Gather each segment's values into its own run of buf, branch-free: a
	// value is written whether it is wanted or not and the run moves on
	// when it is, so every run has one slot of slack.
	var all [nSegments]int
	var start, fill [nSegments + 1]int
	for k := range nSegments {
		size := c.below[k]
		if c.below[k] < min(keep[k], c.total[k]) {
			all[k], size = 1, c.total[k]
		}
		start[k+1] = start[k] + size + 1
	}
	fill = start
	for i, k := range of {
		buf[fill[k]] = v[i]
		fill[k] += isBelow(v[i], limit) | all[k]
	}
	var thr [nSegments]float64
	var atThr [nSegments]int
	for k := range nSegments {
		want := min(keep[k], c.total[k])
		if want <= 0 {
			thr[k] = math.Inf(-1)
			continue
		}
		seg := buf[start[k]:fill[k]]
		thr[k] = stats.Select(seg, want-1)
		n := 0
		for _, x := range seg {
			n += isBelow(x, thr[k])
		}
		atThr[k] = want - n
	}
	for i, k := range of {
		switch x := v[i]; {
		case x < thr[k]:
		case x == thr[k] && atThr[k] > 0:
			atThr[k]--
		default:
			continue
		}
		dst = append(dst, int32(i))
	}
	return dst
}

// isBelow is 1 when v < limit and 0 otherwise (NaN compares false). The
// compiler makes it a flag-setting compare (SETcc), not a branch, which
// would mispredict on values in random order.
func isBelow(v, limit float64) int {
	r := 0
	if v < limit {
		r = 1
	}
	return r
}
