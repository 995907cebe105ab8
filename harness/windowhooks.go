package harness

import (
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// NodeStats are one node's counters after a window it closed, as
// Options.OnStats gets them: totals since the node's current incarnation
// started (its prober's and its protocol's) or since the world started
// (World's getters), not increments.
type NodeStats struct {
	// Probes are the node's prober's counters (probe.Prober.Stats): pairs
	// sent, replies taken and dropped by reason, where t3 came from.
	Probes probe.Stats
	// Protocol are the node's protocol counters (rounds.Node.Stats):
	// models taken, results dropped by reason, unknown messages.
	Protocol rounds.NodeStats
	// World is the real backend's world the node runs in, nil in the
	// simulator: read its counters (metrics.RealStatsOf: timer lateness,
	// datagrams dropped by reason, timestamp sources) and call nothing
	// else on it. Its getters are safe from any goroutine.
	World *real.World
}

// realWorldBackend is implemented by the real backend (realrun.go, Linux
// only): the world its nodes run in.
type realWorldBackend interface {
	realWorld() *real.World
}

// realWorldOf is w's real world, or nil (the simulator).
func realWorldOf(w truth) *real.World {
	if rw, ok := w.(realWorldBackend); ok {
		return rw.realWorld()
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
