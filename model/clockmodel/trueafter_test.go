package clockmodel

import (
	"math"
	"testing"
	"time"
)

func TestTrueAfterRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"perfect", Params{}},
		{"fast", Params{PPM: 100}},
		{"slow", Params{PPM: -300, Offset: time.Hour}},
		{"wander and periodic", Params{PPM: 20, WanderPPM: 0.5, PeriodicPPM: 3, PeriodicPeriod: 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.p)
			// The rate may change by at most this much over an interval.
			drift := 2 * (tt.p.wanderLimit() + math.Abs(tt.p.PeriodicPPM)) * 1e-6
			for _, start := range []int64{0, 1, 1_500_000_000, 77e9} {
				for _, d := range []int64{1, 1000, 1e6, 1e9, 5e9} {
					end := c.TrueAfter(start, d)
					if end < start {
						t.Fatalf("TrueAfter(%d, %d) = %d, before start", start, d, end)
					}
					got := c.Ideal(end) - c.Ideal(start)
					if tol := drift*float64(d) + 2; math.Abs(float64(got-d)) > tol {
						t.Errorf("TrueAfter(%d, %d): clock advanced %d, want %d ± %.1f", start, d, got, d, tol)
					}
				}
			}
		})
	}
}

func TestTrueAfterEdges(t *testing.T) {
	c := mustNew(t, Params{PPM: -10})
	for _, d := range []int64{0, -5, math.MinInt64} {
		if got := c.TrueAfter(7, d); got != 7 {
			t.Errorf("TrueAfter(7, %d) = %d, want 7", d, got)
		}
	}
	if got := c.TrueAfter(1e9, math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("TrueAfter(1s, MaxInt64) = %d, want saturation at MaxInt64", got)
	}
	if got := c.TrueAfter(0, 1e6); got != 1_000_011 { // ceil(1e6/(1−1e-5))
		t.Errorf("TrueAfter(0, 1ms) = %d, want 1000011", got)
	}
}
