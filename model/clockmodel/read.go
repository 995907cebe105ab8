package clockmodel

import (
	"math"
	"math/rand/v2"
)

// reader turns ideal readings into noisy, quantized, monotonic reads.
type reader struct {
	gran    int64
	noiseSD float64
	rng     *rand.Rand

	hasRead   bool
	lastRead  int64
	lastIdeal int64
}

// read returns the reading for an ideal value: ideal + rounded normal noise,
// floored to the granularity, clamped to never fall below the previous read
// unless the ideal value fell too.
func (r *reader) read(ideal int64) int64 {
	v := ideal
	if r.noiseSD > 0 {
		v += int64(math.Round(r.rng.NormFloat64() * r.noiseSD))
	}
	v = floorTo(v, r.gran)
	if r.hasRead {
		floor := floorTo(r.lastRead+min(0, ideal-r.lastIdeal), r.gran)
		v = max(v, floor)
	}
	r.hasRead, r.lastRead, r.lastIdeal = true, v, ideal
	return v
}

// floorTo rounds v down to a multiple of g (g > 0), also for negative v.
func floorTo(v, g int64) int64 {
	if g == 1 {
		return v
	}
	q := v / g
	if v%g < 0 {
		q--
	}
	return q * g
}
