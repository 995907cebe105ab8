package graphcalc_test

import (
	"math/rand/v2"
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
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := graphcalc.Solve(in, graphcalc.Options{Seed: uint64(i), SketchDim: dim}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1e3/float64(b.N), "ms/solve")
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
