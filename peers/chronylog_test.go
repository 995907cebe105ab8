package peers

import (
	"math"
	"testing"
	"time"
)

// trackingLog is the start of a client's tracking.log as chronyd 4.3
// writes it (logbanner at its default), with four malformed lines added.
const trackingLog = `===========================================================================================================================================
   Date (UTC) Time     IP Address   St   Freq ppm   Skew ppm     Offset L Co  Offset sd Rem. corr. Root delay Root disp. Max. error
===========================================================================================================================================
2026-11-22 14:03:13 0.0.0.0          0      0.012      0.057  0.000e+00 ?  0  0.000e+00 -3.205e-14  1.000e+00  1.000e+00  1.500e+00
2026-11-22 14:03:13 10.78.0.1        2      0.012      0.057 -6.474e-06 N  1  5.834e-07 -3.050e-09  2.390e-06  1.384e-04  1.500e+00
2026-11-22 14:03:13 10.78.0.1        2      0.012      0.057  3.689e-06 N  1  1.104e-06  6.470e-06  2.827e-06  7.948e-05  1.519e-04
2026-11-22 14:03:19 10.78.0.1        2     -0.004      0.076  1.121e-08 N  1  4.629e-08  7.744e-07  1.583e-06  6.020e-07  2.309e-06

2026-11-22 14:03:19 10.78.0.1        2     -0.004      0.076  1.121e-08 N  1  4.629e-08
2026-11-22 25:03:19 10.78.0.1        2     -0.004      0.076  1.121e-08 N  1  4.629e-08  7.744e-07  1.583e-06  6.020e-07  2.309e-06
2026-11-22 14:03:19 10.78.0.1        2     -0.004      0.076  bogus     N  1  4.629e-08  7.744e-07  1.583e-06  6.020e-07  2.309e-06
2026-11-22 14:03:19 10.78.0.1        2     -0.004      0.076  NaN       N  1  4.629e-08  7.744e-07  1.583e-06  6.020e-07  2.309e-06
2026-11-22 14:03:20 10.78.0.1        2     -0.001      0.076 -1.572e-08 N  1  4.669e-08  7.515e-07  1.583e-06  1.362e-06  2.805e-06`

func TestParseTracking(t *testing.T) {
	samples, malformed := parseTracking(trackingLog)
	if malformed != 4 {
		t.Errorf("malformed = %d, want 4", malformed)
	}
	at := func(s int) time.Time { return time.Date(2026, 11, 22, 14, 3, s, 0, time.UTC) }
	want := []Sample{
		{at(13), -6.474e3 + 3.050},
		{at(13), 3.689e3 - 6.470e3},
		{at(19), 11.21 - 774.4},
		{at(20), -15.72 - 751.5},
	}
	if len(samples) != len(want) {
		t.Fatalf("got %d samples %v, want %d", len(samples), samples, len(want))
	}
	for i, s := range samples {
		if !s.At.Equal(want[i].At) || math.Abs(s.OffsetNS-want[i].OffsetNS) > 1e-6 {
			t.Errorf("sample %d = %+v, want %+v", i, s, want[i])
		}
	}
}

func TestParseTrackingLine(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		ok, skip   bool
		wantOffset float64
	}{
		{"empty", "", false, true, 0},
		{"blank", "   \n", false, true, 0},
		{"banner rule", "=======", false, true, 0},
		{"banner header", "   Date (UTC) Time     IP Address   St   Freq ppm", false, true, 0},
		{"unsynchronised", "2026-11-22 14:03:13 0.0.0.0 0 0.012 0.057 0.000e+00 ? 0 0.000e+00 -3.205e-14 1.000e+00 1.000e+00 1.500e+00", false, true, 0},
		{"well formed with newline", "2026-11-22 14:03:13 10.78.0.1 2 0.012 0.057 1e-06 N 1 5.834e-07 -2e-06 2.390e-06 1.384e-04 1.500e+00\n", true, false, 3000},
		{"leap insert is synchronised", "2026-11-22 14:03:13 10.78.0.1 2 0.012 0.057 1e-06 + 1 5.834e-07 0 2.390e-06 1.384e-04 1.500e+00", true, false, 1000},
		{"too few fields", "2026-11-22 14:03:13 10.78.0.1 2", false, false, 0},
		{"bad date", "22/11/2026 14:03:13 10.78.0.1 2 0.012 0.057 1e-06 N 1 5.834e-07 -2e-06 2.390e-06 1.384e-04 1.500e+00", false, false, 0},
		{"bad rem corr", "2026-11-22 14:03:13 10.78.0.1 2 0.012 0.057 1e-06 N 1 5.834e-07 x 2.390e-06 1.384e-04 1.500e+00", false, false, 0},
		{"infinite offset", "2026-11-22 14:03:13 10.78.0.1 2 0.012 0.057 +Inf N 1 5.834e-07 0 2.390e-06 1.384e-04 1.500e+00", false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok, skip := parseTrackingLine(tt.line)
			if ok != tt.ok || skip != tt.skip {
				t.Fatalf("parseTrackingLine(%q): ok %v skip %v, want ok %v skip %v", tt.line, ok, skip, tt.ok, tt.skip)
			}
			if ok && math.Abs(s.OffsetNS-tt.wantOffset) > 1e-6 {
				t.Errorf("OffsetNS = %v, want %v", s.OffsetNS, tt.wantOffset)
			}
		})
	}
}
