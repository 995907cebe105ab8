package clockmodel

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Clock is a simulated host clock. Create it with [New].
type Clock struct {
	offset int64
	ppm    float64
	wander wander

	periodicPPM float64
	periodic    int64   // period, ns
	periodicAmp float64 // PeriodicPPM·1e-6·period/(2π), ns

	steps []Step  // sorted by At, stable
	cum   []int64 // cum[i] = sum of steps[0..i].By

	horizon int64 // latest true time queried
	reader
}

// New returns a clock with parameters p. Wander draws come only from wander
// and read noise only from noise, so extra reads never shift the wander
// path. Either may be nil when its parameter (WanderPPM, ReadNoise) is zero.
func New(p Params, wander, noise *rand.Rand) (*Clock, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.WanderPPM > 0 && wander == nil {
		return nil, fmt.Errorf("%w: WanderPPM is %v but the wander stream is nil", ErrInvalidParams, p.WanderPPM)
	}
	if p.ReadNoise > 0 && noise == nil {
		return nil, fmt.Errorf("%w: ReadNoise is %v but the noise stream is nil", ErrInvalidParams, p.ReadNoise)
	}
	c := &Clock{
		offset:      int64(p.Offset),
		ppm:         p.PPM,
		wander:      newWander(p, wander),
		periodicPPM: p.PeriodicPPM,
		periodic:    int64(p.PeriodicPeriod),
		horizon:     math.MinInt64,
		reader: reader{
			gran:    granularity(p.Granularity),
			noiseSD: float64(p.ReadNoise),
			rng:     noise,
		},
	}
	if c.periodicPPM != 0 {
		c.periodicAmp = c.periodicPPM * float64(c.periodic) / (2 * math.Pi * 1e6)
	}
	c.steps = slices.Clone(p.Steps)
	slices.SortStableFunc(c.steps, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
	c.cum = make([]int64, len(c.steps))
	c.sumSteps(0)
	return c, nil
}

// Ideal returns the noise-free, unquantized reading at true time t, rounded
// to the nanosecond: offset, ppm, wander, periodic variation and the steps
// with At <= t. It is the ground truth for error measurement. t may be
// queried in any order.
func (c *Clock) Ideal(t int64) int64 {
	c.see(t)
	whole := c.offset + t + c.stepsAt(t)
	wphase, _ := c.wander.at(t)
	frac := c.ppm*float64(t)/1e6 + wphase + c.periodicPhase(t)
	return whole + int64(math.Round(frac))
}

// Read returns what the clock reads at true time t: Ideal(t) plus normal
// read noise rounded to the nanosecond, quantized down to the granularity.
// Reads are clamped in call order so that a read never returns less than the
// previous one unless Ideal went back as well (a negative step, or an
// earlier t), and then by no more than Ideal did.
func (c *Clock) Read(t int64) int64 {
	return c.read(c.Ideal(t))
}

// Rate returns d(reading)/d(true time) at true time t:
// 1 + (PPM + wander(t) + periodic(t))·1e-6.
func (c *Clock) Rate(t int64) float64 {
	c.see(t)
	_, wppm := c.wander.at(t)
	return 1 + (c.ppm+wppm+c.periodicFreq(t))*1e-6
}

// TrueAfter returns the true time at which the clock will have advanced by d
// clock nanoseconds from true time t, using the rate at t and ignoring
// steps, rounded up; it is t for d <= 0 and saturates at math.MaxInt64.
func (c *Clock) TrueAfter(t, d int64) int64 {
	if d <= 0 {
		return t
	}
	dt := math.Ceil(float64(d) / c.Rate(t))
	if float64(t)+dt >= math.MaxInt64 {
		return math.MaxInt64
	}
	return t + int64(dt)
}

// TrueTime returns the true time at which the noise-free clock reads
// local, found by Newton steps from the true time guess. Around a step,
// where a reading occurs twice or never, it returns one of the candidates.
func (c *Clock) TrueTime(local, guess int64) int64 {
	t := guess
	for range 8 {
		d := local - c.Ideal(t)
		if d == 0 {
			break
		}
		t += int64(math.Round(float64(d) / c.Rate(t)))
	}
	return t
}

// AddStep schedules a phase step while the clock runs (a fault). It returns
// an error if s.At is before the latest true time the clock has been
// queried at, since readings already handed out would change; a step at
// exactly that time is accepted and applies to later queries.
func (c *Clock) AddStep(s Step) error {
	if c.horizon != math.MinInt64 && int64(s.At) < c.horizon {
		return fmt.Errorf("clockmodel: step by %v at true time %v: clock already queried at %v",
			s.By, s.At, time.Duration(c.horizon))
	}
	// Insert after every step at the same time: never report "found".
	i, _ := slices.BinarySearchFunc(c.steps, s.At, func(e Step, at time.Duration) int {
		if e.At <= at {
			return -1
		}
		return 1
	})
	c.steps = slices.Insert(c.steps, i, s)
	c.cum = append(c.cum, 0)
	c.sumSteps(i)
	return nil
}

// sumSteps recomputes cum from index i on.
func (c *Clock) sumSteps(i int) {
	for ; i < len(c.steps); i++ {
		c.cum[i] = int64(c.steps[i].By)
		if i > 0 {
			c.cum[i] += c.cum[i-1]
		}
	}
}

// StepsAt returns how many steps the clock has taken by true time t (those
// with At <= t) and their sum in ns: Ideal(t) less the sum is the clock as
// if it had never stepped.
func (c *Clock) StepsAt(t int64) (n int, sum int64) {
	n, _ = slices.BinarySearchFunc(c.steps, t, func(e Step, t int64) int {
		if int64(e.At) <= t {
			return -1
		}
		return 1
	})
	return n, c.stepsAt(t)
}

// stepsAt returns the sum of the steps with At <= t.
func (c *Clock) stepsAt(t int64) int64 {
	lo, hi := 0, len(c.steps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int64(c.steps[m].At) <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0
	}
	return c.cum[lo-1]
}

// periodicAngle returns 2π·t/period with t reduced modulo the period.
func (c *Clock) periodicAngle(t int64) float64 {
	return 2 * math.Pi * float64(t%c.periodic) / float64(c.periodic)
}

// periodicPhase is the integral of the periodic frequency from 0 to t, ns.
func (c *Clock) periodicPhase(t int64) float64 {
	if c.periodicPPM == 0 {
		return 0
	}
	return c.periodicAmp * (1 - math.Cos(c.periodicAngle(t)))
}

// periodicFreq is the periodic frequency error at t, ppm.
func (c *Clock) periodicFreq(t int64) float64 {
	if c.periodicPPM == 0 {
		return 0
	}
	return c.periodicPPM * math.Sin(c.periodicAngle(t))
}

// Horizon returns the latest true time the clock has been queried at
// (math.MinInt64 before the first query): the earliest time AddStep
// accepts.
func (c *Clock) Horizon() int64 { return c.horizon }

// see records t as queried.
func (c *Clock) see(t int64) {
	c.horizon = max(c.horizon, t)
}
