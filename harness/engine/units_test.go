package engine

import (
	"math"
	"testing"
)

// TestFormatNS pins the rounding of single figures: half away from zero,
// never truncated, each in the unit that suits it.
func TestFormatNS(t *testing.T) {
	tests := []struct {
		ns   float64
		want string
	}{
		// mesh8-jitter's exported svm errors in summary.json, which the
		// CLI once printed truncated as 7/22/25/27 ns.
		{7.72, "8 ns"},
		{22.02, "22 ns"},
		{25.75, "26 ns"},
		{27.84, "28 ns"},
		{7.5, "8 ns"},
		{6.5, "7 ns"}, // half away from zero, not half to even
		{-7.5, "-8 ns"},
		{0, "0 ns"},
		{-0.2, "0 ns"}, // no "-0"
		{999.4, "999 ns"},
		{999.6, "1.00 µs"}, // rounds to 1000 ns: the next unit
		{1416, "1.42 µs"},
		{100078.4, "100.08 µs"},
		{13015, "13.02 µs"},
		{999_996, "1.00 ms"},
		{1.5e6, "1.50 ms"},
		{2.5e9, "2.50 s"},
		{math.NaN(), "NaN ns"},
	}
	for _, tc := range tests {
		if got := FormatNS(tc.ns); got != tc.want {
			t.Errorf("FormatNS(%v) = %q; want %q", tc.ns, got, tc.want)
		}
	}
}

// TestUnitFor pins the choice of one unit for figures of mixed magnitudes:
// the largest decides, and every figure is then written in it.
func TestUnitFor(t *testing.T) {
	tests := []struct {
		name   string
		vs     []float64
		unit   string
		format []string // each of vs formatted in the unit
	}{
		{"all ns", []float64{7.72, 22.02, 325.4}, "ns", []string{"8", "22", "325"}},
		{"ns and µs", []float64{7.72, 760, 13015.4}, "µs", []string{"0.01", "0.76", "13.02"}},
		{"negative largest", []float64{5, -2500}, "µs", []string{"0.01", "-2.50"}},
		{"just under 1 µs after rounding", []float64{999.4}, "ns", []string{"999"}},
		{"none", nil, "ns", nil},
		{"zeros", []float64{0, 0}, "ns", []string{"0", "0"}},
		{"NaN ignored", []float64{math.NaN(), 40}, "ns", []string{"NaN", "40"}},
		{"ms", []float64{8.22e6, 4.6e6, 12}, "ms", []string{"8.22", "4.60", "0.00"}},
	}
	for _, tc := range tests {
		u := UnitFor(tc.vs...)
		if u.Name != tc.unit {
			t.Errorf("%s: UnitFor(%v) = %s; want %s", tc.name, tc.vs, u.Name, tc.unit)
			continue
		}
		for i, v := range tc.vs {
			if got := u.Format(v); got != tc.format[i] {
				t.Errorf("%s: %s.Format(%v) = %q; want %q", tc.name, u.Name, v, got, tc.format[i])
			}
		}
	}
}

// TestCount pins the thousands separators of printed counts.
func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1200, "1,200"},
		{11170204, "11,170,204"}, {-1234567, "-1,234,567"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	}
	for _, tc := range tests {
		if got := Count(tc.n); got != tc.want {
			t.Errorf("Count(%d) = %q; want %q", tc.n, got, tc.want)
		}
	}
	if got := Count(uint64(math.MaxUint64)); got != "18,446,744,073,709,551,615" {
		t.Errorf("Count(MaxUint64) = %q", got)
	}
}
