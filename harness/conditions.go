package harness

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/analysis/groundtruth"
)

// Run statuses (Summary.Status).
const (
	// StatusOK: the run honoured its scenario.
	StatusOK = "ok"
	// StatusDegraded: a measured condition of the run crossed its bound
	// (Summary.Conditions), so its figures may not represent the scenario.
	StatusDegraded = "degraded"
	// StatusFailed: the run measured nothing of what its scenario asks
	// (a sync node that never saw a round, or sent no probe);
	// Summary.StatusReason says why. The commands exit non-zero.
	StatusFailed = "failed"
)

// Condition is one measured figure of a run's conditions with the bound
// within which the run still represents its scenario. A real run measures
// what can make it unrepresentative (docs/real-backend.md, "Runs that know
// their conditions"); the simulator honours its scenario by construction
// and measures none.
type Condition struct {
	// Name says what was measured ("shaper release lateness p99, link 0->1").
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Bound is the largest Value the run is trusted with.
	Bound float64 `json:"bound"`
	Unit  string  `json:"unit"`
	// Over reports Value > Bound.
	Over bool `json:"over"`
	// Why says where the bound comes from.
	Why string `json:"why"`
}

// conditions collects a run's conditions.
type conditions []Condition

// check adds a condition; over is computed.
func (cs *conditions) check(name string, value, bound float64, unit, why string) {
	*cs = append(*cs, Condition{Name: name, Value: value, Bound: bound, Unit: unit, Over: value > bound, Why: why})
}

// status is StatusDegraded when any condition is over its bound.
func (cs conditions) status() string {
	if slices.ContainsFunc(cs, func(c Condition) bool { return c.Over }) {
		return StatusDegraded
	}
	return StatusOK
}

// String renders c as "NAME VALUE UNIT > BOUND UNIT (WHY)".
func (c Condition) String() string {
	rel := "≤"
	if c.Over {
		rel = ">"
	}
	return fmt.Sprintf("%s %s %s %s (%s)", c.Name, c.format(c.Value), rel, c.format(c.Bound), c.Why)
}

// format writes v in c's unit: durations (unit "ns") in one unit for the
// value and its bound, shares as percentages.
func (c Condition) format(v float64) string {
	switch c.Unit {
	case "ns":
		return UnitFor(c.Value, c.Bound).Text(v)
	case "share":
		return strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
	case "":
		return Count(int64(v))
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + c.Unit
}

// printStatus ends the printed summary: the run's status, and a warning for
// each condition over its bound, so that a degraded run never reads as a
// clean one.
func printStatus(w io.Writer, s Summary) {
	if s.Status == "" {
		return
	}
	fmt.Fprintf(w, "status: %s%s\n", s.Status, errSuffix(s.StatusReason))
	for _, c := range s.Conditions {
		if c.Over {
			fmt.Fprintf(w, "  warning: %s\n", c)
		}
	}
	switch s.Status {
	case StatusDegraded:
		fmt.Fprintln(w, "  the figures above were measured under these conditions and may not represent the scenario")
	case StatusFailed:
		fmt.Fprintln(w, "  the run measured nothing of its scenario: its figures above are not a result")
	}
}

// judgeTrust checks the run's figures against its ground truth: the sync
// protocol's node-round errors against the σ it reported, the ping
// exchanges' against half their round trip. A real run on one host knows
// its truth (the clocks it injected); one that did not honour its σ says
// so rather than print figures that read as trustworthy.
func judgeTrust(cs *conditions, s *Summary) {
	// 1 − Target, worked out as the shares are (a constant's exact
	// 0.01 would not equal 1 − 0.99 at run time).
	target := groundtruth.Target
	bound := 1 - target
	if sy := s.Sync; sy != nil {
		if c := sy.Calibration; c != nil && c.Points > 0 {
			worst := ""
			if len(c.Worst) > 0 {
				worst = fmt.Sprintf(" (%.1f ns off at σ %.1f ns)", math.Abs(c.Worst[0].ErrorNS), c.Worst[0].SigmaNS)
			}
			cs.check("node-round errors beyond 3 reported σ", 1-c.Within3, bound, "share",
				fmt.Sprintf("%s points against the injected clocks, worst %.1f σ%s: a reported σ must contain its error",
					Count(int64(c.Points)), c.Sigmas.Max, worst))
		}
	}
	if t := s.Trace; t != nil && t.AlignedEvents > 0 {
		cs.check("aligned events beyond 3 reported σ", 1-t.Within(), bound, "share",
			fmt.Sprintf("%s events of the combined trace against their tracer readings' true times, worst %.1f σ (%.0f ns)",
				Count(int64(t.AlignedEvents)), t.ErrorSigmas.Max, t.ErrorNS.Max))
	}
	if p := s.Ping; p != nil && p.RTT.N > 0 {
		cs.check("ping errors beyond half the round trip", 1-p.WithinBound, bound, "share",
			fmt.Sprintf("%s exchanges against the injected clocks: an NTP exchange's error lies within half its round trip unless its timestamps do not", Count(int64(p.RTT.N))))
	}
}
