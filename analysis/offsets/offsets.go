// Package offsets reads and writes the results of a run's clock
// synchronization as JSON Lines: offsets.jsonl, each node's clock model per
// round, and rounds.jsonl, the master's per-edge view and a line per round.
//
// Both files start with a Meta line. Every later line is one record whose
// "type" says which: "offset" (Offset) in offsets.jsonl, "edge" (Edge) and
// "round" (Round) in rounds.jsonl. Times are integer nanoseconds.
//
// # Writing
//
// A Writer appends all records of one round with one Write call on a file
// opened with O_APPEND, then fsyncs it, so that a crash leaves whole rounds
// followed at most by a torn final line (one with no trailing newline).
// OpenAppend resumes such a file: it cuts the torn line off first. A tear
// that falls exactly on a line boundary inside a round cannot be told from a
// complete round; in rounds.jsonl, appending a round's edges first and its
// Round line last makes the Round line the mark that the round is whole.
//
// # Reading
//
// The readers are strict: the first line must be the Meta of the expected
// file with schema 3 (Schema) or 2; a file of schema 1, written before clock
// steps and the drift's uncertainty were recorded, is refused with how to
// regenerate it. Every line must be one JSON object with a known "type",
// every field of the record and no other, and so must each step of an
// Offset's "steps"; a value of the wrong kind, or out of range (see
// Offset.Check), is an error. Errors are *LineError values that name
// FILE:LINE, the field's path and what was expected, e.g.
//
//	offsets.jsonl:7: offset_ns: expected a number, got "abc"
//	offsets.jsonl:3: steps[1].size_ns: expected a number, got "x"
//
// A second record of one key (an offset's round and node; a round line's
// round; an edge's round, source and destination) is an error naming the
// first one's line:
//
//	offsets.jsonl:7: round 3 node 2: a second record (first at line 5)
//
// A final line with no trailing newline, torn by a crash, is ignored and
// reported in Info.Torn. ReadStrict, the reader of every command that uses
// a run's clock models (calibrate, combine, estimate), refuses it instead,
// and checks the file against the rounds.jsonl beside it: each round has
// as many records as rounds.jsonl says nodes were solved in it.
//
// # Legacy form
//
// ReadLegacy and DecodeLegacy read the midpoint form the first ChronoSync
// tools wrote (no meta line; one record per node and window, the model at
// the window's midpoint) as strictly, with its limits stated in one place
// (see LegacyLoneReachNS), and turn it into windows of Offset.
package offsets

import (
	"math"

	"github.com/chronosync/chronosync/model/globaltime"
)

// Schema is the version of the format this package writes; it reads it
// and OldestSchema. Schema 3 added the self-check (Offset.SelfCheck), which
// a file of schema 2 does not have. Schema 2 added the drift's
// uncertainty, the offset's uncertainty at the
// window's middle (schema 1: at its start) and clock steps; a reader of
// schema 1 refuses it, and this one refuses schema 1.
const Schema = 3

// OldestSchema is the oldest schema the readers take.
const OldestSchema = 2

// File kinds, the values of Meta.File.
const (
	FileOffsets = "offsets"
	FileRounds  = "rounds"
)

// Modes, the values of Meta.Mode.
const (
	ModeRounds    = "rounds"
	ModeWindows   = "windows"
	ModeConsensus = "consensus"
)

// Model is the value of Meta.Model: how an Offset maps a node's clock to the
// global one (see Offset.Global).
const Model = "global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns) - (1 - drift_ppm*1e-6)*sum(size_ns of the steps the reading is after)"

// UncertaintyModel is the value of Meta.Uncertainty: the 1σ uncertainty of
// a record's global time (see Offset.SigmaAt).
const UncertaintyModel = "sigma_ns = sqrt(uncertainty_ns^2 + (drift_uncertainty_ppm*1e-6*(local_ns - (window_start_ns + window_end_ns)/2))^2 + sum(size_uncertainty_ns^2 of the steps the reading is after) + sum(size_ns^2 of the steps it may lie on either side of: within at_uncertainty_ns of at_ns or of the span [at_ns + size_ns .. at_ns) a backward step reads twice))"

// Meta is the first line of both files.
type Meta struct {
	Type      string `json:"type"`           // "meta"
	Schema    int    `json:"schema"`         // Schema
	File      string `json:"file"`           // FileOffsets or FileRounds
	RunID     string `json:"run_id"`         // the run's id
	Units     string `json:"units"`          // "ns"
	Reference int    `json:"reference_node"` // the node whose clock is global time
	Estimator string `json:"estimator"`      // the per-edge estimator
	Mode      string `json:"mode"`           // ModeRounds, ModeWindows or ModeConsensus
	Model     string `json:"model"`          // Model
	// Uncertainty is UncertaintyModel.
	Uncertainty string `json:"uncertainty"`
}

// Offset is one node's clock model for one round (type "offset").
type Offset struct {
	Type          string  `json:"type"` // "offset"; Append sets it
	RoundID       uint64  `json:"round_id"`
	WindowID      uint64  `json:"window_id"`
	WindowStartNS int64   `json:"window_start_ns"` // node's clock
	WindowEndNS   int64   `json:"window_end_ns"`   // node's clock
	NodeID        int     `json:"node_id"`
	OffsetNS      float64 `json:"offset_ns"` // node clock minus global at window_start_ns
	DriftPPM      float64 `json:"drift_ppm"` // node clock rate minus global rate, in ppm
	// UncertaintyNS is the 1σ uncertainty of the offset at the window's
	// middle, (window_start_ns + window_end_ns)/2; DriftUncertaintyPPM that
	// of drift_ppm. See SigmaAt.
	UncertaintyNS       float64 `json:"uncertainty_ns"`
	DriftUncertaintyPPM float64 `json:"drift_uncertainty_ppm"`
	// Steps are the node's clock steps inside the window, in clock order:
	// readings after a step are SizeNS further ahead of global time than
	// the model before it says.
	Steps []Step `json:"steps,omitempty"`
	// SelfCheck is how well the previous round's models predicted this
	// window's measured edges of the node (schema 3; nil where none was
	// predicted: the first round, a node new to the round, a step).
	SelfCheck *SelfCheck `json:"self_check,omitempty"`
}

// SelfCheck is the self-check of one node-round: the node's edges of a
// window (those it probes and those it answers) as the models of the round
// before predicted them, each measured offset against its prediction in
// units of the prediction's σ (its models' uncertainties, the measurement's
// and the wander between). It needs no ground truth: where the reported σ
// are honest, 99.73 % of the predictions lie within 3σ.
type SelfCheck struct {
	Predictions int `json:"predictions"`
	// Within3Sigma counts the predictions within 3σ.
	Within3Sigma int `json:"within_3sigma"`
	// MaxSigma is the largest |measured − predicted| in σ.
	MaxSigma float64 `json:"max_sigma"`
}

// Step is a step of a node's clock inside a window.
type Step struct {
	// AtNS is the node's clock reading, before the step, at which it
	// stepped: the middle of the interval the probes bracket it in, whose
	// half-width is AtUncertaintyNS.
	AtNS            int64   `json:"at_ns"`
	AtUncertaintyNS float64 `json:"at_uncertainty_ns"`
	// SizeNS is how far the clock jumped (positive: forward), with its 1σ
	// uncertainty.
	SizeNS            float64 `json:"size_ns"`
	SizeUncertaintyNS float64 `json:"size_uncertainty_ns"`
}

// Global maps local, a reading of the node's clock, to global time by
// Model: GlobalAfter(local, o.StepsBefore(local)).
func (o Offset) Global(local int64) float64 {
	return o.GlobalAfter(local, o.StepsBefore(local))
}

// StepsBefore counts the steps of o a reading local comes after: those
// whose AtNS it has reached, in order. A backward step makes the clock read
// some values twice, before and after it; such a reading is taken as
// before (SigmaAt covers the doubt near a step).
func (o Offset) StepsBefore(local int64) int {
	n := 0
	for _, s := range o.Steps {
		if local < s.AtNS {
			break
		}
		n++
	}
	return n
}

// GlobalAfter maps local, a reading taken after the first n steps of o,
// to global time: as the model before the steps maps the reading the clock
// would have given without them, local − Σ size, that is base(local) −
// Σ size·(1 − DriftPPM·1e-6), where base is local − OffsetNS −
// DriftPPM·1e-6·(local − WindowStartNS).
func (o Offset) GlobalAfter(local int64, n int) float64 {
	g := o.base(local)
	for _, s := range o.Steps[:max(0, min(n, len(o.Steps)))] {
		g -= s.SizeNS * (1 - o.DriftPPM*1e-6)
	}
	return g
}

// OffsetAfter is local − GlobalAfter(local, n) from small terms only, so
// that it keeps sub-ns precision for clocks on the Unix epoch (where
// GlobalAfter's float64 is exact to 256 ns).
func (o Offset) OffsetAfter(local int64, n int) float64 {
	c := o.Linear().OffsetAt(local)
	for _, s := range o.Steps[:max(0, min(n, len(o.Steps)))] {
		c += s.SizeNS * (1 - o.DriftPPM*1e-6)
	}
	return c
}

// base is the model before any step: local − OffsetNS − DriftPPM·1e-6·(local
// − WindowStartNS), exact as globaltime.Linear makes it.
func (o Offset) base(local int64) float64 {
	return o.Linear().Global(local)
}

// Linear is the record's model before any step of its window.
func (o Offset) Linear() globaltime.Linear {
	return globaltime.Linear{Anchor: o.WindowStartNS, Offset: o.OffsetNS, Drift: o.DriftPPM * 1e-6}
}

// Edge is one directed edge in one round (type "edge"), in rounds.jsonl.
type Edge struct {
	Type         string   `json:"type"` // "edge"; Append sets it
	RoundID      uint64   `json:"round_id"`
	WindowID     uint64   `json:"window_id"`
	Src          int      `json:"src"`
	Dst          int      `json:"dst"`
	Alpha        float64  `json:"alpha"`                   // fitted drift of the edge
	Beta         float64  `json:"beta_ns"`                 // fitted offset of the edge
	Sigma        float64  `json:"sigma_ns"`                // the fit's uncertainty
	AsymSigma    float64  `json:"asym_sigma_ns,omitempty"` // the part of Sigma a path asymmetry may add (systematic)
	PairsCount   int      `json:"pairs_count"`             // pairs the fit used
	LostCount    int      `json:"lost_count"`              // probes lost in the window
	Residual     *float64 `json:"residual_ns,omitempty"`   // nil when the solver did not use the edge
	Rejected     bool     `json:"rejected,omitempty"`      // the solver rejected the edge as an outlier
	Insufficient bool     `json:"insufficient,omitempty"`  // too few probes to fit
	StepDetected bool     `json:"step_detected,omitempty"` // a clock step inside the window
}

// Round is the per-round line (type "round"), in rounds.jsonl.
type Round struct {
	Type           string  `json:"type"` // "round"; Append sets it
	RoundID        uint64  `json:"round_id"`
	WindowID       uint64  `json:"window_id"`
	SequenceNumber uint64  `json:"sequence_number"`
	Reported       []int   `json:"reported"`        // nodes whose reports arrived; Append writes nil as []
	Missing        []int   `json:"missing"`         // nodes whose reports did not; Append writes nil as []
	Solved         int     `json:"solved_nodes"`    // nodes the solver gave a model, each with its record in offsets.jsonl (see ReadStrict)
	Error          string  `json:"error,omitempty"` // why the round failed, e.g. a disconnected graph
	RMSResidualNS  float64 `json:"rms_residual_ns"`
	MaxResidualNS  float64 `json:"max_residual_ns"`
	Rejected       int     `json:"rejected_edges"`
	WindowNS       int64   `json:"window_ns"`
	GatherWaitNS   int64   `json:"gather_wait_ns"`
	EndToStartNS   int64   `json:"end_to_start_ns"`
	SequenceSkewNS int64   `json:"sequence_skew_ns"`
	Retries        int     `json:"retries"`
	MessageBytes   int     `json:"message_bytes"`
	// Chi2 over Chi2DOF degrees of freedom, PValue and BirgeRatio are the
	// goodness of fit of the round's offsets (see graphcalc.Consistency);
	// Inconsistent says its loops do not close within their uncertainty,
	// and Warning says how (the worst loops, the suspect links) and that
	// the uncertainties were inflated to cover it.
	Chi2         float64 `json:"chi2"`
	Chi2DOF      int     `json:"chi2_dof"`
	PValue       float64 `json:"p_value"`
	BirgeRatio   float64 `json:"birge_ratio"`
	Inconsistent bool    `json:"inconsistent,omitempty"`
	Warning      string  `json:"warning,omitempty"`
}

// SigmaAt returns the 1σ uncertainty, in ns, of Global(local): the
// offset's uncertainty at the window's middle, the drift's carried from
// there, each step's size uncertainty for the steps the reading is after,
// and, for a reading whose side of a step is in doubt, that step's whole
// size: within AtUncertaintyNS of it, and (a backward step makes the
// clock read [AtNS + SizeNS, AtNS) twice) anywhere in the span it reads
// twice.
func (o Offset) SigmaAt(local int64) float64 {
	v := o.variance(local, o.StepsBefore(local))
	x := float64(local)
	for _, s := range o.Steps {
		lo, hi := float64(s.AtNS)+min(0, s.SizeNS), float64(s.AtNS)
		if x >= lo-s.AtUncertaintyNS && x <= hi+s.AtUncertaintyNS {
			v += s.SizeNS * s.SizeNS
		}
	}
	return math.Sqrt(v)
}

// SigmaAfter is the 1σ uncertainty of GlobalAfter(local, n).
func (o Offset) SigmaAfter(local int64, n int) float64 {
	return math.Sqrt(o.variance(local, n))
}

// variance is the variance of GlobalAfter(local, n), ns².
func (o Offset) variance(local int64, n int) float64 {
	mid := float64(o.WindowStartNS)/2 + float64(o.WindowEndNS)/2
	d := o.DriftUncertaintyPPM * 1e-6 * (float64(local) - mid)
	v := o.UncertaintyNS*o.UncertaintyNS + d*d
	for _, s := range o.Steps[:max(0, min(n, len(o.Steps)))] {
		v += s.SizeUncertaintyNS * s.SizeUncertaintyNS
	}
	return v
}
