package estimate

import (
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/stats"
)

// The change-point scan finds clock steps too small for the walk
// (detectSteps) to see probe by probe. It cuts the window into slices of
// src's clock and works, slice by slice, on two channels that a step moves
// alike and one-sided queueing does not, at several scales (scanScales):
//
//   - the median channel: each slice's median of the drift-corrected
//     midpoint offsets z (its level) and of the round-trip delays (its
//     width);
//   - the floor channel: each slice's lowest forward point less the drift
//     line (F) and highest reverse point (R), the level (F+R)/2 and the
//     width F−R: where the delays have a hard floor (exponential or
//     pareto jitter, queueing) the floors move far less from slice to
//     slice than the medians, and they are what svm's line rests on.
//
// A step of size s moves a channel's level by s and leaves its width
// alone; extra queueing q on one direction moves the level by q/2 and the
// width by q. Each channel's noise is measured on the window itself, from
// the differences of successive slices' values (diffNoise). Within a
// stretch of time each edge's levels are fitted by a quadratic (its drift
// line, and the curvature a wandering frequency leaves) plus a step
// between slices j−1 and j, common to every edge scanned, for every j at
// least scanEdge slices from either end; the step's estimate in units of
// its own standard error, T_j, is the statistic. The stretch has a step
// when max |T_j| exceeds scanSigmas (see scanSigmas for its false-alarm
// rate) and the width moved by no more than half the level (and three of
// its standard errors): queueing is not a step. The scan then looks again
// on either side (binary segmentation), leaving out the two slices around
// the step, which it may lie in.
//
// Scanning several edges at once (ScanSrcSteps) is how a node finds a
// step of its own clock: it moves every one of its out-edges alike, so
// their evidence adds up, and a node with d out-edges sees steps √d times
// smaller than one edge would.
const (
	// scanEdge is how many slices a step must lie from either end of a
	// stretch for the scan to look for it.
	scanEdge = 3
	// scanMinBlocks is the fewest slices an edge needs in a stretch to be
	// scanned there.
	scanMinBlocks = 2*scanEdge + 2
	// scanNoiseBlocks is the fewest slices an edge needs for a scale's
	// noise to be measured, and so for the scale to be scanned at all.
	scanNoiseBlocks = 16
	// scanSigmas is the threshold on |T_j|, in standard errors of the
	// step. Under no step T_j is a standard normal at every j, strongly
	// correlated between neighbours; TestScanFalseAlarms measures how
	// often the largest |T_j| of a step-free window exceeds it over every
	// scale, on every jitter the tests generate.
	scanSigmas = 6
	// scanMaxSteps bounds the steps one window may have.
	scanMaxSteps = 8
	// scanNoiseFloor is the least noise a slice's value is taken to have,
	// ns: the timestamps' integer nanoseconds.
	scanNoiseFloor = 0.5
)

// The channels of the scan.
const (
	chanMedian = iota
	chanFloor
)

// scanScale is one scale the scan looks at: a slice length, in probes of
// one edge, and a channel. The median channel's noise shrinks as 1/√block,
// so its power does not grow with the slice; the floor channel's shrinks
// as fast as 1/block under a hard floor (the lowest of n exponential
// delays lies 1/n of their mean above it), so longer slices see smaller
// steps, at the price of bracketing them in a longer interval.
type scanScale struct{ block, channel int }

var scanScales = [...]scanScale{{16, chanMedian}, {16, chanFloor}, {64, chanFloor}, {256, chanFloor}}

// scanEdgeIn is one edge as the scan sees it: its samples in send order,
// its drift (robustDrift) and the runs of samples between the walk's steps
// ([from, to) each), within which the scan looks.
type scanEdgeIn struct {
	s     []sample
	drift float64
	runs  [][2]int
}

// grid is one scale's slices of src's clock: k slices of dt from x0 (x
// relative to the fit's origin, as a sample's).
type grid struct {
	x0, dt float64
	k      int
}

// sliceOf is the slice x falls in (may be out of [0, k)).
func (g grid) sliceOf(x float64) int { return int(math.Floor((x - g.x0) / g.dt)) }

// at is the start of slice j.
func (g grid) at(j int) float64 { return g.x0 + float64(j)*g.dt }

// edgeSlices is one edge's values at one scale: per slice its level and
// width (NaN where the slice has too few samples, or straddles a walk
// step), its slices' mean x, and the noise of one slice's level and width
// (0: the scale is not scanned on this edge). A slice's level weighs the
// forward direction's value (its median, or lowest, forward point less
// the drift line) and the reverse's (the median, or highest, reverse
// point) by their own noise, each measured as the level's is: a step moves
// both alike, so the quieter says more of it; where one direction queues
// and the other does not (asym-queueing, real2-onoff), the level is the
// quiet one's. The width is their difference, which a step leaves alone.
type edgeSlices struct {
	x, level, width []float64
	fwd, rev        []float64
	sl, sw          float64
}

// slicesOf computes e's values on g for the scale sc (fwd and rev; level
// and width are noise's to set).
func slicesOf(e scanEdgeIn, g grid, sc scanScale) edgeSlices {
	v := edgeSlices{x: make([]float64, g.k), fwd: make([]float64, g.k), rev: make([]float64, g.k)}
	for j := range g.k {
		v.fwd[j], v.rev[j] = math.NaN(), math.NaN()
	}
	var fs, rs []float64
	runOf := make([]int, g.k) // the run each slice's samples came from (−1: none yet, −2: several)
	for j := range runOf {
		runOf[j] = -1
	}
	flush := func(j, n int, sx float64) {
		if j < 0 || j >= g.k || n < sc.block/2 || runOf[j] == -2 {
			return
		}
		v.x[j] = sx / float64(n)
		if sc.channel == chanMedian {
			v.fwd[j], v.rev[j] = medianOf16(fs), medianOf16(rs)
		} else {
			v.fwd[j], v.rev[j] = slices.Min(fs), slices.Max(rs)
		}
	}
	for ri, run := range e.s2runs() {
		cur, n := -1, 0
		var sx float64
		fs, rs = fs[:0], rs[:0]
		for i := run[0]; i < run[1]; i++ {
			p := &e.s[i]
			mx := p.midX()
			j := g.sliceOf(mx)
			if j != cur {
				flush(cur, n, sx)
				cur, n, sx = j, 0, 0
				fs, rs = fs[:0], rs[:0]
				if j >= 0 && j < g.k {
					if runOf[j] == -1 {
						runOf[j] = ri
					} else if runOf[j] != ri {
						runOf[j] = -2 // the slice straddles a walk step
						v.fwd[j], v.rev[j] = math.NaN(), math.NaN()
					}
				}
			}
			n++
			sx += mx
			fs = append(fs, float64(p.fy)-e.drift*float64(p.fx))
			rs = append(rs, float64(p.ry)-e.drift*float64(p.rx))
		}
		flush(cur, n, sx)
	}
	return v
}

// medianOf16 is the median of v, by median16 when it is short enough.
func medianOf16(v []float64) float64 {
	if len(v) <= stepWindow {
		return median16(v)
	}
	return stats.Median(v)
}

// s2runs is e's runs, or the whole of its samples.
func (e scanEdgeIn) s2runs() [][2]int {
	if len(e.runs) == 0 {
		return [][2]int{{0, len(e.s)}}
	}
	return e.runs
}

// noise leaves out the slices a burst of queueing lifted (calm), then
// measures each direction's noise from the differences of successive
// slices that are left and sets the levels, widths and their noise; false
// when there are too few slices, too few are calm, or their values are
// far from normal (tailRatio).
func (v *edgeSlices) noise() bool {
	if !v.calm() {
		return false
	}
	var fr, rr [][]float64
	var f, r []float64
	n := 0
	for j := range v.fwd {
		if math.IsNaN(v.fwd[j]) {
			if len(f) > 0 {
				fr, rr = append(fr, f), append(rr, r)
				f, r = nil, nil
			}
			continue
		}
		f, r = append(f, v.fwd[j]), append(r, v.rev[j])
		n++
	}
	fr, rr = append(fr, f), append(rr, r)
	if n < scanNoiseBlocks {
		return false
	}
	sf := max(scanNoiseFloor, diffNoise(fr...))
	sr := max(scanNoiseFloor, diffNoise(rr...))
	if sf > tailRatio*max(scanNoiseFloor, madNoise(fr...)) || sr > tailRatio*max(scanNoiseFloor, madNoise(rr...)) {
		return false // far from normal: see tailRatio
	}
	wf, wr := 1/(sf*sf), 1/(sr*sr)
	v.level, v.width = make([]float64, len(v.fwd)), make([]float64, len(v.fwd))
	for j := range v.fwd {
		v.level[j] = (wf*v.fwd[j] + wr*v.rev[j]) / (wf + wr)
		v.width[j] = v.fwd[j] - v.rev[j]
	}
	v.sl, v.sw = 1/math.Sqrt(wf+wr), math.Hypot(sf, sr)
	return true
}

// tailRatio bounds how much larger a scale's noise may be than its
// values' MAD says (both from the differences of neighbours) for the
// scale to be scanned: the scan's threshold holds for values about
// normal (ratio 1; 1.4 for the lowest of exponential delays), not for
// values most often at one level and now and then far from it (a floor
// that only some slices reach, where the ratio runs to 3 and more), whose
// rare excursions a least-squares step takes for steps.
const tailRatio = 2.5

// madNoise is the noise of one value of the runs v from the MAD of the
// differences of neighbours: 1.4826 MAD over √2.
func madNoise(v ...[]float64) float64 {
	var d []float64
	for _, r := range v {
		for i := 1; i < len(r); i++ {
			d = append(d, r[i]-r[i-1])
		}
	}
	if len(d) == 0 {
		return 0
	}
	m := stats.Median(slices.Clone(d))
	for i := range d {
		d[i] = math.Abs(d[i] - m)
	}
	return 1.4826 * stats.Median(d) / math.Sqrt2
}

// calm leaves out (NaN) the slices whose width lies more than six
// standard deviations from the median, the deviation taken from the
// widths below the median, which queueing leaves alone: (median −
// 10th)/1.28, a normal's. Queueing lifts a slice's width, a step never
// does. A burst of
// queueing, or the on periods of on/off cross traffic, lift one
// direction's values by milliseconds, which would swamp its noise and
// outweigh everything else in a least-squares scan; and the other
// direction's floor can move with them (on a slow link a reply that does
// not queue behind its pair's first arrives earlier), which the width,
// measured on the calm slices, then tells from a step.
func (v *edgeSlices) calm() bool {
	var ws []float64
	for j := range v.fwd {
		if !math.IsNaN(v.fwd[j]) {
			ws = append(ws, v.fwd[j]-v.rev[j])
		}
	}
	if len(ws) < 4 {
		return true
	}
	slices.Sort(ws)
	q := func(p float64) float64 { return ws[int(p*float64(len(ws)-1)+0.5)] }
	m := q(0.5)
	lim := 6 * max((m-q(0.1))/1.2816, scanNoiseFloor)
	left := 0
	for j := range v.fwd {
		if math.IsNaN(v.fwd[j]) {
			continue
		}
		if math.Abs(v.fwd[j]-v.rev[j]-m) > lim {
			v.fwd[j], v.rev[j] = math.NaN(), math.NaN()
		} else {
			left++
		}
	}
	return float64(left) >= calmShare*float64(len(ws))
}

// calmShare is the least share of its slices a scale must keep calm to be
// scanned: where fewer are, the widths' lower half does not describe the
// slices (a floor that only some slices reach exactly makes it narrow,
// and the slices above it, which are no queueing, too many to leave out),
// and the scale's values are too erratic for the scan's threshold.
const calmShare = 0.75

// diffNoise is the noise of one value of the runs v from the differences
// d = v[i+k] − v[i] within each run, for lags k of 1 and 8: at each lag
// their RMS about their median, over √2, leaving out the largest 2 % (at
// least one), which a step or a burst of queueing makes, and scaled back
// by what that takes off a normal's (0.934); the larger of the two. The
// longer lag sees noise that persists from one value to the next (a floor
// that switches between levels as cross traffic comes and goes, on a slow
// link), which the differences of neighbours understate, and the scan's
// statistic, a sum over many values, has in full. Not a quantile or the
// MAD: a slice value that is most often at its floor and sometimes far
// above it has far more variance than a central quantile says. 0 with
// fewer than two differences at lag 1.
func diffNoise(v ...[]float64) float64 { return lagNoise([]int{1, 8}, v...) }

// lagNoise is diffNoise over the lags given: the larger of their noises.
func lagNoise(lags []int, v ...[]float64) float64 {
	best := 0.0
	for _, k := range lags {
		var d []float64
		for _, r := range v {
			for i := k; i < len(r); i++ {
				d = append(d, r[i]-r[i-k])
			}
		}
		if len(d) < 2 {
			if k == 1 {
				return 0
			}
			break
		}
		m := stats.Median(slices.Clone(d))
		for i := range d {
			d[i] = math.Abs(d[i] - m)
		}
		slices.Sort(d)
		keep := len(d) - max(1, len(d)/50)
		var ss float64
		for _, e := range d[:keep] {
			ss += e * e
		}
		best = max(best, math.Sqrt(ss/float64(keep))/0.934/math.Sqrt2)
	}
	return best
}

// scanPlan is the scan of a set of edges: per scale its grid and each
// edge's values there (nil where the scale is not scanned on that edge).
type scanPlan struct {
	grids [len(scanScales)]grid
	edges [len(scanScales)][]*edgeSlices
}

// planScan lays the grids over the edges' samples (the slices of a scale
// hold block probes of the median edge) and measures each edge's noise at
// every scale. A longer slice of a channel is scanned on an edge only
// when its noise there is below 0.7 of the shorter one's: where the floor
// is soft (Gaussian jitter) longer slices gain little, and their noise,
// measured on fewer slices, is the less certain.
func planScan(edges []scanEdgeIn) scanPlan {
	var p scanPlan
	lo, hi := math.Inf(1), math.Inf(-1)
	var counts []float64
	for _, e := range edges {
		if len(e.s) == 0 {
			continue
		}
		lo, hi = min(lo, e.s[0].midX()), max(hi, e.s[len(e.s)-1].midX())
		counts = append(counts, float64(len(e.s)))
	}
	if len(counts) == 0 || !(hi > lo) {
		return p
	}
	n := stats.Median(counts)
	last := make([][2]float64, len(edges))
	for i, sc := range scanScales {
		k := int(n) / sc.block
		p.edges[i] = make([]*edgeSlices, len(edges))
		if k < scanNoiseBlocks {
			continue
		}
		g := grid{x0: lo, dt: (hi - lo) / float64(k) * (1 + 1e-9), k: k}
		p.grids[i] = g
		for ei, e := range edges {
			v := slicesOf(e, g, sc)
			if !v.noise() {
				continue
			}
			if prev := last[ei][sc.channel]; prev > 0 && v.sl > 0.7*prev {
				continue
			}
			last[ei][sc.channel] = v.sl
			p.edges[i][ei] = &v
		}
	}
	return p
}

// timeCut is a step the scan found: the clean samples before it end
// before lo, those after it start at hi (x relative to the fit's origin);
// s is its size (the levels' change) and t that in standard errors.
type timeCut struct {
	lo, hi float64
	s, t   float64
}

// scanTime finds every step in the stretch [from, to) of x by binary
// segmentation over every scale of the plan (at most limit, in order):
// the most significant step of all the scales is taken, and each side is
// scanned again. A step smaller than floor (ns) is not taken.
func (p *scanPlan) scanTime(from, to, floor float64, limit int) []timeCut {
	if limit <= 0 {
		return nil
	}
	var best timeCut
	found := false
	for i := range scanScales {
		g := p.grids[i]
		if g.k == 0 {
			continue
		}
		lo, hi := max(0, int(math.Ceil((from-g.x0)/g.dt))), min(g.k, int(math.Floor((to-g.x0)/g.dt)))
		j, sz, t, ok := scanJoint(p.edges[i], lo, hi, floor)
		if !ok || (found && math.Abs(t) <= math.Abs(best.t)) {
			continue
		}
		// The two slices around the step, which it may lie in.
		best, found = timeCut{lo: g.at(j - 1), hi: g.at(j + 1), s: sz, t: t}, true
	}
	if !found {
		return nil
	}
	left := p.scanTime(from, best.lo, floor, limit-1)
	right := p.scanTime(best.hi, to, floor, limit-1-len(left))
	return slices.Concat(left, []timeCut{best}, right)
}

// scanJoint finds the most significant step common to the edges between
// slices j−1 and j of [lo, hi): each edge's levels there (its calm slices,
// see edgeSlices.calm) fitted by its own quadratic, with one step for all, weighted
// by their noise. It returns j, the step's size s and t = s over its
// standard error; ok is false when no |t| exceeds scanSigmas with the
// widths moving by less than half the level and three of their standard
// errors, and |s| ≥ floor.
func scanJoint(edges []*edgeSlices, lo, hi int, floor float64) (j int, s, t float64, ok bool) {
	k := hi - lo
	if k < scanMinBlocks {
		return 0, 0, 0, false
	}
	js, any := jointSteps(edges, lo, hi)
	if !any {
		return 0, 0, 0, false
	}
	for i := scanEdge; i <= k-scanEdge; i++ {
		si, ti, ok1 := js.at(i)
		if !ok1 || math.Abs(ti) <= scanSigmas || math.Abs(ti) <= math.Abs(t) || math.Abs(si) < floor {
			continue
		}
		if js.queueing(i, si) {
			continue // the widths moved with it: queueing
		}
		j, s, t, ok = lo+i, si, ti, true
	}
	return j, s, t, ok
}

// jointFit is, for every slice boundary i of a stretch, the normal
// equations of one step common to the edges between slices i−1 and i on
// top of each edge's own quadratic: of the levels (num, den) and of the
// widths (numW, denW). The step's estimate is num/den, with standard
// error 1/√den.
type jointFit struct {
	num, den, numW, denW []float64
}

// at is the step at boundary i, its size and t (size over its standard
// error); ok is false where no edge has slices on both sides of it.
func (f jointFit) at(i int) (s, t float64, ok bool) {
	if f.den[i] <= 0 {
		return 0, 0, false
	}
	s = f.num[i] / f.den[i]
	return s, s * math.Sqrt(f.den[i]), true
}

// queueing reports whether the widths moved with a step of size s at
// boundary i by more than half of it and three of their standard errors:
// one-sided queueing, not a step.
func (f jointFit) queueing(i int, s float64) bool {
	w := f.numW[i] / f.denW[i]
	return math.Abs(w) > math.Abs(s)/2+3/math.Sqrt(f.denW[i])
}

// jointSteps fits a step common to the edges at every boundary of the
// slices [lo, hi) (see jointFit); any is false when no edge has enough
// slices there.
func jointSteps(edges []*edgeSlices, lo, hi int) (_ jointFit, any bool) {
	k := hi - lo
	num, den := make([]float64, k), make([]float64, k)
	numW, denW := make([]float64, k), make([]float64, k)
	for _, e := range edges {
		if e == nil {
			continue
		}
		idx := present(e, lo, hi)
		if len(idx) < scanMinBlocks {
			continue
		}
		any = true
		x, level, width := make([]float64, len(idx)), make([]float64, len(idx)), make([]float64, len(idx))
		for i, b := range idx {
			x[i], level[i], width[i] = e.x[b], e.level[b], e.width[b]
		}
		q := quadBasis(x)
		ql, qw := project(q, level), project(q, width)
		wl, ww := 1/(e.sl*e.sl), 1/(e.sw*e.sw)
		// Suffix sums over the edge's slices from j on, for every j.
		var sq [3]float64
		var suml, sumw float64
		m := len(idx) - 1
		for j := hi - 1; j >= lo; j-- {
			for m >= 0 && idx[m] >= j {
				for b := range 3 {
					sq[b] += q[b][m]
				}
				suml += level[m]
				sumw += width[m]
				m--
			}
			cnt := float64(len(idx) - 1 - m)
			d, nl, nw := cnt, suml, sumw
			for b := range 3 {
				d -= sq[b] * sq[b]
				nl -= sq[b] * ql[b]
				nw -= sq[b] * qw[b]
			}
			if d <= 1e-9 {
				continue
			}
			num[j-lo] += wl * nl
			den[j-lo] += wl * d
			numW[j-lo] += ww * nw
			denW[j-lo] += ww * d
		}
	}
	return jointFit{num: num, den: den, numW: numW, denW: denW}, any
}

// present returns the slices of e in [lo, hi) that have values.
func present(e *edgeSlices, lo, hi int) []int {
	var idx []int
	for j := lo; j < hi; j++ {
		if !math.IsNaN(e.fwd[j]) {
			idx = append(idx, j)
		}
	}
	return idx
}

// missCoef is the share of the smallest step the scan finds half the time
// in the middle of a window that an undetected step may move a window's
// model by, in σ: an undetected step of size s moves a line through it
// by up to about s/2, which 3σ covers at s/6.
const missCoef = 1.0 / 6

// missSigma is the uncertainty a step too small for the plan's scan to
// find leaves in a window's model: missCoef times the smallest step the
// scan finds half the time in the window's middle (scanSigmas standard
// errors of a step there, at the most sensitive scale, over every edge
// of the plan that spans the middle together). 0 when no scale can scan.
func (p *scanPlan) missSigma(ends stretchEnds, floor float64) float64 {
	best := math.Inf(1)
	for i := range scanScales {
		g := p.grids[i]
		if g.k < scanMinBlocks {
			continue
		}
		var w float64
		for _, e := range p.edges[i] {
			if e != nil && e.spans(g.k/2) {
				w += 1 / (e.sl * e.sl)
			}
		}
		if w > 0 {
			best = min(best, scanSigmas/math.Sqrt(w*midDen(g.k)))
		}
	}
	if math.IsInf(best, 1) {
		return p.endSigma(ends, floor)
	}
	return math.Hypot(missCoef*best, p.endSigma(ends, floor))
}

// endSigmas is the threshold, in standard errors, above which a level
// shift within endZone slices of a window's end (or start) counts as a
// step there that the scan cannot place (endSigma). It is lower than
// scanSigmas: a false alarm only widens one model's σ by about the noise
// of a slice, where a false step would cut the window (TestEndSigma: 4 of
// 100 step-free windows on clipped normal jitter, none on six other
// links).
const endSigmas = 4

// endZone is how many slices from either end of a window endSigma looks
// for a step: the scan does not look within scanEdge of them, and from
// there to twice that it needs scanSigmas standard errors, where a step
// it misses moves the model at that end by nearly its whole size, not
// half of it as in the middle (missSigma).
const endZone = 2 * scanEdge

// endSigma is the uncertainty a step near either end of the window
// (within endZone slices), too close for the scan to look for it or too
// small for it to take, leaves in the window's model: there the model, a
// line fitted through the step, is off by up to the whole step at that
// end. At each boundary of those slices, at every scale, a step common to the
// plan's edges is fitted as the scan does, within the stretch between
// the window's steps that holds that end (ends); where one at an end, at
// any scale, stands out by more than endSigmas standard errors (and the
// widths did not move with it: queueing), the model's σ covers at 3σ,
// (|s| + 3 SE)/3, every boundary of that end at every scale that stands
// out by more than coverSigmas: the step may lie inside a slice, of which
// a boundary shows only part, and the boundaries past it, with fewer
// slices after them, show it whole but less certainly. 0 where no such
// shift shows.
// A shift smaller than floor, the least step the scan takes
// (step_threshold), counts for nothing, as in the scan.
func (p *scanPlan) endSigma(ends stretchEnds, floor float64) float64 {
	var shown [2]bool
	var cover [2]float64
	for i := range scanScales {
		g := p.grids[i]
		if g.k < scanMinBlocks {
			continue
		}
		for side, st := range ends {
			lo, hi := g.clamp(st[0], math.Ceil), g.clamp(st[1], math.Floor)
			k := hi - lo
			if k < scanMinBlocks {
				continue
			}
			js, any := jointSteps(p.edges[i], lo, hi)
			if !any {
				continue
			}
			zone := min(endZone, k/2)
			from, to := 1, zone+1 // the window's start
			if side == 1 {
				from, to = k-zone, k // its end
			}
			for b := from; b < to; b++ {
				s, t, ok := js.at(b)
				if !ok || js.queueing(b, s) || math.Abs(t) <= coverSigmas || math.Abs(s) < floor {
					continue
				}
				shown[side] = shown[side] || math.Abs(t) > endSigmas
				cover[side] = max(cover[side], (math.Abs(s)+3*math.Abs(s/t))/3)
			}
		}
	}
	var out float64
	for side := range shown {
		if shown[side] {
			out = max(out, cover[side])
		}
	}
	return out
}

// stretchEnds are the stretches of x, [from, to) each, between the steps
// a window was cut at that hold its start (the first) and its end (the
// second); −Inf and +Inf are the window's own start and end.
type stretchEnds [2][2]float64

// wholeWindow is the stretchEnds of a window without steps.
func wholeWindow() stretchEnds {
	return stretchEnds{{math.Inf(-1), math.Inf(1)}, {math.Inf(-1), math.Inf(1)}}
}

// clamp is the slice boundary of g at x, rounded by round, within [0, k];
// −Inf and +Inf are 0 and k.
func (g grid) clamp(x float64, round func(float64) float64) int {
	switch {
	case math.IsInf(x, -1):
		return 0
	case math.IsInf(x, 1):
		return g.k
	}
	return min(g.k, max(0, int(round((x-g.x0)/g.dt))))
}

// coverSigmas is the least a boundary's step must stand out, in standard
// errors, for endSigma to cover it: below it the boundary shows noise,
// not part of a step.
const coverSigmas = 2

// spans reports whether e has values on both sides of slice j: a run of
// an edge between two of its walk steps that ends before the window's
// middle says nothing of a step there.
func (e *edgeSlices) spans(j int) bool {
	idx := present(e, 0, len(e.fwd))
	return len(idx) > 0 && idx[0] < j && idx[len(idx)-1] >= j
}

// midDen is the squared norm, over k evenly spaced slices, of a step in
// their middle once the quadratic is taken out: the step's estimate there
// has variance σ²/midDen for slices of noise σ.
func midDen(k int) float64 {
	x := make([]float64, k)
	for i := range x {
		x[i] = float64(i)
	}
	q := quadBasis(x)
	var sq [3]float64
	for i := k / 2; i < k; i++ {
		for b := range 3 {
			sq[b] += q[b][i]
		}
	}
	den := float64(k - k/2)
	for b := range 3 {
		den -= sq[b] * sq[b]
	}
	return den
}

// quadBasis returns an orthonormal basis of the constant, linear and
// quadratic functions of x over its points (Gram–Schmidt on centred,
// scaled x for accuracy).
func quadBasis(x []float64) [3][]float64 {
	n := len(x)
	var q [3][]float64
	lo, hi := x[0], x[n-1]
	mid, half := (lo+hi)/2, max((hi-lo)/2, 1)
	for b := range 3 {
		q[b] = make([]float64, n)
		for i, xi := range x {
			u := (xi - mid) / half
			q[b][i] = math.Pow(u, float64(b))
		}
		for c := range b {
			d := dot(q[b], q[c])
			for i := range q[b] {
				q[b][i] -= d * q[c][i]
			}
		}
		if nrm := math.Sqrt(dot(q[b], q[b])); nrm > 0 {
			for i := range q[b] {
				q[b][i] /= nrm
			}
		}
	}
	return q
}

// project returns the coefficients of v on the basis q.
func project(q [3][]float64, v []float64) [3]float64 {
	var c [3]float64
	for b := range 3 {
		c[b] = dot(q[b], v)
	}
	return c
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
