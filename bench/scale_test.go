package bench

import (
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// TestScaleScenarios checks that the scale scenarios (bench/scale: make
// scale's, and the 10,000-node one run by name) load and are what their
// names say: the sync protocol for two rounds on that many nodes and that
// topology.
func TestScaleScenarios(t *testing.T) {
	cases := []struct {
		file     string
		nodes    int
		topology string
		edges    int64
	}{
		{"scale-mesh64.yaml", 64, "full_mesh", 64 * 63},
		{"scale-rr256.yaml", 256, "random_regular", 256 * 8},
		{"scale-rr1024.yaml", 1024, "random_regular", 1024 * 8},
		{"scale-rr10k.yaml", 10000, "random_regular", 10000 * 8},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			sc, err := scenario.Load(filepath.Join("scale", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if sc.Nodes != c.nodes || string(sc.Topology.Kind) != c.topology || sc.EdgeCount() != c.edges {
				t.Errorf("%d nodes, topology %s, %d edges; want %d, %s, %d", sc.Nodes, sc.Topology.Kind, sc.EdgeCount(), c.nodes, c.topology, c.edges)
			}
			if sc.Protocol.Kind != scenario.ProtocolSync || sc.Protocol.Sync.Rounds != 2 {
				t.Errorf("protocol %s with %d rounds; want sync, 2", sc.Protocol.Kind, sc.Protocol.Sync.Rounds)
			}
		})
	}
}
