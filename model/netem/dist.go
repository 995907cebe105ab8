package netem

import (
	"math"
	"math/rand/v2"
	"sync"
)

// distScale is NETEM_DIST_SCALE: table entries are deviations from the
// mean in units of 1/8192 of the standard deviation.
const distScale = 8192

// distTableSize is the number of entries of iproute2's tables.
const distTableSize = 4096

// tabledist returns a delay with mean mu and spread sigma, exactly as
// netem's tabledist does (net/sched/sch_netem.c):
//
//   - sigma == 0: mu, with no random draw;
//   - no table (uniform): mu - sigma + rnd % (2*sigma), rnd from the
//     correlated generator st, so uniform on [mu-sigma, mu+sigma) with
//     standard deviation ≈ sigma/√3;
//   - a table: mu + sigma * table[rnd % len(table)] / 8192, computed in
//     integers with netem's rounding.
//
// Because of the modulo, the correlation of st survives only when 2*sigma
// (or the table size) is not small compared with 2^32: for jitters well
// below about 2 s, successive uniform delays are practically uncorrelated
// whatever the correlation parameter, and with a table they always are
// (4096 divides 2^32). The result may be negative; the caller clamps.
func tabledist(mu int64, sigma int32, st *crandom, r *rand.Rand, table []int16) int64 {
	if sigma == 0 {
		return mu
	}
	return distValue(mu, sigma, st.next(r), table)
}

// distValue is tabledist's value for the random number rnd (sigma > 0).
func distValue(mu int64, sigma int32, rnd uint32, table []int16) int64 {
	if table == nil {
		return int64(rnd%(2*uint32(sigma))) + mu - int64(sigma)
	}
	t := int64(table[rnd%uint32(len(table))])
	x := int64(sigma%distScale) * t
	if x >= 0 {
		x += distScale / 2
	} else {
		x -= distScale / 2
	}
	return x/distScale + int64(sigma/distScale)*t + mu
}

var (
	tablesOnce                          sync.Once
	normalTab, paretoTab, paretoNormTab []int16
)

// distTable returns the inverse-CDF table netem is loaded with for d, or
// nil for the uniform distribution. The tables are those iproute2 builds
// and installs as normal.dist, pareto.dist and paretonormal.dist,
// recomputed on first use by the same arithmetic as its generators
// (netem/normal.c, pareto.c, paretonormal.c).
func distTable(d Distribution) []int16 {
	if d == "" || d == Uniform {
		return nil
	}
	tablesOnce.Do(func() {
		normalTab, paretoTab, paretoNormTab = makeTables()
	})
	switch d {
	case Normal:
		return normalTab
	case Pareto:
		return paretoTab
	case ParetoNormal:
		return paretoNormTab
	}
	return nil
}

func clampShort(v float64) int16 {
	return int16(max(math.MinInt16, min(math.MaxInt16, v)))
}

// makeTables computes iproute2's three tables.
//
// normal.c: for x from -10 in steps of 0.00005 (accumulated in a double,
// as the C loop does), slot rint(16384*Phi(x)) of a 16385-slot array
// remembers the last x mapped to it; entry k of the table is
// rint(8192*slot[4k]), clamped to a short. So entry k is about
// 8192*Phi^-1((4k+0.5)/16384).
//
// pareto.c: entry k is rint(min(32767, ((1-k/4096)^(-1/3) - 1.5) * 4/3 * 8192)),
// a Pareto with shape a = 3 and scale 1 (mean 1.5), shifted to mean 0 and
// scaled by 4/3, its tail clamped.
//
// paretonormal.c: entry k is (n + 3*pareto[k]) / 4 in C integer division
// (truncation toward zero), clamped to a short, where n is normal[k]
// before its clamping (this matters for entry 0 only).
func makeTables() (normal, pareto, paretoNormal []int16) {
	const big = 16384
	var slot [big + 1]float64
	for x := -10.0; x < 10.05; x += .00005 {
		i := int(math.RoundToEven(big * (.5 + .5*math.Erf(x/math.Sqrt2))))
		slot[i] = x
	}
	normal = make([]int16, distTableSize)
	pareto = make([]int16, distTableSize)
	paretoNormal = make([]int16, distTableSize)
	for k := range distTableSize {
		n := int(math.RoundToEven(slot[4*k] * distScale))
		normal[k] = clampShort(float64(n))

		d := float64(65536-16*k) / 65536
		d = 1.0 / math.Pow(d, 1.0/3.0)
		d -= 1.5
		d *= (4.0 / 3.0) * distScale
		d = min(d, 32767)
		p := int(math.RoundToEven(d))
		pareto[k] = int16(p)

		paretoNormal[k] = clampShort(float64((n + 3*p) / 4))
	}
	return normal, pareto, paretoNormal
}
