package topology

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrInvalid is wrapped by every error this package returns for arguments
// that describe no graph.
var ErrInvalid = errors.New("topology: invalid arguments")

// Edge is a directed link from node From to node To.
type Edge struct{ From, To int }

// FullMesh returns every ordered pair of distinct nodes: n·(n−1) edges.
// n must be at least 1.
func FullMesh(n int) ([]Edge, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: FullMesh(%d): need n >= 1", ErrInvalid, n)
	}
	edges := make([]Edge, 0, n*(n-1))
	for i := range n {
		for j := range n {
			if i != j {
				edges = append(edges, Edge{i, j})
			}
		}
	}
	return edges, nil
}

// Ring returns the bidirectional ring 0–1–…–(n−1)–0: 2n edges, or 2 for
// n == 2. n must be at least 2.
func Ring(n int) ([]Edge, error) {
	if n < 2 {
		return nil, fmt.Errorf("%w: Ring(%d): need n >= 2", ErrInvalid, n)
	}
	if n == 2 {
		return []Edge{{0, 1}, {1, 0}}, nil
	}
	edges := make([]Edge, 0, 2*n)
	for i := range n {
		j := (i + 1) % n
		edges = append(edges, Edge{i, j}, Edge{j, i})
	}
	sortEdges(edges)
	return edges, nil
}

// Star returns links between hub and every other node, in both directions:
// 2(n−1) edges. n must be at least 1 and hub in [0, n).
func Star(n, hub int) ([]Edge, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: Star(%d, %d): need n >= 1", ErrInvalid, n, hub)
	}
	if hub < 0 || hub >= n {
		return nil, fmt.Errorf("%w: Star(%d, %d): hub out of range [0, %d)", ErrInvalid, n, hub, n)
	}
	edges := make([]Edge, 0, 2*(n-1))
	for i := range n {
		if i != hub {
			edges = append(edges, Edge{hub, i}, Edge{i, hub})
		}
	}
	sortEdges(edges)
	return edges, nil
}

// Neighbours returns the out-neighbours of each of the n nodes, sorted; a
// node without any has an empty, non-nil slice. It rejects edges with an
// endpoint outside [0, n), self loops and duplicates.
func Neighbours(n int, edges []Edge) ([][]int, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: Neighbours(%d, ...): need n >= 0", ErrInvalid, n)
	}
	out := make([][]int, n)
	for i := range out {
		out[i] = []int{}
	}
	for i, e := range edges {
		switch {
		case e.From < 0 || e.From >= n || e.To < 0 || e.To >= n:
			return nil, fmt.Errorf("%w: edge %d (%d→%d): node out of range [0, %d)", ErrInvalid, i, e.From, e.To, n)
		case e.From == e.To:
			return nil, fmt.Errorf("%w: edge %d (%d→%d): self loop", ErrInvalid, i, e.From, e.To)
		}
		out[e.From] = append(out[e.From], e.To)
	}
	for from, tos := range out {
		slices.Sort(tos)
		for j := 1; j < len(tos); j++ {
			if tos[j] == tos[j-1] {
				return nil, fmt.Errorf("%w: edge %d→%d: duplicate", ErrInvalid, from, tos[j])
			}
		}
	}
	return out, nil
}

// sortEdges sorts by From, then To.
func sortEdges(edges []Edge) {
	slices.SortFunc(edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
}
