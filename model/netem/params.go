package netem

import "time"

// Distribution names a delay distribution, as tc-netem's "distribution"
// option does.
type Distribution string

// The delay distributions netem ships tables for.
const (
	Uniform      Distribution = "uniform" // netem's default when no table is given
	Normal       Distribution = "normal"
	Pareto       Distribution = "pareto"
	ParetoNormal Distribution = "paretonormal"
)

// Params are one direction's link parameters, with tc-netem's names and
// meanings. Probabilities are fractions in [0, 1] (netem's percent / 100).
// The zero value is an ideal link: no delay, no loss, no rate limit, and
// the default queue limit.
type Params struct {
	Delay        time.Duration // base one-way delay ("delay TIME")
	Jitter       time.Duration // "delay TIME JITTER"
	DelayCorr    float64       // "delay TIME JITTER CORRELATION"
	Distribution Distribution  // "" means Uniform

	Loss Loss

	Duplicate     float64 // "duplicate PERCENT"
	DuplicateCorr float64
	Corrupt       float64 // "corrupt PERCENT"
	CorruptCorr   float64

	Reorder     float64 // "reorder PERCENT"
	ReorderCorr float64
	ReorderGap  int // "gap DISTANCE"; 0 means netem's default behaviour

	Rate Rate

	// Limit is the queue limit in packets ("limit PACKETS"); 0 means 1000,
	// netem's default.
	Limit int

	Cross CrossTraffic
}

// LossModel selects how losses are drawn.
type LossModel string

// The loss models of tc-netem.
const (
	LossNone    LossModel = ""        // no loss
	LossRandom  LossModel = "random"  // "loss random PERCENT [CORRELATION]"
	LossState   LossModel = "state"   // "loss state P13 [P31 [P32 [P23 [P14]]]]"
	LossGEModel LossModel = "gemodel" // "loss gemodel PERCENT [R [1-H [1-K]]]"
)

// Loss is the loss model and its parameters. Only the fields of the chosen
// model are used; all are fractions in [0, 1].
type Loss struct {
	Model LossModel

	// random
	Probability float64
	Correlation float64

	// state (4-state Markov, Salsano et al.): transition probabilities.
	P13, P31, P32, P23, P14 float64

	// gemodel (Gilbert-Elliott): P good→bad, R bad→good, 1-H loss
	// probability in the bad state, 1-K loss probability in the good state.
	P, R, OneMinusH, OneMinusK float64
}

// Rate is netem's "rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]".
type Rate struct {
	BitsPerSecond  uint64 // 0 means no rate limit
	PacketOverhead int    // bytes added to (or, negative, removed from) each packet
	CellSize       int    // link-layer cell size in bytes; 0 means none
	CellOverhead   int    // bytes added per cell
}

// CrossKind selects the cross-traffic generator.
type CrossKind string

// Cross-traffic generators.
const (
	CrossNone    CrossKind = ""
	CrossPoisson CrossKind = "poisson" // Poisson arrivals
	CrossOnOff   CrossKind = "onoff"   // exponential on/off periods, constant rate while on
)

// CrossTraffic is background load that shares the link's rate and queue
// with the packets it carries, so that queueing delay emerges from load. It
// is never delivered to a node. It needs Rate.BitsPerSecond > 0.
type CrossTraffic struct {
	Kind CrossKind
	// Load is the offered load as a fraction of the link rate: for Poisson
	// the mean load, for on/off the load while on.
	Load       float64
	PacketSize int           // bytes; 0 means 1500
	On, Off    time.Duration // mean on and off period lengths (onoff)
}
