package harness

import (
	"bytes"
	"strings"
	"testing"
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
