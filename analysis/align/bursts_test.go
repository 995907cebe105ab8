package align

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBursts(t *testing.T) {
	p := []Pair{{Sys: 0, Tracer: 0}, {Sys: 1, Tracer: 10}, {Sys: 2, Tracer: 20}, {Sys: 3, Tracer: 100}, {Sys: 4, Tracer: 110}, {Sys: 5, Tracer: 500}}
	for _, tc := range []struct {
		gap  int64
		want []int // burst sizes
	}{
		{0, []int{1, 1, 1, 1, 1, 1}},
		{9, []int{1, 1, 1, 1, 1, 1}},
		{10, []int{3, 2, 1}},
		{80, []int{5, 1}},
		{400, []int{6}},
	} {
		var got []int
		for _, b := range bursts(p, tc.gap) {
			got = append(got, len(b))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("gap %d: bursts of %v, want %v", tc.gap, got, tc.want)
		}
	}
	// Pairs that would all make one burst are taken one by one: one
	// sample is no mapping.
	m, err := NewSnapshots(p, 400)
	if err != nil || m.Samples() != len(p) {
		t.Fatalf("one burst: %v, %d samples; want %d", err, m.Samples(), len(p))
	}
	if s, _, _ := m.ToHost(300); s != 4 {
		t.Errorf("one burst: ToHost(300) = %d, want 4", s)
	}
}

// burstPairs returns bursts of n pairs, one burst every 1 s of true time
// and its pairs 1 ms apart, read from a host clock S = t + noise(sdS) and
// a tracer clock R = 5 ms + (1+37 ppm)·t + noise(sdR); it returns the
// tracer's ideal reading at t too.
func burstPairs(r *rand.Rand, samples, n int, sdS, sdR float64) ([]Pair, func(t int64) int64) {
	tracer := func(t int64) int64 { return 5e6 + t + round(37e-6*float64(t)) }
	var p []Pair
	for j := range samples {
		for i := range n {
			t := int64(j)*1e9 + int64(i)*1e6
			p = append(p, Pair{Sys: t + round(sdS*r.NormFloat64()), Tracer: tracer(t) + round(sdR*r.NormFloat64())})
		}
	}
	return p, tracer
}

// TestBurstsSeeLinearErrors: samples whose errors happen to lie on a line
// (22, 14, 6, −2, −10 ns) fit the chord of their neighbours exactly, so
// the samples alone would claim the floor of 1 ns; the scatter within
// each burst (±d about its own line) still gives the pairs' error, and
// with it the readings' uncertainty.
func TestBurstsSeeLinearErrors(t *testing.T) {
	const d = 15
	var p []Pair
	for j := range int64(5) {
		e := 22 - 8*j
		for i, w := range []int64{d, -d, -d, d} { // orthogonal to a line
			t := j*1e9 + int64(i)*1e6
			p = append(p, Pair{Sys: t + e + w, Tracer: 5e6 + t})
		}
	}
	single, err := NewSnapshots(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewSnapshots(p, 1e6)
	if err != nil {
		t.Fatal(err)
	}
	if m.Samples() != 5 || m.Len() != 20 || single.Samples() != 20 {
		t.Fatalf("%d samples of %d pairs (ungrouped: %d samples), want 5 of 20 (20)", m.Samples(), m.Len(), single.Samples())
	}
	// Four pairs per burst lie ±d off their line: 4d² per burst over 3
	// degrees of freedom, and the 95% bound on 15.
	if got, want := m.PairSigma(), math.Sqrt(5*4*d*d/chi2Lower(15)); math.Abs(got-want) > 1e-3 {
		t.Errorf("PairSigma %g, want %g", got, want)
	}
	// At a centroid the error is the line's, 22 ns at the first sample:
	// within 2σ of the reported uncertainty, which is at least d.
	s, sigma, _ := m.ToHost(5e6 + 1500000)
	if err := float64(s - 1500000); err != 22 || sigma < d || math.Abs(err) > 2*sigma {
		t.Errorf("ToHost at the first centroid: error %g ns, σ %g; want 22 within 2σ, σ ≥ %d", err, sigma, d)
	}
	// Between samples, a sample's variance is no less than the pairs'
	// over n: here the burst's.
	if q := m.v[2]; q < m.read/4 || q != max(m.read/4, 1) {
		t.Errorf("sample variance %g with a pair variance %g over 4", q, m.read)
	}
}

// TestBurstsCalibrated: over 20000 runs of five bursts of two or four
// pairs, with read noise of 20 ns on the host clock and 10 ns on the
// tracer, a tracer reading anywhere in the run maps within its reported
// uncertainty as a 1σ should: beyond 3σ in under 0.1% of the runs, and
// never beyond 6σ (bursts of two: σ_r on 5 degrees of freedom) or 4σ
// (bursts of four: 15). The same runs read one pair per sample (the
// ungrouped first pair of each burst) are logged for comparison: their
// uncertainty rests on three second differences and falls short now and
// then.
func TestBurstsCalibrated(t *testing.T) {
	const runs = 20000
	for _, tc := range []struct {
		n     int
		worst float64
	}{{2, 6}, {4, 4}} {
		n := tc.n
		r := rand.New(rand.NewPCG(11, uint64(n)))
		var burst, single calibration
		for range runs {
			p, tracer := burstPairs(r, 5, n, 20, 10)
			te := r.Int64N(4e9)
			re := tracer(te) + round(10*r.NormFloat64())
			burst.add(t, p, 1e6, re, te)
			var firsts []Pair
			for j := 0; j < len(p); j += n {
				firsts = append(firsts, p[j])
			}
			single.add(t, firsts, 0, re, te)
		}
		t.Logf("bursts of %d: %d of %d runs beyond 3σ, worst %.2fσ; one pair per sample: %d beyond 3σ, worst %.2fσ",
			n, burst.over3, runs, burst.worst, single.over3, single.worst)
		if burst.over3 > runs/1000 || burst.worst > tc.worst {
			t.Errorf("bursts of %d: %d of %d runs beyond 3σ, worst %.2fσ; want under 0.1%% and none beyond %gσ", n, burst.over3, runs, burst.worst, tc.worst)
		}
	}
}

// calibration counts how far mapped readings lie off in reported σ.
type calibration struct {
	over3 int
	worst float64
}

// add maps tracer reading re, taken at host time te, through pairs p.
func (c *calibration) add(t *testing.T, p []Pair, gap, re, te int64) {
	m, err := NewSnapshots(p, gap)
	if err != nil {
		t.Fatal(err)
	}
	s, sigma, _ := m.ToHost(re)
	ratio := math.Abs(float64(s-te)) / sigma
	c.worst = max(c.worst, ratio)
	if ratio > 3 {
		c.over3++
	}
}
