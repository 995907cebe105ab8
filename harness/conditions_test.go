package harness

import (
	"bytes"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
)

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		checks []Condition // Name, Value, Bound, Unit, Why
		status string
		print  []string // lines the printed status holds
		absent []string // and does not
	}{
		{"none", nil, StatusOK, []string{"status: ok\n"}, []string{"warning"}},
		{"within", []Condition{{Name: "CPU steal", Value: 0.01, Bound: 0.05, Unit: "share", Why: "stolen"}},
			StatusOK, []string{"status: ok\n"}, []string{"warning"}},
		{"at the bound is within", []Condition{{Name: "node-rounds missing", Value: 0, Bound: 0, Why: "none"}},
			StatusOK, []string{"status: ok\n"}, []string{"warning"}},
		{"one over", []Condition{
			{Name: "CPU steal", Value: 0.01, Bound: 0.05, Unit: "share", Why: "stolen"},
			{Name: "shaper release lateness p99, link 0->1", Value: 612e3, Bound: 10e3, Unit: "ns", Why: "a tenth"},
		}, StatusDegraded, []string{
			"status: degraded\n",
			"  warning: shaper release lateness p99, link 0->1 612.00 µs > 10.00 µs (a tenth)\n",
			"may not represent the scenario",
		}, []string{"CPU steal"}},
		{"counts and shares", []Condition{
			{Name: "node-rounds missing", Value: 2, Bound: 0, Why: "every node"},
			{Name: "CPU pressure", Value: 0.921, Bound: 0.5, Unit: "share", Why: "PSI"},
		}, StatusDegraded, []string{
			"  warning: node-rounds missing 2 > 0 (every node)\n",
			"  warning: CPU pressure 92.1 % > 50.0 % (PSI)\n",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs conditions
			for _, c := range tc.checks {
				cs.check(c.Name, c.Value, c.Bound, c.Unit, c.Why)
			}
			if got := cs.status(); got != tc.status {
				t.Errorf("status %q, want %q", got, tc.status)
			}
			var b bytes.Buffer
			printStatus(&b, Summary{Status: cs.status(), Conditions: cs})
			for _, want := range tc.print {
				if !strings.Contains(b.String(), want) {
					t.Errorf("printed %q, want it to hold %q", b.String(), want)
				}
			}
			for _, not := range tc.absent {
				if strings.Contains(b.String(), not) {
					t.Errorf("printed %q, want no %q", b.String(), not)
				}
			}
		})
	}
}

// TestJudgeTrust: a run whose σ did not contain its errors, or whose ping
// errors broke half the round trip, is degraded and says which; one that
// honoured them, or has no truth to judge by, is not.
func TestJudgeTrust(t *testing.T) {
	cal := func(within float64) *groundtruth.Calibration {
		return &groundtruth.Calibration{Points: 24, Within3: within, Sigmas: stats.Summary{Max: 4.1},
			Worst: []groundtruth.PointError{{ErrorNS: 13, SigmaNS: 3.2}}}
	}
	for _, tc := range []struct {
		name   string
		s      Summary
		status string
		want   string // in the printed status
	}{
		{"calibrated", Summary{Sync: &syncrun.SyncSummary{Calibration: cal(1)}}, StatusOK, ""},
		{"at the target", Summary{Sync: &syncrun.SyncSummary{Calibration: cal(0.99)}}, StatusOK, ""},
		{"not calibrated", Summary{Sync: &syncrun.SyncSummary{Calibration: cal(22.0 / 24)}}, StatusDegraded,
			"warning: node-round errors beyond 3 reported σ 8.3 % > 1.0 % (24 points against the injected clocks, worst 4.1 σ (13.0 ns off at σ 3.2 ns)"},
		{"no truth", Summary{Sync: &syncrun.SyncSummary{}}, StatusOK, ""},
		{"ping within", Summary{Ping: &pingrun.Summary{RTT: stats.Summary{N: 100}, WithinBound: 1}}, StatusOK, ""},
		{"ping beyond", Summary{Ping: &pingrun.Summary{RTT: stats.Summary{N: 100}, WithinBound: 0.95}}, StatusDegraded,
			"warning: ping errors beyond half the round trip 5.0 % > 1.0 % (100 exchanges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs conditions
			judgeTrust(&cs, &tc.s)
			if got := cs.status(); got != tc.status {
				t.Errorf("status %q, want %q (%v)", got, tc.status, cs)
			}
			var b bytes.Buffer
			printStatus(&b, Summary{Status: cs.status(), Conditions: cs})
			if tc.want != "" && !strings.Contains(b.String(), tc.want) {
				t.Errorf("printed %q, want it to hold %q", b.String(), tc.want)
			}
		})
	}
}

// TestPrintCalibration: the sync summary's line says plainly when the
// reported σ understate the errors.
func TestPrintCalibration(t *testing.T) {
	for _, tc := range []struct {
		within float64
		want   string
		not    string
	}{
		{1, "reported σ: 24 of 24 node-round errors within 3σ (100.0 %), worst 2.00 σ\n", "NOT CALIBRATED"},
		{22.0 / 24, "reported σ: 22 of 24 node-round errors within 3σ (91.7 %), worst 2.00 σ: NOT CALIBRATED, want ≥ 99 %", ""},
	} {
		var b bytes.Buffer
		PrintCalibration(&b, &groundtruth.Calibration{Points: 24, Within3: tc.within, Sigmas: stats.Summary{Max: 2}})
		if !strings.Contains(b.String(), tc.want) || (tc.not != "" && strings.Contains(b.String(), tc.not)) {
			t.Errorf("printed %q, want %q and no %q", b.String(), tc.want, tc.not)
		}
	}
}
