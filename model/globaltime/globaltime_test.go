package globaltime_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/chronosync/chronosync/model/globaltime"
)

// exact is local − Offset − Drift·(local − Anchor) in exact arithmetic.
func exact(m globaltime.Linear, local int64) float64 {
	l, a := new(big.Float).SetPrec(200).SetInt64(local), new(big.Float).SetPrec(200).SetInt64(m.Anchor)
	d := new(big.Float).SetPrec(200).Sub(l, a)
	d.Mul(d, new(big.Float).SetPrec(200).SetFloat64(m.Drift))
	g := new(big.Float).SetPrec(200).Sub(l, new(big.Float).SetPrec(200).SetFloat64(m.Offset))
	g.Sub(g, d)
	f, _ := g.Float64()
	return f
}

// TestGlobal: Global is exact to about half a unit in the last place for
// clocks near zero and at Unix-epoch magnitudes (where a plain float64
// formula is off by up to hundreds of ns), and OffsetAt is local − Global.
func TestGlobal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     globaltime.Linear
		local int64
	}{
		{"small", globaltime.Linear{Anchor: 1000, Offset: 250.25, Drift: 100e-6}, 1_001_000},
		{"before the anchor", globaltime.Linear{Anchor: 1000, Offset: 250.25, Drift: 100e-6}, 0},
		{"epoch", globaltime.Linear{Anchor: 1_732_000_000_000_000_000, Offset: -41_250.5, Drift: -12.25e-6}, 1_732_000_001_234_567_891},
		{"epoch, far from the anchor", globaltime.Linear{Anchor: 1_732_000_000_000_000_000, Offset: 3e6, Drift: 200e-6}, 1_732_000_300_000_000_007},
		{"negative clock", globaltime.Linear{Anchor: -5_000_000_000, Offset: 17.5, Drift: -1e-4}, -4_000_000_001},
		{"int64 ends", globaltime.Linear{Anchor: math.MinInt64, Offset: 0, Drift: 1e-9}, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := tc.m.Global(tc.local), exact(tc.m, tc.local)
			if ulp := math.Abs(math.Nextafter(want, math.Inf(1)) - want); math.Abs(got-want) > ulp {
				t.Errorf("Global(%d) = %.3f, want %.3f (±%g)", tc.local, got, want, ulp)
			}
			if off := tc.m.OffsetAt(tc.local); math.Abs(float64(tc.local)-got-off) > 1e-3*math.Max(1, math.Abs(off)) && tc.name != "int64 ends" {
				t.Errorf("OffsetAt(%d) = %.6f, local − Global = %.6f", tc.local, off, float64(tc.local)-got)
			}
		})
	}
}
