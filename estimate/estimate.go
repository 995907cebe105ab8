package estimate

import (
	"errors"
	"fmt"
	"math"
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

// DefaultStepThreshold is the smallest clock step looked for when
// Options.StepThreshold is 0.
const DefaultStepThreshold = time.Millisecond

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
	// StepThreshold is the smallest midpoint offset jump treated as a clock
	// step; 0 means 1ms, negative disables step detection.
	StepThreshold time.Duration
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
	// Step reports that a clock step was detected inside the window.
	Step bool
	// StepAt is the src-clock x (T1) of the first probe of the first pair
	// sent wholly after the last step: only pairs from there on were used.
	// 0 when Step is false. StepAfter is the T1 of the last probe before
	// the step that it did not touch (0 when none): the step happened
	// between the two, StepAfter on src's clock before the step, StepAt
	// after it.
	StepAt, StepAfter int64
	// Pre is the fit of the pairs before the last step (and after any
	// earlier one), at the same Origin; nil without a step or without
	// such pairs. Its own Step and Pre are unset.
	Pre *Fit
	// AsymSigma is the part of Sigma, in quadrature, that the shapes of
	// the two directions' delays say a path asymmetry may add (see
	// asymSigma); 0 where they look alike.
	AsymSigma float64
	// Margin is, for svm only, the half-width in ns of the exact separating
	// corridor; negative when the forward and reverse point sets overlap.
	Margin float64
	// Refined reports, for svm only, that the floor was found soft and
	// Alpha, Beta, Sigma and AlphaSigma are those of the refined line
	// (see refineSVM) rather than of the exact corridor, whose half-width
	// Margin still is.
	Refined bool
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
	if c.stepTh == 0 {
		c.stepTh = int64(DefaultStepThreshold)
	}
	return c, nil
}

// Estimate fits the probes of one window, given in send order (lost probes
// are simply absent). Only complete pairs are used. Step detection runs
// first, then purity selection, then the estimator named by o.Kind. When a
// step is found, the fit is of the pairs after the last step and Pre is
// that of the pairs before it (after any earlier step), both at Origin; a
// side with fewer than MinPairs pairs (but at least one), or whose own
// fit is less precise than that, is fitted from the other side's line and
// path delays (see offsetOnly).
// Fewer than MinPairs pairs in all, or on both sides of a step, returns an
// error wrapping ErrInsufficient.
func Estimate(probes []Probe, o Options) (Fit, error) {
	c, err := o.config()
	if err != nil {
		return Fit{}, err
	}
	pairs := completePairs(probes)
	if len(pairs) < c.minPairs {
		return Fit{}, fmt.Errorf("%w: %d complete pairs, need %d", ErrInsufficient, len(pairs), c.minPairs)
	}
	all := buildSamples(probes, pairs, c.origin)
	var st stepCut
	if c.stepTh >= 0 {
		st = detectStep(all, pairs, float64(c.stepTh))
	}
	if !st.step {
		return fitSegment(probes, pairs, all, 0, len(pairs), c)
	}
	stepAt := int64(0)
	if st.cut < len(pairs) {
		stepAt = probes[pairs[st.cut].first()].T1
	}
	post, perr := fitSegment(probes, pairs, all, st.cut, len(pairs), c)
	pre, prerr := fitSegment(probes, pairs, all, st.preFrom, st.preTo, c)
	// A side with too few pairs, or whose own line is less precise than
	// one carried over from the other side, is fitted from the other's.
	if perr == nil && st.preTo > st.preFrom {
		if alt := offsetOnly(all, st.preFrom, st.preTo, post, st.cut, len(pairs)); prerr != nil || alt.Sigma < pre.Sigma {
			pre, prerr = alt, nil
		}
	}
	if prerr == nil && st.cut < len(pairs) {
		if alt := offsetOnly(all, st.cut, len(pairs), pre, st.preFrom, st.preTo); perr != nil || alt.Sigma < post.Sigma {
			post, perr = alt, nil
		}
	}
	if perr != nil {
		return Fit{}, fmt.Errorf("%w (after a clock step at src %d)", perr, stepAt)
	}
	post.Step, post.StepAt = true, stepAt
	if st.after >= 0 {
		post.StepAfter = probes[st.after].T1
	}
	if pre.Pairs > 0 {
		post.Pre = &pre
	}
	return post, nil
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
