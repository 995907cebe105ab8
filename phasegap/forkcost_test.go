package phasegap

import (
	"strings"
	"testing"
)

// TestMeasureForkCost: the measurement is ordered (fastest ≤ median ≤
// slowest batch), above 0, and says what it measured; bad arguments are
// refused.
func TestMeasureForkCost(t *testing.T) {
	fc, err := MeasureForkCost(2, 200, 4)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Threads != 2 || fc.Forks != 200 || fc.Batches != 4 || fc.Min <= 0 || fc.Min > fc.Median || fc.Median > fc.Max {
		t.Errorf("MeasureForkCost = %+v", fc)
	}
	if s := fc.String(); !strings.Contains(s, "per fork/join of 2 threads (median of 4 batches of 50 forks") {
		t.Errorf("String = %q", s)
	}
	for _, tc := range []struct {
		threads, forks, batches int
		want                    string
	}{
		{1, 100, 4, "1 threads: expected 2 to"},
		{2, 3, 4, "3 forks in 4 batches"},
		{2, 100, 0, "100 forks in 0 batches"},
	} {
		if _, err := MeasureForkCost(tc.threads, tc.forks, tc.batches); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MeasureForkCost(%d, %d, %d) = %v, want %q", tc.threads, tc.forks, tc.batches, err, tc.want)
		}
	}
}
