package clockmodel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Tracer is a simulated tracer clock R (e.g. a GPU timestamp counter) that
// runs off its node's host clock S: R = Offset + (1 + PPM·1e-6)·S₀, where
// S₀ is S without its steps. It inherits the host's wander and periodic
// variation (one oscillator drives both) but not its steps: a step is the
// host's time being set (NTP), which no hardware counter follows. It has
// its own granularity and read noise. Create it with [NewTracer].
type Tracer struct {
	host   *Clock
	offset int64
	ppm    float64
	reader
}

// NewTracer returns a tracer clock driven by host with parameters p. Read
// noise comes from noise, which may be nil when p.ReadNoise is zero.
func NewTracer(host *Clock, p TracerParams, noise *rand.Rand) (*Tracer, error) {
	if host == nil {
		return nil, errors.New("clockmodel: NewTracer: host clock is nil")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.ReadNoise > 0 && noise == nil {
		return nil, fmt.Errorf("%w: tracer ReadNoise is %v but the noise stream is nil", ErrInvalidParams, p.ReadNoise)
	}
	return &Tracer{
		host:   host,
		offset: int64(p.Offset),
		ppm:    p.PPM,
		reader: reader{
			gran:    granularity(p.Granularity),
			noiseSD: float64(p.ReadNoise),
			rng:     noise,
		},
	}, nil
}

// Ideal returns the noise-free, unquantized tracer reading at true time t,
// computed from the host's ideal reading S less its steps and rounded to
// the nanosecond.
func (r *Tracer) Ideal(t int64) int64 {
	s := r.host.Ideal(t) - r.host.stepsAt(t)
	return r.offset + s + int64(math.Round(r.ppm*float64(s)/1e6))
}

// Read returns what the tracer clock reads at true time t: Ideal(t) plus its
// own read noise, quantized down to its granularity and clamped like
// [Clock.Read].
func (r *Tracer) Read(t int64) int64 {
	return r.read(r.Ideal(t))
}

// Rate returns d(R)/d(true time) at true time t.
func (r *Tracer) Rate(t int64) float64 {
	return (1 + r.ppm*1e-6) * r.host.Rate(t)
}
