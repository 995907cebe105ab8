package clockmodel

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidParams is wrapped by every error that [Params.Validate],
// [TracerParams.Validate], [New] and [NewTracer] return for bad parameters.
var ErrInvalidParams = errors.New("clockmodel: invalid params")

// maxTotalPPM bounds the sum of all frequency errors: at a million ppm the
// clock would stop, beyond it it would run backwards.
const maxTotalPPM = 1e6

// minWanderStep is the shortest wander step: a frequency walk on a finer
// grid is phase noise (model it with ReadNoise) and costs a normal draw per
// step of simulated time.
const minWanderStep = time.Millisecond

// Params describe one clock relative to true time. The zero value is a
// perfect clock: reading == true time, 1 ns granularity, no noise.
//
// An ideal reading at true time t is
//
//	Offset + t + PPM·1e-6·t + wander(t) + periodic(t) + steps(t)
//
// rounded to the nanosecond, and a read adds noise and is then quantized
// down to Granularity.
type Params struct {
	Offset time.Duration // reading at true time 0
	PPM    float64       // constant frequency error in parts per million

	// Wander is a random walk of the frequency: every WanderStep of true
	// time the frequency error changes by a normal draw with standard
	// deviation WanderPPM (ppm). The walk starts at 0 at true time 0 and is
	// reflected at ±WanderLimitPPM, so the phase it adds is bounded by
	// WanderLimitPPM·1e-6·|t|.
	WanderPPM      float64
	WanderStep     time.Duration // 0 means 1s; else at least 1ms
	WanderLimitPPM float64       // 0 means 10·WanderPPM

	// Periodic (temperature-like) variation of the frequency:
	// PeriodicPPM·sin(2π·t/PeriodicPeriod). Its phase contribution is
	// PeriodicPPM·1e-6·PeriodicPeriod/(2π)·(1−cos(2π·t/PeriodicPeriod)),
	// bounded by |PeriodicPPM|·1e-6·PeriodicPeriod/π. PeriodicPeriod must be
	// positive when PeriodicPPM is not zero.
	PeriodicPPM    float64
	PeriodicPeriod time.Duration

	Granularity time.Duration // readings are multiples of it; 0 means 1ns
	ReadNoise   time.Duration // standard deviation of normal read noise

	Steps []Step // phase steps at given true times, in any order
}

// Step is a phase jump of the clock at a true time (an NTP step, or a
// fault). The jump applies to every reading at true time At and later.
type Step struct {
	At time.Duration // true time of the step
	By time.Duration // signed jump
}

// TracerParams describe a tracer clock R relative to its node's host clock S:
// R = Offset + (1 + PPM·1e-6)·S, then noised and quantized down to
// Granularity (0 means 1ns) with its own read noise (a standard deviation).
type TracerParams struct {
	Offset      time.Duration
	PPM         float64
	Granularity time.Duration
	ReadNoise   time.Duration
}

// Validate reports the first problem with p, wrapping [ErrInvalidParams].
func (p Params) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"PPM", p.PPM},
		{"WanderPPM", p.WanderPPM},
		{"WanderLimitPPM", p.WanderLimitPPM},
		{"PeriodicPPM", p.PeriodicPPM},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s is %v, want a finite number", ErrInvalidParams, f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"WanderPPM", p.WanderPPM},
		{"WanderLimitPPM", p.WanderLimitPPM},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s is %v, want >= 0", ErrInvalidParams, f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"WanderStep", p.WanderStep},
		{"PeriodicPeriod", p.PeriodicPeriod},
		{"Granularity", p.Granularity},
		{"ReadNoise", p.ReadNoise},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s is %v, want >= 0", ErrInvalidParams, f.name, f.v)
		}
	}
	if p.WanderStep != 0 && p.WanderStep < minWanderStep {
		return fmt.Errorf("%w: WanderStep is %v, want 0 (meaning 1s) or >= %v", ErrInvalidParams, p.WanderStep, minWanderStep)
	}
	if p.PeriodicPPM != 0 && p.PeriodicPeriod == 0 {
		return fmt.Errorf("%w: PeriodicPPM is %v but PeriodicPeriod is 0, want > 0", ErrInvalidParams, p.PeriodicPPM)
	}
	if total := math.Abs(p.PPM) + p.wanderLimit() + math.Abs(p.PeriodicPPM); total >= maxTotalPPM {
		return fmt.Errorf("%w: |PPM|+WanderLimitPPM+|PeriodicPPM| is %v, want < %v (the clock would stop or run backwards)",
			ErrInvalidParams, total, float64(maxTotalPPM))
	}
	return nil
}

// wanderStep is WanderStep with its default applied.
func (p Params) wanderStep() int64 {
	if p.WanderStep == 0 {
		return int64(time.Second)
	}
	return int64(p.WanderStep)
}

// wanderLimit is WanderLimitPPM with its default applied; 0 without wander.
func (p Params) wanderLimit() float64 {
	if p.WanderPPM == 0 {
		return 0
	}
	if p.WanderLimitPPM == 0 {
		return 10 * p.WanderPPM
	}
	return p.WanderLimitPPM
}

// Validate reports the first problem with p, wrapping [ErrInvalidParams].
func (p TracerParams) Validate() error {
	if math.IsNaN(p.PPM) || math.IsInf(p.PPM, 0) {
		return fmt.Errorf("%w: tracer PPM is %v, want a finite number", ErrInvalidParams, p.PPM)
	}
	if math.Abs(p.PPM) >= maxTotalPPM {
		return fmt.Errorf("%w: tracer PPM is %v, want |PPM| < %v", ErrInvalidParams, p.PPM, float64(maxTotalPPM))
	}
	if p.Granularity < 0 {
		return fmt.Errorf("%w: tracer Granularity is %v, want >= 0", ErrInvalidParams, p.Granularity)
	}
	if p.ReadNoise < 0 {
		return fmt.Errorf("%w: tracer ReadNoise is %v, want >= 0", ErrInvalidParams, p.ReadNoise)
	}
	return nil
}

// granularity returns g with the 1ns default applied.
func granularity(g time.Duration) int64 {
	if g == 0 {
		return 1
	}
	return int64(g)
}
