package engine

import (
	"strings"
	"testing"
	"time"
)

// TestProgressLines: where the output is not a terminal, a run prints one
// line at each tenth of its virtual duration, once each, however its
// chunks fall, and nothing without a writer or a duration.
func TestProgressLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total time.Duration
		sets  []time.Duration
		want  []string
	}{
		{
			name: "chunks across tenths", total: 90 * time.Second,
			sets: []time.Duration{5 * time.Second, 9 * time.Second, 30 * time.Second, 30 * time.Second},
			want: []string{"r: 10 % (9s of 1m30s simulated)", "r: 20 % (18s of 1m30s simulated)", "r: 30 % (27s of 1m30s simulated)"},
		},
		{
			name: "past the end: each tenth once", total: 10 * time.Second,
			sets: []time.Duration{25 * time.Second, 40 * time.Second},
			want: []string{
				"r: 10 % (1s of 10s simulated)", "r: 20 % (2s of 10s simulated)", "r: 30 % (3s of 10s simulated)",
				"r: 40 % (4s of 10s simulated)", "r: 50 % (5s of 10s simulated)", "r: 60 % (6s of 10s simulated)",
				"r: 70 % (7s of 10s simulated)", "r: 80 % (8s of 10s simulated)", "r: 90 % (9s of 10s simulated)",
				"r: 100 % (10s of 10s simulated)",
			},
		},
		{
			name: "a duration tenths do not divide", total: 7 * time.Nanosecond,
			sets: []time.Duration{7 * time.Nanosecond},
			want: []string{
				"r: 10 % (0s of 7ns simulated)", "r: 20 % (0s of 7ns simulated)", "r: 30 % (0s of 7ns simulated)",
				"r: 40 % (0s of 7ns simulated)", "r: 50 % (0s of 7ns simulated)", "r: 60 % (0s of 7ns simulated)",
				"r: 70 % (0s of 7ns simulated)", "r: 80 % (0s of 7ns simulated)", "r: 90 % (0s of 7ns simulated)",
				"r: 100 % (7ns of 7ns simulated)",
			},
		},
		{name: "before the first tenth", total: time.Minute, sets: []time.Duration{time.Second}},
		{name: "until stopped: no duration", total: 0, sets: []time.Duration{time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			p := NewProgressLines(&b, "r", tc.total)
			for _, s := range tc.sets {
				p.Set(s)
			}
			p.Done()
			var got []string
			if b.Len() > 0 {
				got = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	if p := NewProgressLines(nil, "r", time.Second); p.lines != nil {
		t.Error("a nil writer prints")
	}
}
