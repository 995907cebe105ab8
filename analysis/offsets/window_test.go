package offsets

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestOffsetsWindowBounded (issue 30): a window spanning the whole int64
// range was accepted, a 13.5-day correction reported at σ 197 ns; the
// protocol's windows last at most an hour (rounds.MaxWindow). Now the
// reader and the writer refuse a window longer than MaxWindowNS (2 h),
// naming the field and the limit, and take one of exactly MaxWindowNS, at
// either end of the int64 range too.
func TestOffsetsWindowBounded(t *testing.T) {
	record := func(start, end int64) string {
		return fmt.Sprintf(`{"type":"offset","round_id":1,"window_id":1,"window_start_ns":%d,"window_end_ns":%d,"node_id":1,"offset_ns":0,"drift_ppm":0,"uncertainty_ns":197,"drift_uncertainty_ppm":0}`, start, end)
	}
	for _, tc := range []struct {
		name       string
		start, end int64
		want       string // the error's end; "" for none
	}{
		{"1 s", 0, 1e9, ""},
		{"at MaxWindowNS", 5, 5 + MaxWindowNS, ""},
		{"at the low end", math.MinInt64, math.MinInt64 + MaxWindowNS, ""},
		{"at the high end", math.MaxInt64 - MaxWindowNS, math.MaxInt64, ""},
		{"1 ns over", 5, 6 + MaxWindowNS, "window_end_ns: 7200000000006 is 7200000000001 ns after window_start_ns 5; expected a window of at most 7200000000000 ns (2 h, twice the protocol's longest)"},
		{"the int64 range", math.MinInt64, math.MaxInt64, "is 18446744073709551615 ns after window_start_ns -9223372036854775808; expected a window of at most 7200000000000 ns (2 h, twice the protocol's longest)"},
		{"13.5 days", 0, 1166400e9, "expected a window of at most 7200000000000 ns (2 h, twice the protocol's longest)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, rerr := DecodeOffsets(strings.NewReader(lines(metaLine(FileOffsets), record(tc.start, tc.end))), "offsets.jsonl")
			w, err := NewWriter(&bytes.Buffer{}, testMeta(FileOffsets))
			if err != nil {
				t.Fatal(err)
			}
			werr := w.Append(Offset{RoundID: 1, WindowID: 1, NodeID: 1, WindowStartNS: tc.start, WindowEndNS: tc.end, UncertaintyNS: 197})
			for what, err := range map[string]error{"read": rerr, "write": werr} {
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
					t.Errorf("%s: %v; want an error ending %q", what, err, tc.want)
				}
			}
		})
	}
}
