package harness

import (
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// TestOnWindow: Options.OnWindow, the hook a real node feeds its per-edge
// metrics and its status's peers through, gets every window every node
// closed (each window truth.jsonl records, the same round, node and
// window), with the probe blocks of its out-edges; Options.OnStats follows
// it on the same node with the node's prober counters, whose pairs sent
// are the sum of the windows' sent pairs so far (and no real world in the
// simulator); and a run with both hooks is the run without them, event
// for event (the same event-log hash): they send nothing.
func TestOnWindow(t *testing.T) {
	hashes := map[bool]string{}
	for _, tc := range []struct {
		name  string
		hooks bool
	}{
		{"with the hooks", true},
		{"without", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := rtParse(t, "onwindow", rtMesh4Scenario("onwindow", "2s", "  mode: rounds\n  rounds: 4\n"))
			dir := filepath.Join(t.TempDir(), "run")
			type window struct {
				node          world.NodeID
				round, window uint64
				blocks, edges int
				probes        int
			}
			var got []window
			sent := map[world.NodeID]int{} // the windows' sent pairs so far
			last := world.NodeID(-1)       // the node of the last OnWindow
			stats := 0
			opts := Options{Out: dir}
			if tc.hooks {
				opts.OnWindow = func(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
					w := window{node: node, round: data.RoundId, window: data.WindowId, blocks: len(blocks), edges: len(data.Edges)}
					for _, b := range blocks {
						w.probes += len(b.Probes)
					}
					for _, e := range data.Edges {
						sent[node] += int(e.SentPairs)
					}
					got = append(got, w)
					last = node
				}
				opts.OnStats = func(node world.NodeID, st NodeStats) {
					stats++
					if node != last {
						t.Errorf("OnStats for node %d right after OnWindow for node %d", node, last)
					}
					if st.World != nil {
						t.Errorf("node %d: NodeStats.World is %p in the simulator, want nil", node, st.World)
					}
					if st.Probes.PairsSent != sent[node] || st.Probes.PairsSent == 0 {
						t.Errorf("node %d: prober's pairs sent %d, the windows' sent pairs so far %d: want equal, above 0", node, st.Probes.PairsSent, sent[node])
					}
				}
			}
			res, err := Run(sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			hashes[tc.hooks] = res.Manifest.EventHash
			if !tc.hooks {
				return
			}
			truth := rtTruth(t, dir)
			if len(got) != len(truth) || len(got) < 4*4 || stats != len(got) {
				t.Fatalf("OnWindow got %d windows, OnStats %d; truth.jsonl has %d: want equal, at least 16 (4 nodes, 4 rounds)", len(got), stats, len(truth))
			}
			for i, w := range truth {
				g := got[i]
				if int(g.node) != w.Node || g.round != w.Round {
					t.Errorf("window %d: OnWindow got node %d round %d; truth.jsonl: node %d round %d", i, g.node, g.round, w.Node, w.Round)
				}
				if g.blocks != 3 || g.edges != 3 || g.probes == 0 {
					t.Errorf("window %d (node %d, round %d): %d blocks, %d edges, %d probes; want 3 out-edges' of a 4-node mesh, with probes", i, g.node, g.round, g.blocks, g.edges, g.probes)
				}
			}
		})
	}
	if hashes[true] == "" || hashes[true] != hashes[false] {
		t.Errorf("event hash %q with the hooks, %q without: want one run", hashes[true], hashes[false])
	}
}
