package topology

import (
	"math/rand/v2"
	"testing"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x70b0)) }

// checkSimple fails the test unless edges are sorted by (From, To), within
// [0, n), free of self loops and duplicates, and returns the out-neighbours.
func checkSimple(t *testing.T, n int, edges []Edge) [][]int {
	t.Helper()
	for i := 1; i < len(edges); i++ {
		a, b := edges[i-1], edges[i]
		if a.From > b.From || a.From == b.From && a.To >= b.To {
			t.Fatalf("edges %d, %d out of order or duplicate: %v, %v", i-1, i, a, b)
		}
	}
	nb, err := Neighbours(n, edges)
	if err != nil {
		t.Fatalf("Neighbours: %v", err)
	}
	return nb
}

// checkSymmetric fails the test unless every edge has its reverse.
func checkSymmetric(t *testing.T, edges []Edge) {
	t.Helper()
	set := make(map[Edge]bool, len(edges))
	for _, e := range edges {
		set[e] = true
	}
	for _, e := range edges {
		if !set[Edge{e.To, e.From}] {
			t.Fatalf("edge %v has no reverse", e)
		}
	}
}

// connected reports whether every node is reachable from node 0.
func connected(nb [][]int) bool {
	if len(nb) == 0 {
		return true
	}
	seen := make([]bool, len(nb))
	seen[0] = true
	queue, count := []int{0}, 1
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range nb[u] {
			if !seen[v] {
				seen[v] = true
				count++
				queue = append(queue, v)
			}
		}
	}
	return count == len(nb)
}
