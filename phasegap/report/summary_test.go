package report

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestNearestRank(t *testing.T) {
	seq := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i + 1)
		}
		return out
	}
	for _, tc := range []struct {
		vals []int64
		p    int
		want int64
	}{
		{nil, 50, 0},
		{[]int64{7}, 50, 7},
		{[]int64{7}, 95, 7},
		{[]int64{1, 2}, 50, 1}, // ceil(0.5*2) = 1st
		{[]int64{1, 2, 3, 4}, 50, 2},
		{seq(10), 95, 10}, // ceil(9.5) = 10th
		{seq(20), 50, 10},
		{seq(20), 95, 19},
		{seq(100), 95, 95},
		{seq(101), 95, 96}, // ceil(95.95) = 96th, no interpolation
		{seq(5), 0, 1},
		{seq(5), 100, 5},
	} {
		if got := NearestRank(tc.vals, tc.p); got != tc.want {
			t.Errorf("NearestRank(%v, %d) = %d, want %d", tc.vals, tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// Waits 1..20 µs in shuffled order; everything else constant.
	var r Rank
	r.Rank = 3
	for i, w := range []int64{20, 3, 17, 1, 9, 12, 5, 14, 8, 2, 19, 6, 11, 15, 4, 18, 7, 13, 10, 16} {
		s := nb(i, int64(100*i), 1, 30, w, 2, 0, 10)
		s.TestCalls, s.PollsToComplete = i%3, i
		r.Samples = append(r.Samples, s)
	}
	r.PureComm = []int64{4 * us1, 6 * us1}
	s := Summarize(r)
	if s.Rank != 3 || s.Samples != 20 || s.PureCommSamples != 2 || s.PureWorkSamples != 0 {
		t.Fatalf("counts: %+v", s)
	}
	want := Stat{Mean: 10.5, P50: 10, P95: 19}
	if s.Wait != want {
		t.Errorf("Wait = %+v, want %+v", s.Wait, want)
	}
	if want := (Stat{30, 30, 30}); s.Interior != want {
		t.Errorf("Interior = %+v, want %+v", s.Interior, want)
	}
	near(t, "Iter.Mean", s.Iter.Mean, 1+30+10.5+2)
	near(t, "PureComm.Mean", s.PureComm.Mean, 5)
	near(t, "TestCallsMean", s.TestCallsMean, float64(0+1+2+0+1+2+0+1+2+0+1+2+0+1+2+0+1+2+0+1)/20)
	// Over the iterations a test completed only (1..19: i = 0 has none).
	near(t, "PollsToComplete.P95", s.PollsToComplete.P95, 19)
	near(t, "PollsToComplete.Mean", s.PollsToComplete.Mean, 10)
	near(t, "PollCompleted", s.PollCompleted, 19)
	near(t, "PollingIters", s.PollingIters, 13) // i%3 != 0
	// comm 10 < interior 30: ideal 10; hidden = clamp(10-w, 0, 10).
	var hidden float64
	for w := 1.0; w <= 20; w++ {
		hidden += math.Max(0, 10-w)
	}
	near(t, "HiddenMean", s.HiddenMean, hidden/20)
	near(t, "IdealHideMean", s.IdealHideMean, 10)
	if got := r.Samples[0].Wait; got != 20*us1 {
		t.Errorf("Summarize reordered its input: first wait %d", got)
	}
}

func TestVectorRoundTrip(t *testing.T) {
	polled := nb(0, 0, 1, 2, 3, 4, 1, 5)
	polled.TestCalls, polled.PollsToComplete = 2, 2
	s := Summarize(Rank{Rank: 5, Samples: []Sample{polled, nb(1, 20, 2, 3, 4, 5, 0, 6)},
		PureComm: []int64{1500}, PureWork: []int64{2500, 3500}, CPUs: 3, CPUSeconds: 0.25})
	v := s.Vector()
	if len(v) != VectorLen {
		t.Fatalf("len(Vector()) = %d, want VectorLen %d", len(v), VectorLen)
	}
	// Every field must travel: a zero anywhere in s's fields that is
	// non-zero here would show a field the vector forgets.
	back, err := SummaryFromVector(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, s)
	}
	if n := reflect.TypeOf(s).NumField(); n != 4+10+8 {
		t.Errorf("RankSummary has %d fields; update Vector/stats/scalars and this count", n)
	}
}

func TestSummaryFromVectorRejects(t *testing.T) {
	good := Summarize(Rank{Rank: 1, Samples: []Sample{nb(0, 0, 1, 2, 3, 4, 0, 5)}}).Vector()
	with := func(i int, x float64) []float64 {
		v := append([]float64(nil), good...)
		v[i] = x
		return v
	}
	for _, tc := range []struct {
		name string
		v    []float64
		want string
	}{
		{"short", good[:VectorLen-1], "values"},
		{"long", append(append([]float64(nil), good...), 0), "values"},
		{"version", with(0, 1), "version"},
		{"nan", with(7, math.NaN()), "NaN"},
		{"inf", with(8, math.Inf(1)), "Inf"},
		{"negative rank", with(1, -1), "non-negative integer"},
		{"fractional count", with(2, 1.5), "non-negative integer"},
	} {
		if _, err := SummaryFromVector(tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}
