package estimate

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

// The svm refinement.
//
// The exact maximum-margin line rests on the two or three most extreme
// points. Where the delay floor is hard (jitter and queueing only add delay
// to a fixed minimum) those points sit on the floor and the line is as good
// as a line can be. Where the floor is soft (normal jitter spreads delays
// below their typical value too) the extremes are outliers of a tail, with
// two consequences: the line's slope rides on a few random points, and each
// side's extreme depends on how many of that side's probes reach the floor,
// so a direction that queues most of its probes (and has fewer of them near
// its floor) sits further from its floor than the other, and the offset is
// biased towards it.
//
// refineSVM therefore treats the corridor as a starting point and fits its
// two edges to many points near them: in each of the nSegments time
// segments, the forward points just above the upper edge and the reverse
// points just below the lower edge, and then the two parallel lines of
// least squares through them (one slope, two intercepts; the centre line
// is midway). The sparser side keeps svmRefineFrac of the samples; the
// denser side keeps proportionally more, by the ratio of the two sides'
// counts within a common distance of the centre line (the svmRefineLevel
// quantile of both sides' distances from the exact corridor's centre,
// pooled), so that both edges are
// taken at the same depth of their floors rather than at the same count.
// This repeats from the new line until it moves less than svmRefineTol at
// both ends of the window, at most svmRefineIters times. Only the points
// below the svmRefineCandidates quantile of the pooled distances from the
// exact corridor's centre are looked at: the refined line moves far less
// than the depth between that quantile and the kept ones.
//
// The refined line replaces the exact one only where the floor is soft:
// where, after the first refinement, the most extreme selected point of
// each side lies on average more than svmSoftFloor standard deviations of
// the selected points beyond its fitted edge. Points crowding a hard floor
// uniformly put it at most √3 ≈ 1.73 away (1.5–1.9 measured under
// exponential and uniform jitter); a Gaussian tail (normal jitter, or read
// noise that blurs the last tens of ns of a hard floor) 2.3–4. On a hard
// floor the exact extremes are the better estimate: their error shrinks as
// 1/n, an average's as 1/√n.
//
// On a hard floor the kept points are within a few ns of it and the fit
// averages their read noise (better than the extremes alone); on a soft
// floor it is the edge of the bulk, where the densities of the two sides
// are compared, that decides the line.
const (
	svmRefineFrac       = 0.02
	svmRefineLevel      = 0.2
	svmRefineCandidates = 0.4
	svmRefineIters      = 10
	svmRefineTol        = 0.1 // ns
	svmRefineMinSeg     = 2   // fewest points each side keeps per segment
	// svmRefineBalanceZ is how many standard errors the two sides' counts
	// must differ by before the deeper side keeps more points.
	svmRefineBalanceZ = 3
	// svmRefinePoolStride thins the points whose pooled quantile sets the
	// candidates.
	svmRefinePoolStride = 8
	// svmSoftFloor is the softness above which the refined line is used.
	svmSoftFloor = 2.2
	// svmRefineSigmaScale calibrates the refined fit's standard errors; see
	// TestCalibration.
	svmRefineSigmaScale = 2.6
)

// edgeSide holds one side's candidate points: the forward points (above
// the centre line) when sign is +1, the reverse points (below it) when −1.
type edgeSide struct {
	s    []sample
	idx  []int32   // the candidates' samples
	seg  []uint8   // the candidates' segments
	e    []float64 // sign·(y − centre line): the distance beyond it
	sel  []int32   // the selected candidates (indices into idx)
	sign float64
	sums sideSums
}

// xy is candidate j's point, x in seconds from Origin, y in ns.
func (d *edgeSide) xy(j int32) (x, y float64) {
	p := &d.s[d.idx[j]]
	if d.sign > 0 {
		return float64(p.fx) * 1e-9, float64(p.fy)
	}
	return float64(p.rx) * 1e-9, float64(p.ry)
}

// distances sets e from the centre line y = a·x + b (x in seconds).
func (d *edgeSide) distances(a, b float64) {
	for j := range d.idx {
		x, y := d.xy(int32(j))
		d.e[j] = d.sign * (y - (a*x + b))
	}
}

// refine is one refinement's state.
type refine struct {
	n      int // samples
	share  [nSegments]float64
	f, r   edgeSide
	m      float64 // the common depth: distance from the centre line
	buf    []float64
	pairs  []float64 // per-pair residual sums, for the design effect
	nPairs int
}

// edgeFit is two parallel least squares lines, y = a·x + bf through the
// selected forward points and y = a·x + br through the selected reverse
// points (x in ns from Origin), with the standard errors of the centre
// (bf+br)/2 at x = 0 and of a, and each side's softness: how many standard
// deviations of its selected points the most extreme of them lies beyond
// its line.
type edgeFit struct {
	a, bf, br     float64
	sigma, aSigma float64
	tF, tR        float64
}

// refineSVM refines the exact corridor l over the samples s; see above. ok
// is false when the floor is not soft or the selected points define no
// slope; then l should stand.
func refineSVM(s []sample, nPairs int, l svmLine) (edgeFit, bool) {
	g, err := newSegments(s)
	if err != nil {
		return edgeFit{}, false
	}
	r := newRefine(s, g, nPairs, l)
	a, b := l.a*1e9, l.b // slope per second
	span := float64(s[len(s)-1].rx-s[0].fx) * 1e-9
	var fit edgeFit
	for it := range svmRefineIters {
		f, ok := r.step(a, b)
		if !ok || it == 0 && (f.tF+f.tR)/2 <= svmSoftFloor {
			return edgeFit{}, false
		}
		fit = f
		na, nb := f.a*1e9, (f.bf+f.br)/2
		moved := max(math.Abs(nb-b), math.Abs(nb-b+(na-a)*span))
		a, b = na, nb
		if moved < svmRefineTol {
			break
		}
	}
	return fit, true
}

// newRefine keeps as candidates the points of s below the
// svmRefineCandidates quantile of both sides' distances from l's centre,
// and sets the common depth m at their svmRefineLevel quantile.
func newRefine(s []sample, g *segments, nPairs int, l svmLine) *refine {
	n := len(s)
	r := &refine{n: n, nPairs: nPairs, f: edgeSide{sign: 1}, r: edgeSide{sign: -1}}
	for k := range nSegments {
		r.share[k] = float64(g.count(k)) / float64(n)
	}
	pool := make([]float64, 0, 2*(n/svmRefinePoolStride+1))
	for i := 0; i < n; i += svmRefinePoolStride {
		p := &s[i]
		pool = append(pool, l.dist(p.fx, p.fy, 1), l.dist(p.rx, p.ry, -1))
	}
	limit := stats.Select(pool, int(svmRefineCandidates*float64(len(pool))))
	r.m = stats.Select(pool, int(svmRefineLevel*float64(len(pool))))
	r.f.init(s, g.of, l, limit)
	r.r.init(s, g.of, l, limit)
	r.buf = make([]float64, max(len(r.f.idx), len(r.r.idx))+nSegments)
	r.pairs = make([]float64, nPairs)
	return r
}

// dist is the distance of the point (x, y) beyond the centre of l on the
// side sign (+1 above, −1 below).
func (l svmLine) dist(x, y int64, sign float64) float64 {
	return sign * (float64(y) - (l.a*float64(x) + l.b))
}

// init keeps as candidates the points of the side whose distance from l's
// centre is below limit.
func (d *edgeSide) init(s []sample, of []uint8, l svmLine, limit float64) {
	d.s = s
	dist := func(p *sample) float64 {
		if d.sign > 0 {
			return l.dist(p.fx, p.fy, 1)
		}
		return l.dist(p.rx, p.ry, -1)
	}
	c := 0
	for i := range s {
		c += isBelow(dist(&s[i]), limit)
	}
	// Branch-free: a candidate is written at c whether it is kept or not,
	// and c moves on when it is (points are kept in random order, so a
	// branch would mispredict).
	d.idx, d.seg, d.e = make([]int32, c+1), make([]uint8, c+1), make([]float64, c)
	c = 0
	for i := range s {
		d.idx[c], d.seg[c] = int32(i), of[i]
		c += isBelow(dist(&s[i]), limit)
	}
	d.idx, d.seg = d.idx[:c], d.seg[:c]
}

// step selects the points near the edges of the centre line y = a·x + b
// (x in seconds) and fits the two edges through them.
func (r *refine) step(a, b float64) (edgeFit, bool) {
	r.f.distances(a, b)
	r.r.distances(a, b)
	m := r.m
	fc, rc := countBelow(r.f.seg, r.f.e, m), countBelow(r.r.seg, r.r.e, m)
	cf, cr := 1, 1
	for k := range nSegments {
		cf += fc.below[k]
		cr += rc.below[k]
	}
	k := svmRefineFrac * float64(r.n)
	kf, kr := k, k
	// Balance only a difference the counts can tell from chance: the
	// log-ratio of two Poisson counts has a standard error of about
	// √(1/cf + 1/cr).
	if lr := math.Log(float64(cf) / float64(cr)); math.Abs(lr) > svmRefineBalanceZ*math.Sqrt(1/float64(cf)+1/float64(cr)) {
		kf, kr = k*max(1, math.Exp(lr)), k*max(1, math.Exp(-lr))
	}
	var keepF, keepR [nSegments]int
	for j, sh := range r.share {
		if sh > 0 {
			keepF[j] = max(svmRefineMinSeg, int(math.Ceil(kf*sh)))
			keepR[j] = max(svmRefineMinSeg, int(math.Ceil(kr*sh)))
		}
	}
	r.f.sel = lowestPerSegment(r.f.sel[:0], r.f.seg, r.f.e, &keepF, m, &fc, r.buf)
	r.r.sel = lowestPerSegment(r.r.sel[:0], r.r.seg, r.r.e, &keepR, m, &rc, r.buf)
	return r.fitEdges()
}

// sideSums accumulates one side's selected points for fitEdges.
type sideSums struct {
	n                  int
	xbar, ybar         float64
	sxx, sxy, rss, ext float64
	deff               float64
}

// fitEdges fits the two parallel edges through the selected points.
func (r *refine) fitEdges() (edgeFit, bool) {
	F, R := &r.f.sums, &r.r.sums
	r.f.means()
	r.r.means()
	sxx := F.sxx + R.sxx
	if F.n < 2 || R.n < 2 || !(sxx > 0) {
		return edgeFit{}, false
	}
	a := (F.sxy + R.sxy) / sxx
	f := edgeFit{a: a * 1e-9, bf: F.ybar - a*F.xbar, br: R.ybar - a*R.xbar}
	r.f.residuals(a, f.bf, r.pairs)
	r.r.residuals(a, f.br, r.pairs)
	// Per-side residual variances, two parameters per side (the shared
	// slope counted on both sides: a conservative split).
	vf := F.deff * F.rss / float64(max(1, F.n-2))
	vr := R.deff * R.rss / float64(max(1, R.n-2))
	va := (vf*F.sxx + vr*R.sxx) / (sxx * sxx)
	vb := (vf/float64(F.n) + vr/float64(R.n) + (F.xbar+R.xbar)*(F.xbar+R.xbar)*va) / 4
	f.sigma, f.aSigma = math.Sqrt(vb), math.Sqrt(va)*1e-9
	f.tF = F.ext / math.Sqrt(F.rss/float64(F.n))
	f.tR = R.ext / math.Sqrt(R.rss/float64(R.n))
	return f, true
}

// means sums the selected points and centres them.
func (d *edgeSide) means() {
	u := &d.sums
	*u = sideSums{n: len(d.sel)}
	if u.n == 0 {
		return
	}
	var sx, sy float64
	for _, j := range d.sel {
		x, y := d.xy(j)
		sx += x
		sy += y
	}
	u.xbar, u.ybar = sx/float64(u.n), sy/float64(u.n)
	for _, j := range d.sel {
		x, y := d.xy(j)
		u.sxx += (x - u.xbar) * (x - u.xbar)
		u.sxy += (x - u.xbar) * (y - u.ybar)
	}
}

// residuals sums the squared residuals of the selected points from the
// line y = a·x + b, their pair design effect (see midpointFit) and the
// largest distance of one beyond the line on the side away from the
// centre. pairs is scratch of one entry per pair.
func (d *edgeSide) residuals(a, b float64, pairs []float64) {
	u := &d.sums
	clear(pairs)
	for _, j := range d.sel {
		x, y := d.xy(j)
		e := y - (a*x + b)
		u.rss += e * e
		u.ext = max(u.ext, -d.sign*e)
		pairs[d.s[d.idx[j]].pair] += e
	}
	u.deff = 1
	if u.rss > 0 {
		var cs float64
		for _, j := range d.sel {
			k := d.s[d.idx[j]].pair
			cs += pairs[k] * pairs[k]
			pairs[k] = 0 // count each pair once
		}
		u.deff = cs / u.rss
	}
}

// floorSigma floors sigma at minSigma, scaling alphaSigma with it.
func floorSigma(sigma, alphaSigma float64) (float64, float64) {
	if sigma >= minSigma {
		return sigma, alphaSigma
	}
	if !(sigma > 0) {
		return minSigma, max(alphaSigma, 1e-15)
	}
	return minSigma, alphaSigma * minSigma / sigma
}
