package perfetto_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/perfetto/perfettotest"
)

// TestSlicesLanes: Writer.Slices puts each slice on the first lane where
// it nests, and the result imports (perfettotest.Check: every lane's
// slices nest, every begin has its end, times do not go back).
func TestSlicesLanes(t *testing.T) {
	schema := perfettotest.Schema(t)
	for _, tc := range []struct {
		name  string
		spans [][2]int64 // start, end
		lanes []int      // the lane of each span, by index
	}{
		{"disjoint", [][2]int64{{0, 10}, {10, 20}, {30, 40}}, []int{0, 0, 0}},
		{"nested", [][2]int64{{0, 100}, {10, 20}, {10, 15}, {20, 100}}, []int{0, 0, 0, 0}},
		{"overlap", [][2]int64{{0, 10}, {5, 15}, {12, 20}}, []int{0, 1, 0}},
		{"out of order", [][2]int64{{5, 15}, {0, 10}}, []int{1, 0}},
		{"identical", [][2]int64{{0, 10}, {0, 10}}, []int{0, 0}},
		{"zero length", [][2]int64{{0, 10}, {10, 10}, {5, 5}}, []int{0, 0, 0}},
		{"staircase", [][2]int64{{0, 10}, {1, 11}, {2, 12}, {11, 13}}, []int{0, 1, 2, 0}},
		{"negative", [][2]int64{{-50, -10}, {-20, 0}}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := perfetto.NewWriter(&buf, perfetto.Options{})
			p, _ := w.Process(1, "p", nil, 0)
			var spans []perfetto.Slice
			for i, s := range tc.spans {
				spans = append(spans, perfetto.Slice{Start: s[0], End: s[1], Index: i})
			}
			var tracks []perfetto.Track
			got := make([]int, len(tc.spans))
			err := w.Slices(spans, func(lane int) (perfetto.Track, error) {
				if lane != len(tracks) {
					t.Errorf("lane %d asked for after %d lanes", lane, len(tracks))
				}
				tr, err := w.Track(p, "line", "", 0, 1)
				tracks = append(tracks, tr)
				return tr, err
			}, func(s perfetto.Slice, tr perfetto.Track) (bool, error) {
				got[s.Index] = slices.Index(tracks, tr)
				return false, w.Begin(tr, s.Start, "s", nil, nil, nil)
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.lanes) {
				t.Errorf("lanes %v, want %v", got, tc.lanes)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			s, err := perfettotest.Check(schema, buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if s.Names["s"] != len(tc.spans) {
				t.Errorf("%d slices decoded, want %d", s.Names["s"], len(tc.spans))
			}
		})
	}
}
