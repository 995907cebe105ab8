package netem

import (
	"math"
	"math/rand/v2"
)

// maxFraction is the fixed-point value of probability 1. Like iproute2's
// tc (set_percent), a probability p becomes round(p * 0xffffffff) and the
// kernel compares it with 32-bit random numbers.
const maxFraction = math.MaxUint32

// fraction converts a probability in [0, 1] to netem's 32-bit fixed point,
// rounding half to even as C's rint does in tc.
func fraction(p float64) uint32 {
	return uint32(math.RoundToEven(p * maxFraction))
}

// crandom is netem's correlated random number generator (struct crndstate
// and get_crandom in net/sched/sch_netem.c). With rho = 0 it returns plain
// uniform 32-bit numbers and keeps no state. Otherwise each value is
//
//	x[n] = (v * (2^32 - rho') + x[n-1] * rho') >> 32,  rho' = rho + 1
//
// with v a fresh uniform 32-bit number: an AR(1) process with coefficient
// r = rho'/2^32. Its lag-1 autocorrelation is r, its stationary mean is
// that of v, but its variance is (1-r)/(1+r) times that of v, so it is not
// uniform: a threshold test "x <= p" happens with a probability that is not
// p when r > 0 (for p = 25% and r = 50%, it is 5/72 ≈ 6.9%). This is what
// netem does, and so what this package does.
type crandom struct {
	last uint32
	rho  uint32
}

// newCrandom returns a generator with correlation rho (netem's fixed point)
// whose previous value is drawn from r, as init_crandom does.
func newCrandom(rho uint32, r *rand.Rand) crandom {
	return crandom{last: r.Uint32(), rho: rho}
}

// next returns the next value, drawing one 32-bit number from r.
func (c *crandom) next(r *rand.Rand) uint32 {
	if c.rho == 0 {
		return r.Uint32()
	}
	v := uint64(r.Uint32())
	rho := uint64(c.rho) + 1
	// v*(2^32-rho) + last*rho <= (2^32-1)*2^32: no overflow.
	answer := uint32((v*((1<<32)-rho) + uint64(c.last)*rho) >> 32)
	c.last = answer
	return answer
}
