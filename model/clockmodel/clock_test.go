package clockmodel

import (
	"math"
	"testing"
	"time"
)

func TestIdealExactOffsetAndPPM(t *testing.T) {
	tests := []struct {
		offset time.Duration
		ppm    float64
		t      int64
		want   int64
	}{
		{0, 0, 123456789, 123456789},
		{5 * time.Millisecond, 100, 1e9, 5e6 + 1e9 + 1e5},
		{-time.Second, 100, 1e9, 1e5},
		{0, -50, 3e9, 3e9 - 1.5e5},
		{0, 0.5, 1e9, 1e9 + 500},
		{0, 12.5, 7e9, 7e9 + 87500},
		{0, 100, 86400e9, 86400e9 + 8.64e9},
		{0, 1, 1, 1},                      // 1e-6 ns rounds away
		{0, 1, 500000, 500000 + 1},        // 0.5 ns rounds half away from zero
		{0, -1, 500000, 500000 - 1},       // symmetric for negative ppm
		{7, 200, -1e9, 7 - 1e9 - 2e5},     // true time before 0
		{0, 1e5, 1e9, 1e9 + 1e8},          // large ppm
		{0, 0.001, 3600e9, 3600e9 + 3600}, // small ppm
	}
	for _, tt := range tests {
		c := mustNew(t, Params{Offset: tt.offset, PPM: tt.ppm})
		if got := c.Ideal(tt.t); got != tt.want {
			t.Errorf("offset %v ppm %v: Ideal(%d) = %d, want %d", tt.offset, tt.ppm, tt.t, got, tt.want)
		}
		if got := c.Read(tt.t); got != tt.want {
			t.Errorf("offset %v ppm %v: Read(%d) = %d, want %d", tt.offset, tt.ppm, tt.t, got, tt.want)
		}
		if got, want := c.Rate(tt.t), 1+tt.ppm*1e-6; got != want {
			t.Errorf("offset %v ppm %v: Rate = %v, want %v", tt.offset, tt.ppm, got, want)
		}
	}
}

func TestIdealWithinWanderAndPeriodicBounds(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"wander", Params{Offset: time.Millisecond, PPM: 20, WanderPPM: 0.5}},
		{"tight limit reflects", Params{PPM: -3, WanderPPM: 2, WanderLimitPPM: 1, WanderStep: 100 * time.Millisecond}},
		{"periodic", Params{PPM: 5, PeriodicPPM: 3, PeriodicPeriod: 40 * time.Second}},
		{"negative periodic", Params{PeriodicPPM: -3, PeriodicPeriod: 7 * time.Second}},
		{"all", Params{Offset: -time.Second, PPM: 50, WanderPPM: 0.1, WanderLimitPPM: 2, PeriodicPPM: 1, PeriodicPeriod: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.p)
			limit := tt.p.wanderLimit()
			periodicBound := math.Abs(tt.p.PeriodicPPM) * 1e-6 * float64(tt.p.PeriodicPeriod) / math.Pi
			for tt0 := int64(0); tt0 <= 600e9; tt0 += 333_333_333 {
				base := int64(tt.p.Offset) + tt0 + int64(math.Round(tt.p.PPM*float64(tt0)/1e6))
				dev := math.Abs(float64(c.Ideal(tt0) - base))
				bound := limit*1e-6*float64(tt0) + periodicBound + 1
				if dev > bound {
					t.Fatalf("t=%d: |Ideal − offset − (1+ppm)t| = %v, want <= %v", tt0, dev, bound)
				}
				rate := c.Rate(tt0)
				if d := math.Abs(rate - 1 - tt.p.PPM*1e-6); d > (limit+math.Abs(tt.p.PeriodicPPM))*1e-6+1e-15 {
					t.Fatalf("t=%d: Rate = %v, off nominal by %v", tt0, rate, d)
				}
			}
		})
	}
}

func TestPeriodicPhaseExact(t *testing.T) {
	p := Params{PeriodicPPM: 10, PeriodicPeriod: 100 * time.Second}
	c := mustNew(t, p)
	amp := 10e-6 * 100e9 / (2 * math.Pi) // ns
	for _, tc := range []struct {
		t    int64
		want float64
	}{
		{0, 0},
		{25e9, amp},       // quarter period: 1 − cos(π/2)
		{50e9, 2 * amp},   // half period: the maximum
		{100e9, 0},        // full period: back to zero
		{1050e9, 2 * amp}, // many periods later
	} {
		if got, want := c.Ideal(tc.t)-tc.t, int64(math.Round(tc.want)); got != want {
			t.Errorf("periodic phase at %d = %d, want %d", tc.t, got, want)
		}
	}
	if got := c.Rate(25e9); math.Abs(got-(1+10e-6)) > 1e-15 {
		t.Errorf("Rate at quarter period = %v, want 1+10e-6", got)
	}
}

func TestReadQuantizedAndNearIdeal(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"1us granularity", Params{Offset: 3, PPM: 17.3, Granularity: time.Microsecond}},
		{"noise", Params{PPM: -8, ReadNoise: 200, WanderPPM: 0.2}},
		{"coarse and noisy", Params{Offset: -time.Hour, Granularity: 41, ReadNoise: 2 * time.Microsecond, PeriodicPPM: 2, PeriodicPeriod: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.p)
			g := granularity(tt.p.Granularity)
			bound := g + 6*int64(tt.p.ReadNoise) + 1
			for tt0 := int64(0); tt0 < 100e9; tt0 += 10_000_019 {
				r, id := c.Read(tt0), c.Ideal(tt0)
				if r%g != 0 {
					t.Fatalf("Read(%d) = %d, not a multiple of %d", tt0, r, g)
				}
				if d := r - id; d < -bound || d > bound {
					t.Fatalf("Read(%d) − Ideal = %d, want within ±%d", tt0, d, bound)
				}
				if tt.p.ReadNoise == 0 && (r > id || r <= id-g) {
					t.Fatalf("noise-free Read(%d) = %d, want floor of %d to %d", tt0, r, id, g)
				}
			}
		})
	}
}

func TestReadNoiseStandardDeviation(t *testing.T) {
	for _, sd := range []time.Duration{50, time.Microsecond, 20 * time.Microsecond} {
		c := mustNew(t, Params{PPM: 3, ReadNoise: sd})
		const n = 20000
		res := make([]float64, n)
		for i := range res {
			tt := int64(i) * 1e9 // far apart: the monotonic clamp never acts
			res[i] = float64(c.Read(tt) - c.Ideal(tt))
		}
		mean, got := meanSD(res)
		// Rounding the noise to the ns adds variance 1/12.
		want := math.Sqrt(float64(sd)*float64(sd) + 1.0/12)
		if math.Abs(got-want) > 0.03*want {
			t.Errorf("noise %v: residual SD = %.2f, want %.2f ± 3%%", sd, got, want)
		}
		if math.Abs(mean) > 4*want/math.Sqrt(n) {
			t.Errorf("noise %v: residual mean = %.2f, want ~0", sd, mean)
		}
	}
}

func TestDeterminism(t *testing.T) {
	p := Params{PPM: 11, WanderPPM: 0.3, ReadNoise: 500, Granularity: 10}
	run := func(ws, ns uint64) []int64 {
		c, err := New(p, rng(ws), rng(ns))
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for tt := int64(0); tt < 50e9; tt += 123_456_789 {
			out = append(out, c.Read(tt), c.Ideal(tt))
		}
		return out
	}
	a, b := run(1, 2), run(1, 2)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seeds differ at %d: %d vs %d", i, a[i], b[i])
		}
	}
	for _, seeds := range [][2]uint64{{3, 2}, {1, 4}} {
		c := run(seeds[0], seeds[1])
		same := true
		for i := range a {
			same = same && a[i] == c[i]
		}
		if same {
			t.Errorf("seeds %v give the same values as seeds {1 2}", seeds)
		}
	}
}

func TestWanderIndependentOfReadPattern(t *testing.T) {
	p := Params{PPM: 4, WanderPPM: 0.5, ReadNoise: time.Microsecond, Granularity: 100}
	dense, sparse, backwards := mustNew(t, p), mustNew(t, p), mustNew(t, p)
	for tt := int64(0); tt < 30e9; tt += time.Millisecond.Nanoseconds() {
		dense.Read(tt) // consumes many noise draws
	}
	for tt := int64(0); tt < 30e9; tt += 3_700_000_000 {
		sparse.Read(tt)
	}
	probe := []int64{0, 1, 999_999_999, 1e9, 7_654_321_000, 17e9, 29_999_999_999}
	for i := len(probe) - 1; i >= 0; i-- { // latest first: the path is drawn at once
		backwards.Ideal(probe[i])
	}
	for _, tt := range probe {
		a, b, c := dense.Ideal(tt), sparse.Ideal(tt), backwards.Ideal(tt)
		if a != b || a != c {
			t.Errorf("Ideal(%d): dense %d, sparse %d, backwards %d; want equal", tt, a, b, c)
		}
		if ra, rb := dense.Rate(tt), sparse.Rate(tt); ra != rb {
			t.Errorf("Rate(%d): dense %v, sparse %v; want equal", tt, ra, rb)
		}
	}
}

func TestWanderPiecewiseConstantFrequency(t *testing.T) {
	c := mustNew(t, Params{WanderPPM: 1, WanderStep: time.Second})
	if r := c.Rate(999_999_999); r != 1 {
		t.Errorf("Rate in the first wander step = %v, want 1 (the walk starts at 0)", r)
	}
	for k := int64(1); k < 20; k++ {
		start, mid := k*1e9, k*1e9+5e8
		if a, b := c.Rate(start), c.Rate(mid); math.Abs(a-b) > 1e-15 {
			t.Errorf("step %d: Rate changes within a step: %v vs %v", k, a, b)
		}
		// The phase is the integral of the rate: check over half a step.
		slope := float64(c.Ideal(mid)-c.Ideal(start)) / 5e8
		if math.Abs(slope-c.Rate(start)) > 3e-9 {
			t.Errorf("step %d: phase slope %v, Rate %v", k, slope, c.Rate(start))
		}
	}
}

func TestReflect(t *testing.T) {
	for _, tc := range []struct{ x, l, want float64 }{
		{0.5, 1, 0.5}, {1, 1, 1}, {1.25, 1, 0.75}, {-1.25, 1, -0.75},
		{3.5, 1, -0.5}, {-3.5, 1, 0.5}, {5, 1, 1}, {9.5, 1, 0.5}, {0.3, 0, 0},
	} {
		if got := reflect(tc.x, tc.l); !(math.Abs(got-tc.want) <= 1e-12) {
			t.Errorf("reflect(%v, %v) = %v, want %v", tc.x, tc.l, got, tc.want)
		}
	}
	for x := -20.0; x <= 20; x += 0.37 {
		if got := reflect(x, 2); got < -2 || got > 2 {
			t.Errorf("reflect(%v, 2) = %v, outside ±2", x, got)
		}
	}
}

func TestFloorTo(t *testing.T) {
	for _, tc := range []struct{ v, g, want int64 }{
		{7, 1, 7}, {-7, 1, -7}, {7, 5, 5}, {10, 5, 10}, {-1, 5, -5}, {-5, 5, -5}, {-6, 5, -10}, {0, 5, 0},
	} {
		if got := floorTo(tc.v, tc.g); got != tc.want {
			t.Errorf("floorTo(%d, %d) = %d, want %d", tc.v, tc.g, got, tc.want)
		}
	}
}

func TestWanderRandomOrderQueries(t *testing.T) {
	p := Params{PPM: 1, WanderPPM: 0.05, WanderStep: time.Millisecond}
	seq, random := mustNew(t, p), mustNew(t, p)
	const n = 20_000 // steps: many checkpoints
	want := make([]int64, n)
	rates := make([]float64, n)
	for k := range want {
		tt := int64(k)*1e6 + 123_456
		want[k], rates[k] = seq.Ideal(tt), seq.Rate(tt)
	}
	order := rng(9).Perm(n)
	for _, k := range order[:n/2] { // scattered, forwards and backwards
		tt := int64(k)*1e6 + 123_456
		if got := random.Ideal(tt); got != want[k] {
			t.Fatalf("step %d: Ideal %d in random order, %d in sequence", k, got, want[k])
		}
		if got := random.Rate(tt); got != rates[k] {
			t.Fatalf("step %d: Rate %v in random order, %v in sequence", k, got, rates[k])
		}
	}
	for k := n - 1; k >= 0; k -= 7 { // backwards
		if got := seq.Ideal(int64(k)*1e6 + 123_456); got != want[k] {
			t.Fatalf("step %d: Ideal %d queried backwards, %d forwards", k, got, want[k])
		}
	}
}
