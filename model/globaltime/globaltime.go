// Package globaltime maps a node's clock readings to global time with a
// linear clock model, exactly enough for clocks of any magnitude: the one
// "local time → global time" that GraphCalc's solutions, offsets.jsonl's
// records and consensus mode's corrections all use.
package globaltime

import "math"

// Linear maps a reading L of a node's clock to global time
//
//	L − Offset − Drift·(L − Anchor)
//
// : at Anchor (a reading of the node's clock) the clock is Offset ns ahead
// of global time, and it gains Drift ns per ns of its own.
type Linear struct {
	Anchor int64
	Offset float64 // ns
	Drift  float64 // dimensionless (1e-6 = 1 ppm)
}

// Global maps local to global time. The difference local − Anchor is taken
// in integers and the result rounded once, as far as float64 allows, so
// that it stays within about half a unit in the last place even for
// local ≈ 1e18 (epoch nanoseconds), where a plain float64 formula loses
// hundreds of ns.
func (m Linear) Global(local int64) float64 {
	d, ok := sub(local, m.Anchor)
	df := float64(d)
	if !ok {
		df = float64(local) - float64(m.Anchor)
	}
	corr := m.Offset + m.Drift*df
	if math.Abs(corr) < 1<<62 {
		ci := math.Round(corr)
		frac := corr - ci // exact: corr and ci are within 0.5
		if r, ok := sub(local, int64(ci)); ok {
			hi := float64(r)
			if math.Abs(hi) < 1<<62 {
				lo := r - int64(hi) // exact, |lo| ≤ half a unit of hi
				return hi + (float64(lo) - frac)
			}
		}
	}
	return float64(local) - corr
}

// OffsetAt returns how far the clock is ahead of global time when it reads
// local, local − Global(local), from small terms only:
// Offset + Drift·(local − Anchor).
func (m Linear) OffsetAt(local int64) float64 {
	d, ok := sub(local, m.Anchor)
	if !ok {
		return m.Offset + m.Drift*(float64(local)-float64(m.Anchor))
	}
	return m.Offset + m.Drift*float64(d)
}

// sub returns a − b and whether it did not overflow.
func sub(a, b int64) (int64, bool) {
	d := a - b
	return d, (b >= 0) == (d <= a)
}
