package estimate

import (
	"math"
	"math/rand/v2"
)

// jitter is a one-way delay jitter distribution.
type jitter uint8

const (
	jitNone   jitter = iota
	jitExp           // exponential with mean scale
	jitNormal        // normal with mean scale and sd scale/2, clipped at 0
	jitGauss         // normal with mean 0 and sd scale, not clipped: a soft floor
)

// delayDist is a one-way delay: base + jitter, plus, with probability
// queueP, an exponential queueing delay of mean queueMean.
type delayDist struct {
	base   float64 // ns
	kind   jitter
	scale  float64 // ns
	queueP float64
	queueM float64 // ns
}

func (d delayDist) draw(r *rand.Rand) float64 {
	v := d.base
	switch d.kind {
	case jitExp:
		v += d.scale * r.ExpFloat64()
	case jitNormal:
		v += max(0, d.scale+d.scale/2*r.NormFloat64())
	case jitGauss:
		v += d.scale * r.NormFloat64()
	}
	if d.queueP > 0 && r.Float64() < d.queueP {
		v += d.queueM * r.ExpFloat64()
	}
	return v
}

// genCfg describes one synthetic window of an edge src→dst. The src clock
// reads srcStart + t at true time t (ns from the window start); the dst
// clock reads src + alpha·(src − srcStart) + beta, so with Origin = srcStart
// the true line is y = alpha·(x − Origin) + beta.
type genCfg struct {
	pairs      int
	period     float64 // ns between pairs; 0 means 800µs
	spacing    float64 // ns between the two probes of a pair; 0 means 5µs
	turnaround float64 // ns dst holds a probe; 0 means 10µs
	alpha      float64
	beta       float64 // ns
	srcStart   int64
	fwd, rev   delayDist
	noise      float64 // read noise sd on every timestamp, ns
	loss       float64 // probability each probe is lost
	pureFrac   float64 // fraction of pairs whose second probe sees the first's delays
	symmetric  bool    // each probe's reverse delay equals its forward delay
	stepAt     float64 // true time of a clock step, ns; 0: none
	stepDst    float64 // dst clock step, ns
	stepSrc    float64 // src clock step, ns
	seed       uint64
}

// normalCfg returns a symmetric link with the usual figures: base 20µs, 30µs
// exponential jitter both ways, 50ns read noise, random truth.
func normalCfg(pairs int, seed uint64) genCfg {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	return genCfg{
		pairs:    pairs,
		alpha:    (r.Float64()*2 - 1) * 200e-6,
		beta:     (r.Float64()*2 - 1) * 50e6,
		srcStart: int64((r.Float64()*2 - 1) * 10 * 3600e9),
		fwd:      delayDist{base: 20e3, kind: jitExp, scale: 30e3},
		rev:      delayDist{base: 20e3, kind: jitExp, scale: 30e3},
		noise:    50,
		loss:     0.01,
		seed:     seed,
	}
}

// generate returns the answered probes in send order.
func generate(c genCfg) []Probe {
	if c.period == 0 {
		c.period = 800e3
	}
	if c.spacing == 0 {
		c.spacing = 5e3
	}
	if c.turnaround == 0 {
		c.turnaround = 10e3
	}
	r := rand.New(rand.NewPCG(c.seed, 0xc0ffee))
	src := func(t float64) int64 {
		v := t
		if c.stepAt > 0 && t >= c.stepAt {
			v += c.stepSrc
		}
		return c.srcStart + int64(math.Round(v+c.noise*r.NormFloat64()))
	}
	dst := func(t float64) int64 {
		v := t + c.alpha*t + c.beta
		if c.stepAt > 0 && t >= c.stepAt {
			v += c.stepDst
		}
		return c.srcStart + int64(math.Round(v+c.noise*r.NormFloat64()))
	}
	out := make([]Probe, 0, 2*c.pairs)
	for p := range c.pairs {
		pure := r.Float64() < c.pureFrac
		var df, dr float64
		for slot := range 2 {
			if slot == 0 || !pure {
				df, dr = c.fwd.draw(r), c.rev.draw(r)
				if c.symmetric {
					dr = df
				}
			}
			t1 := float64(p)*c.period + float64(slot)*c.spacing
			t2 := t1 + df
			t3 := t2 + c.turnaround
			t4 := t3 + dr
			pr := Probe{T1: src(t1), T2: dst(t2), T3: dst(t3), T4: src(t4), Pair: uint32(p), Slot: uint8(slot)}
			if r.Float64() < c.loss {
				continue
			}
			out = append(out, pr)
		}
	}
	return out
}

// softCfg is normalCfg with the soft floor of netem's normal jitter: base
// 20µs and 5µs Gaussian jitter both ways, as in asym-queueing.
func softCfg(pairs int, seed uint64) genCfg {
	c := normalCfg(pairs, seed)
	c.fwd = delayDist{base: 20e3, kind: jitGauss, scale: 5e3}
	c.rev = c.fwd
	return c
}
