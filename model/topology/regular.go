package topology

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// switchesPerEdge is the number of accepted double-edge switches per
// undirected edge; attempts are capped at maxAttemptsPerEdge per edge.
const (
	switchesPerEdge    = 10
	maxAttemptsPerEdge = 100
)

// RandomRegular returns a random simple undirected k-regular graph on n
// nodes, each link emitted in both directions (n·k edges). It needs n >= 1,
// 0 <= k < n and n·k even. The graph is a function of the draws from rng.
func RandomRegular(n, k int, rng *rand.Rand) ([]Edge, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: RandomRegular(%d, %d): need n >= 1", ErrInvalid, n, k)
	case int64(n) > 1<<32:
		return nil, fmt.Errorf("%w: RandomRegular(%d, %d): need n <= 2^32", ErrInvalid, n, k)
	case k < 0 || k >= n:
		return nil, fmt.Errorf("%w: RandomRegular(%d, %d): need 0 <= k < n", ErrInvalid, n, k)
	case n*k%2 != 0:
		return nil, fmt.Errorf("%w: RandomRegular(%d, %d): n·k is odd, so no k-regular graph exists", ErrInvalid, n, k)
	case rng == nil:
		return nil, errors.New("topology: RandomRegular: rng is nil")
	}
	complement := k > (n-1)/2
	if complement {
		k = n - 1 - k
	}
	g := circulant(n, k)
	g.shuffle(rng)
	if complement {
		g = g.complement()
	}
	return g.directed(), nil
}

// graph is a simple undirected graph: an edge list and a membership set.
type graph struct {
	n     int
	edges [][2]int
	set   map[uint64]struct{} // membership only; never iterated
}

func newGraph(n, capacity int) *graph {
	return &graph{n: n, edges: make([][2]int, 0, capacity), set: make(map[uint64]struct{}, capacity)}
}

func key(u, v int) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(v)
}

func (g *graph) has(u, v int) bool { _, ok := g.set[key(u, v)]; return ok }

func (g *graph) add(u, v int) {
	g.edges = append(g.edges, [2]int{u, v})
	g.set[key(u, v)] = struct{}{}
}

// circulant returns the k-regular graph linking each node to the k/2
// nearest on either side, and for odd k (so even n) to the opposite node.
func circulant(n, k int) *graph {
	g := newGraph(n, n*k/2)
	for d := 1; d <= k/2; d++ {
		for i := range n {
			g.add(i, (i+d)%n)
		}
	}
	if k%2 == 1 {
		for i := range n / 2 {
			g.add(i, i+n/2)
		}
	}
	return g
}

// shuffle applies random double-edge switches {a,b},{c,d} → {a,d},{c,b},
// rejecting those that would make a self loop or a duplicate.
func (g *graph) shuffle(rng *rand.Rand) {
	m := len(g.edges)
	if m < 2 {
		return
	}
	for accepted, attempts := 0, 0; accepted < switchesPerEdge*m && attempts < maxAttemptsPerEdge*m; attempts++ {
		i, j := rng.IntN(m), rng.IntN(m)
		a, b := g.edges[i][0], g.edges[i][1]
		c, d := g.edges[j][0], g.edges[j][1]
		if rng.IntN(2) == 1 {
			c, d = d, c
		}
		if i == j || a == d || c == b || g.has(a, d) || g.has(c, b) {
			continue
		}
		delete(g.set, key(a, b))
		delete(g.set, key(c, d))
		g.set[key(a, d)] = struct{}{}
		g.set[key(c, b)] = struct{}{}
		g.edges[i], g.edges[j] = [2]int{a, d}, [2]int{c, b}
		accepted++
	}
}

// complement returns the graph of the node pairs g does not link.
func (g *graph) complement() *graph {
	c := newGraph(g.n, g.n*(g.n-1)/2-len(g.edges))
	for u := range g.n {
		for v := u + 1; v < g.n; v++ {
			if !g.has(u, v) {
				c.add(u, v)
			}
		}
	}
	return c
}

// directed returns both directions of every edge, sorted.
func (g *graph) directed() []Edge {
	out := make([]Edge, 0, 2*len(g.edges))
	for _, e := range g.edges {
		out = append(out, Edge{e[0], e[1]}, Edge{e[1], e[0]})
	}
	sortEdges(out)
	return out
}
