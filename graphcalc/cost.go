package graphcalc

import "time"

// SolveCostPerEdge is the CPU time Solve takes per edge of its input,
// covariance included, as measured by this package's benchmarks on the
// 2-core VM the project is developed on (2026-11-27): BenchmarkSolve8
// (56 edges) 34 µs, BenchmarkSolve1024 (8,192 edges) 5.6 ms,
// BenchmarkSolve10k (80,000 edges) 61 ms of CPU a solve, which 0.70 µs
// an edge meets within 15 % (BenchmarkSolveCost reports the ratio). A
// round whose solve rejects outliers repeats part of it and takes 2 to
// 6 times as long; the model charges the clean solve.
const SolveCostPerEdge = 700 * time.Nanosecond

// SolveCost models the CPU time of solving a round of edges edges
// (directed measurements), for a simulator that charges the master's
// solve in virtual time (world.Charger): SolveCostPerEdge each.
func SolveCost(edges int) time.Duration {
	return time.Duration(max(edges, 0)) * SolveCostPerEdge
}
