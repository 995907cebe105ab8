package real

import (
	"testing"
	"time"
)

func TestLateHist(t *testing.T) {
	for _, tc := range []struct {
		name          string
		samples       []int64
		p50, p99, max time.Duration // p50 and p99 within 13 % above the exact value
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []int64{1000}, 1000, 1000, 1000},
		{"negative counts as 0", []int64{-5}, 0, 0, 0},
		{"spread", spread(1000, 1_000, 100_000), 50_500, 99_010, 100_000},
		{"tail", append(spread(990, 10_000, 10_000), spread(10, 5_000_000, 5_000_000)...), 10_000, 10_000, 5_000_000},
		{"tail over 1 %", append(spread(980, 10_000, 10_000), spread(20, 5_000_000, 5_000_000)...), 10_000, 5_000_000, 5_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h lateHist
			for _, d := range tc.samples {
				h.record(d)
			}
			s := h.summary()
			if s.Samples != uint64(len(tc.samples)) || s.Max != tc.max {
				t.Errorf("samples %d max %v, want %d and %v", s.Samples, s.Max, len(tc.samples), tc.max)
			}
			for _, q := range []struct {
				name      string
				got, want time.Duration
			}{{"p50", s.P50, tc.p50}, {"p99", s.P99, tc.p99}} {
				if q.got < q.want || float64(q.got) > 1.13*float64(q.want) {
					t.Errorf("%s = %v, want in [%v, %v]", q.name, q.got, q.want, time.Duration(1.13*float64(q.want)))
				}
			}
		})
	}
}

// spread returns n samples evenly from lo to hi.
func spread(n int, lo, hi int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		if n > 1 {
			out[i] = lo + (hi-lo)*int64(i)/int64(n-1)
		} else {
			out[i] = lo
		}
	}
	return out
}

func TestLateBucketMonotone(t *testing.T) {
	prev := -1
	for d := int64(1); d < 1<<40; d = d*9/8 + 1 {
		b := lateBucket(d)
		if b < prev {
			t.Fatalf("bucket(%d) = %d < bucket of a smaller value %d", d, b, prev)
		}
		if up := lateUpper(b); up < d {
			t.Fatalf("upper edge of bucket(%d) = %d < %d", d, up, d)
		}
		prev = b
	}
}
