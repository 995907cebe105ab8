package topology

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGenerators(t *testing.T) {
	tests := []struct {
		name      string
		gen       func() ([]Edge, error)
		n         int
		edges     int
		outDegree func(node int) int
	}{
		{"mesh 1", func() ([]Edge, error) { return FullMesh(1) }, 1, 0, func(int) int { return 0 }},
		{"mesh 2", func() ([]Edge, error) { return FullMesh(2) }, 2, 2, func(int) int { return 1 }},
		{"mesh 7", func() ([]Edge, error) { return FullMesh(7) }, 7, 42, func(int) int { return 6 }},
		{"ring 2", func() ([]Edge, error) { return Ring(2) }, 2, 2, func(int) int { return 1 }},
		{"ring 3", func() ([]Edge, error) { return Ring(3) }, 3, 6, func(int) int { return 2 }},
		{"ring 10", func() ([]Edge, error) { return Ring(10) }, 10, 20, func(int) int { return 2 }},
		{"star 1", func() ([]Edge, error) { return Star(1, 0) }, 1, 0, func(int) int { return 0 }},
		{"star 5 hub 0", func() ([]Edge, error) { return Star(5, 0) }, 5, 8, hubDegree(0, 4)},
		{"star 6 hub 4", func() ([]Edge, error) { return Star(6, 4) }, 6, 10, hubDegree(4, 5)},
		{"regular 1,0", func() ([]Edge, error) { return RandomRegular(1, 0, rng(1)) }, 1, 0, func(int) int { return 0 }},
		{"regular 10,3", func() ([]Edge, error) { return RandomRegular(10, 3, rng(1)) }, 10, 30, func(int) int { return 3 }},
		{"regular 9,4", func() ([]Edge, error) { return RandomRegular(9, 4, rng(1)) }, 9, 36, func(int) int { return 4 }},
		{"regular 50,1", func() ([]Edge, error) { return RandomRegular(50, 1, rng(1)) }, 50, 50, func(int) int { return 1 }},
		{"regular 12,8 (complement)", func() ([]Edge, error) { return RandomRegular(12, 8, rng(1)) }, 12, 96, func(int) int { return 8 }},
		{"regular 6,5 (complete)", func() ([]Edge, error) { return RandomRegular(6, 5, rng(1)) }, 6, 30, func(int) int { return 5 }},
		{"regular 200,7", func() ([]Edge, error) { return RandomRegular(200, 7, rng(1)) }, 200, 1400, func(int) int { return 7 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edges, err := tt.gen()
			if err != nil {
				t.Fatal(err)
			}
			if len(edges) != tt.edges {
				t.Fatalf("%d edges, want %d", len(edges), tt.edges)
			}
			nb := checkSimple(t, tt.n, edges)
			checkSymmetric(t, edges)
			for i, out := range nb {
				if len(out) != tt.outDegree(i) {
					t.Errorf("node %d: out-degree %d, want %d", i, len(out), tt.outDegree(i))
				}
			}
			if !strings.HasPrefix(tt.name, "regular") && !connected(nb) {
				t.Errorf("not connected: %v", nb)
			}
		})
	}
}

// hubDegree is the out-degree function of a star: deg at hub, 1 elsewhere.
func hubDegree(hub, deg int) func(int) int {
	return func(i int) int {
		if i == hub {
			return deg
		}
		return 1
	}
}

func TestRingNeighbours(t *testing.T) {
	edges, err := Ring(5)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Neighbours(5, edges)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 4}, {0, 2}, {1, 3}, {2, 4}, {0, 3}}
	for i := range want {
		if !slices.Equal(nb[i], want[i]) {
			t.Errorf("node %d: neighbours %v, want %v", i, nb[i], want[i])
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	tests := []struct {
		name string
		gen  func() ([]Edge, error)
		want string
	}{
		{"mesh 0", func() ([]Edge, error) { return FullMesh(0) }, "FullMesh(0)"},
		{"mesh negative", func() ([]Edge, error) { return FullMesh(-3) }, "FullMesh(-3)"},
		{"ring 1", func() ([]Edge, error) { return Ring(1) }, "Ring(1): need n >= 2"},
		{"star 0", func() ([]Edge, error) { return Star(0, 0) }, "Star(0, 0)"},
		{"star hub too big", func() ([]Edge, error) { return Star(4, 4) }, "hub out of range"},
		{"star hub negative", func() ([]Edge, error) { return Star(4, -1) }, "hub out of range"},
		{"regular n 0", func() ([]Edge, error) { return RandomRegular(0, 0, rng(1)) }, "need n >= 1"},
		{"regular k = n", func() ([]Edge, error) { return RandomRegular(4, 4, rng(1)) }, "need 0 <= k < n"},
		{"regular k negative", func() ([]Edge, error) { return RandomRegular(4, -1, rng(1)) }, "need 0 <= k < n"},
		{"regular odd n·k", func() ([]Edge, error) { return RandomRegular(5, 3, rng(1)) }, "n·k is odd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edges, err := tt.gen()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an ErrInvalid error containing %q", edges, err, tt.want)
			}
		})
	}
	if _, err := RandomRegular(4, 2, nil); err == nil {
		t.Error("RandomRegular with nil rng: no error")
	}
}

func TestNeighboursRejects(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []Edge
		want  string
	}{
		{"negative n", -1, nil, "need n >= 0"},
		{"out of range", 3, []Edge{{0, 1}, {1, 3}}, "edge 1 (1→3): node out of range"},
		{"negative node", 3, []Edge{{-1, 1}}, "edge 0 (-1→1): node out of range"},
		{"self loop", 3, []Edge{{2, 2}}, "self loop"},
		{"duplicate", 3, []Edge{{0, 2}, {0, 1}, {0, 2}}, "edge 0→2: duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Neighbours(tt.n, tt.edges)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
	nb, err := Neighbours(3, []Edge{{2, 0}, {0, 2}, {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1, 2}, {}, {0}}; !slices.EqualFunc(nb, want, slices.Equal) || nb[1] == nil {
		t.Errorf("Neighbours = %#v, want %#v", nb, want)
	}
}

func TestRandomRegularDeterminism(t *testing.T) {
	for _, c := range []struct{ n, k int }{{20, 3}, {30, 4}, {16, 11}} {
		a, err := RandomRegular(c.n, c.k, rng(42))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := RandomRegular(c.n, c.k, rng(42))
		if !slices.Equal(a, b) {
			t.Errorf("n=%d k=%d: same seed, different graphs", c.n, c.k)
		}
		other, _ := RandomRegular(c.n, c.k, rng(43))
		if slices.Equal(a, other) {
			t.Errorf("n=%d k=%d: seeds 42 and 43 give the same graph", c.n, c.k)
		}
	}
}

func TestRandomRegularIsRandomized(t *testing.T) {
	// Over many seeds, every pair of nodes should be linked some time, not
	// just the pairs of the circulant starting graph.
	const n, k = 12, 3
	linked := make(map[Edge]bool)
	for seed := range uint64(200) {
		edges, err := RandomRegular(n, k, rng(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range edges {
			linked[e] = true
		}
	}
	if want := n * (n - 1); len(linked) != want {
		t.Errorf("%d of %d ordered pairs ever linked over 200 seeds", len(linked), want)
	}
}

func FuzzRandomRegular(f *testing.F) {
	for _, c := range []struct{ n, k int }{{1, 0}, {2, 1}, {10, 3}, {9, 4}, {12, 8}, {5, 3}} {
		f.Add(c.n, c.k, uint64(1))
	}
	f.Fuzz(func(t *testing.T, n, k int, seed uint64) {
		if n > 300 || n < -5 {
			t.Skip()
		}
		edges, err := RandomRegular(n, k, rng(seed))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		nb := checkSimple(t, n, edges)
		for i, out := range nb {
			if len(out) != k {
				t.Fatalf("node %d: degree %d, want %d", i, len(out), k)
			}
		}
	})
}
