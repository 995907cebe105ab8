package estimate

import (
	"math"
	"testing"
	"time"
)

// stepBounds are the |beta error| (ns) and |alpha error| (ppm) allowed
// against the post-step line, fitted from the 2 s after the step and
// extrapolated back to Origin. Observed: svm ≤ 66 ns and 0.03 ppm,
// minfilter ≤ 185 ns and 0.17 ppm, regression ≤ 2265 ns and 0.68 ppm
// (its Sigma here is about 1.6µs).
var stepBounds = map[Kind][2]float64{
	SVM:        {300, 0.1},
	MinFilter:  {1500, 1},
	Regression: {6000, 2},
}

// TestStepDetected: a clock step halfway through a 4s window is found, and
// the fit is of the line after it. A dst step of Δ lifts the line by Δ; a
// src step of Δ moves x by Δ and lowers y by Δ, so the post-step line is
// y = alpha·(x−Origin) + beta − Δ(1+alpha).
func TestStepDetected(t *testing.T) {
	const half = 2e9
	for _, tc := range []struct {
		name     string
		at       float64 // ns after the window start
		dst, src float64 // ns
	}{
		{"dst +5ms", half + 2.5e3, 5e6, 0},
		{"dst -5ms", half + 2.5e3, -5e6, 0},
		{"dst +5ms inside a probe", half + 30e3, 5e6, 0},
		{"dst +1.5ms inside a probe", half + 30e3, 1.5e6, 0},
		{"src +5ms", half + 2.5e3, 0, 5e6},
		{"src -5ms", half + 2.5e3, 0, -5e6},
		{"src +1.5ms inside a probe", half + 30e3, 0, 1.5e6},
		{"both, early", 0.4e9, 3e6, -2e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range Kinds() {
				c := normalCfg(5000, 31)
				c.stepAt, c.stepDst, c.stepSrc = tc.at, tc.dst, tc.src
				probes := generate(c)
				f, err := Estimate(probes, Options{Kind: k, Origin: c.srcStart})
				if err != nil {
					t.Fatalf("%s: %v", k, err)
				}
				if !f.Step || len(f.Steps) != 1 {
					t.Fatalf("%s: %d steps detected; want 1", k, len(f.Steps))
				}
				st := f.Steps[0]
				wantAt := float64(c.srcStart) + tc.at + tc.src
				if d := float64(st.At) - wantAt; d < -1e6 || d > 2e6 {
					t.Errorf("%s: At is %.0f ns from the step", k, d)
				}
				all, _ := refPure(probes, 1000)
				if lo, hi := float64(all)*(1-tc.at/4e9)-5, float64(all)*(1-tc.at/4e9)+5; float64(f.Pairs) < lo || float64(f.Pairs) > hi {
					t.Errorf("%s: %d pairs kept of %d, want those after the step", k, f.Pairs, all)
				}
				wantBeta := c.beta + tc.dst - tc.src*(1+c.alpha)
				eb, ea := f.Beta-wantBeta, (f.Alpha-c.alpha)*1e6
				t.Logf("%s: At %+.0f ns from the step, beta err %+.1f ns, alpha err %+.3f ppm", k, float64(st.At)-wantAt, eb, ea)
				if math.Abs(eb) > stepBounds[k][0] || math.Abs(ea) > stepBounds[k][1] {
					t.Errorf("%s: beta err %.1f ns, alpha err %.3f ppm against the post-step line", k, eb, ea)
				}
				// The step lies between After (src clock before it) and At
				// (after it); the line before it is the original one.
				if at := float64(c.srcStart) + tc.at; float64(st.After) > at || float64(st.After) < at-2e6 {
					t.Errorf("%s: After is %.0f ns from the step", k, float64(st.After)-at)
				}
				pre := st.Before
				if pre.Pairs == 0 {
					t.Fatalf("%s: no fit before the step", k)
				}
				pb, pa := pre.Beta-c.beta, (pre.Alpha-c.alpha)*1e6
				t.Logf("%s: before the step: beta err %+.1f ns (σ %.1f), alpha err %+.3f ppm, %d pairs", k, pb, pre.Sigma, pa, pre.Pairs)
				if math.Abs(pb) > 4*pre.Sigma || math.Abs(pa) > 4*pre.AlphaSigma*1e6 {
					t.Errorf("%s: beta err %.1f ns, alpha err %.3f ppm against the pre-step line", k, pb, pa)
				}
			}
		})
	}
}

// TestStepShortSide: a step 8 ms into the window (ten pairs before it),
// 8 ms before its end or in its last pair or two leaves one side too short for a fit of its own:
// it gets the other side's slope and path delays, and its Sigma covers its
// error and is a few µs (20 probes on 30 µs exponential jitter), not the
// round-trip time, where ten pairs are left.
func TestStepShortSide(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       float64 // ns after the window start
		maxSigma float64 // ns
	}{
		{"early", 8e6, 10e3},
		{"late", 4e9 - 8e6, 10e3},
		// Fewer probes after it than the walk's medians want (pairs are
		// 0.8 ms apart, the last at 3,999.2 ms): every one of them shows
		// it, so it counts. One pair after it is as precise as one
		// round trip.
		{"three probes after it", 4e9 - 1.598e6, 50e3},
		{"the last pair after it", 4e9 - 1.2e6, 50e3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range Kinds() {
				c := normalCfg(5000, 32)
				c.stepAt, c.stepDst = tc.at, 3e6
				probes := generate(c)
				f, err := Estimate(probes, Options{Kind: k, Origin: c.srcStart})
				if err != nil {
					t.Fatalf("%s: %v", k, err)
				}
				if !f.Step || len(f.Steps) != 1 || f.Steps[0].Before.Pairs == 0 {
					t.Fatalf("%s: steps %+v", k, f.Steps)
				}
				b := f.Steps[0].Before
				post, pre := f.Beta-(c.beta+3e6), b.Beta-c.beta
				t.Logf("%s: post %+.1f ns (σ %.1f, %d pairs), pre %+.1f ns (σ %.1f, %d pairs)", k, post, f.Sigma, f.Pairs, pre, b.Sigma, b.Pairs)
				if math.Abs(post) > 4*f.Sigma || math.Abs(pre) > 4*b.Sigma || max(f.Sigma, b.Sigma) > tc.maxSigma {
					t.Errorf("%s: post error %.1f ns (σ %.1f), pre error %.1f ns (σ %.1f)", k, post, f.Sigma, pre, b.Sigma)
				}
			}
		})
	}
}

// TestStepNotFalselyTriggered: ordinary jitter, one-sided queueing, and even
// a 2ms queueing burst (which lifts the midpoints by 1ms, but also the
// round-trip delay by 2ms) are not steps; a disabled detector sees none.
func TestStepNotFalselyTriggered(t *testing.T) {
	burst := func(probes []Probe) {
		for i := range probes {
			if i >= 1000 && i < 1040 {
				probes[i].T2 += 2e6
				probes[i].T3 += 2e6
				probes[i].T4 += 2e6
			}
		}
	}
	for _, tc := range []struct {
		name  string
		mod   func(*genCfg)
		after func([]Probe)
		o     Options
	}{
		{"exp jitter", func(*genCfg) {}, nil, Options{}},
		{"normal jitter", func(c *genCfg) { c.fwd.kind, c.rev.kind = jitNormal, jitNormal }, nil, Options{}},
		{"queueing", func(c *genCfg) { c.fwd.queueP, c.fwd.queueM = 0.7, 200e3 }, nil, Options{}},
		{"queueing burst", func(*genCfg) {}, burst, Options{}},
		// 1000 ppm over 600 ms between pairs: the offset drifts 1.2 ms
		// between a probe and the one three back, which only the drift
		// correction tells from a step.
		{"sparse probes, fast drift", func(c *genCfg) { c.pairs, c.period, c.alpha = 100, 600e6, 1e-3 }, nil, Options{}},
		{"sparse probes, fast negative drift", func(c *genCfg) { c.pairs, c.period, c.alpha = 100, 600e6, -1e-3 }, nil, Options{}},
		{"disabled", func(c *genCfg) { c.stepAt, c.stepDst = 2e9, 5e6 }, nil, Options{StepThreshold: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(0); seed < 20; seed++ {
				c := normalCfg(2000, 100+seed)
				tc.mod(&c)
				probes := generate(c)
				if tc.after != nil {
					tc.after(probes)
				}
				o := tc.o
				o.Kind, o.Origin = SVM, c.srcStart
				f, err := Estimate(probes, o)
				if err != nil {
					t.Fatal(err)
				}
				if f.Step || len(f.Steps) != 0 {
					t.Fatalf("seed %d: false steps %+v", seed, f.Steps)
				}
				if all, _ := refPure(probes, 1000); f.Pairs != all {
					t.Fatalf("seed %d: %d of %d pairs kept", seed, f.Pairs, all)
				}
			}
		})
	}
}

// TestStepThreshold: a 0.5ms step is found by default (the window's noise
// lets the detectors see far less), and StepThreshold is a floor under
// the steps taken: a 1ms one hides it, a 0.2ms one does not.
func TestStepThreshold(t *testing.T) {
	c := normalCfg(2000, 41)
	c.stepAt, c.stepDst = 1e9, 0.5e6
	probes := generate(c)
	for _, tc := range []struct {
		o    Options
		want bool
	}{
		{Options{Kind: Regression}, true},
		{Options{Kind: Regression, StepThreshold: time.Millisecond}, false},
		{Options{Kind: Regression, StepThreshold: 200_000}, true},
	} {
		f, err := Estimate(probes, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if f.Step != tc.want {
			t.Errorf("threshold %v: Step = %v, want %v", tc.o.StepThreshold, f.Step, tc.want)
		}
	}
}
