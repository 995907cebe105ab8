// Package scenario reads, checks and resolves scenario files: the YAML
// descriptions of a simulated cluster (its clocks, topology, links, faults,
// workload and protocol) that the simulator and the real backend run.
//
// A Scenario is the file as written: values may still be random specs such
// as uniform(-5ms, 5ms), and link settings are a default plus overrides.
// [Scenario.Resolve] draws every random value from named streams of a seed
// and expands the topology into concrete per-node clock parameters and
// per-directed-edge link parameters. The schema is documented in
// scenarios/README.md.
package scenario

import (
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/phasegap/params"
)

// Scenario is one scenario file as written. Decode it with [Parse] or
// [Load]; build one in code and check it with [Scenario.Validate]. A parsed
// Scenario also remembers its file (unexported), so that later errors name
// file and line; two parses compare equal with reflect.DeepEqual only if
// they come from the same text under the same name.
type Scenario struct {
	Name        string        // required, [a-z0-9-]+
	Description string        // free text
	Seed        uint64        // default 1; the CLI can override it
	Duration    time.Duration // virtual duration of the run, > 0 (0: until stopped, real backend only; see LoadUntilStopped)
	Nodes       int           // number of nodes, >= 1; IDs are 0..Nodes-1
	Clocks      Clocks
	Topology    Topology
	Links       Links
	Faults      []Fault // in any order; Resolve sorts them by At
	Workload    Workload
	Protocol    Protocol
	// Impairment says how the real backend applies the links' parameters
	// (the simulator ignores it): "" or auto, netem or userspace.
	Impairment Impairment

	// src is where the scenario was parsed from, so that errors found
	// after decoding (Validate, Resolve) can name the file and line. It is
	// nil for a scenario built in code.
	src *source
	// untilStopped: a duration of 0 is taken, as a run until stopped
	// (LoadUntilStopped).
	untilStopped bool
}

// Clocks are the clock parameters of every node: a default and per-node
// overrides.
type Clocks struct {
	Default ClockSpec   // applies to every node
	Nodes   []NodeClock // per-node overrides; at most one per node
}

// NodeClock overrides the default clock of one node: only the fields that
// are set (non-nil) replace the default's.
type NodeClock struct {
	Node int
	ClockSpec
}

// ClockSpec describes a host clock S and its tracer clock R. Every value is
// a [Spec]: fixed or drawn at resolve time. A nil field is not given: in
// the default it means the zero value (see clockmodel.Params for what zero
// means), in an override it keeps the default's value.
type ClockSpec struct {
	Offset         *Spec[time.Duration] // clockmodel.Params.Offset; signed
	DriftPPM       *Spec[float64]       // clockmodel.Params.PPM; signed
	WanderPPM      *Spec[float64]       // >= 0
	WanderStep     *Spec[time.Duration] // >= 0; 0 means 1s
	WanderLimitPPM *Spec[float64]       // >= 0; 0 means 10·WanderPPM
	PeriodicPPM    *Spec[float64]       // signed amplitude
	PeriodicPeriod *Spec[time.Duration] // >= 0
	Granularity    *Spec[time.Duration] // >= 0; 0 means 1ns
	ReadNoise      *Spec[time.Duration] // >= 0, standard deviation

	// Steps are phase jumps at given true times. nil means not given; in
	// an override a non-nil Steps (even empty) replaces the default's.
	Steps []Step

	// Tracer describes the tracer clock R relative to S. In an override,
	// its set fields replace the default tracer's one by one.
	Tracer *TracerSpec
}

// TracerSpec describes a tracer clock R relative to its node's host clock S;
// see clockmodel.TracerParams. nil fields are not given.
type TracerSpec struct {
	Offset      *Spec[time.Duration] // signed
	DriftPPM    *Spec[float64]       // signed
	Granularity *Spec[time.Duration] // >= 0
	ReadNoise   *Spec[time.Duration] // >= 0
}

// Step is a phase jump of a clock at a true time.
type Step struct {
	At time.Duration // true time, 0 <= At < Scenario.Duration
	By time.Duration // signed jump
}

// TopologyKind names a topology generator.
type TopologyKind string

// The topologies. Edges are undirected: each carries both directions.
const (
	FullMesh      TopologyKind = "full_mesh"      // every pair of nodes
	Ring          TopologyKind = "ring"           // i — (i+1) mod n
	Star          TopologyKind = "star"           // every node — the hub
	RandomRegular TopologyKind = "random_regular" // uniform random Degree-regular graph
)

// Topology selects which node pairs are linked.
type Topology struct {
	Kind   TopologyKind // default FullMesh
	Hub    int          // Star only: the hub node
	Degree int          // RandomRegular only: every node's degree
}

// Links are the link parameters of every topology edge: a default for both
// directions of every edge, then overrides applied in order.
type Links struct {
	Default   LinkSpec
	Overrides []LinkOverride
	// NICRate is every node's network interface rate in bits per second
	// (links.nic: 10gbit), 0 for none: the stream messages a node sends
	// leave one after another at that rate, and those it receives arrive
	// one after another at it, whatever links they cross, so that many
	// streams into one node (a master's gather) queue at its interface.
	// Datagrams keep their links' own model.
	NICRate uint64
}

// LinkOverride replaces the given fields of LinkSpec on one direction
// (From → To) or on both directions of an edge (Between). Exactly one of
// the two forms is set, and the pair must be an edge of the topology.
type LinkOverride struct {
	From, To *int
	Between  []int // two nodes
	LinkSpec
}

// Percent is a percentage: 25 means 25%, a probability of 0.25.
type Percent float64

// LinkSpec are one direction's link parameters with tc-netem's names and
// meanings (see netem.Params). nil fields are not given: in the default
// they mean netem's default, in an override they keep the value in force.
// Nested blocks (Loss, Reorder, Rate, CrossTraffic) override as a whole.
type LinkSpec struct {
	// Preset names the impairment preset the fields started from (see
	// LinkPresets): the decoder fills in its fields, and the fields a file
	// writes beside it replace the preset's. "" when none was named.
	Preset               string
	Delay                *time.Duration // >= 0
	Jitter               *time.Duration // >= 0
	DelayCorrelation     *Percent
	Distribution         *netem.Distribution // uniform, normal, pareto, paretonormal
	Loss                 *Loss
	Duplicate            *Percent
	DuplicateCorrelation *Percent
	Corrupt              *Percent
	CorruptCorrelation   *Percent
	Reorder              *Reorder
	Rate                 *Rate
	Limit                *int // queue limit in packets, >= 1; netem's default 1000
	CrossTraffic         *CrossTraffic
}

// Loss is a loss model: exactly one of Random, GEModel and State is set.
type Loss struct {
	Random      *Percent // "loss random PERCENT"
	Correlation *Percent // with Random only; default 0
	GEModel     *GEModel
	State       *StateLoss
}

// GEModel is the Gilbert-Elliott loss model, "loss gemodel P [R [1-H
// [1-K]]]". nil parameters take tc-netem's defaults: R = 100% - P,
// 1-H = 100%, 1-K = 0%.
type GEModel struct {
	P         Percent // good → bad transition probability
	R         *Percent
	OneMinusH *Percent // loss probability in the bad state
	OneMinusK *Percent // loss probability in the good state
}

// StateLoss is the 4-state Markov loss model, "loss state P13 [P31 [P32
// [P23 [P14]]]]". nil parameters take tc-netem's defaults: P31 = 100% - P13,
// the others 0%.
type StateLoss struct {
	P13                Percent
	P31, P32, P23, P14 *Percent
}

// Reorder is "reorder PERCENT [CORRELATION] [gap DISTANCE]".
type Reorder struct {
	Probability Percent
	Correlation Percent
	Gap         int // >= 0; 0 means netem's default behaviour
}

// Rate is "rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]".
type Rate struct {
	BitsPerSecond  uint64 // 0 means no rate limit
	PacketOverhead int    // bytes per packet, may be negative
	CellSize       int    // bytes, >= 0; 0 means none
	CellOverhead   int    // bytes per cell, may be negative
}

// CrossTraffic is background load sharing a link's rate and queue; see
// netem.CrossTraffic. It needs a rate on every edge it applies to.
type CrossTraffic struct {
	Kind       netem.CrossKind // CrossPoisson, CrossOnOff, or CrossNone (written "none")
	Load       Percent         // offered load, percent of the link rate, 0 < Load <= 100
	PacketSize int             // bytes, >= 0; 0 means 1500
	On, Off    time.Duration   // mean on and off periods; onoff only, both > 0
}

// FaultKind names a fault.
type FaultKind string

// The faults.
const (
	FaultCrash     FaultKind = "crash"      // Node stops; restarts after RestartAfter if set
	FaultPartition FaultKind = "partition"  // Groups cannot reach each other; heals after HealAfter if set
	FaultLinkFlap  FaultKind = "link_flap"  // the link goes down for Down, up for Up, Count times
	FaultClockStep FaultKind = "clock_step" // Node's host clock jumps By
	FaultSlowNode  FaultKind = "slow_node"  // Node handles each event ExtraDelay late, For long if set
)

// Fault is one fault event. Which fields apply depends on Kind; the others
// are zero.
type Fault struct {
	At   time.Duration // true time, 0 <= At < Scenario.Duration
	Kind FaultKind

	Node *int // crash, clock_step, slow_node

	RestartAfter *time.Duration // crash: nil means the node never restarts

	// Groups are disjoint sets of nodes (partition). Nodes in no group
	// form one more group together; Resolve appends it explicitly.
	Groups    [][]int
	HealAfter *time.Duration // partition: nil means it never heals

	// link_flap: Between (both directions) or From and To (one direction).
	Between  []int
	From, To *int
	Down, Up time.Duration // > 0
	Count    int           // down/up cycles, >= 1 (the decoder's default is 1)

	By time.Duration // clock_step: signed, non-zero

	ExtraDelay time.Duration  // slow_node: > 0
	For        *time.Duration // slow_node: nil means until the end of the run
}

// WorkloadKind names a workload.
type WorkloadKind string

// The workloads.
const (
	// WorkloadNone runs no application: no traffic and no traces.
	WorkloadNone WorkloadKind = "none"

	// WorkloadTraining is a simulated distributed training loop: steps of
	// compute kernels and collectives on several GPU streams per node,
	// traced on the tracer clock R, with (S, R) snapshots. It is
	// configured by [Workload.Training] and needs [ProtocolSync], whose
	// offsets place the nodes' traces on one timeline.
	WorkloadTraining WorkloadKind = "training"

	// WorkloadPhasegap is PhaseGap's halo exchange in the model of package
	// workload/halo: one rank per node in a ring (nodes = P ranks), halos
	// as stream messages, computation as modelled time. It is configured
	// by [Workload.Phasegap] and runs alone, with [ProtocolNone]: another
	// protocol's traffic would share its links.
	WorkloadPhasegap WorkloadKind = "phasegap"
)

// Workload is the traced application the nodes run. Only the fields of
// Kind are set: Training for WorkloadTraining, Phasegap for
// WorkloadPhasegap; for WorkloadNone it is zero.
type Workload struct {
	Kind     WorkloadKind // default WorkloadNone
	Training Training     // training: its settings
	Phasegap Phasegap     // phasegap: its settings
}

// Phasegap configures WorkloadPhasegap: the benchmark's parameters
// (params.Settings, whose keys, bounds and defaults package params's
// field table gives; P is the scenario's node count), and the cost model
// of its computation. The decoder fills in params.DefaultSettings for the
// keys a file does not write.
type Phasegap struct {
	params.Settings
	// Costs is the cost model's file (written by `chronosync phasegap
	// calibrate`), as written; CostsPath is where it is, relative to the
	// scenario file's directory when the scenario came from a file. ""
	// means the model's defaults (halo.DefaultCosts).
	Costs     string
	CostsPath string
	// TraceIters is how many of the last iterations trace.json shows;
	// default 50.
	TraceIters int
	// Port is the ranks' stream port, not the sync protocol's; default 7300.
	Port uint16
}

// Training configures WorkloadTraining. The decoder fills in the defaults
// below for the keys a file does not write; a Training built in code sets
// every field itself (Validate rejects the zero values where they are not
// allowed). Kernel durations are on each node's host clock.
type Training struct {
	Steps              int           // training steps, 1..1<<20; default 50
	CollectivesPerStep int           // 1..1024; default 8
	ComputePerStep     int           // compute kernels per step, 0..4096; default 2 × CollectivesPerStep
	Streams            int           // GPU streams per node, 1..64; default 2
	ComputeDuration    time.Duration // mean compute kernel duration, > 0; default 200us
	CollectiveDuration time.Duration // mean collective duration, > 0; default 100us
	Spread             float64       // ± fraction drawn uniformly per kernel, [0, 1); default 0.2
	LaunchGap          time.Duration // host time between launches, > 0; default 10us
	StepGap            time.Duration // host time between steps, > 0; default 1ms
	StartDelay         time.Duration // when step 0 may start on each host clock, [0, Duration); default 0
	Port               uint16        // the workload's stream port, not the sync protocol's; default 7200
	SnapshotPeriod     time.Duration // (S, R) snapshot sampling period, (0, Duration]; default 4s
	SnapshotCapacity   int           // snapshot ring buffer size in pairs, >= 2; default 4096
	SnapshotBurst      int           // pairs per snapshot sample, 1..64; default 4
	// Kineto also writes each node's trace as the PyTorch profiler
	// (Kineto) writes it, node<i>.pt.trace.json.gz, and checks and
	// combines those too; default false.
	Kineto bool
}

// ProtocolKind names the synchronization protocol the nodes run.
type ProtocolKind string

// The protocols.
const (
	// ProtocolPing is the minimal timestamped-datagram exchange: every
	// node sends a datagram to each out-neighbour every Interval.
	ProtocolPing ProtocolKind = "ping"

	// ProtocolSync is the clock synchronization protocol: probes, per-edge
	// estimators, rounds, GraphCalc. It is configured by [Protocol.Sync].
	ProtocolSync ProtocolKind = "sync"

	// ProtocolNone runs no synchronization protocol: the nodes run only
	// their workload (a phasegap workload, which needs the links alone).
	ProtocolNone ProtocolKind = "none"
)

// Protocol selects and configures the protocol the nodes run. Only the
// fields of Kind are set: Interval and Payload for ProtocolPing, Sync for
// ProtocolSync; the others are zero.
type Protocol struct {
	Kind     ProtocolKind  // default ProtocolPing; ProtocolNone with a phasegap workload
	Interval time.Duration // ping: > 0; default 100ms
	Payload  int           // ping: datagram payload in bytes, >= 0; default 64
	Sync     Sync          // sync: its settings
}

// SyncMode says how the sync protocol organises its work.
type SyncMode string

// The modes of the sync protocol.
const (
	SyncRounds    SyncMode = "rounds"    // master-controlled rounds (Variant B), the default
	SyncWindows   SyncMode = "windows"   // time-based windows (Variant A)
	SyncConsensus SyncMode = "consensus" // no master: weighted peer updates (Firefly)
)

// Sync configures ProtocolSync. The decoder fills in the defaults below
// for the keys a file does not write; a Sync built in code sets every
// field itself (Validate rejects the zero durations).
type Sync struct {
	Mode           SyncMode      // default SyncRounds
	Estimator      string        // regression | minfilter | svm; default svm
	Cadence        time.Duration // probe-pair interval per edge, > 0; default 800us
	Window         time.Duration // (initial) window length, >= 10 × Cadence; default 4s
	WindowMin      time.Duration // adaptive window bounds: 0 < WindowMin <= Window <= WindowMax,
	WindowMax      time.Duration // or both 0 for a fixed window (the default)
	Rounds         int           // rounds to run, >= 0; 0 = until the scenario's duration ends (default)
	Master         int           // master node; default 0
	Reference      int           // reference node for GraphCalc; default 0
	GatherDeadline time.Duration // > 0; default 500ms
	Heartbeat      time.Duration // > 0; default 200ms
	Purity         string        // auto | on | off; default auto
	PureThreshold  time.Duration // > 0; default 1us
	MinPairs       int           // >= 2; default 10
	StepThreshold  time.Duration // >= 0; default 0: a floor under the steps the estimator takes (0: none)
	ConsensusGain  float64       // (0, 1]; default 0.5 (used by SyncConsensus only)
	ConvergedFrom  int           // first round counted in converged-error figures, >= 1; default 3
}

// Impairment is how the real backend impairs its links.
type Impairment string

// The impairment modes.
const (
	// ImpairAuto uses netem where the kernel has it, else the userspace
	// shaper.
	ImpairAuto Impairment = "auto"
	// ImpairNetem uses the kernel's netem qdisc and fails where it is
	// missing.
	ImpairNetem Impairment = "netem"
	// ImpairUserspace relays every frame through the userspace shaper,
	// which applies the simulator's own link model in real time.
	ImpairUserspace Impairment = "userspace"
)
