package syncrun

import (
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// New makes a scenario's sync adapter (engine.New): the sync protocol on
// every node of the probe graph, its run files and the ground truth.
func New(sc *scenario.Scenario, r *scenario.Resolved) (engine.Protocol, error) {
	p, err := newSyncProtocol(sc, r)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// NewTraced makes the adapter of a scenario of the sync protocol with the
// training workload (engine.New): the sync adapter, with the workload and
// the snapshot sampler beside it on every node and the traces they leave.
func NewTraced(sc *scenario.Scenario, r *scenario.Resolved) (engine.Protocol, error) {
	p, err := newTracedProtocol(sc, r)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// NewTampered is New whose tamper changes a node's report after the run
// files recorded it and before the node sends it, as a faulty or hostile
// node would: for tests of what the master's door refuses.
func NewTampered(sc *scenario.Scenario, r *scenario.Resolved, tamper func(node world.NodeID, d *syncpb.NodeWindowData)) (engine.Protocol, error) {
	p, err := newSyncProtocol(sc, r)
	if err != nil {
		return nil, err
	}
	p.tamper = tamper
	return p, nil
}
