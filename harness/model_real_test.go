//go:build linux

package harness

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/world"
)

// modelReal is three nodes in namespaces, four 500 ms rounds.
const modelReal = `name: model-real
seed: 1
duration: 4s
nodes: 3
clocks:
  nodes:
    - {node: 1, offset: 10ms, drift_ppm: 50}
    - {node: 2, offset: -3ms, drift_ppm: -20}
topology: {kind: full_mesh}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 1ms, window: 500ms, rounds: 4}
`

// TestRealNodesLearnTheirModels: on the real backend too (namespaces,
// kernel timestamps, TCP), Options.OnModel receives each node's model of
// each round, from the nodes' own goroutines, and each equals the node's
// record in offsets.jsonl.
func TestRealNodesLearnTheirModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 4 s real run")
	}
	needs.Available(t, netlab.Available())
	var mu sync.Mutex
	taken := map[[2]int]offsets.Offset{}
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Run(parse(t, modelReal), Options{Out: dir, Backend: "real", OnModel: func(node world.NodeID, m rounds.Model) {
		mu.Lock()
		defer mu.Unlock()
		taken[[2]int{int(node), int(m.Offset.RoundID)}] = m.Offset
	}})
	if err != nil {
		t.Fatal(err)
	}
	recs := rtOffsets(t, dir)
	if len(recs) == 0 {
		t.Fatal("offsets.jsonl has no records")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, rec := range recs {
		got, ok := taken[[2]int{rec.NodeID, int(rec.RoundID)}]
		if !ok {
			t.Errorf("node %d never took its model of round %d", rec.NodeID, rec.RoundID)
		} else if !reflect.DeepEqual(got, rec) {
			t.Errorf("node %d round %d: took %+v, offsets.jsonl has %+v", rec.NodeID, rec.RoundID, got, rec)
		}
	}
	if len(taken) != len(recs) {
		t.Errorf("the nodes took %d models; offsets.jsonl has %d records", len(taken), len(recs))
	}
	t.Logf("%d records, each taken by its node", len(recs))
}
