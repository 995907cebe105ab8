package rounds_test

import (
	"fmt"

	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// tracerFeed is what a node's host side gives its protocol program: the
// harness's observer, extended with Model, so that the node asks the master
// for its own clock model after each round (rounds.FeatureRoundResult) and
// can correct its local tracers' timestamps.
type tracerFeed struct {
	rounds.NopObserver
	last map[world.NodeID]rounds.Model
}

// Model implements rounds.ModelObserver: it keeps the node's latest model.
func (f *tracerFeed) Model(node world.NodeID, m rounds.Model) { f.last[node] = m }

// A node's observer takes its model after each solved round; a local
// reading of the node's clock then maps to global time with the master's
// own record of the node (offsets.jsonl's line), with its σ.
func ExampleModelObserver() {
	feed := &tracerFeed{last: map[world.NodeID]rounds.Model{}}
	var obs rounds.Observer = feed
	if mo, ok := obs.(rounds.ModelObserver); ok {
		// What node 2's agent does with a RoundResult its door took.
		msg := &syncpb.RoundResult{
			RoundId: 7, SequenceNumber: 7, ReferenceNode: 0, NodeId: 2, WindowId: 7,
			WindowStartNs: 10_000_000_000, WindowEndNs: 11_000_000_000,
			OffsetNs: 1500, DriftPpm: 2, UncertaintyNs: 40, DriftUncertaintyPpm: 0.01,
		}
		mo.Model(2, rounds.Model{Offset: rounds.OffsetOfResult(msg), Reference: 0, Sequence: msg.SequenceNumber})
	}
	m := feed.last[2]
	local := int64(11_500_000_000) // half a window after the model's window
	fmt.Printf("round %d, reference node %d, status %v\n", m.Offset.RoundID, m.Reference, m.Degraded)
	fmt.Printf("local %d → global %.0f ± %.0f ns\n", local, m.Offset.Global(local), m.Offset.SigmaAt(local))
	// Output:
	// round 7, reference node 0, status ok
	// local 11500000000 → global 11499995500 ± 41 ns
}
