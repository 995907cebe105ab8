package engine

import (
	"io"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// Hooks are what the caller of a run observes of a sync run as it goes
// (harness.Options' OnModel, OnRound, OnWindow and OnStats, which say
// when each is called). Each runs on a node's event loop, must return
// quickly and must not call back into the run; a nil hook is not called.
type Hooks struct {
	// OnModel gets each clock model a node takes (rounds.ModelObserver).
	OnModel func(node world.NodeID, m rounds.Model)
	// OnRound gets each round the master gathered, once it is in the run
	// files (rounds.Observer.Round).
	OnRound func(r *rounds.RoundReport)
	// OnWindow gets each window a node closed, once it is in probes.bin
	// (rounds.Observer.Window).
	OnWindow func(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData)
	// OnStats gets the node's counters right after OnWindow.
	OnStats func(node world.NodeID, st NodeStats)
}

// Hooked is a protocol that calls Hooks: the root hands it the run's
// before the backend starts.
type Hooked interface {
	SetHooks(h Hooks)
}

// InPlacer is a protocol that can run in place, a run until stopped: it
// writes into the run directory from the start, continues what an earlier
// incarnation wrote there, rotates its files when they reach rotateBytes
// (0: its default) and says so in runLog, the run's log. The root calls
// RunInPlace before Attach, and refuses to run in place a protocol that
// is not one.
type InPlacer interface {
	RunInPlace(rotateBytes int64, runLog io.Writer)
}

// Estimator is a protocol that re-ran estimators over its run's probe
// stream: the root puts Estimates in the run's result (not in
// summary.json: they hold wall times, which vary between equal runs).
type Estimator[R any] interface {
	Estimates() []R
}

// NodeStats are one node's counters after a window it closed, as
// Hooks.OnStats gets them: totals since the node's current incarnation
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

// RealWorlder is the real backend as the Truth an adapter attaches to: the
// world its nodes run in (the simulator's backend is none).
type RealWorlder interface {
	RealWorld() *real.World
}
