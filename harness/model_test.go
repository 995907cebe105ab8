package harness

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/world"
)

// TestNodesLearnTheirModels: in every mode each node takes its own clock
// model after each round (Options.OnModel, the hook a real node publishes
// through), and what it takes is, record for record, the master's line for
// it in offsets.jsonl: a node's view of its clock equals the run's file.
// In rounds mode the nodes other than the master also see the round's
// latency (ROUND_END to the next ROUND_START) on their own clocks, but for
// the last round, which no ROUND_START follows.
func TestNodesLearnTheirModels(t *testing.T) {
	for _, tc := range []struct {
		mode, protocol, duration string
		latency                  bool // the nodes see the round latency
	}{
		{"rounds", "  mode: rounds\n  rounds: 4\n", "2s", true},
		{"windows", "  mode: windows\n  rounds: 4\n", "2s", false},
		{"consensus", "  mode: consensus\n  consensus_gain: 0.8\n  rounds: 4\n", "2s", false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			name := "model-" + tc.mode
			sc := rtParse(t, name, rtMesh4Scenario(name, tc.duration, tc.protocol))
			dir := filepath.Join(t.TempDir(), "run")
			models := map[world.NodeID][]rounds.Model{}
			_, err := Run(sc, Options{Out: dir, OnModel: func(node world.NodeID, m rounds.Model) {
				models[node] = append(models[node], m)
			}})
			if err != nil {
				t.Fatal(err)
			}
			recs := rtOffsets(t, dir)
			if len(recs) != 4*4 {
				t.Fatalf("offsets.jsonl has %d records; want 4 nodes × 4 rounds", len(recs))
			}
			taken := map[string]offsets.Offset{}
			n := 0
			for node, ms := range models {
				for _, m := range ms {
					if m.Offset.NodeID != int(node) {
						t.Errorf("node %d took node %d's model", node, m.Offset.NodeID)
					}
					if m.Reference != int(sc.Protocol.Sync.Reference) {
						t.Errorf("node %d: reference %d, want %d", node, m.Reference, sc.Protocol.Sync.Reference)
					}
					taken[fmt.Sprint(node, "/", m.Offset.RoundID)] = m.Offset
					n++
				}
			}
			last := map[int]offsets.Offset{}
			for _, rec := range recs {
				last[rec.NodeID] = rec
				got, ok := taken[fmt.Sprint(rec.NodeID, "/", rec.RoundID)]
				if !ok {
					t.Errorf("node %d never took its model of round %d", rec.NodeID, rec.RoundID)
					continue
				}
				if !reflect.DeepEqual(got, rec) {
					t.Errorf("node %d round %d: took\n %+v\noffsets.jsonl has\n %+v", rec.NodeID, rec.RoundID, got, rec)
				}
			}
			if n != len(recs) {
				t.Errorf("the nodes took %d models; offsets.jsonl has %d records", n, len(recs))
			}
			for node, rec := range last {
				ms := models[world.NodeID(node)]
				if len(ms) == 0 || !reflect.DeepEqual(ms[len(ms)-1].Offset, rec) {
					t.Errorf("node %d: its last model is not offsets.jsonl's last record for it, %+v", node, rec)
				}
			}
			if tc.latency {
				for node, ms := range models {
					if node == world.NodeID(sc.Protocol.Sync.Master) {
						continue
					}
					// The last round has no next ROUND_START.
					if m := ms[len(ms)-2]; m.RoundLatency <= 0 {
						t.Errorf("node %d: round %d latency %v; want > 0", node, m.Offset.RoundID, m.RoundLatency)
					}
				}
			}
		})
	}
}
