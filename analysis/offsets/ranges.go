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
	// MaxWindowNS bounds a window's length, window_end_ns −
	// window_start_ns: 2 h. The protocol's longest window is 1 h on the
	// master's clock (rounds.MaxWindow); a node's own clock reads it
	// longer by its rate (up to MaxDriftPPM) and by how late its
	// ROUND_END arrives, and twice the protocol's window leaves room for
	// both. A longer window is no window of the protocol's: one that
	// spans the int64 range would put a 13.5-day correction on a record.
	MaxWindowNS int64 = 2 * 3600 * 1e9
	// MaxEdgeBetaNS and MaxEdgeAlpha bound a sufficient edge's fit in
	// rounds.jsonl (beta_ns, alpha) and at the master's door: an edge is
	// the difference of two clocks, each within MaxOffsetNS and
	// MaxDriftPPM of global time, so at most twice those.
	MaxEdgeBetaNS = 2 * MaxOffsetNS
	MaxEdgeAlpha  = 2 * MaxDriftPPM * 1e-6
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
	wantCount       = "a count ≥ 0"
	wantEdgeBeta    = "|beta_ns| ≤ 63115200000000000 (two years: two clocks each within a year)"
	wantEdgeAlpha   = "|alpha| ≤ 0.002 (two clocks each within 1000 ppm)"
)

// Check says what is out of range in o: the field's JSON name and why
// (e.g. "offset_ns", "1e+300 is out of range; expected |offset_ns| ≤
// 31557600000000000 (one year)"), or "", "". Every field with a range is
// checked here, so that the readers and the writer apply the same bounds:
// node_id ≥ 0, |offset_ns| ≤ MaxOffsetNS, |drift_ppm| ≤ MaxDriftPPM,
// uncertainty_ns and drift_uncertainty_ppm finite and ≥ 0, the window as
// CheckWindow says (window_end_ns > window_start_ns, at most MaxWindowNS
// long), every number finite; and each step's (field
// "steps[i].size_ns" and so on): |size_ns| ≤ MaxOffsetNS, its
// uncertainties finite and ≥ 0, at_ns inside the window
// [window_start_ns, window_end_ns] and after the previous step's; and
// the self-check's counts (0 ≤ within_3sigma ≤ predictions) and max_sigma
// (finite, ≥ 0).
func (o Offset) Check() (field, msg string) {
	switch {
	case o.NodeID < 0:
		return "node_id", fmt.Sprintf("%d is out of range; expected %s", o.NodeID, wantNodeID)
	case !(math.Abs(o.OffsetNS) <= MaxOffsetNS):
		return "offset_ns", outOfRange(o.OffsetNS, wantOffset)
	case !(math.Abs(o.DriftPPM) <= MaxDriftPPM):
		return "drift_ppm", outOfRange(o.DriftPPM, wantDrift)
	case !nonNegativeFinite(o.UncertaintyNS):
		return "uncertainty_ns", outOfRange(o.UncertaintyNS, wantUncertainty)
	case !nonNegativeFinite(o.DriftUncertaintyPPM):
		return "drift_uncertainty_ppm", outOfRange(o.DriftUncertaintyPPM, wantDriftSigma)
	}
	if field, msg := CheckWindow(o.WindowStartNS, o.WindowEndNS); field != "" {
		return field, msg
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

// CheckWindow says what is wrong with the window [start, end] of a record
// or a report, as Offset.Check does: the field ("window_end_ns") and why,
// or "", "". The window must end after it starts and last at most
// MaxWindowNS.
func CheckWindow(start, end int64) (field, msg string) {
	switch {
	case end <= start:
		return "window_end_ns", fmt.Sprintf("%d is not after window_start_ns %d; expected window_end_ns > window_start_ns",
			end, start)
	case uint64(end)-uint64(start) > uint64(MaxWindowNS): // end > start: the difference fits a uint64
		return "window_end_ns", fmt.Sprintf("%d is %d ns after window_start_ns %d; expected a window of at most %d ns (2 h, twice the protocol's longest)",
			end, uint64(end)-uint64(start), start, MaxWindowNS)
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

// Check says which value of e is out of range and why, as Offset.Check
// does: src, dst, pairs_count and lost_count ≥ 0; each number finite,
// sigma_ns and asym_sigma_ns ≥ 0; and, unless the edge is insufficient
// (its fit is not one), |alpha| ≤ MaxEdgeAlpha and |beta_ns| ≤
// MaxEdgeBetaNS. The master's door checks every edge of a report against
// this before it takes it (package rounds).
func (e Edge) Check() (field, msg string) {
	for _, c := range []struct {
		name string
		v    int
		want string
	}{{"src", e.Src, wantNodeID}, {"dst", e.Dst, wantNodeID}, {"pairs_count", e.PairsCount, wantCount}, {"lost_count", e.LostCount, wantCount}} {
		if c.v < 0 {
			return c.name, fmt.Sprintf("%d is out of range; expected %s", c.v, c.want)
		}
	}
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
	case !e.Insufficient && !(math.Abs(e.Alpha) <= MaxEdgeAlpha):
		return "alpha", outOfRange(e.Alpha, wantEdgeAlpha)
	case !e.Insufficient && !(math.Abs(e.Beta) <= MaxEdgeBetaNS):
		return "beta_ns", outOfRange(e.Beta, wantEdgeBeta)
	}
	return "", ""
}

// Check says which number of r is out of range and why, as Offset.Check
// does: the node ids in reported and missing ≥ 0 (field "reported[i]"),
// the counts ≥ 0 (solved_nodes, rejected_edges, retries, message_bytes,
// chi2_dof),
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
	for _, c := range []struct {
		name string
		v    int
	}{{"solved_nodes", r.Solved}, {"rejected_edges", r.Rejected}, {"retries", r.Retries}, {"message_bytes", r.MessageBytes}, {"chi2_dof", r.Chi2DOF}} {
		if c.v < 0 {
			return c.name, fmt.Sprintf("%d is out of range; expected %s", c.v, wantCount)
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

// CheckRecord applies the range check of rec, an Offset, Edge or Round (or
// a pointer to one), as Writer.Append does: the field and why, or "", ""
// when rec is in range or has no ranges (Meta). A recorder that must lose
// at most one record, not a file, leaves out what this refuses.
func CheckRecord(rec any) (field, msg string) {
	if c, ok := rec.(checker); ok {
		return c.Check()
	}
	return "", ""
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
