package offsets

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactGlobal evaluates Model in 256-bit arithmetic.
func exactGlobal(o Offset, local int64) *big.Float {
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(256).SetFloat64(x) }
	i := func(x int64) *big.Float { return new(big.Float).SetPrec(256).SetInt64(x) }
	ppm, _ := new(big.Float).SetPrec(256).SetString("1e-6")
	d := new(big.Float).Sub(i(local), i(o.WindowStartNS))
	drift := new(big.Float).Mul(f(o.DriftPPM), ppm)
	drift.Mul(drift, d)
	g := new(big.Float).Sub(i(local), f(o.OffsetNS))
	return g.Sub(g, drift)
}

// TestGlobalPrecision compares Global with exact arithmetic for readings
// near 1e18 and a drift of 200 ppm: the error stays within half a unit in
// the last place (64 ns there), plus the rounding of the correction term
// (hundredths of a ns), where the naive float64 formula loses more.
func TestGlobalPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	worst, worstNaive := 0.0, 0.0
	for k := range 20000 {
		local := int64(1e18) + rng.Int64N(1e12)
		o := Offset{WindowStartNS: local - rng.Int64N(60e9), OffsetNS: rng.NormFloat64() * 5e7, DriftPPM: 200}
		switch k % 4 {
		case 1:
			o.DriftPPM = -200
		case 2:
			o.WindowStartNS = 0 // a long way back: local − start ≈ 1e18
		case 3:
			o.WindowStartNS = math.MinInt64 + 5 // local − start overflows int64
			o.DriftPPM = 1e-3
		}
		exact := exactGlobal(o, local)
		want, _ := exact.Float64()
		got := o.Global(local)
		ulp := math.Nextafter(math.Abs(want), math.Inf(1)) - math.Abs(want)
		diff, _ := new(big.Float).Sub(exact, big.NewFloat(got)).Float64()
		errULP := math.Abs(diff) / ulp
		if errULP > 0.5+1e-3 {
			t.Fatalf("local %d, %+v: Global %.1f, exact %s: %.3f ulp off", local, o, got, exact.Text('f', 3), errULP)
		}
		worst = max(worst, errULP)
		naive := float64(local) - o.OffsetNS - o.DriftPPM*1e-6*(float64(local)-float64(o.WindowStartNS))
		naiveErr, _ := new(big.Float).Sub(exact, big.NewFloat(naive)).Float64()
		worstNaive = max(worstNaive, math.Abs(naiveErr)/ulp)
	}
	t.Logf("worst error %.3f ulp (naive formula: %.3f ulp); 1 ulp is 128 ns at 1e18", worst, worstNaive)
}

func TestGlobalSmall(t *testing.T) {
	o := Offset{WindowStartNS: 1000, OffsetNS: 250.25, DriftPPM: 100}
	for local, want := range map[int64]float64{1000: 749.75, 1_001_000: 1_000_649.75, 0: -250.15} {
		if got := o.Global(local); math.Abs(got-want) > 1e-9 {
			t.Errorf("Global(%d) = %v, want %v", local, got, want)
		}
	}
}

// TestGlobalSteps: a reading counts the steps whose at_ns it has reached.
// After a forward step readings are size_ns·(1 − drift) further ahead; after a backward
// step the clock reads [at+size, at) a second time, and such a reading is
// taken as before the step (GlobalAfter gives the other reading).
func TestGlobalSteps(t *testing.T) {
	base := Offset{WindowStartNS: 1000, WindowEndNS: 2000, OffsetNS: 10, DriftPPM: 100}
	with := func(steps ...Step) Offset { o := base; o.Steps = steps; return o }
	fwd := Step{AtNS: 1300, SizeNS: 50}    // jumped 50 ns ahead at 1300
	back := Step{AtNS: 1600, SizeNS: -100} // jumped back: 1500..1599 read twice
	// A reading after a step maps as the reading the clock would have
	// given without it, local − size, so its drift term is size·100e-6
	// smaller.
	const k = 1 - 100e-6
	for _, tc := range []struct {
		name  string
		o     Offset
		local int64
		n     int
		want  float64
	}{
		{"forward, before", with(fwd), 1299, 0, 1299 - 10 - 0.0299},
		{"forward, at", with(fwd), 1300, 1, 1300 - 10 - 0.03 - 50*k},
		{"forward, end", with(fwd), 2000, 1, 2000 - 10 - 0.1 - 50*k},
		{"backward, before", with(back), 1499, 0, 1499 - 10 - 0.0499},
		{"backward, read twice", with(back), 1550, 0, 1550 - 10 - 0.055},
		{"backward, last read twice", with(back), 1599, 0, 1599 - 10 - 0.0599},
		{"backward, at", with(back), 1600, 1, 1600 - 10 - 0.06 + 100*k},
		{"both, before", with(fwd, back), 1000, 0, 1000 - 10},
		{"both, before the window", with(fwd, back), 900, 0, 900 - 10 + 0.01},
		{"both, between", with(fwd, back), 1550, 1, 1550 - 10 - 0.055 - 50*k},
		{"both, after", with(fwd, back), 1999, 2, 1999 - 10 - 0.0999 - 50*k + 100*k},
		{"both, after the window", with(fwd, back), 2100, 2, 2100 - 10 - 0.11 - 50*k + 100*k},
	} {
		if n := tc.o.StepsBefore(tc.local); n != tc.n {
			t.Errorf("%s: StepsBefore(%d) = %d, want %d", tc.name, tc.local, n, tc.n)
		}
		if got := tc.o.Global(tc.local); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: Global(%d) = %v, want %v", tc.name, tc.local, got, tc.want)
		}
		if got := tc.o.GlobalAfter(tc.local, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: GlobalAfter(%d, %d) = %v, want %v", tc.name, tc.local, tc.n, got, tc.want)
		}
	}
	o := with(fwd, back)
	for _, tc := range []struct {
		local int64
		n     int
		want  float64
	}{
		{1550, 0, 1550 - 10 - 0.055},
		{1550, 2, 1550 - 10 - 0.055 - 50*k + 100*k}, // 1550 read again, after the backward step
		{1550, 5, 1550 - 10 - 0.055 - 50*k + 100*k}, // n beyond the steps: all of them
		{1500, 2, 1500 - 10 - 0.05 + 50*k},          // the first reading after the step: just after 1599 before it
	} {
		if got := o.GlobalAfter(tc.local, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("GlobalAfter(%d, %d) = %v, want %v", tc.local, tc.n, got, tc.want)
		}
	}
}

// TestSigma: σ² = uncertainty_ns² + (drift_uncertainty_ppm·1e-6·(local −
// middle))² + size_uncertainty_ns² of the steps before the reading +
// size_ns² of the steps within at_uncertainty_ns of it (SigmaAt only).
func TestSigma(t *testing.T) {
	// Window [0, 2000], middle 1000; the drift's uncertainty adds 1 ns per
	// 1000 ns from the middle.
	o := Offset{WindowStartNS: 0, WindowEndNS: 2000, UncertaintyNS: 3, DriftUncertaintyPPM: 1000}
	one := o
	one.Steps = []Step{{AtNS: 1500, AtUncertaintyNS: 100, SizeNS: 40, SizeUncertaintyNS: 12}}
	two := one
	two.Steps = append(slices.Clone(one.Steps), Step{AtNS: 1550, AtUncertaintyNS: 100, SizeNS: -30, SizeUncertaintyNS: 4})
	noDrift := Offset{WindowStartNS: 0, WindowEndNS: 2000, DriftUncertaintyPPM: 1000}
	for _, tc := range []struct {
		name  string
		o     Offset
		local int64
		want2 float64 // σ²
	}{
		{"middle", o, 1000, 9},
		{"start", o, 0, 9 + 1},
		{"after the window", o, 5000, 25},
		{"before the window", o, -3000, 25},
		{"linear, 0", noDrift, 1000, 0},
		{"linear, 2", noDrift, 3000, 4},
		{"linear, 7", noDrift, -6000, 49},
		{"before the step", one, 1000, 9},
		{"just beyond at_uncertainty before", one, 1399, 9 + 0.399*0.399},
		{"at_uncertainty before", one, 1400, 9 + 0.16 + 40*40},
		{"at the step", one, 1500, 9 + 0.25 + 12*12 + 40*40},
		{"at_uncertainty after", one, 1600, 9 + 0.36 + 12*12 + 40*40},
		{"just beyond at_uncertainty after", one, 1601, 9 + 0.601*0.601 + 12*12},
		{"after the step", one, 5000, 25 + 12*12},
		{"near both steps", two, 1520, 9 + 0.52*0.52 + 12*12 + 40*40 + 30*30},
		{"after both, near the second", two, 1640, 9 + 0.64*0.64 + 12*12 + 4*4 + 30*30},
		{"after both", two, 1651, 9 + 0.651*0.651 + 12*12 + 4*4},
	} {
		if got, want := tc.o.SigmaAt(tc.local), math.Sqrt(tc.want2); math.Abs(got-want) > 1e-9*max(1, want) {
			t.Errorf("%s: SigmaAt(%d) = %v, want %v", tc.name, tc.local, got, want)
		}
	}
	for _, tc := range []struct {
		local int64
		n     int
		want2 float64
	}{
		{1520, 0, 9 + 0.52*0.52},
		{1520, 1, 9 + 0.52*0.52 + 12*12},
		{1520, 2, 9 + 0.52*0.52 + 12*12 + 4*4},
		{1520, 9, 9 + 0.52*0.52 + 12*12 + 4*4},
		{3000, 2, 9 + 4 + 12*12 + 4*4},
	} {
		if got, want := two.SigmaAfter(tc.local, tc.n), math.Sqrt(tc.want2); math.Abs(got-want) > 1e-9*want {
			t.Errorf("SigmaAfter(%d, %d) = %v, want %v", tc.local, tc.n, got, want)
		}
	}
}
