package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chronosync/chronosync/graphcalc"
)

// benchSolve times Solve, covariance included, on a noisy round over g.
func benchSolve(b *testing.B, g graph) { benchSolveDim(b, g, 0) }

// benchSolveDim is benchSolve with Options.SketchDim = dim.
func benchSolveDim(b *testing.B, g graph, dim int) {
	c := newClocks(g.n, rand.New(rand.NewPCG(11, 12)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(13, 14)))
	benchInput(b, in, dim)
}

// benchInput times Solve of in with Options.SketchDim = dim.
func benchInput(b *testing.B, in graphcalc.Input, dim int) {
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := graphcalc.Solve(in, graphcalc.Options{Seed: uint64(i), SketchDim: dim}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1e3/float64(b.N), "ms/solve")
	if cpu >= 0 {
		// The process's CPU time, the garbage collector's included.
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/solve")
	}
}

// BenchmarkSolve1024 solves a random 8-regular graph of 1,024 nodes, both
// directions of each link (8,192 edges), with the sketched covariance.
func BenchmarkSolve1024(b *testing.B) {
	benchSolve(b, randomRegular(b, 1024, 8, 42))
}

// BenchmarkSolve1024Sketch32 is BenchmarkSolve1024 with the 32 projections
// that were the default: compare the two from one run.
func BenchmarkSolve1024Sketch32(b *testing.B) {
	benchSolveDim(b, randomRegular(b, 1024, 8, 42), 32)
}

// BenchmarkSolve8 solves a mesh of 8 nodes (56 edges), exact covariance.
func BenchmarkSolve8(b *testing.B) {
	benchSolve(b, mesh(8))
}

// BenchmarkSolve10k solves a random 8-regular graph of 10,000 nodes, both
// directions of each link (80,000 edges, Sigma 3–48 ns), with the
// sketched covariance. Beside ms/solve it reports the sketch's accuracy
// where the exact covariance is feasible: the relative error of every
// node's σ of U and of Rate, sketched (default SketchDim, four seeds)
// against exact, on a random 8-regular graph of 1,024 nodes (median and
// worst node).
func BenchmarkSolve10k(b *testing.B) {
	acc := sketchError(b, 1024, 4, 0)
	g := randomRegular(b, 10000, 8, 42)
	benchSolve(b, g)
	b.ReportMetric(acc.medU, "σU-err-med")
	b.ReportMetric(acc.maxU, "σU-err-max")
	b.ReportMetric(acc.medR, "σRate-err-med")
	b.ReportMetric(acc.maxR, "σRate-err-max")
}

// sketchErr is the relative error of sketched σ against exact, median
// and worst node, for U and for Rate.
type sketchErr struct{ medU, maxU, medR, maxR float64 }

// sketchError solves a noisy round over a random 8-regular graph of n
// nodes with the exact covariance and with the sketched one (SketchDim
// dim, seeds 0 to seeds−1) and returns the relative errors of the
// sketched σ of U and of Rate over every node and seed.
func sketchError(tb testing.TB, n, seeds, dim int) sketchErr {
	g := randomRegular(tb, n, 8, 42)
	c := newClocks(g.n, rand.New(rand.NewPCG(11, 12)))
	in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(13, 14)))
	exact, err := graphcalc.Solve(in, graphcalc.Options{ExactCovarianceLimit: n})
	if err != nil {
		tb.Fatal(err)
	}
	var relU, relR []float64
	for seed := uint64(0); seed < uint64(seeds); seed++ {
		sk, err := graphcalc.Solve(in, graphcalc.Options{SketchDim: dim, Seed: seed})
		if err != nil {
			tb.Fatal(err)
		}
		for i, m := range sk.Nodes {
			if m.Node == in.Reference {
				continue
			}
			e := exact.Nodes[i]
			relU = append(relU, math.Abs(m.Sigma/e.Sigma-1))
			relR = append(relR, math.Abs(m.RateSigma/e.RateSigma-1))
		}
	}
	slices.Sort(relU)
	slices.Sort(relR)
	return sketchErr{
		medU: relU[len(relU)/2], maxU: relU[len(relU)-1],
		medR: relR[len(relR)/2], maxR: relR[len(relR)-1],
	}
}

// noisy10k is the round of BenchmarkSolve10k.
func noisy10k(b *testing.B) graphcalc.Input {
	g := randomRegular(b, 10000, 8, 42)
	c := newClocks(g.n, rand.New(rand.NewPCG(11, 12)))
	return build(c, g, 0, true, mixed, rand.New(rand.NewPCG(13, 14)))
}

// BenchmarkSolve10kOutlier is BenchmarkSolve10k with one direction of one
// link 5 µs off: one rejection (the eight worst links tried out, whole and
// by direction), then the fit is consistent.
func BenchmarkSolve10kOutlier(b *testing.B) {
	in := noisy10k(b)
	in.Edges[1234].Beta += 5000
	benchInput(b, in, 0)
}

// BenchmarkSolve10kUnderstated is BenchmarkSolve10k with every Sigma
// understated by 30 %: the fit is inconsistent and no link explains it, so
// rejection tries the worst links and keeps them, and the assessment tries
// them again (suspects, loops, inflation).
func BenchmarkSolve10kUnderstated(b *testing.B) {
	in := noisy10k(b)
	for k := range in.Edges {
		in.Edges[k].Sigma *= 0.7
	}
	benchInput(b, in, 0)
}

// BenchmarkSolve10kThreeOutliers is BenchmarkSolve10k with three links
// off by 3 to 5 µs, one direction each: three rounds of rejection, the
// most Options.MaxRejectRounds allows by default.
func BenchmarkSolve10kThreeOutliers(b *testing.B) {
	in := noisy10k(b)
	in.Edges[1234].Beta += 5000
	in.Edges[40001].Beta -= 4000
	in.Edges[777].Beta += 3000
	benchInput(b, in, 0)
}

// BenchmarkSolveCost reports, beside each size's CPU time a solve,
// model-ratio: SolveCost's model of it over the measured CPU time (1 is
// exact). The model charges the master's solve in the simulator.
func BenchmarkSolveCost(b *testing.B) {
	for _, tc := range []struct {
		name string
		g    func() graph
	}{
		{"mesh8", func() graph { return mesh(8) }},
		{"rr1024", func() graph { return randomRegular(b, 1024, 8, 42) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := tc.g()
			c := newClocks(g.n, rand.New(rand.NewPCG(11, 12)))
			in := build(c, g, 0, true, mixed, rand.New(rand.NewPCG(13, 14)))
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := graphcalc.Solve(in, graphcalc.Options{Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
			if used := cpuTime() - cpu; used > 0 {
				measured := used / time.Duration(b.N)
				b.ReportMetric(float64(measured.Microseconds()), "cpu-µs/solve")
				b.ReportMetric(float64(graphcalc.SolveCost(len(in.Edges)))/float64(measured), "model-ratio")
			}
		})
	}
}
