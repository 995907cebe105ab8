package training

import (
	"fmt"
	"math"
	"time"
)

// DefaultPort is the stream port the nodes' collective messages use when
// [Config.Port] is zero. It is clear of the probe (7100) and round (7101)
// ports, so the workload can run beside the sync protocol on one node.
const DefaultPort uint16 = 7200

// Defaults applied by [Config.WithDefaults] to fields left zero.
const (
	DefaultSteps              = 50
	DefaultCollectivesPerStep = 8
	DefaultStreams            = 2
	DefaultComputeDuration    = 200 * time.Microsecond
	DefaultCollectiveDuration = 100 * time.Microsecond
	DefaultSpread             = 0.2
	DefaultLaunchDuration     = 5 * time.Microsecond
	DefaultLaunchGap          = 10 * time.Microsecond
	DefaultStepGap            = time.Millisecond
)

// Upper bounds that keep step and collective numbers inside the 32-bit
// fields of the wire messages and a node's event count reasonable.
const (
	maxSteps       = 1 << 20
	maxCollectives = 1 << 10
	maxCompute     = 1 << 12
	maxStreams     = 64
)

// Config is the shape of the training loop. A zero field takes the default
// named after it ([DefaultSteps], ...); ComputePerStep defaults to two
// compute kernels per collective.
type Config struct {
	// Steps is how many training steps every node runs.
	Steps int
	// CollectivesPerStep is how many collectives one step runs. Their kinds
	// rotate all-reduce, all-gather, broadcast.
	CollectivesPerStep int
	// ComputePerStep is how many compute kernels one step runs, spread
	// evenly between the collectives: before collective c come the compute
	// kernels c·K/C .. (c+1)·K/C-1 (K compute, C collectives per step).
	ComputePerStep int
	// Streams is the number of GPU streams per node. Collectives run on the
	// last stream (Streams-1) and compute kernels round-robin on the
	// others; with one stream everything runs on stream 0.
	Streams int
	// ComputeDuration and CollectiveDuration are mean kernel durations on
	// the host clock. Each kernel draws its own duration uniformly within
	// ±Spread of the mean. A collective's duration is counted from the
	// moment it has started on this node and heard that it started on every
	// other node.
	ComputeDuration    time.Duration
	CollectiveDuration time.Duration
	// Spread is the relative half-width of the duration draws, in [0, 1).
	// Zero means DefaultSpread; use a tiny value for nearly fixed durations.
	Spread float64
	// LaunchDuration is how long one hipLaunchKernel call keeps the host
	// thread busy; LaunchGap is the host time from the end of one launch to
	// the start of the next.
	LaunchDuration time.Duration
	LaunchGap      time.Duration
	// StepGap is the host time between the end of one step (every kernel of
	// it finished) and the first launch of the next.
	StepGap time.Duration
	// StartDelay is how long a node waits, on its host clock, after Start
	// before step 0 (for example, so that the sync protocol can converge).
	// Step 0 also waits until the node is connected to every other node.
	StartDelay time.Duration
	// Port is the stream port of the collective messages.
	Port uint16
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	setInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	setInt(&c.Steps, DefaultSteps)
	setInt(&c.CollectivesPerStep, DefaultCollectivesPerStep)
	if c.CollectivesPerStep > 0 {
		setInt(&c.ComputePerStep, 2*c.CollectivesPerStep)
	}
	setInt(&c.Streams, DefaultStreams)
	setDur(&c.ComputeDuration, DefaultComputeDuration)
	setDur(&c.CollectiveDuration, DefaultCollectiveDuration)
	if c.Spread == 0 {
		c.Spread = DefaultSpread
	}
	setDur(&c.LaunchDuration, DefaultLaunchDuration)
	setDur(&c.LaunchGap, DefaultLaunchGap)
	setDur(&c.StepGap, DefaultStepGap)
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	return c
}

// Validate reports the first problem with c once defaults are applied.
func (c Config) Validate() error {
	c = c.WithDefaults()
	ints := []struct {
		name   string
		v, max int
	}{
		{"Steps", c.Steps, maxSteps},
		{"CollectivesPerStep", c.CollectivesPerStep, maxCollectives},
		{"ComputePerStep", c.ComputePerStep, maxCompute},
		{"Streams", c.Streams, maxStreams},
	}
	for _, f := range ints {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("training config: %s is %d, want 1..%d (0 means the default)", f.name, f.v, f.max)
		}
	}
	durs := []struct {
		name string
		v    time.Duration
	}{
		{"ComputeDuration", c.ComputeDuration},
		{"CollectiveDuration", c.CollectiveDuration},
		{"LaunchDuration", c.LaunchDuration},
		{"LaunchGap", c.LaunchGap},
		{"StepGap", c.StepGap},
	}
	for _, f := range durs {
		if f.v <= 0 {
			return fmt.Errorf("training config: %s is %v, want > 0 (0 means the default)", f.name, f.v)
		}
	}
	if c.StartDelay < 0 {
		return fmt.Errorf("training config: StartDelay is %v, want >= 0", c.StartDelay)
	}
	if math.IsNaN(c.Spread) || c.Spread < 0 || c.Spread >= 1 {
		return fmt.Errorf("training config: Spread is %v, want a fraction in [0, 1) (0 means %v)", c.Spread, DefaultSpread)
	}
	return nil
}
