package estimate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Kind names an estimator.
type Kind string

const (
	// Regression is ordinary least squares through the midpoint offsets of
	// every used probe: the ChronoSync/Firefly baseline. It is the mean-based
	// estimator, so one-sided queueing biases it by half the mean extra delay.
	Regression Kind = "regression"
	// MinFilter keeps, in each of 8 equal time segments of the window, the
	// probes whose round-trip delay is within the lowest 5% of that
	// segment (NTP/chrony-style minimum-delay selection), then fits a least
	// squares line through their midpoints.
	MinFilter Kind = "minfilter"
	// SVM is the Huygens-style maximum-margin line between the forward points
	// (which lie above the true line) and the reverse points (below it),
	// solved exactly through the convex hulls of the two point sets. Where
	// the delay floor is soft (Gaussian jitter, read noise) that corridor is
	// refined: its two edges are refitted to the points nearest them, taken
	// at one depth of both floors (see Fit.Refined).
	SVM Kind = "svm"
)

// Kinds returns every estimator kind: regression, minfilter, svm, in that
// order. The slice is fresh; the caller may modify it.
func Kinds() []Kind { return []Kind{Regression, MinFilter, SVM} }

// ParseKind parses an estimator name as written by Kind's string value.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("estimate: unknown estimator %q (valid: %s)", s, kindNames())
}

func kindNames() string {
	names := make([]string, 0, 3)
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// Purity selects how coded-probe purity filters the pairs; see Options.
type Purity string

const (
	// PurityAuto uses only the pure pairs when there are at least
	// max(MinPairs, ⌈25% of the usable pairs⌉) of them, otherwise every
	// usable pair.
	PurityAuto Purity = "auto"
	// PurityOn uses only the pure pairs.
	PurityOn Purity = "on"
	// PurityOff uses every usable pair.
	PurityOff Purity = "off"
)

// MaxSteps is the most clock steps Estimate reports in one window; a
// window that seems to have more is noise, and its later steps are not
// looked for.
const MaxSteps = scanMaxSteps

// shortWindowStepThreshold is the walk's threshold in a window too short
// to measure its own noise (fewer than three runs of stepWindow probes).
const shortWindowStepThreshold = time.Millisecond

// Defaults applied to zero Options fields.
const (
	defaultPureThreshold = time.Microsecond
	defaultMinPairs      = 10
)

// Options configures Estimate. The zero value of every field but Kind selects
// its default.
type Options struct {
	// Kind selects the estimator.
	Kind Kind
	// Origin is the x origin in src's clock, normally the window start: the
	// fitted line is y = Alpha·(x−Origin) + Beta.
	Origin int64
	// Purity selects pure pairs ("" means auto). A pair is pure when the
	// spacing of its two probes was preserved in both directions to within
	// PureThreshold: |(T2b−T2a) − (T1b−T1a)| ≤ PureThreshold and
	// |(T4b−T4a) − (T3b−T3a)| ≤ PureThreshold.
	Purity Purity
	// PureThreshold is the purity tolerance; 0 means 1µs.
	PureThreshold time.Duration
	// MinPairs is the fewest usable pairs a fit needs; 0 means 10. It must
	// be at least 2.
	MinPairs int
	// StepThreshold is a floor under the steps taken: the detectors look
	// for every step the window's own noise lets them see (walkSigmas,
	// scanSigmas) and take none smaller than it. 0 means no floor;
	// negative disables step detection.
	StepThreshold time.Duration
	// SrcSteps are steps of src's clock that its other out-edges show
	// (ScanSrcSteps): the window is cut there too, unless the walk brackets
	// the step itself.
	SrcSteps []Cut
	// TimestampSigma is a systematic error of the timestamps themselves
	// that no spread of the probes shows (where in the stack a kernel
	// takes them, on each side); UserT3Sigma how far a responder's
	// user-space t3 reading may lie from when its reply left. Estimate
	// ignores both; rounds.FitEdge adds TimestampSigma, and UserT3Sigma
	// times the share of a window's probes whose t3 is such a reading, in
	// quadrature to each fit's AsymSigma and Sigma. 0 for the simulator,
	// whose timestamps are what its clocks read.
	TimestampSigma, UserT3Sigma time.Duration
}

// Fit is the fitted model of one edge over one window: the dst clock minus
// the src clock, as a function of the src clock x, is
// y = Alpha·(x−Origin) + Beta.
type Fit struct {
	// Kind is the estimator that produced the fit.
	Kind Kind
	// Alpha is the drift (dimensionless, 1e-6 = 1 ppm); Beta is the offset
	// at Origin in ns.
	Alpha, Beta float64
	// Sigma is the 1σ uncertainty of Beta in ns; always > 0.
	Sigma float64
	// AlphaSigma is the 1σ uncertainty of Alpha; always > 0.
	AlphaSigma float64
	// Pairs counts the complete pairs (both probes present) considered,
	// after step handling.
	Pairs int
	// Pure counts the pure pairs among Pairs.
	Pure int
	// Used counts the probes the estimator actually used: every probe of the
	// selected pairs for regression and svm (each probe gives svm a forward
	// and a reverse point), the kept minimum-delay probes for minfilter.
	Used int
	// Step reports that clock steps were detected inside the window: the
	// fit is of the pairs after the last one.
	Step bool
	// Steps are the window's steps, in order (nil without any).
	Steps []StepFit
	// AsymSigma is the part of Sigma, in quadrature, that the shapes of
	// the two directions' delays say a path asymmetry may add (see
	// asymSigma); 0 where they look alike.
	AsymSigma float64
	// MissSigma is the uncertainty a step too small for this edge's scan
	// to see may leave in the fit (see scanPlan.missSigma); 0 with step
	// detection disabled. It is not part of Sigma: a step is a node's, and
	// the node's own scan of all its out-edges (ScanSrcSteps) sees smaller
	// ones than one edge; package rounds adds the node's to its model.
	MissSigma float64
	// Margin is, for svm only, the half-width in ns of the exact separating
	// corridor; negative when the forward and reverse point sets overlap.
	Margin float64
	// Refined reports, for svm only, that the floor was found soft and
	// Alpha, Beta, Sigma and AlphaSigma are those of the refined line
	// (see refineSVM) rather than of the exact corridor, whose half-width
	// Margin still is.
	Refined bool
}

// StepFit is one clock step of a window, as an edge's probes see it.
type StepFit struct {
	// After is the T1 (src's clock, before the step) of the last probe
	// the step did not touch, and At the T1 of the first probe of the
	// first pair sent wholly after it: it happened between the two. After
	// is 0 when no probe before it was clean.
	After, At int64
	// Size is how far the step moved dst's clock against src's, as the
	// detector measured it, ns: for the record; the fits say it better.
	Size float64
	// Before is the fit of the pairs between the step before (or the
	// window's start) and this one, at the same Origin; its Pairs is 0
	// when there were none. Its own Step and Steps are unset.
	Before Fit
}

// ErrInsufficient reports that too few usable probe pairs were left for a
// fit. Errors returned by Estimate wrap it and say how many pairs there were
// and how many are needed.
var ErrInsufficient = errors.New("estimate: insufficient probe pairs")

// config is Options with defaults applied.
type config struct {
	kind     Kind
	origin   int64
	purity   Purity
	pureTh   int64
	minPairs int
	stepTh   int64 // < 0: disabled
}

func (o Options) config() (config, error) {
	c := config{kind: o.Kind, origin: o.Origin, purity: o.Purity,
		pureTh: int64(o.PureThreshold), minPairs: o.MinPairs, stepTh: int64(o.StepThreshold)}
	if _, err := ParseKind(string(c.kind)); err != nil {
		return c, err
	}
	switch c.purity {
	case "":
		c.purity = PurityAuto
	case PurityAuto, PurityOn, PurityOff:
	default:
		return c, fmt.Errorf("estimate: unknown purity %q (valid: auto, on, off)", o.Purity)
	}
	switch {
	case c.pureTh == 0:
		c.pureTh = int64(defaultPureThreshold)
	case c.pureTh < 0:
		return c, fmt.Errorf("estimate: negative PureThreshold %v", o.PureThreshold)
	}
	switch {
	case c.minPairs == 0:
		c.minPairs = defaultMinPairs
	case c.minPairs < 2:
		return c, fmt.Errorf("estimate: MinPairs %d is below 2", o.MinPairs)
	}
	return c, nil
}

// Estimate fits the probes of one window, given in send order (lost probes
// are simply absent): NewWindow and Window.Fit with o.Kind. Only complete
// pairs are used. Step detection runs first (detectSteps for the steps
// that show probe by probe, then the change-point scan between them for
// the smaller ones, see scan.go), then purity selection, then the
// estimator named by o.Kind on each run of pairs between steps. The fit
// is of the pairs after the last step, with every step and the fit of
// the pairs before it in Steps, all at Origin; a run with fewer than
// MinPairs pairs (but at least one), or whose own fit is less precise
// than that, is fitted from the longest run's line and path delays (see
// offsetOnly). Fewer than MinPairs pairs in all, or in every run, returns
// an error wrapping ErrInsufficient.
func Estimate(probes []Probe, o Options) (Fit, error) {
	w, err := NewWindow(probes, o)
	if err != nil {
		return Fit{}, err
	}
	return w.Fit(o.Kind)
}

// findSteps runs the scan over the samples between the walk's steps
// (walk, in order) and ext, steps found elsewhere (src's own, see
// ScanSrcSteps, on src's clock; origin is the samples' x origin), with
// floor as the smallest step taken, and returns every step in order with
// the scan's missSigma. An external step the walk also found is the
// walk's, which brackets it closer.
func findSteps(all []sample, drift float64, walk []cut, floor float64, ext []Cut, origin int64) ([]cut, float64) {
	walk = slices.Clone(walk)
	for _, c := range ext {
		lo := sort.Search(len(all), func(i int) bool { return all[i].midX() >= float64(c.From-origin) })
		hi := sort.Search(len(all), func(i int) bool { return all[i].midX() > float64(c.To-origin) })
		if lo == 0 || hi >= len(all) || slices.ContainsFunc(walk, func(w cut) bool { return w.pre <= hi && lo <= w.post }) {
			continue
		}
		walk = append(walk, cut{pre: lo, post: hi, size: c.Size})
	}
	slices.SortFunc(walk, func(a, b cut) int { return cmp.Compare(a.pre, b.pre) })
	runs := runsBetween(walk, len(all))
	plan := planScan([]scanEdgeIn{{s: all, drift: drift, runs: runs}})
	var cuts []cut
	for k, r := range runs {
		if r[1] > r[0] {
			for _, st := range plan.scanTime(all[r[0]].midX(), all[r[1]-1].midX(), floor, MaxSteps-len(walk)-len(cuts)) {
				cuts = append(cuts, timeToCut(all, r, st))
			}
		}
		if k < len(walk) {
			cuts = append(cuts, walk[k])
		}
	}
	ends := wholeWindow()
	if n := len(cuts); n > 0 {
		x := func(i int) float64 { return all[min(i, len(all)-1)].midX() }
		ends[0][1], ends[1][0] = x(cuts[0].pre), x(cuts[n-1].post)
	}
	return cuts, plan.missSigma(ends, floor)
}

// walkSteps runs the walk (detectSteps) at walkSigmas times the window's
// noise (walkNoise), or floor where that is larger, keeping at most
// MaxSteps steps (the largest).
func walkSteps(all []sample, drift, floor float64) []cut {
	th := float64(shortWindowStepThreshold)
	if w := walkNoise(all, drift); w > 0 {
		th = walkSigmas * w
	}
	walk := detectSteps(all, drift, max(th, floor))
	if len(walk) > MaxSteps {
		// More steps than a window has: keep the largest.
		slices.SortFunc(walk, func(a, b cut) int { return cmp.Compare(math.Abs(b.size), math.Abs(a.size)) })
		walk = walk[:MaxSteps]
		slices.SortFunc(walk, func(a, b cut) int { return cmp.Compare(a.pre, b.pre) })
	}
	return walk
}

// runsBetween returns the runs of samples [from, to) between the cuts (in
// order), n samples in all.
func runsBetween(cuts []cut, n int) [][2]int {
	runs := make([][2]int, 0, len(cuts)+1)
	from := 0
	for _, ct := range cuts {
		runs = append(runs, [2]int{from, max(from, ct.pre)})
		from = max(from, ct.post)
	}
	return append(runs, [2]int{from, n})
}

// timeToCut turns a step the scan bracketed in x into a cut of the
// samples of run r: those before its bracket, and those after.
func timeToCut(all []sample, r [2]int, st timeCut) cut {
	pre := r[0] + sort.Search(r[1]-r[0], func(i int) bool { return all[r[0]+i].midX() >= st.lo })
	post := r[0] + sort.Search(r[1]-r[0], func(i int) bool { return all[r[0]+i].midX() >= st.hi })
	return cut{pre: pre, post: max(pre, post), size: st.s}
}

// Cut is a clock step found outside an edge's own probes (by ScanSrcSteps):
// it fell between From and To on src's clock, moving dst − src by about
// Size ns.
type Cut struct {
	From, To int64
	Size     float64
}

// stepRuns turns the steps' cuts (sample indices, in order) into the runs
// of pairs between them: a run holds the pairs sent wholly within its
// clean samples, [the first pair whose first probe is at or after the
// previous cut's post, the first pair with a probe after this cut's
// pre). len(cuts)+1 runs; a run may be empty.
func stepRuns(all []sample, pairs []pair, cuts []cut) [][2]int {
	out := make([][2]int, 0, len(cuts)+1)
	from := 0
	for _, ct := range cuts {
		to := from
		if ct.pre > 0 {
			lastIdx := all[ct.pre-1].idx
			to = sort.Search(len(pairs), func(k int) bool { return max(pairs[k].a, pairs[k].b) > lastIdx })
		}
		out = append(out, [2]int{from, max(from, to)})
		from = len(pairs)
		if ct.post < len(all) {
			firstIdx := all[ct.post].idx
			from = sort.Search(len(pairs), func(k int) bool { return pairs[k].first() >= firstIdx })
		}
		from = max(from, out[len(out)-1][1])
	}
	return append(out, [2]int{from, len(pairs)})
}

// fitSegment fits the pairs [from, to) with the estimator of c, after
// purity selection.
func fitSegment(probes []Probe, pairs []pair, all []sample, from, to int, c config) (Fit, error) {
	fit := Fit{Kind: c.kind}
	kept := pairs[from:to]
	fit.Pairs = len(kept)
	pure := markPure(probes, kept, c.pureTh)
	fit.Pure = countTrue(pure)
	usePure, err := selectPure(len(kept), fit.Pure, c)
	if err != nil {
		return fit, err
	}
	s := all
	if from > 0 || to < len(pairs) || usePure {
		s = make([]sample, 0, 2*len(kept))
		for i := range all {
			if k := int(all[i].pair) - from; k >= 0 && k < len(kept) && (!usePure || pure[k]) {
				s = append(s, all[i])
			}
		}
	}
	switch c.kind {
	case Regression:
		err = fitRegression(s, len(pairs), &fit)
	case MinFilter:
		err = fitMinFilter(s, len(pairs), &fit)
	case SVM:
		err = fitSVM(s, len(pairs), &fit)
	}
	if err != nil {
		return fit, fmt.Errorf("estimate: %s: %w", c.kind, err)
	}
	fit.AsymSigma = asymSigma(s, fit.Alpha, fit.Beta, fit.Sigma)
	fit.Sigma = math.Hypot(fit.Sigma, fit.AsymSigma)
	return fit, nil
}
