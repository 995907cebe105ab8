package ntpshm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestFromModel: FromModel's ClockTime is global time at the reading, to
// the nanosecond at Unix-epoch magnitudes (where the float64 of
// Offset.Global holds multiples of 256 ns only), carried onto
// CLOCK_REALTIME's scale when the node's clock is not CLOCK_REALTIME (an
// injected clock), through drift and steps; Precision follows the
// model's σ; a model not on the Unix epoch and a non-finite one are
// refused.
func TestFromModel(t *testing.T) {
	const t0 = int64(1_764_000_000_000_000_000) // the window's start, epoch ns
	rt := func(ns int64) time.Time { return time.Unix(0, ns) }
	for _, tc := range []struct {
		name     string
		model    offsets.Offset
		local    int64
		realtime time.Time
		// wantAhead is ClockTime − ReceiveTime, ns.
		wantAhead int64
		wantPrec  int
		wantErr   string
	}{
		{
			name:  "production: S is CLOCK_REALTIME, global 250 µs ahead",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: -250_000, UncertaintyNS: 100},
			local: t0 + 123_456_789, realtime: rt(t0 + 123_456_789),
			wantAhead: 250_000, wantPrec: -23, // ⌈log2 1e-7⌉
		},
		{
			name:  "sub-256 ns offset at epoch magnitude",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: 123, UncertaintyNS: 3},
			local: t0 + 77, realtime: rt(t0 + 77),
			wantAhead: -123, wantPrec: -28, // ⌈log2 3e-9⌉ = ⌈-28.3⌉
		},
		{
			name:  "drift 10 ppm, 1 s into the window",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: 1000, DriftPPM: 10, UncertaintyNS: 1000},
			local: t0 + 1e9, realtime: rt(t0 + 1e9),
			wantAhead: -11_000, wantPrec: -19, // ⌈log2 1e-6⌉
		},
		{
			name:  "injected clock: S is CLOCK_REALTIME + 5 ms and the model knows it",
			model: offsets.Offset{WindowStartNS: t0 + 5e6, WindowEndNS: t0 + 1e9, OffsetNS: 5e6, UncertaintyNS: 100},
			local: t0 + 5e6 + 42, realtime: rt(t0 + 42),
			wantAhead: 0, wantPrec: -23,
		},
		{
			name: "after a 2 µs forward step",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: 0, UncertaintyNS: 100,
				Steps: []offsets.Step{{AtNS: t0 + 5e8, SizeNS: 2000, SizeUncertaintyNS: 100}}},
			local: t0 + 6e8, realtime: rt(t0 + 6e8),
			wantAhead: -2000, wantPrec: -22, // σ = √2·100 ns
		},
		{
			name:  "half a nanosecond rounds",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: -0.6, UncertaintyNS: 0},
			local: t0, realtime: rt(t0),
			wantAhead: 1, wantPrec: MinPrecision,
		},
		{
			name:  "a run's clock, not the epoch",
			model: offsets.Offset{NodeID: 2, RoundID: 7, WindowStartNS: 0, WindowEndNS: 1e9, OffsetNS: 10},
			local: 5e8, realtime: rt(t0),
			wantErr: "node 2 round 7: global time at local 500000000 ns is -1763999999500000000 ns from CLOCK_REALTIME 1764000000000000000 ns, more than the limit 24h0m0s: the model's clock is not CLOCK_REALTIME since the Unix epoch",
		},
		{
			name:  "a reading that overflows",
			model: offsets.Offset{WindowStartNS: 0, WindowEndNS: 1e9},
			local: math.MinInt64, realtime: rt(t0),
			wantErr: "too far from CLOCK_REALTIME",
		},
		{
			name:  "not a number",
			model: offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: math.NaN()},
			local: t0, realtime: rt(t0),
			wantErr: "correction at local 1764000000000000000 ns is NaN, expected a finite number",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromModel(tc.model, tc.local, tc.realtime)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.ReceiveTime.Equal(tc.realtime) {
				t.Errorf("ReceiveTime %v, want %v", s.ReceiveTime, tc.realtime)
			}
			if got := s.ClockTime.Sub(s.ReceiveTime).Nanoseconds(); got != tc.wantAhead {
				t.Errorf("ClockTime − ReceiveTime = %d ns, want %d ns", got, tc.wantAhead)
			}
			if s.Offset() != time.Duration(tc.wantAhead) {
				t.Errorf("Offset() = %v, want %v", s.Offset(), time.Duration(tc.wantAhead))
			}
			if want := PrecisionOf(tc.model.SigmaAt(tc.local) * 1e-9); s.Precision != want || s.Precision != tc.wantPrec {
				t.Errorf("Precision %d, want %d (σ %.1f ns), table says %d", s.Precision, want, tc.model.SigmaAt(tc.local), tc.wantPrec)
			}
			if s.Leap != LeapNone {
				t.Errorf("Leap %d, want LeapNone", s.Leap)
			}
			if err := s.check(); err != nil {
				t.Errorf("FromModel made a sample Write refuses: %v", err)
			}
		})
	}
}

// TestPrecisionOf: ⌈log2 σ⌉, clamped to [-30, 0]; σ 0 is the finest, σ
// unknown (NaN) or infinite the coarsest.
func TestPrecisionOf(t *testing.T) {
	for _, tc := range []struct {
		sigma float64
		want  int
	}{
		{0, MinPrecision},
		{-1, MinPrecision},
		{1e-10, MinPrecision},
		{1e-9, -29},
		{1e-7, -23},
		{1e-6, -19},
		{0.5, -1},
		{1, 0},
		{10, MaxPrecision},
		{math.Inf(1), MaxPrecision},
		{math.NaN(), MaxPrecision},
	} {
		if got := PrecisionOf(tc.sigma); got != tc.want {
			t.Errorf("PrecisionOf(%g) = %d, want %d", tc.sigma, got, tc.want)
		}
	}
}
