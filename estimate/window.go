package estimate

import (
	"fmt"
	"math"
)

// maxWindowRateChange is how far two runs of one window may differ in rate
// (dimensionless) beyond their uncertainties: a clock's frequency wanders
// by far less than 1 ppm within a window.
const maxWindowRateChange = 1e-6

// Window is one edge's probes over one window, prepared for fitting: its
// complete pairs and their samples, and the clock steps in them. Step
// detection does not depend on the estimator, so a Window fitted with
// every estimator (Fit) looks for its steps once.
type Window struct {
	probes []Probe
	c      config
	pairs  []pair
	all    []sample
	drift  float64
	walk   []cut // the walk's steps, once walked
	walked bool
	src    []Cut // src's own steps (SetSrcSteps)
	cuts   []cut // every step, once found
	miss   float64
	found  bool
}

// NewWindow prepares probes (in send order) for fitting with the options o
// (its Kind is Fit's to choose; its SrcSteps become the window's). The
// error is for options that are wrong; too few pairs is Fit's.
func NewWindow(probes []Probe, o Options) (*Window, error) {
	if o.Kind == "" {
		o.Kind = SVM
	}
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	w := &Window{probes: probes, c: c, src: o.SrcSteps}
	w.pairs = completePairs(probes)
	if len(w.pairs) >= c.minPairs {
		w.all = buildSamples(probes, w.pairs, c.origin)
		w.drift = robustDrift(w.all)
	}
	return w, nil
}

// enough reports whether the window has pairs enough for a fit.
func (w *Window) enough() bool { return len(w.pairs) >= w.c.minPairs }

// SetSrcSteps sets the steps of src's own clock that its out-edges show
// together (ScanSrcSteps): the window is cut there too, unless its walk
// brackets the step itself.
func (w *Window) SetSrcSteps(c []Cut) {
	w.src, w.found = c, false
}

// walkSteps is the window's walk (see walkSteps), run once.
func (w *Window) walkSteps() []cut {
	if !w.walked {
		w.walk, w.walked = walkSteps(w.all, w.drift, float64(max(w.c.stepTh, 0))), true
	}
	return w.walk
}

// steps is every step of the window and the scan's missSigma (see
// findSteps), found once.
func (w *Window) steps() ([]cut, float64) {
	if !w.found {
		w.cuts, w.miss = nil, 0
		if w.c.stepTh >= 0 {
			w.cuts, w.miss = findSteps(w.all, w.drift, w.walkSteps(), float64(w.c.stepTh), w.src, w.c.origin)
		}
		w.found = true
	}
	return w.cuts, w.miss
}

// Fit fits the window with the estimator k; see Estimate.
func (w *Window) Fit(k Kind) (Fit, error) {
	if _, err := ParseKind(string(k)); err != nil {
		return Fit{}, err
	}
	if !w.enough() {
		return Fit{}, fmt.Errorf("%w: %d complete pairs, need %d", ErrInsufficient, len(w.pairs), w.c.minPairs)
	}
	c := w.c
	c.kind = k
	probes, pairs, all := w.probes, w.pairs, w.all
	cuts, miss := w.steps()
	segs := stepRuns(all, pairs, cuts)
	fits := make([]Fit, len(segs))
	errs := make([]error, len(segs))
	anchor := -1
	for k, sg := range segs {
		fits[k], errs[k] = fitSegment(probes, pairs, all, sg[0], sg[1], c)
		if errs[k] == nil && (anchor < 0 || fits[k].Pairs > fits[anchor].Pairs) {
			anchor = k
		}
	}
	if anchor >= 0 {
		// A run with too few pairs, whose own line is less precise than
		// one carried over from the longest, or whose rate is not the
		// longest's (a step moves the offset, not the rate: a run of a
		// few pairs that says otherwise fitted its noise), is fitted from
		// the longest.
		a := fits[anchor]
		for k, sg := range segs {
			if k == anchor || sg[1] == sg[0] {
				continue
			}
			alt := offsetOnly(all, sg[0], sg[1], a, segs[anchor][0], segs[anchor][1])
			if errs[k] != nil || alt.Sigma < fits[k].Sigma || math.Abs(fits[k].Alpha-a.Alpha) > 5*math.Hypot(fits[k].AlphaSigma, a.AlphaSigma)+maxWindowRateChange {
				fits[k], errs[k] = alt, nil
			}
		}
	}
	for k := range segs {
		if errs[k] == nil {
			fits[k].MissSigma = miss
		}
	}
	last := len(segs) - 1
	if errs[last] != nil {
		if last == 0 {
			return Fit{}, errs[last]
		}
		return Fit{}, fmt.Errorf("%w (after a clock step at src %d)", errs[last], probes[all[cuts[last-1].pre-1].idx].T1)
	}
	post := fits[last]
	for k, ct := range cuts {
		st := StepFit{Size: ct.size}
		if sg := segs[k+1]; sg[0] < len(pairs) {
			st.At = probes[pairs[sg[0]].first()].T1
		}
		if ct.pre > 0 {
			st.After = probes[all[ct.pre-1].idx].T1
		}
		if errs[k] == nil {
			st.Before = fits[k]
		}
		post.Steps = append(post.Steps, st)
	}
	post.Step = len(cuts) > 0
	return post, nil
}

// ScanSrcSteps looks for steps of src's own clock in one window's probes
// of all its out-edges (each prepared by NewWindow with the window's fit
// origin): a step of src's clock moves every out-edge alike, so the
// change-point scan (scan.go) sums their evidence and sees steps √d times
// smaller than one edge would, for d edges. The steps large enough for
// the walk to see on an edge are left to the walk: the scan looks between
// them. It returns the steps found, on src's clock, for SetSrcSteps, and
// the uncertainty a step of src too small to find leaves in its window's
// model (missCoef times the smallest it finds half the time in the
// window's middle); nothing with step detection off or too few probes.
func ScanSrcSteps(ws []*Window) ([]Cut, float64) {
	plan, lo, hi, c := srcPlan(ws)
	if plan == nil {
		return nil, 0
	}
	var out []Cut
	ends := wholeWindow()
	found := plan.scanTime(lo, hi, float64(c.stepTh), MaxSteps)
	for _, st := range found {
		out = append(out, Cut{From: c.origin + int64(math.Floor(st.lo)), To: c.origin + int64(math.Ceil(st.hi)), Size: st.s})
	}
	if n := len(found); n > 0 {
		ends[0][1], ends[1][0] = found[0].lo, found[n-1].hi
	}
	return out, plan.missSigma(ends, float64(c.stepTh))
}

// srcPlan is the scan of ws's edges together over [lo, hi) of src's
// clock, with the windows' configuration; nil with step detection off or
// too few probes.
func srcPlan(ws []*Window) (_ *scanPlan, lo, hi float64, c config) {
	var edges []scanEdgeIn
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		if w.c.stepTh < 0 || !w.enough() {
			continue
		}
		c = w.c
		// Each run between the edge's walk steps is an edge of its own to
		// the scan, with its own quadratic: one level across a step the
		// walk found on one edge is a step of all of them to the sum.
		for _, run := range runsBetween(w.walkSteps(), len(w.all)) {
			edges = append(edges, scanEdgeIn{s: w.all, drift: w.drift, runs: [][2]int{run}})
		}
		lo, hi = min(lo, w.all[0].midX()), max(hi, w.all[len(w.all)-1].midX())
	}
	if len(edges) == 0 {
		return nil, 0, 0, c
	}
	plan := planScan(edges)
	return &plan, lo, hi, c
}
