package real

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/world"
)

// Config is everything the real world needs. All values are concrete:
// random scenario values have been drawn already.
type Config struct {
	// Seed derives the nodes' Rand streams and the clock models' wander.
	Seed  uint64
	Nodes []NodeConfig
	// Peers[i] are node i's out-neighbours (sorted by New). Nil means every
	// other node.
	Peers [][]world.NodeID
	// Log receives every node's log records (log/slog text, stamped with
	// the run's true time); nil discards them. The nodes' loggers share one
	// handler, which writes each record in one Write under its own lock.
	Log      io.Writer
	LogLevel slog.Level
	// LogJSON writes Log's records as JSON lines instead of text.
	LogJSON bool
	// Serialize makes all nodes' callbacks mutually exclusive (see the
	// package doc).
	Serialize bool
	// Local lists the nodes this process runs; nil runs every node. The
	// others are reached at their addresses (multi-host mode).
	Local []world.NodeID
	// UnixEpoch makes true time CLOCK_REALTIME since the Unix epoch, the
	// same in every process, instead of time since the world was built.
	// Injected drift and wander would then be evaluated at ~1.8e18 ns, so
	// only constant offsets (and steps) may be injected.
	UnixEpoch bool
	// Key, if not nil, is the cluster's shared key: every datagram and
	// stream frame is sealed with it (package auth), and what does not
	// open under it is dropped and counted (World.AuthDrops). Nil runs
	// the cluster unauthenticated: only the nodes' addresses are checked.
	Key *auth.Key
}

// NodeConfig is one node: its clocks, its address and the namespace its
// sockets live in.
type NodeConfig struct {
	// Clock is the injected host-clock model; its read noise and
	// granularity are not applied (the OS clock has its own).
	Clock clockmodel.Params
	// Tracer is the injected tracer-clock model, applied to
	// CLOCK_MONOTONIC_RAW, unless TracerClock is set.
	Tracer clockmodel.TracerParams
	// TracerClock, if not nil, is read for the tracer clock R instead
	// (the ROCm HSA timestamp, in nanoseconds).
	TracerClock func() int64
	// Addr is the node's IP address; datagrams and streams to world.Addr
	// {Node: i, Port: p} go to Addr:p.
	Addr netip.Addr
	// Enter, if not nil, runs f with the calling goroutine on a locked OS
	// thread inside the node's network namespace; every socket of the node
	// is opened through it. Nil opens sockets in the caller's namespace.
	Enter func(f func() error) error
}

func (c *Config) validate() error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("real: no nodes")
	}
	seen := make(map[netip.Addr]int, len(c.Nodes))
	for i, n := range c.Nodes {
		if !n.Addr.IsValid() {
			return fmt.Errorf("real: node %d has no address", i)
		}
		if err := CheckUnicast(n.Addr); err != nil {
			return fmt.Errorf("real: node %d: %w", i, err)
		}
		a := CanonicalAddr(n.Addr)
		if j, dup := seen[a]; dup {
			return fmt.Errorf("real: nodes %d and %d share the address %s (given as %s and %s)", j, i, a, c.Nodes[j].Addr, n.Addr)
		}
		seen[a] = i
		if err := n.Clock.Validate(); err != nil {
			return fmt.Errorf("real: node %d clock: %w", i, err)
		}
		if err := n.Tracer.Validate(); err != nil {
			return fmt.Errorf("real: node %d tracer: %w", i, err)
		}
	}
	local := make(map[world.NodeID]bool, len(c.Local))
	for _, id := range c.Local {
		if id < 0 || int(id) >= len(c.Nodes) || local[id] {
			return fmt.Errorf("real: local node %d: want each of the %d nodes at most once", id, len(c.Nodes))
		}
		local[id] = true
	}
	if c.UnixEpoch {
		for i, n := range c.Nodes {
			if n.Clock.PPM != 0 || n.Clock.WanderPPM != 0 || n.Clock.PeriodicPPM != 0 || n.Tracer.PPM != 0 {
				return fmt.Errorf("real: node %d: with true time on the Unix epoch only constant clock offsets can be injected, not drift, wander or periodic variation", i)
			}
		}
	}
	if c.Peers != nil && len(c.Peers) != len(c.Nodes) {
		return fmt.Errorf("real: %d peer lists for %d nodes", len(c.Peers), len(c.Nodes))
	}
	for i, ps := range c.Peers {
		for _, p := range ps {
			if p < 0 || int(p) >= len(c.Nodes) || int(p) == i {
				return fmt.Errorf("real: node %d has peer %d: want another of the %d nodes", i, p, len(c.Nodes))
			}
		}
	}
	return nil
}
