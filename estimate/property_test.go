package estimate

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// drawSymmetric draws a noise-free window whose every probe has the same
// delay in both directions.
func drawSymmetric(t *rapid.T, jittered bool) genCfg {
	c := genCfg{
		pairs:     rapid.IntRange(30, 300).Draw(t, "pairs"),
		alpha:     rapid.Float64Range(-200e-6, 200e-6).Draw(t, "alpha"),
		beta:      rapid.Float64Range(-50e6, 50e6).Draw(t, "beta"),
		srcStart:  rapid.Int64Range(-1e14, 1e14).Draw(t, "srcStart"),
		symmetric: true,
		loss:      rapid.SampledFrom([]float64{0, 0.05, 0.2}).Draw(t, "loss"),
		seed:      rapid.Uint64().Draw(t, "seed"),
	}
	c.fwd = delayDist{base: rapid.Float64Range(1e3, 100e3).Draw(t, "base")}
	if jittered {
		c.fwd.kind = rapid.SampledFrom([]jitter{jitExp, jitNormal}).Draw(t, "kind")
		c.fwd.scale = rapid.Float64Range(0, 100e3).Draw(t, "scale")
	}
	return c
}

// Timestamps are rounded to whole ns, so a point may sit up to 1 ns off its
// ideal place. Then the corridor centre is within 2 ns of the true line at
// every point's x, and within 2 + 4·RTT/span ns at the window ends, where
// span ≥ 9 probe periods (at least 10 pairs): a little over 2 ns.
const roundTol = 3.0

// TestPropertySVMCorridorHoldsTruth: with the same constant delay D both
// ways and no read noise, the forward points lie on the true line + D(1+α)
// and the reverse points on the true line − D(1+α), so the corridor must be
// exactly that strip: Margin ≥ 0 and the true line inside the corridor (on
// its centre) over the whole window.
func TestPropertySVMCorridorHoldsTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawSymmetric(t, false)
		probes := generate(c)
		f, err := Estimate(probes, Options{Kind: SVM, Origin: c.srcStart, StepThreshold: -1, Purity: PurityOff})
		if err != nil {
			t.Skipf("too few pairs survived loss: %v", err)
		}
		if f.Margin < 0 {
			t.Fatalf("Margin = %g < 0", f.Margin)
		}
		if want := c.fwd.base * (1 + c.alpha); math.Abs(f.Margin-want) > roundTol {
			t.Fatalf("Margin = %g, want the delay %g", f.Margin, want)
		}
		for _, x := range []int64{probes[0].T1 - c.srcStart, probes[len(probes)-1].T4 - c.srcStart} {
			truth := c.alpha*float64(x) + c.beta
			centre := f.Alpha*float64(x) + f.Beta
			if math.Abs(truth-centre) > roundTol {
				t.Fatalf("at x=%d the true line %g is %g from the corridor centre (margin %g)", x, truth, truth-centre, f.Margin)
			}
		}
	})
}

// TestPropertySVMMarginBeatsTruth: with per-probe random delays, still equal
// both ways, the true line is one separating line, so the maximum margin is
// at least the truth's own margin (≥ the smallest delay ≥ 0). It need not
// contain the true line here: a near-flat margin function lets a tilted
// corridor win by a fraction of a ns (found by rapid with 10 pairs), so only
// the optimality and feasibility are asserted.
func TestPropertySVMMarginBeatsTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawSymmetric(t, true)
		probes := generate(c)
		f, err := corridorOf(probes, c.srcStart)
		if err != nil {
			t.Skipf("no corridor: %v", err)
		}
		truthMargin := math.Inf(1)
		for _, s := range buildSamples(probes, completePairs(probes), c.srcStart) {
			truthMargin = min(truthMargin,
				float64(s.fy)-(c.alpha*float64(s.fx)+c.beta),
				(c.alpha*float64(s.rx)+c.beta)-float64(s.ry))
		}
		if truthMargin < -roundTol {
			t.Fatalf("generator: the true line has margin %g", truthMargin)
		}
		if f.Margin < truthMargin-roundTol || f.Margin < 0 {
			t.Fatalf("Margin = %g, below the true line's %g", f.Margin, truthMargin)
		}
		if v := worstViolation(probes, c.srcStart, f); v > 1e-6*max(1, math.Abs(f.Margin)) {
			t.Fatalf("a point is %g inside the corridor of margin %g", v, f.Margin)
		}
	})
}

// worstViolation returns how far the worst point lies inside the corridor
// edge on its side (≤ 0 when none does).
func worstViolation(probes []Probe, origin int64, f Fit) float64 {
	worst := math.Inf(-1)
	for _, s := range buildSamples(probes, completePairs(probes), origin) {
		worst = max(worst,
			f.Margin-(float64(s.fy)-(f.Alpha*float64(s.fx)+f.Beta)),
			f.Margin-((f.Alpha*float64(s.rx)+f.Beta)-float64(s.ry)))
	}
	return worst
}
