package estimate

import (
	"math"
	"sort"

	"github.com/chronosync/chronosync/analysis/stats"
)

// Step detection. An NTP-like phase jump of either clock inside the window
// moves every later midpoint offset by the jump (a src step also moves x, so
// the walk is in send order, not x order). The walk looks at the
// drift-corrected midpoint offsets z of every probe of every complete pair
// and flags a candidate wherever z differs by more than the threshold from
// one of the stepLookBack preceding probes (looking further back than one
// probe catches a step that falls while probes are in flight: they see part
// of it). A candidate is a step only when it persists and the round-trip
// delay does not share it: the median z of the next stepWindow probes (at
// least stepMinAfter of them) differs from the median z of the previous
// stepWindow probes (since the last step) by more than the threshold, and
// the median round-trip delay moved by less than half as much; within
// stepMinAfter probes of the window's end, every probe after it must also
// be off by more than the threshold on the same side. One-sided
// queueing that lifts z by q/2 lifts the round-trip delay by q, so it is
// never taken for a step; spikes shorter than half the window are outvoted
// by the medians. After the last step, up to stepClean probes in flight
// across it are skipped: those whose z or round-trip delay is off the
// post-step medians by more than half the threshold (a src step puts the
// whole jump into the round-trip delay of a probe it falls inside). Only the
// pairs sent wholly from there on are kept.
const (
	stepWindow   = 16
	stepMinAfter = 4
	stepLookBack = 3
	stepClean    = 4
)

// stepCut is where detectStep found the last step: the pairs wholly after
// it start at cut; the pairs of the segment before it (after the step
// before that, if any) are [preFrom, preTo); after is the index into the
// probes of the last probe of that segment (−1 when it is empty).
type stepCut struct {
	step           bool
	cut            int
	preFrom, preTo int
	after          int32
}

// detectStep finds the last step (see stepCut). s holds every probe of
// every pair, in send order. The probes in flight across the step are
// skipped on both sides: after it, up to stepClean whose z or round-trip
// delay is off the post-step medians by more than half the threshold;
// before it, up to stepClean likewise off the pre-step medians.
func detectStep(s []sample, pairs []pair, th float64) stepCut {
	n := len(s)
	if n < 3 {
		return stepCut{}
	}
	drift := robustDrift(s)
	z := func(i int) float64 { return s[i].midY() - drift*s[i].midX() }
	rtt := func(i int) float64 { return float64(s[i].rtt()) }
	last, prev, found := 0, 0, 0 // sample index of the last step, of the one before, where the last was found
	step := false
	var back [stepLookBack]float64 // z of the probes before i, newest first
	back[0] = z(0)
	for i := 1; i < n; i++ {
		zi := z(i)
		jump := 0.0
		for j := range min(i-last, stepLookBack) {
			jump = max(jump, math.Abs(zi-back[j]))
		}
		copy(back[1:], back[:stepLookBack-1])
		back[0] = zi
		if jump <= th {
			continue
		}
		lo, hi := max(last, i-stepWindow), min(n, i+stepWindow)
		preZ := medianOf(z, lo, i)
		dz := medianOf(z, i, hi) - preZ
		drtt := medianOf(rtt, i, hi) - medianOf(rtt, lo, i)
		if math.Abs(dz) > th && math.Abs(drtt) < math.Abs(dz)/2 && (n-i >= stepMinAfter || allBeyond(z, i, n, preZ, dz, th)) {
			prev, last, found, step = last, i, i, true
		}
	}
	if !step {
		return stepCut{}
	}
	hi := min(n, last+stepWindow)
	postZ, postR := medianOf(z, last, hi), medianOf(rtt, last, hi)
	for k := last; k < min(n-1, last+stepClean); k++ {
		if math.Abs(z(k)-postZ) <= th/2 && math.Abs(rtt(k)-postR) <= th/2 {
			break
		}
		last = k + 1
	}
	// The segment before the step: from the previous step's first probe
	// to the last probe that agrees with its own medians.
	end := found // one past the segment's last probe
	if end > prev {
		lo := max(prev, end-stepWindow)
		preZ, preR := medianOf(z, lo, end), medianOf(rtt, lo, end)
		for k := end - 1; k > max(prev, end-1-stepClean); k-- {
			if math.Abs(z(k)-preZ) <= th/2 && math.Abs(rtt(k)-preR) <= th/2 {
				break
			}
			end = k
		}
	}
	c := stepCut{step: true, after: -1}
	c.cut = sort.Search(len(pairs), func(k int) bool { return pairs[k].first() >= s[last].idx })
	c.preFrom = sort.Search(len(pairs), func(k int) bool { return pairs[k].first() >= s[prev].idx })
	if end > prev {
		lastIdx := s[end-1].idx
		c.preTo = sort.Search(len(pairs), func(k int) bool { return max(pairs[k].a, pairs[k].b) > lastIdx })
		c.after = lastIdx
	}
	c.preTo = max(c.preFrom, min(c.preTo, c.cut))
	return c
}

// allBeyond reports whether every f(i) for i in [lo, hi) lies more than
// th from ref, on the side of dz: a step in a window's last few probes
// (fewer than stepMinAfter after it) counts only when every one of them
// shows it, so that no single outlier at a window's end is taken for one.
func allBeyond(f func(int) float64, lo, hi int, ref, dz, th float64) bool {
	for i := lo; i < hi; i++ {
		if d := f(i) - ref; math.Abs(d) <= th || (d > 0) != (dz > 0) {
			return false
		}
	}
	return true
}

// medianOf returns the median of f(i) for i in [lo, hi), at most
// stepWindow values.
func medianOf(f func(int) float64, lo, hi int) float64 {
	var buf [stepWindow]float64
	v := buf[:0]
	for i := lo; i < hi; i++ {
		v = append(v, f(i))
	}
	return stats.Median(v)
}

// robustDrift estimates the drift as the median slope of the midpoints
// between probes a fixed number of places apart (an eighth of the window),
// which a step straddled by fewer than an eighth of those spans cannot
// move. At most about 256 spans are sampled.
func robustDrift(s []sample) float64 {
	n := len(s)
	gap := max(1, n/8)
	stride := max(1, (n-gap)/256)
	slopes := make([]float64, 0, 257)
	for i := 0; i+gap < n; i += stride {
		a, b := &s[i], &s[i+gap]
		if dx := b.midX() - a.midX(); dx > 0 {
			slopes = append(slopes, (b.midY()-a.midY())/dx)
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return max(-1e-2, min(1e-2, stats.Median(slopes)))
}
