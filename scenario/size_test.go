package scenario

import (
	"strings"
	"testing"
)

// TestSizeLimits: scenarios too large for any machine are refused by
// Validate, from their counts alone, before anything is built (these
// crashed `scenario check` with "out of memory" in topology.FullMesh);
// a duration beyond an int64 of ns is "too large", not malformed.
func TestSizeLimits(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"two billion nodes", "nodes: 2000000000\ntopology: {kind: ring}\n", "nodes: 2000000000 nodes: too large; expected at most 4194304"},
		{"full mesh of a million", "nodes: 1000000\ntopology: {kind: full_mesh}\n", "full_mesh on 1000000 nodes has 999999000000 directed edges: too many; expected at most 67108864"},
		{"delay overflows", "nodes: 2\nlinks:\n  default: {delay: 2562048h}\n", `duration "2562048h" too large; expected at most 2562047h47m16.854775807s`},
		{"sum overflows", "nodes: 2\nlinks:\n  default: {delay: 2562047h60m}\n", `duration "2562047h60m" too large`},
		{"malformed", "nodes: 2\nlinks:\n  default: {delay: 5}\n", `malformed duration "5"`},
		{"ring of a million", "nodes: 1000000\ntopology: {kind: ring}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte("name: s\nduration: 1s\n"+tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEdgeCount(t *testing.T) {
	for _, tc := range []struct {
		top   Topology
		nodes int
		want  int64
	}{
		{Topology{Kind: FullMesh}, 4, 12},
		{Topology{Kind: Ring}, 2, 2},
		{Topology{Kind: Ring}, 5, 10},
		{Topology{Kind: Star}, 5, 8},
		{Topology{Kind: RandomRegular, Degree: 3}, 10, 30},
		{Topology{Kind: FullMesh}, MaxNodes, int64(MaxNodes) * (MaxNodes - 1)},
		{Topology{Kind: FullMesh}, MaxNodes + 1, 0},
	} {
		s := &Scenario{Nodes: tc.nodes, Topology: tc.top}
		if got := s.EdgeCount(); got != tc.want {
			t.Errorf("%s on %d nodes: %d edges, want %d", tc.top.Kind, tc.nodes, got, tc.want)
		}
		if tc.nodes <= 10 {
			r, err := s.topologyEdges(1)
			if err == nil && int64(len(r)) != tc.want {
				t.Errorf("%s on %d nodes: EdgeCount %d, the topology has %d", tc.top.Kind, tc.nodes, tc.want, len(r))
			}
		}
	}
}
