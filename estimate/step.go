package estimate

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

// Step detection, by the walk. An NTP-like phase jump of either clock
// inside the window moves every later midpoint offset by the jump (a src
// step also moves x, so the walk is in send order, not x order). The walk
// looks at the
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

// cut is a step between two clean runs of samples: the samples before it
// end at pre (exclusive), those after it start at post; the ones between
// were in flight across it, or lie where it may have fallen. size is the
// step's estimate (the midpoints' or the floors' jump), for the record.
type cut struct {
	pre, post int
	size      float64
}

// walkSigmas is the walk's threshold in units of the noise of the
// difference of two 16-probe medians (walkNoise): a step that large shows
// probe by probe, and the walk places it to within the probes in flight
// across it. Smaller steps are the scan's (scan.go), which brackets them
// in slices of at least 16 probes. (At 6 the medians' tails, under
// exponential jitter, gave a false step in 1.5 % of step-free windows.)
const walkSigmas = 10

// walkNoise is the standard deviation of the difference of the medians
// of two runs of stepWindow drift-corrected midpoints: √2 times the
// noise of one run's median, measured on the medians of successive runs
// (lagNoise at lag 1 only: the walk's own steps, which it is to find, are
// in the window, and a longer lag would count one step many times). 0
// with fewer than three runs.
func walkNoise(s []sample, drift float64) float64 {
	n := len(s) / stepWindow
	if n < 3 {
		return 0
	}
	med := make([]float64, n)
	var buf [stepWindow]float64
	for b := range n {
		for i := range stepWindow {
			p := &s[b*stepWindow+i]
			buf[i] = p.midY() - drift*p.midX()
		}
		med[b] = median16(buf[:])
	}
	return math.Sqrt2 * max(scanNoiseFloor, lagNoise([]int{1}, med))
}

// detectSteps finds every step of the walk described above, at threshold
// th (ns), in sample order; steps fewer than stepWindow samples apart
// (a probe in flight across one step seen as a second) are one. Within
// stepMinAfter probes of the window's end, where medians cannot outvote
// one probe, each probe after the step must be off by thEnd, walkSigmas
// times the noise of one probe's midpoint, or th if that is larger; and
// so, within stepMinAfter probes of the window's start (or of the step
// before), must each probe before it. s
// holds every probe of every pair, in send order. drift is
// robustDrift(s).
func detectSteps(s []sample, drift, th float64) []cut {
	n := len(s)
	if n < 3 {
		return nil
	}
	z := func(i int) float64 { return s[i].midY() - drift*s[i].midX() }
	zs := make([]float64, n)
	for i := range zs {
		zs[i] = z(i)
	}
	thEnd := max(th, walkSigmas*lagNoise([]int{1}, zs))
	med := newRunMedians(zs, s)
	rtt := func(i int) float64 { return float64(s[i].rtt()) }
	var found []int                // where each step was found
	last := 0                      // sample index of the last step
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
		// A step persists: the three probes from i on must differ from
		// the three before by half the threshold, which one probe far
		// off its neighbours (common under heavy-tailed jitter) does not
		// do; only then are the runs' medians worth their cost.
		if i >= last+3 && i+3 <= n && math.Abs(median3(zs[i], zs[i+1], zs[i+2])-median3(zs[i-3], zs[i-2], zs[i-1])) <= th/2 {
			continue
		}
		lo, hi := max(last, i-stepWindow), min(n, i+stepWindow)
		preZ, postZ0 := med.z(lo, i), med.z(i, hi)
		dz := postZ0 - preZ
		drtt := med.rtt(i, hi) - med.rtt(lo, i)
		postZ := preZ + dz
		if math.Abs(dz) > th && math.Abs(drtt) < math.Abs(dz)/2 && (n-i >= stepMinAfter || allBeyond(z, i, n, preZ, dz, thEnd)) &&
			(i-last >= stepMinAfter || allBeyond(z, last, i, postZ, -dz, thEnd)) {
			if k := len(found); k > 0 && i-found[k-1] < stepWindow {
				found[k-1] = i // the same step: take where it was last seen
			} else {
				found = append(found, i)
			}
			last = i
		}
	}
	cuts := make([]cut, len(found))
	for k, f := range found {
		lo := 0 // the clean samples of the previous step's far side start here
		if k > 0 {
			lo = cuts[k-1].post
		}
		next := n
		if k+1 < len(found) {
			next = found[k+1]
		}
		// After the step: up to stepClean probes in flight across it.
		hi := min(next, f+stepWindow)
		postZ, postR := medianOf(z, f, hi), medianOf(rtt, f, hi)
		post := f
		for i := f; i < min(next-1, f+stepClean); i++ {
			if math.Abs(z(i)-postZ) <= th/2 && math.Abs(rtt(i)-postR) <= th/2 {
				break
			}
			post = i + 1
		}
		// Before it: back to the last probe that agrees with its own
		// medians.
		pre := f
		if pre > lo {
			from := max(lo, pre-stepWindow)
			preZ, preR := medianOf(z, from, pre), medianOf(rtt, from, pre)
			for i := pre - 1; i > max(lo, pre-1-stepClean); i-- {
				if math.Abs(z(i)-preZ) <= th/2 && math.Abs(rtt(i)-preR) <= th/2 {
					break
				}
				pre = i
			}
			cuts[k].size = medianOf(z, f, hi) - preZ
		}
		cuts[k].pre, cuts[k].post = pre, post
	}
	return cuts
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

// runMedians are the medians of the runs of stepWindow midpoints and
// round-trip delays starting at each probe, zw[i] and rw[i] those of
// [i, i+stepWindow), each computed when first asked for.
type runMedians struct {
	zs, rs []float64
	zw, rw []float64 // NaN: not yet computed
}

func newRunMedians(zs []float64, s []sample) runMedians {
	m := runMedians{zs: zs, rs: make([]float64, len(s)), zw: make([]float64, len(s)), rw: make([]float64, len(s))}
	for i := range s {
		m.rs[i] = float64(s[i].rtt())
		m.zw[i], m.rw[i] = math.NaN(), math.NaN()
	}
	return m
}

// z is the median of the midpoints [lo, hi), at most stepWindow of them.
func (m runMedians) z(lo, hi int) float64 { return m.of(m.zs, m.zw, lo, hi) }

// rtt is the median of the round-trip delays [lo, hi).
func (m runMedians) rtt(lo, hi int) float64 { return m.of(m.rs, m.rw, lo, hi) }

func (m runMedians) of(v, w []float64, lo, hi int) float64 {
	if hi-lo != stepWindow {
		return median16(v[lo:hi])
	}
	if math.IsNaN(w[lo]) {
		w[lo] = median16(v[lo:hi])
	}
	return w[lo]
}

// median16 is the median of at most stepWindow values, by insertion sort
// on the stack.
func median16(v []float64) float64 {
	var buf [stepWindow]float64
	n := copy(buf[:], v)
	for i := 1; i < n; i++ {
		for j := i; j > 0 && buf[j] < buf[j-1]; j-- {
			buf[j], buf[j-1] = buf[j-1], buf[j]
		}
	}
	if n%2 == 1 {
		return buf[n/2]
	}
	return (buf[n/2-1] + buf[n/2]) / 2
}

// median3 is the median of three values.
func median3(a, b, c float64) float64 { return max(min(a, b), min(max(a, b), c)) }

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
