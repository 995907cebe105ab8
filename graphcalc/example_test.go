package graphcalc_test

import (
	"fmt"

	"github.com/chronosync/chronosync/graphcalc"
)

// ExampleSolve solves three nodes whose clocks run C_i(g) = a_i + r_i·g
// (node 0, the reference, is perfect; node 1 is 1 µs ahead and 10 ppm
// fast, node 2 0.5 µs behind and 5 ppm slow), every pair measured both
// ways, windows starting at g = 1 s.
func ExampleSolve() {
	a := []float64{0, 1000, -500}
	r := []float64{1, 1 + 10e-6, 1 - 5e-6}
	start := func(i int) int64 { return int64(a[i] + r[i]*1e9) }
	in := graphcalc.Input{Round: 1, Reference: 0, Origin: start(0), Nodes: []int{0, 1, 2}}
	for i := range a {
		for j := range a {
			if i == j {
				continue
			}
			s := start(i)
			g := (float64(s) - a[i]) / r[i] // when i's clock reads s
			in.Edges = append(in.Edges, graphcalc.Edge{
				Src: i, Dst: j, Alpha: r[j]/r[i] - 1, Beta: a[j] + r[j]*g - float64(s),
				Sigma: 2, AlphaSigma: 1e-9, SrcOrigin: s,
			})
		}
	}
	sum, err := graphcalc.Solve(in, graphcalc.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range sum.Nodes {
		fmt.Printf("node %d: U %+.3f ns, drift %+.4f ppm, σ %.3f ns, offset at local 2 s %+.3f ns\n",
			m.Node, m.U, m.DriftPPM(), m.Sigma, m.OffsetAt(2_000_000_000))
	}
	fmt.Printf("rms residual %.3f ns, %d rejected\n", sum.RMSResidual, sum.Rejected)
	// Output:
	// node 0: U +0.000 ns, drift +0.0000 ppm, σ 0.000 ns, offset at local 2 s +0.000 ns
	// node 1: U +11000.000 ns, drift +9.9999 ppm, σ 1.155 ns, offset at local 2 s +20999.790 ns
	// node 2: U -5500.000 ns, drift -5.0000 ppm, σ 1.155 ns, offset at local 2 s -10500.053 ns
	// rms residual 0.000 ns, 0 rejected
}
