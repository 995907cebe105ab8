package clockmodel

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawParams draws clock parameters; negative steps only if negSteps.
func drawParams(t *rapid.T, negSteps bool) Params {
	p := Params{
		Offset:      time.Duration(rapid.Int64Range(-1e12, 1e12).Draw(t, "offset")),
		PPM:         rapid.Float64Range(-500, 500).Draw(t, "ppm"),
		WanderPPM:   rapid.SampledFrom([]float64{0, 0.01, 0.5, 5}).Draw(t, "wander"),
		WanderStep:  rapid.SampledFrom([]time.Duration{0, time.Millisecond, 77 * time.Millisecond, 2 * time.Second}).Draw(t, "wanderStep"),
		Granularity: time.Duration(rapid.Int64Range(0, 10_000).Draw(t, "granularity")),
		ReadNoise:   time.Duration(rapid.Int64Range(0, 100_000).Draw(t, "noise")),
	}
	if rapid.Bool().Draw(t, "periodic") {
		p.PeriodicPPM = rapid.Float64Range(-10, 10).Draw(t, "periodicPPM")
		p.PeriodicPeriod = time.Duration(rapid.Int64Range(1, 100e9).Draw(t, "period"))
	}
	minBy := int64(0)
	if negSteps {
		minBy = -1e9
	}
	n := rapid.IntRange(0, 5).Draw(t, "steps")
	for range n {
		p.Steps = append(p.Steps, Step{
			At: time.Duration(rapid.Int64Range(0, 20e9).Draw(t, "at")),
			By: time.Duration(rapid.Int64Range(minBy, 1e9).Draw(t, "by")),
		})
	}
	return p
}

func TestPropertyReadMonotonicWithoutNegativeSteps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawParams(t, false)
		c, err := New(p, rng(rapid.Uint64().Draw(t, "wanderSeed")), rng(rapid.Uint64().Draw(t, "noiseSeed")))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		tr, err := NewTracer(c, TracerParams{
			PPM:         rapid.Float64Range(-500, 500).Draw(t, "tracerPPM"),
			Granularity: time.Duration(rapid.Int64Range(0, 1000).Draw(t, "tracerGranularity")),
			ReadNoise:   time.Duration(rapid.Int64Range(0, 10_000).Draw(t, "tracerNoise")),
		}, rng(7))
		if err != nil {
			t.Fatalf("NewTracer: %v", err)
		}
		tt := rapid.Int64Range(0, 1e9).Draw(t, "start")
		prevS, prevR := c.Read(tt), tr.Read(tt)
		for _, d := range rapid.SliceOf(rapid.Int64Range(0, 2e9)).Draw(t, "deltas") {
			tt += d
			s, r := c.Read(tt), tr.Read(tt)
			if s < prevS {
				t.Fatalf("host Read(%d) = %d < previous %d", tt, s, prevS)
			}
			if r < prevR {
				t.Fatalf("tracer Read(%d) = %d < previous %d", tt, r, prevR)
			}
			prevS, prevR = s, r
		}
	})
}

func TestPropertyReadFallsOnlyWithIdeal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawParams(t, true)
		c, err := New(p, rng(rapid.Uint64().Draw(t, "wanderSeed")), rng(rapid.Uint64().Draw(t, "noiseSeed")))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		g := granularity(p.Granularity)
		tt := int64(0)
		prev, prevIdeal := c.Read(tt), c.Ideal(tt)
		for _, d := range rapid.SliceOf(rapid.Int64Range(0, 3e9)).Draw(t, "deltas") {
			tt += d
			r, id := c.Read(tt), c.Ideal(tt)
			if floor := prev + min(0, id-prevIdeal) - g; r <= floor {
				t.Fatalf("Read(%d) = %d fell more than Ideal did (previous %d, Ideal %d → %d)", tt, r, prev, prevIdeal, id)
			}
			prev, prevIdeal = r, id
		}
	})
}
