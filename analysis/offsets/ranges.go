package offsets

import (
	"fmt"
	"math"
	"strconv"
)

// The physical bounds of a clock model. A record beyond them is not a
// clock that is far off but a broken file or a broken estimate: the readers
// refuse it (a *LineError naming the line and the field) and Writer.Append
// refuses to write it.
const (
	// MaxOffsetNS bounds |offset_ns|: one year of 365.25 days, in ns.
	MaxOffsetNS = 365.25 * 24 * 3600 * 1e9 // 31557600000000000
	// MaxDriftPPM bounds |drift_ppm|: 1,000 ppm (a crystal is good to
	// about 100 ppm; 1,000 is a clock that is broken, not drifting).
	MaxDriftPPM = 1000
)

// The bounds as they read in messages (TestBoundsInMessages holds them to
// the constants).
const (
	wantOffset      = "|offset_ns| ≤ 31557600000000000 (one year)"
	wantDrift       = "|drift_ppm| ≤ 1000"
	wantUncertainty = "a finite uncertainty_ns ≥ 0"
	wantSigma       = "a finite sigma_ns ≥ 0"
	wantFinite      = "a finite number"
	wantDriftSigma  = "a finite drift_uncertainty_ppm ≥ 0"
	wantStepSize    = "|size_ns| ≤ 31557600000000000 (one year)"
	wantStepSigma   = "a finite size_uncertainty_ns ≥ 0"
	wantAtSigma     = "a finite at_uncertainty_ns ≥ 0"
	wantChi2        = "a finite chi2 ≥ 0"
	wantPValue      = "0 ≤ p_value ≤ 1"
	wantBirge       = "a finite birge_ratio ≥ 0"
	wantNodeID      = "a node id ≥ 0"
)

// Check says what is out of range in o: the field's JSON name and why
// (e.g. "offset_ns", "1e+300 is out of range; expected |offset_ns| ≤
// 31557600000000000 (one year)"), or "", "". Every field with a range is
// checked here, so that the readers and the writer apply the same bounds:
// |offset_ns| ≤ MaxOffsetNS, |drift_ppm| ≤ MaxDriftPPM, uncertainty_ns
// and drift_uncertainty_ppm finite and ≥ 0, window_end_ns >
// window_start_ns, every number finite; and each step's (field
// "steps[i].size_ns" and so on): |size_ns| ≤ MaxOffsetNS, its
// uncertainties finite and ≥ 0, at_ns inside the window
// [window_start_ns, window_end_ns] and after the previous step's; and
// the self-check's counts (0 ≤ within_3sigma ≤ predictions) and max_sigma
// (finite, ≥ 0).
func (o Offset) Check() (field, msg string) {
	switch {
	case !(math.Abs(o.OffsetNS) <= MaxOffsetNS):
		return "offset_ns", outOfRange(o.OffsetNS, wantOffset)
	case !(math.Abs(o.DriftPPM) <= MaxDriftPPM):
		return "drift_ppm", outOfRange(o.DriftPPM, wantDrift)
	case !nonNegativeFinite(o.UncertaintyNS):
		return "uncertainty_ns", outOfRange(o.UncertaintyNS, wantUncertainty)
	case !nonNegativeFinite(o.DriftUncertaintyPPM):
		return "drift_uncertainty_ppm", outOfRange(o.DriftUncertaintyPPM, wantDriftSigma)
	case o.WindowEndNS <= o.WindowStartNS:
		return "window_end_ns", fmt.Sprintf("%d is not after window_start_ns %d; expected window_end_ns > window_start_ns",
			o.WindowEndNS, o.WindowStartNS)
	}
	for i, s := range o.Steps {
		if field, msg := o.checkStep(i, s); field != "" {
			return fmt.Sprintf("steps[%d].%s", i, field), msg
		}
	}
	if c := o.SelfCheck; c != nil {
		switch {
		case c.Predictions < 0:
			return "self_check.predictions", fmt.Sprintf("%d is out of range; expected a count ≥ 0", c.Predictions)
		case c.Within3Sigma < 0 || c.Within3Sigma > c.Predictions:
			return "self_check.within_3sigma", fmt.Sprintf("%d is out of range; expected 0 ≤ within_3sigma ≤ predictions %d", c.Within3Sigma, c.Predictions)
		case !nonNegativeFinite(c.MaxSigma):
			return "self_check.max_sigma", outOfRange(c.MaxSigma, "a finite max_sigma ≥ 0")
		}
	}
	return "", ""
}

// checkStep says which field of s, the i-th step of o, is out of range.
func (o Offset) checkStep(i int, s Step) (field, msg string) {
	switch {
	case s.AtNS < o.WindowStartNS || s.AtNS > o.WindowEndNS:
		return "at_ns", fmt.Sprintf("%d is outside the window [%d, %d]; expected window_start_ns ≤ at_ns ≤ window_end_ns",
			s.AtNS, o.WindowStartNS, o.WindowEndNS)
	case i > 0 && s.AtNS <= o.Steps[i-1].AtNS:
		return "at_ns", fmt.Sprintf("%d is not after steps[%d].at_ns %d; expected the steps in increasing at_ns order",
			s.AtNS, i-1, o.Steps[i-1].AtNS)
	case !nonNegativeFinite(s.AtUncertaintyNS):
		return "at_uncertainty_ns", outOfRange(s.AtUncertaintyNS, wantAtSigma)
	case !(math.Abs(s.SizeNS) <= MaxOffsetNS):
		return "size_ns", outOfRange(s.SizeNS, wantStepSize)
	case !nonNegativeFinite(s.SizeUncertaintyNS):
		return "size_uncertainty_ns", outOfRange(s.SizeUncertaintyNS, wantStepSigma)
	}
	return "", ""
}

// Check says which number of e is out of range and why, as Offset.Check
// does: each must be finite, and sigma_ns ≥ 0.
func (e Edge) Check() (field, msg string) {
	switch {
	case !finite(e.Alpha):
		return "alpha", outOfRange(e.Alpha, wantFinite)
	case !finite(e.Beta):
		return "beta_ns", outOfRange(e.Beta, wantFinite)
	case !nonNegativeFinite(e.Sigma):
		return "sigma_ns", outOfRange(e.Sigma, wantSigma)
	case !nonNegativeFinite(e.AsymSigma):
		return "asym_sigma_ns", outOfRange(e.AsymSigma, "a finite asym_sigma_ns ≥ 0")
	case e.Residual != nil && !finite(*e.Residual):
		return "residual_ns", outOfRange(*e.Residual, wantFinite)
	}
	return "", ""
}

// Check says which number of r is out of range and why, as Offset.Check
// does: the node ids in reported and missing ≥ 0 (field "reported[i]"),
// each number finite, chi2 and birge_ratio ≥ 0, p_value in [0, 1]
// (chi2_dof ≥ 0 is a kind: "a non-negative integer").
func (r Round) Check() (field, msg string) {
	for _, ids := range []struct {
		name string
		ids  []int
	}{{"reported", r.Reported}, {"missing", r.Missing}} {
		for i, id := range ids.ids {
			if id < 0 {
				return fmt.Sprintf("%s[%d]", ids.name, i), fmt.Sprintf("%d is out of range; expected %s", id, wantNodeID)
			}
		}
	}
	switch {
	case !finite(r.RMSResidualNS):
		return "rms_residual_ns", outOfRange(r.RMSResidualNS, wantFinite)
	case !finite(r.MaxResidualNS):
		return "max_residual_ns", outOfRange(r.MaxResidualNS, wantFinite)
	case !nonNegativeFinite(r.Chi2):
		return "chi2", outOfRange(r.Chi2, wantChi2)
	case !(r.PValue >= 0 && r.PValue <= 1):
		return "p_value", outOfRange(r.PValue, wantPValue)
	case !nonNegativeFinite(r.BirgeRatio):
		return "birge_ratio", outOfRange(r.BirgeRatio, wantBirge)
	}
	return "", ""
}

// checker is a record whose values have ranges: Offset, Edge and Round.
type checker interface {
	Check() (field, msg string)
}

// checkRecord applies rec's range check, if it has one: "" when it is in
// range, else "FIELD: why".
func checkRecord(rec any) string {
	c, ok := rec.(checker)
	if !ok {
		return ""
	}
	if field, msg := c.Check(); field != "" {
		return field + ": " + msg
	}
	return ""
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// nonNegativeFinite reports 0 ≤ v < +Inf (false for NaN).
func nonNegativeFinite(v float64) bool { return v >= 0 && v <= math.MaxFloat64 }

// outOfRange says that v is not what want says it must be.
func outOfRange(v float64, want string) string {
	what := "is out of range"
	if !finite(v) {
		what = "is not finite"
	}
	return strconv.FormatFloat(v, 'g', -1, 64) + " " + what + "; expected " + want
}
