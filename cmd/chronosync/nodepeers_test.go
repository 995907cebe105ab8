package main

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/nodestatus"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// TestPeerTable: the peers of `chronosync status` (before, every node
// printed "No peers."). A node's own windows give the edges it probes:
// probes sent (two a pair) and lost summed over windows, the σ of the last
// fitted window, heard at the window's end (S made CLOCK_REALTIME), and
// ok, lost (nothing answered) or insufficient; the master's rounds add
// every other node of the round: missing (no report) and rejected (the
// solver rejected its edge with this node) override the window's state
// until the next round, and a node the master does not probe gets its own
// edge to the master from its report.
func TestPeerTable(t *testing.T) {
	const delta = 1000 // S − CLOCK_REALTIME
	edge := func(src, dst, sent, answered, lost int32, sigma float64, insufficient bool) *syncpb.EdgeAlphaBeta {
		return &syncpb.EdgeAlphaBeta{SrcNodeId: src, DstNodeId: dst, SentPairs: sent, PairsCount: answered, LostCount: lost, SigmaNs: sigma, Insufficient: insufficient}
	}
	win := func(node int32, round uint64, end int64, edges ...*syncpb.EdgeAlphaBeta) *syncpb.NodeWindowData {
		return &syncpb.NodeWindowData{NodeId: node, RoundId: round, WindowEndNs: end, Edges: edges}
	}
	now := time.Unix(500, 0).UTC()
	heard := func(end int64) time.Time { return time.Unix(0, end-delta).UTC() }
	addrs := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}
	for _, tc := range []struct {
		name    string
		self    int
		windows []*syncpb.NodeWindowData
		round   *rounds.RoundReport
		want    []nodestatus.Peer
	}{
		{
			name: "none yet", self: 1,
			want: []nodestatus.Peer{},
		},
		{
			name: "own windows summed, the last one's sigma and state", self: 1,
			windows: []*syncpb.NodeWindowData{
				win(1, 1, 10_000, edge(1, 0, 500, 499, 2, 20, false), edge(1, 2, 500, 500, 0, 30, false), edge(0, 1, 9, 9, 9, 9, false)),
				win(1, 2, 20_000, edge(1, 0, 500, 0, 1000, 0, true), edge(1, 2, 500, 3, 994, 900, true)),
			},
			want: []nodestatus.Peer{
				{Node: 0, Address: "10.0.0.1", State: "lost", LastHeard: heard(10_000), ProbesSent: 2000, ProbesLost: 1002, EdgeSigmaNS: 20},
				{Node: 2, Address: "10.0.0.3", State: "insufficient", LastHeard: heard(20_000), ProbesSent: 2000, ProbesLost: 994, EdgeSigmaNS: 30},
			},
		},
		{
			name: "the master's round: missing, rejected, a node it does not probe", self: 0,
			windows: []*syncpb.NodeWindowData{
				win(0, 1, 10_000, edge(0, 1, 500, 500, 0, 20, false), edge(0, 2, 500, 500, 0, 25, false)),
			},
			round: &rounds.RoundReport{
				Nodes: []*syncpb.NodeWindowData{
					win(0, 1, 10_000, edge(0, 1, 500, 500, 0, 20, false)),
					win(1, 1, 10_000, edge(1, 0, 500, 500, 0, 21, false)),
					win(3, 1, 10_000, edge(3, 2, 500, 500, 0, 99, false), edge(3, 0, 400, 390, 20, 40, false)),
				},
				Missing: []int{2},
				Edges: []offsets.Edge{
					{Src: 0, Dst: 1, Rejected: true}, {Src: 3, Dst: 2, Rejected: true},
				},
			},
			want: []nodestatus.Peer{
				{Node: 1, Address: "10.0.0.2", State: "rejected", LastHeard: heard(10_000), ProbesSent: 1000, EdgeSigmaNS: 20},
				{Node: 2, Address: "10.0.0.3", State: "missing", LastHeard: heard(10_000), ProbesSent: 1000, EdgeSigmaNS: 25},
				{Node: 3, Address: "10.0.0.4", State: "ok", LastHeard: now, ProbesSent: 800, ProbesLost: 20, EdgeSigmaNS: 40},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt := newPeerTable(tc.self, addrs, delta)
			for _, w := range tc.windows {
				pt.window(w)
			}
			pt.round(tc.round, now)
			got := pt.list()
			if len(got) != len(tc.want) {
				t.Fatalf("peers %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("peer %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}

	// The next window clears neither missing nor rejected until the next
	// round says otherwise.
	pt := newPeerTable(0, addrs, 0)
	pt.window(win(0, 1, 10, edge(0, 1, 5, 5, 0, 1, false)))
	pt.round(&rounds.RoundReport{Missing: []int{1}}, now)
	pt.window(win(0, 2, 20, edge(0, 1, 5, 5, 0, 1, false)))
	if s := pt.list()[0].State; s != "missing" {
		t.Errorf("after a window, before the next round: %q, want missing", s)
	}
	pt.round(&rounds.RoundReport{Nodes: []*syncpb.NodeWindowData{win(1, 2, 20)}}, now)
	if s := pt.list()[0].State; s != "ok" {
		t.Errorf("after a round it reported in: %q, want ok", s)
	}
}
