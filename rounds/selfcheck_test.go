package rounds

import (
	"math"
	"math/big"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestPredictOffset: the prediction of dst's clock less src's is exact
// to well under a nanosecond for clocks on the Unix epoch (1.7e18 ns),
// where a float64 global time keeps only 256 ns, and follows the steps of
// the models it comes from. The reference: big.Float arithmetic of the
// records' model.
func TestPredictOffset(t *testing.T) {
	const epoch = int64(1_764_000_000_000_000_000)
	for _, tc := range []struct {
		name   string
		pi, pj offsets.Offset
	}{
		{"near zero", offsets.Offset{WindowStartNS: 1e9, WindowEndNS: 3e9, OffsetNS: 1234.5, DriftPPM: 12.25},
			offsets.Offset{WindowStartNS: 1e9 + 40e3, WindowEndNS: 3e9 + 40e3, OffsetNS: -40_000_321.75, DriftPPM: -88.5}},
		{"epoch", offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 5_000_123.25, DriftPPM: 150.125},
			offsets.Offset{WindowStartNS: epoch + 7e6, WindowEndNS: epoch + 7e6 + 2e9, OffsetNS: -2_000_456.5, DriftPPM: -199.75}},
		{"a step of dst", offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 300.5, DriftPPM: 1},
			offsets.Offset{WindowStartNS: epoch, WindowEndNS: epoch + 2e9, OffsetNS: 900.25, DriftPPM: -3,
				Steps: []offsets.Step{{AtNS: epoch + 1e9, SizeNS: 40_000.5}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := tc.pi.WindowEndNS + 1e9 // the next window's middle
			got, lj := predictOffset(tc.pi, tc.pj, x)
			// global = L − offset − drift·(L − start) − (1 − drift)·Σ size
			global := func(o offsets.Offset, l int64) *big.Float {
				f := new(big.Float).SetPrec(200)
				d := new(big.Float).SetPrec(200).SetFloat64(o.DriftPPM * 1e-6)
				f.SetInt64(l)
				f.Sub(f, new(big.Float).SetFloat64(o.OffsetNS))
				span := new(big.Float).SetPrec(200).SetInt64(l - o.WindowStartNS)
				f.Sub(f, span.Mul(span, d))
				for _, s := range o.Steps {
					one := new(big.Float).SetPrec(200).SetFloat64(1)
					sz := new(big.Float).SetPrec(200).SetFloat64(s.SizeNS)
					f.Sub(f, sz.Mul(sz, one.Sub(one, d)))
				}
				return f
			}
			gi, gj := global(tc.pi, x), global(tc.pj, lj)
			// dst reads lj when src reads x: the same global time, to
			// within dst's rate over the rounding of lj to whole ns.
			diff, _ := new(big.Float).Sub(gi, gj).Float64()
			if math.Abs(diff) > 0.6 {
				t.Errorf("src at %d and dst at %d are %.3f ns apart in global time; want the same instant", x, lj, diff)
			}
			if want := float64(lj - x); math.Abs(got-want) > 1 {
				t.Errorf("predicted %.3f ns, dst's reading less src's %.0f", got, want)
			}
		})
	}
}
