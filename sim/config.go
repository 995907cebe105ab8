package sim

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
)

// Config is everything the simulator needs to build a world. All values
// are concrete: random scenario values have been drawn already.
type Config struct {
	// Seed derives every random stream of the run (see package rng).
	Seed  uint64
	Nodes []NodeConfig
	// Links are the topology's directed edges. Node pairs without an edge
	// can still reach each other over a link with DefaultLink's parameters
	// (the "rest of the network"), created when first used.
	Links       []LinkConfig
	DefaultLink netem.Params
	Faults      []Fault
	// StreamTimeout is how long a stream whose path is cut (partition,
	// link down) takes to break; 0 means 1s.
	StreamTimeout time.Duration
	// NICRate is every node's network interface rate in bits per second,
	// 0 for none: a node's stream messages leave it one after another at
	// that rate and arrive at their receiver one after another at it
	// (see stream.deliver); datagrams keep their links' model.
	NICRate uint64
}

// NodeConfig is one node's clocks.
type NodeConfig struct {
	Clock  clockmodel.Params
	Tracer clockmodel.TracerParams
}

// LinkConfig is one directed link of the topology.
type LinkConfig struct {
	From, To int
	Params   netem.Params
}

// FaultKind names a kind of fault.
type FaultKind string

// The fault kinds.
const (
	Crash     FaultKind = "crash"      // Node crashes; restarts after RestartAfter if > 0
	Partition FaultKind = "partition"  // Groups cannot reach each other until HealAfter (0: never)
	LinkFlap  FaultKind = "link_flap"  // From→To (and back if Both) goes Down, Up, Count times
	ClockStep FaultKind = "clock_step" // Node's host clock jumps By
	SlowNode  FaultKind = "slow_node"  // Node's callbacks run ExtraDelay late for For
)

// Fault is one scheduled fault. Which fields matter depends on Kind.
type Fault struct {
	At   time.Duration
	Kind FaultKind
	Node int

	RestartAfter time.Duration

	// Groups partition the nodes; a node in no group is alone in a group
	// of its own.
	Groups    [][]int
	HealAfter time.Duration

	From, To int
	Both     bool
	Down, Up time.Duration
	Count    int

	By time.Duration

	ExtraDelay time.Duration
	For        time.Duration
}

func (c *Config) validate() error {
	n := len(c.Nodes)
	if n == 0 {
		return fmt.Errorf("no nodes")
	}
	node := func(what string, i int) error {
		if i < 0 || i >= n {
			return fmt.Errorf("%s: node %d does not exist (nodes 0..%d)", what, i, n-1)
		}
		return nil
	}
	for i, l := range c.Links {
		if err := node(fmt.Sprintf("link %d from", i), l.From); err != nil {
			return err
		}
		if err := node(fmt.Sprintf("link %d to", i), l.To); err != nil {
			return err
		}
		if l.From == l.To {
			return fmt.Errorf("link %d: self loop on node %d", i, l.From)
		}
	}
	for i, f := range c.Faults {
		what := fmt.Sprintf("fault %d (%s)", i, f.Kind)
		if f.At < 0 {
			return fmt.Errorf("%s: negative time %v", what, f.At)
		}
		var err error
		switch f.Kind {
		case Crash, ClockStep, SlowNode:
			err = node(what, f.Node)
		case Partition:
			for _, g := range f.Groups {
				for _, m := range g {
					if err = node(what, m); err != nil {
						break
					}
				}
			}
		case LinkFlap:
			if err = node(what, f.From); err == nil {
				err = node(what, f.To)
			}
			if err == nil && (f.Down <= 0 || f.Count < 1) {
				err = fmt.Errorf("%s: needs down > 0 and count >= 1", what)
			}
		default:
			err = fmt.Errorf("%s: unknown fault kind", what)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
