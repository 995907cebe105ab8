package syncrun

import (
	"io"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// NodeStats are one node's counters after a window it closed, as
// Options.OnStats gets them (engine.NodeStats).
type NodeStats = engine.NodeStats

// realWorldOf is w's real world (engine.RealWorlder), or nil (the
// simulator).
func realWorldOf(w engine.Truth) *real.World {
	if rw, ok := w.(engine.RealWorlder); ok {
		return rw.RealWorld()
	}
	return nil
}

// setCurrent records n as node id's current incarnation. Each node's
// entry is written by its own boot and read on its own loop only.
func (p *syncProtocol) setCurrent(id world.NodeID, n *rounds.Node) {
	if int(id) >= len(p.current) {
		// Sized once, before any node runs (p.boots has every node).
		p.current = append(p.current, make([]*rounds.Node, max(len(p.boots), int(id)+1)-len(p.current))...)
	}
	p.current[id] = n
}

// windowHooks hands a window node closed to Options.OnWindow, then the
// node's counters to Options.OnStats. Neither hook sends, draws a random
// value or sets a timer, so a run with them is the run without them (the
// same event log).
func (p *syncProtocol) windowHooks(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
	if p.onWindow != nil {
		p.onWindow(node, blocks, data)
	}
	if p.onStats == nil {
		return
	}
	st := NodeStats{World: p.realWorld}
	if int(node) < len(p.current) {
		if n := p.current[node]; n != nil {
			st.Protocol = n.Stats()
			if pr := n.Prober(); pr != nil {
				st.Probes = pr.Stats()
			}
		}
	}
	p.onStats(node, st)
}

// SetHooks takes the run's hooks (engine.Hooked).
func (p *syncProtocol) SetHooks(h engine.Hooks) {
	p.onModel, p.onRound = h.OnModel, h.OnRound
	p.onWindow, p.onStats = h.OnWindow, h.OnStats
}

// RunInPlace makes the run one until stopped (engine.InPlacer): see
// runfiles.go.
func (p *syncProtocol) RunInPlace(rotateBytes int64, runLog io.Writer) {
	p.inPlace, p.rotateBytes, p.runLog = true, rotateBytes, runLog
}

// Estimates are the offline estimates with their GraphCalc wall times
// (engine.Estimator).
func (p *syncProtocol) Estimates() []EstimateResult { return p.graphcalc }

var (
	_ engine.Hooked                    = (*syncProtocol)(nil)
	_ engine.InPlacer                  = (*syncProtocol)(nil)
	_ engine.Estimator[EstimateResult] = (*syncProtocol)(nil)
)
