package estimate

import "testing"

// benchEstimate fits one window of 5000 pairs (10000 probes) per iteration;
// the probes are generated outside the timed loop.
func benchEstimate(b *testing.B, k Kind) { benchEstimateOn(b, k, normalCfg(5000, 99)) }

// benchEstimateOn is benchEstimate on the window c describes.
func benchEstimateOn(b *testing.B, k Kind, c genCfg) {
	c.loss = 0
	probes := generate(c)
	o := Options{Kind: k, Origin: c.srcStart}
	if _, err := Estimate(probes, o); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Estimate(probes, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/fit")
}

// BenchmarkSVM5000: target < 2 ms per fit. The exponential jitter of the
// window gives a hard floor: the exact corridor stands and the refinement
// stops after its first step.
func BenchmarkSVM5000(b *testing.B) { benchEstimate(b, SVM) }

// BenchmarkSVM5000Soft is the same window under 5µs Gaussian jitter, a soft
// floor: the refinement runs to convergence.
func BenchmarkSVM5000Soft(b *testing.B) { benchEstimateOn(b, SVM, softCfg(5000, 99)) }

// BenchmarkMinFilter5000 is the minfilter figure for the same window.
func BenchmarkMinFilter5000(b *testing.B) { benchEstimate(b, MinFilter) }

// BenchmarkRegression5000 is the regression figure for the same window.
func BenchmarkRegression5000(b *testing.B) { benchEstimate(b, Regression) }
