package align

import (
	"math"
	"testing"
)

// TestUnrecordedStep: a host clock step that no record carries (the
// records put an ambiguous step on another node) splits a burst of
// snapshot pairs; the mapping finds it in the pairs and maps readings on
// either side to the host clock as it read, the step in it, where plain
// interpolation would smear it over a whole sampling period.
func TestUnrecordedStep(t *testing.T) {
	const (
		rate   = 1 + 10e-6
		offset = 5000.0
		period = int64(1e9)
	)
	host := func(r int64, stepAt int64, size float64) float64 {
		s := float64(r)*rate + offset
		if stepAt > 0 && r >= stepAt {
			s += size
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		stepAt int64 // tracer reading from which the host clock stepped; 0: none
		size   float64
		want   int // steps found
	}{
		{"none", 0, 0, 0},
		{"forward, inside a burst", 2*period + 1_500_000, 2e6, 1},
		{"back, inside a burst", 2*period + 1_500_000, -2e6, 1},
		{"forward, between bursts", 2*period + period/2, 3e6, 1},
		{"below the floor", 2*period + 1_500_000, 0.2e6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pairs []Pair
			for k := range int64(5) {
				for j := range int64(3) { // a burst: three pairs 1 ms apart
					r := k*period + j*1_000_000
					pairs = append(pairs, Pair{Tracer: r, Sys: int64(math.Round(host(r, tc.stepAt, tc.size)))})
				}
			}
			m, err := NewSnapshotsStepped(pairs, period/8, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Steps(); got != tc.want {
				t.Fatalf("Steps() = %d, want %d", got, tc.want)
			}
			n := NewNode(0, m, nil)
			// Readings away from the step map exactly (a step below the
			// floor is smeared over its period, as before, so skipped).
			for _, r := range []int64{period / 2, 3 * period / 2, 7 * period / 2} {
				got, want := n.Align(r), host(r, tc.stepAt, tc.size)
				if d := float64(got.Global) - want; (tc.want > 0 || tc.size == 0) && (math.Abs(d) > 2 || math.Abs(d) > 3*got.Sigma) {
					t.Errorf("R %d: host %d, want %.0f (off %.0f ns, σ %.1f)", r, got.Global, want, d, got.Sigma)
				}
			}
			// Between the bursts around a step found there, a reading may
			// lie on either side of it: its σ covers the step.
			r := 2*period + period/4
			got := n.Align(r)
			if d := float64(got.Global) - host(r, tc.stepAt, tc.size); tc.want > 0 && math.Abs(d) > 3*got.Sigma {
				t.Errorf("R %d, between the bursts: off %.0f ns, σ %.0f", r, d, got.Sigma)
			}
		})
	}
}
