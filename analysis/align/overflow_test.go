package align

import (
	"math"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestOverflowFlagged: a reading whose global or host time would wrap
// around the int64 range of ns is flagged Overflow, not returned wrapped;
// the same models on readings that fit are not.
func TestOverflowFlagged(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	model := func(start, end int64, off, ppm float64) *offsets.Index {
		return offsets.NewIndex([]offsets.Offset{{Type: "offset", NodeID: 0, WindowStartNS: start, WindowEndNS: end, OffsetNS: off, DriftPPM: ppm}})
	}
	pairs := func(s0 int64) *Snapshots {
		m, err := NewSnapshots([]Pair{{Sys: s0, Tracer: 0}, {Sys: s0 + 1e9, Tracer: 1e9}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		snaps    *Snapshots
		offs     *offsets.Index
		r        int64
		overflow bool
		global   int64 // when it does not overflow
	}{
		{"a year ahead near the bottom", nil, model(lo, lo+1e12, 3e16, 0), lo + 5, true, 0},
		{"a year ahead, room left", nil, model(lo, lo+1e18, 3e16, 0), lo + 4e16, false, lo + 1e16},
		{"a year behind near the top", nil, model(hi-1e12, hi, -3e16, 0), hi - 5, true, 0},
		{"drift far from the window", nil, model(0, 1e9, 0, -1000), hi - 1e15, true, 0},
		{"1e300 (an index of unchecked records)", nil, model(0, 1e9, 1e300, 0), 5, true, 0},
		{"NaN", nil, model(0, 1e9, math.NaN(), 0), 5, true, 0},
		{"host time past the top", pairs(hi - 2e9), nil, 3e9, true, 0},
		{"host time at the top", pairs(hi - 2e9), nil, 2e9, false, hi},
		{"host time past the bottom", pairs(lo + 1e9), nil, -2e9, true, 0},
	} {
		n := NewNode(0, tc.snaps, tc.offs)
		got := n.Align(tc.r)
		if over := got.Flags&Overflow != 0; over != tc.overflow || !over && got.Global != tc.global {
			t.Errorf("%s: Align(%d) = %+v, want overflow %v (global %d)", tc.name, tc.r, got, tc.overflow, tc.global)
		}
		if a, b := n.AlignSpan(tc.r, tc.r); a.Flags&Overflow != got.Flags&Overflow || b.Flags&Overflow != got.Flags&Overflow {
			t.Errorf("%s: AlignSpan flags %v %v, Align's %v", tc.name, a.Flags, b.Flags, got.Flags)
		}
	}
}
