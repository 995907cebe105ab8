package graphcalc_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/chronosync/chronosync/graphcalc"
)

// TestDisconnected splits a round into two meshes of 8 and an isolated
// node: Solve returns the reference's component, solved, together with a
// *DisconnectedError naming every component.
func TestDisconnected(t *testing.T) {
	g := mesh(8)
	for _, l := range mesh(8).links {
		g.links = append(g.links, [2]int{l[0] + 8, l[1] + 8})
	}
	g.n = 17 // node 16 has no edges
	c := newClocks(g.n, rand.New(rand.NewPCG(61, 62)))
	for _, tc := range []struct {
		ref   int
		comps [][]int
		msg   string
	}{
		{0, [][]int{seq(0, 8), seq(8, 16), {16}},
			"graphcalc: round 1: probe graph is disconnected into 3 components: {0-7} (reference 0), {8-15}, {16}"},
		{9, [][]int{seq(8, 16), seq(0, 8), {16}},
			"graphcalc: round 1: probe graph is disconnected into 3 components: {8-15} (reference 9), {0-7}, {16}"},
		{16, [][]int{{16}, seq(0, 8), seq(8, 16)},
			"graphcalc: round 1: probe graph is disconnected into 3 components: {16} (reference 16), {0-7}, {8-15}"},
	} {
		in := build(c, g, tc.ref, true, flat, nil)
		s, err := graphcalc.Solve(in, graphcalc.Options{})
		var de *graphcalc.DisconnectedError
		if !errors.As(err, &de) || s == nil {
			t.Fatalf("reference %d: err %v, summary %v; want both", tc.ref, err, s != nil)
		}
		if err.Error() != tc.msg {
			t.Errorf("message\n%s\nwant\n%s", err, tc.msg)
		}
		if de.Round != 1 || de.Reference != tc.ref || !reflect.DeepEqual(de.Components, tc.comps) || !reflect.DeepEqual(s.Components, tc.comps) {
			t.Errorf("reference %d: components %v / %v, want %v", tc.ref, de.Components, s.Components, tc.comps)
		}
		if len(s.Nodes) != len(tc.comps[0]) {
			t.Fatalf("reference %d: %d models, want %d", tc.ref, len(s.Nodes), len(tc.comps[0]))
		}
		for _, id := range tc.comps[0] {
			m, ok := s.Model(id)
			u, r := c.truth(id, tc.ref)
			if !ok || math.Abs(m.U-u) > 1e-3 || math.Abs(m.Rate-r) > 1e-12 {
				t.Errorf("reference %d, node %d: %+v, want U %.3f Rate %.15f", tc.ref, id, m, u, r)
			}
		}
		for _, id := range tc.comps[1] {
			if _, ok := s.Model(id); ok {
				t.Errorf("reference %d: node %d of another component has a model", tc.ref, id)
			}
		}
		for k, e := range s.Edges {
			if e.Src != in.Edges[k].Src || e.Dst != in.Edges[k].Dst || e.Rejected || math.Abs(e.Residual) > 1e-3 {
				t.Errorf("edge %d: %+v", k, e)
			}
		}
	}
}

// TestDisconnectedRanges pins the compact naming of scattered ids.
func TestDisconnectedRanges(t *testing.T) {
	in := graphcalc.Input{Round: 3, Reference: 2, Nodes: []int{7, 0, 1, 2, 3, 5, 6, 9}}
	for _, l := range [][2]int{{2, 0}, {0, 1}, {1, 3}, {3, 5}, {9, 6}} {
		in.Edges = append(in.Edges, graphcalc.Edge{Src: l[0], Dst: l[1], Sigma: 1, AlphaSigma: 1e-9})
	}
	_, err := graphcalc.Solve(in, graphcalc.Options{})
	want := "graphcalc: round 3: probe graph is disconnected into 3 components: {0-3,5} (reference 2), {6,9}, {7}"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// seq returns lo..hi-1.
func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}
