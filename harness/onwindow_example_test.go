package harness_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// ExampleOptions_onWindow feeds a node's host services as `chronosync
// node` does (cmd/chronosync/nodeservice.go): OnWindow gets each window a
// node closed, its per-edge probe stream and fits (metrics.ObserveWindow,
// the status's peers); OnStats right after, its counters
// (metrics.ObserveProbes, and on the real backend ObserveReal with
// metrics.RealStatsOf(st.World)). Both run on the node's event loop.
func ExampleOptions_onWindow() {
	sc, err := scenario.Parse("hooks.yaml", []byte(`
name: hooks
duration: 2s
nodes: 2
links:
  default: {delay: 50us}
protocol: {kind: sync, mode: rounds, estimator: regression, cadence: 10ms, window: 500ms, rounds: 2}
`))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "chronosync-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sent := map[world.NodeID]int{}
	_, err = harness.Run(sc, harness.Options{
		Out: filepath.Join(dir, "run"),
		OnWindow: func(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
			for _, e := range data.Edges {
				fmt.Printf("node %d, round %d: edge %d→%d, %d pairs sent, %d answered\n",
					node, data.RoundId, e.SrcNodeId, e.DstNodeId, e.SentPairs, e.PairsCount)
				sent[node] += int(e.SentPairs)
			}
		},
		OnStats: func(node world.NodeID, st harness.NodeStats) {
			fmt.Printf("node %d: prober's pairs sent %d (windows' %d), real world: %v\n", node, st.Probes.PairsSent, sent[node], st.World != nil)
		},
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// node 0, round 1: edge 0→1, 51 pairs sent, 50 answered
	// node 0: prober's pairs sent 51 (windows' 51), real world: false
	// node 1, round 1: edge 1→0, 51 pairs sent, 50 answered
	// node 1: prober's pairs sent 51 (windows' 51), real world: false
	// node 0, round 2: edge 0→1, 51 pairs sent, 50 answered
	// node 0: prober's pairs sent 102 (windows' 102), real world: false
	// node 1, round 2: edge 1→0, 51 pairs sent, 50 answered
	// node 1: prober's pairs sent 102 (windows' 102), real world: false
}
