package offsets

import (
	"math"
	"math/big"
	"math/rand/v2"
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
