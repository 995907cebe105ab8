package combine

import (
	"math"
	"math/big"
	"testing"
)

// TestPsArithmetic: the checked picosecond helpers agree with exact
// arithmetic (math/big) at and around the ends of the int64 range.
func TestPsArithmetic(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	vals := []int64{lo, lo + 1, lo + 999, -maxPsNs - 1, -maxPsNs, -maxPsNs + 1, -1000, -1, 0, 1, 807, 808, 999, 1000,
		maxPsNs - 1, maxPsNs, maxPsNs + 1, hi - 999, hi - 1, hi}
	fits := func(x *big.Int) bool { return x.IsInt64() }
	b := func(v int64) *big.Int { return big.NewInt(v) }
	for _, x := range vals {
		want := new(big.Int).Mul(b(x), b(1000))
		if got, ok := mulPs(x); ok != fits(want) || ok && got != want.Int64() {
			t.Errorf("mulPs(%d) = %d, %v; exact %v", x, got, ok, want)
		}
		for _, y := range vals {
			sum := new(big.Int).Add(b(x), b(y))
			if got, ok := addPs(x, y); ok != fits(sum) || ok && got != sum.Int64() {
				t.Errorf("addPs(%d, %d) = %d, %v; exact %v", x, y, got, ok, sum)
			}
			diff := new(big.Int).Sub(b(x), b(y))
			if got, ok := subPs(x, y); ok != fits(diff) || ok && got != diff.Int64() {
				t.Errorf("subPs(%d, %d) = %d, %v; exact %v", x, y, got, ok, diff)
			}
			for _, frac := range []int64{0, 1, 807, 808, 999} {
				ps := new(big.Int).Add(new(big.Int).Mul(diff, b(1000)), b(frac))
				if got, ok := psFrom(x, y, frac); ok != fits(ps) || ok && got != ps.Int64() {
					t.Errorf("psFrom(%d, %d, %d) = %d, %v; exact %v", x, y, frac, got, ok, ps)
				}
			}
		}
	}
}
