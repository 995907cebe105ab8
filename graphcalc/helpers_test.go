package graphcalc_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// clocks are the true clocks of a synthetic round: C_i(g) = a_i + r_i·g
// in true global time g, with every window starting at true time gw.
type clocks struct {
	a, r []float64
	gw   float64
}

// newClocks draws offsets in ±1 s and rates in ±200 ppm; with gw = 0.3 s
// about a third of the clocks read negative.
func newClocks(n int, rng *rand.Rand) clocks {
	c := clocks{a: make([]float64, n), r: make([]float64, n), gw: 3e8}
	for i := range c.a {
		c.a[i] = (2*rng.Float64() - 1) * 1e9
		c.r[i] = 1 + (2*rng.Float64()-1)*200e-6
	}
	return c
}

// start is node i's window start in its own clock.
func (c clocks) start(i int) int64 { return int64(math.Round(c.a[i] + c.r[i]*c.gw)) }

// edge returns the exact line i→j fitted at i's window start.
func (c clocks) edge(i, j int, sigma, alphaSigma float64) graphcalc.Edge {
	s := c.start(i)
	g := (float64(s) - c.a[i]) / c.r[i]
	return graphcalc.Edge{
		Src: i, Dst: j, Alpha: c.r[j]/c.r[i] - 1, Beta: c.a[j] + c.r[j]*g - float64(s),
		Sigma: sigma, AlphaSigma: alphaSigma, SrcOrigin: s,
	}
}

// truth returns node i's exact U and Rate against reference ref.
func (c clocks) truth(i, ref int) (u, rate float64) {
	g0 := c.start(ref)
	g := (float64(g0) - c.a[ref]) / c.r[ref]
	return c.a[i] + c.r[i]*g - float64(g0), c.r[i] / c.r[ref]
}

// global returns the reference's reading (global time) when node i reads
// local.
func (c clocks) global(i, ref int, local int64) float64 {
	g := (float64(local) - c.a[i]) / c.r[i]
	return c.a[ref] + c.r[ref]*g
}

// graph is an undirected link list over nodes 0..n-1.
type graph struct {
	n     int
	links [][2]int
}

func mesh(n int) graph {
	g := graph{n: n}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			g.links = append(g.links, [2]int{i, j})
		}
	}
	return g
}

func ring(n int) graph {
	g := graph{n: n}
	for i := 0; i < n; i++ {
		g.links = append(g.links, [2]int{i, (i + 1) % n})
	}
	return g
}

// randomRegular draws a simple d-regular graph by the configuration model:
// stubs are paired at random, a pair making a self-loop or a repeated link
// is redrawn, and a pairing that gets stuck starts over.
func randomRegular(tb testing.TB, n, d int, seed uint64) graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	for attempt := 0; attempt < 100; attempt++ {
		stubs := make([]int, 0, n*d)
		for i := 0; i < n; i++ {
			for k := 0; k < d; k++ {
				stubs = append(stubs, i)
			}
		}
		linked := make(map[[2]int]bool)
		g := graph{n: n}
		for len(stubs) > 0 {
			ok := false
			for try := 0; try < 200 && !ok; try++ {
				i, j := rng.IntN(len(stubs)), rng.IntN(len(stubs))
				u, v := stubs[i], stubs[j]
				if u == v || linked[[2]int{min(u, v), max(u, v)}] {
					continue
				}
				linked[[2]int{min(u, v), max(u, v)}] = true
				g.links = append(g.links, [2]int{u, v})
				i, j = max(i, j), min(i, j)
				stubs[i] = stubs[len(stubs)-1]
				stubs = stubs[:len(stubs)-1]
				stubs[j] = stubs[len(stubs)-1]
				stubs = stubs[:len(stubs)-1]
				ok = true
			}
			if !ok {
				break
			}
		}
		if len(stubs) == 0 {
			return g
		}
	}
	tb.Fatalf("no %d-regular graph on %d nodes", d, n)
	return graph{}
}

// build makes a round over g's nodes with reference ref: each link gives
// the edge u→v and, when both, v→u. sigma gives each edge's (Sigma,
// AlphaSigma); with noise non-nil Beta and Alpha get Gaussian errors of
// those σ.
func build(c clocks, g graph, ref int, both bool, sigma func(e int) (float64, float64), noise *rand.Rand) graphcalc.Input {
	in := graphcalc.Input{Round: 1, Reference: ref, Origin: c.start(ref)}
	for i := 0; i < g.n; i++ {
		in.Nodes = append(in.Nodes, i)
	}
	add := func(u, v int) {
		s, as := sigma(len(in.Edges))
		e := c.edge(u, v, s, as)
		if noise != nil {
			e.Beta += s * noise.NormFloat64()
			e.Alpha += as * noise.NormFloat64()
		}
		in.Edges = append(in.Edges, e)
	}
	for _, l := range g.links {
		add(l[0], l[1])
		if both {
			add(l[1], l[0])
		}
	}
	return in
}

// flat gives every edge 10 ns and 1e-9.
func flat(int) (float64, float64) { return 10, 1e-9 }

// mixed gives edges σ from 3 to 48 ns and AlphaSigma from 1e-9 to 4e-9.
func mixed(e int) (float64, float64) {
	return 3 * float64(1+e%16), 1e-9 * float64(1+e%4)
}
