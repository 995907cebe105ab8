package clockmodel

import (
	"math"
	"math/rand/v2"
)

// wander is a lazily drawn, cached random walk of the frequency.
type wander struct {
	rng   *rand.Rand
	sigma float64 // ppm per step
	limit float64 // reflection bound, ppm
	step  int64   // ns of true time per step
	stepF float64

	// phases[k] is the phase (ns) the walk has added at true time k·step;
	// segment k, [k·step, (k+1)·step), has frequency
	// (phases[k+1]−phases[k])/step.
	phases []float64
	freq   float64 // frequency (ppm) of segment len(phases)−1
}

func newWander(p Params, rng *rand.Rand) wander {
	w := wander{
		rng:    rng,
		sigma:  p.WanderPPM,
		limit:  p.wanderLimit(),
		step:   p.wanderStep(),
		phases: []float64{0},
	}
	w.stepF = float64(w.step)
	return w
}

// at returns the phase (ns) the walk has added by true time t and its
// frequency (ppm) at t.
func (w *wander) at(t int64) (phase, ppm float64) {
	if w.sigma == 0 || t < 0 {
		return 0, 0
	}
	k := int(t / w.step)
	w.extend(k)
	p0, p1 := w.phases[k], w.phases[k+1]
	d := p1 - p0
	return p0 + d*float64(t%w.step)/w.stepF, d / w.stepF * 1e6
}

// extend draws the walk until segment k is known.
func (w *wander) extend(k int) {
	for len(w.phases) < k+2 {
		last := w.phases[len(w.phases)-1]
		w.phases = append(w.phases, last+w.freq*w.stepF/1e6)
		w.freq = reflect(w.freq+w.sigma*w.rng.NormFloat64(), w.limit)
	}
}

// reflect folds x into [−l, l] as a walk reflected at both bounds.
func reflect(x, l float64) float64 {
	if x >= -l && x <= l {
		return x
	}
	u := math.Mod(x+l, 4*l)
	if u < 0 {
		u += 4 * l
	}
	if u > 2*l {
		u = 4*l - u
	}
	return u - l
}
