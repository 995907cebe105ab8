package combine

import "github.com/chronosync/chronosync/trace/xspace"

// Metadata is combined.metadata.json: what the combiner did to each node.
type Metadata struct {
	RunID     string         `json:"run_id,omitempty"`
	Offsets   string         `json:"offsets,omitempty"` // the offsets file used
	Corrected bool           `json:"corrected"`         // false with --no-correction
	Nodes     []NodeMetadata `json:"nodes"`
	Events    int64          `json:"events"`
	Planes    int            `json:"planes"`
	// TimeBaseNS is the Unix time, ns, that the combined trace's times
	// count from (every plane's time_base_ns stat): that of its first
	// plane, as a Kineto input has; 0, and omitted, for XSpace inputs
	// without one.
	TimeBaseNS int64 `json:"time_base_ns,omitempty"`
	// KinetoBaseNS is the baseTimeNanoseconds that the aligned Kineto
	// copies share (Options.KinetoDir), which their ts count from on the
	// global timeline; 0, and omitted, with no Kineto input or when the
	// copies are absolute (an input without a base).
	KinetoBaseNS int64          `json:"kineto_base_ns,omitempty"`
	Validate     *ValidateBrief `json:"validate,omitempty"`
	MemoryBound  string         `json:"memory_bound"`

	// TraceJSONWindow is the span the Chrome trace was limited to
	// (Options.Window WindowWorkload); nil when it spans everything.
	TraceJSONWindow *JSONWindow `json:"trace_json_window,omitempty"`
}

// NodeMetadata describes one node's alignment.
type NodeMetadata struct {
	// ID is the input's id: its node, or a Kineto trace's rank.
	ID int `json:"id"`
	// ClockNode is the node whose clock model aligned it: ID, or the node
	// a Kineto rank ran on (Options.RankNodes).
	ClockNode int    `json:"clock_node"`
	Hostname  string `json:"hostname"`
	Trace     string `json:"trace"`
	// Format is "kineto" for a PyTorch profiler trace, omitted for XSpace.
	Format string `json:"format,omitempty"`
	// TracerClock says, for a Kineto trace, that its tracer clock is its
	// host clock.
	TracerClock string `json:"tracer_clock,omitempty"`
	// TimeBaseNS is the time base (Unix ns) the input's planes count from,
	// when they have one.
	TimeBaseNS int64  `json:"time_base_ns,omitempty"`
	Snapshots  string `json:"snapshots,omitempty"` // the snapshot file, when one was given
	// SnapshotPairs counts the pairs used, SnapshotSamples the bursts
	// they came in (pairs less than an eighth of the sampling period
	// apart); SamplingPeriodNS and the sampler's counters come from the
	// snapshot file.
	SnapshotPairs    int    `json:"snapshot_pairs"`
	SnapshotSamples  int    `json:"snapshot_samples"`
	SamplingPeriodNS uint64 `json:"sampling_period_ns,omitempty"`
	SnapshotsTaken   uint64 `json:"snapshots_taken,omitempty"`
	// MissingSnapshots is the sampler's missed deadlines, plus one when
	// the node has no snapshot file at all (then its tracer clock is taken
	// as its host clock).
	MissingSnapshots uint64 `json:"missing_snapshots"`
	// SnapshotResidualNS is the 1σ error of one snapshot pair, estimated
	// from how far a burst's pairs lie off their own line, or without
	// bursts from how far inner pairs lie off their neighbours' chord.
	SnapshotResidualNS float64 `json:"snapshot_residual_ns"`
	// HostSteps counts the steps of the node's host clock its offsets
	// record: the snapshot mapping, where there is one, runs through them
	// (see align.NewSnapshotsStepped).
	HostSteps int `json:"host_steps,omitempty"`
	// UnrecordedHostSteps counts the host clock steps the snapshot pairs
	// show that the offsets do not put on this node (an ambiguous step
	// put on another node): the mapping runs through them as well.
	UnrecordedHostSteps int `json:"unrecorded_host_steps,omitempty"`
	OffsetWindows       int `json:"offset_windows"`
	// MaxCorrectionNS is the largest |aligned − raw| over the node's
	// events; ClockSkewNS the correction at its first event.
	MaxCorrectionNS int64 `json:"max_correction_ns"`
	ClockSkewNS     int64 `json:"clock_skew_ns"`
	// Uncertainty of the aligned event times, ns.
	UncertaintyP50NS float64 `json:"uncertainty_p50_ns"`
	UncertaintyMaxNS float64 `json:"uncertainty_max_ns"`
	// Events counts the input's timed events (those aligned), and
	// UntimedEvents those without offset_ps (num_occurrences: aggregated
	// events, copied as they were); TracePlanes counts its planes (a
	// Kineto trace's once converted) and TraceBytes an XSpace input's file
	// size. Combine refuses an input without events, and one whose counts
	// (Events + UntimedEvents, TracePlanes, TraceBytes) differ from
	// Recorded.
	Events        int64 `json:"events"`
	UntimedEvents int64 `json:"untimed_events,omitempty"`
	TracePlanes   int   `json:"trace_planes"`
	TraceBytes    int64 `json:"trace_bytes,omitempty"`
	// Recorded is what the run that wrote the trace recorded of it in the
	// traces.json beside it (xspace.FileTraceRecord); absent where
	// nothing recorded it.
	Recorded *xspace.Counts `json:"recorded,omitempty"`
	// Events whose times were extrapolated beyond the snapshot pairs, that
	// no offset window covered, and whose start had to be moved to keep
	// their line's order.
	ExtrapolatedEvents  int64 `json:"extrapolated_events"`
	OutsideWindowEvents int64 `json:"outside_window_events"`
	MonotonicityFixes   int64 `json:"monotonicity_fixes"`
	// AcrossStepEvents counts the events that span a step of the node's
	// host clock: their length comes from the tracer clock, which did not
	// step.
	AcrossStepEvents int64 `json:"across_step_events,omitempty"`
	// GPUConversionCorrectionMaxNS is, for a Kineto trace given snapshot
	// pairs, the most the pairs moved a GPU event from the profiler's own
	// conversion of the GPU clock to host time (see kinetogpu.go).
	GPUConversionCorrectionMaxNS int64 `json:"gpu_conversion_correction_max_ns,omitempty"`
	// Corrected is, for a Kineto trace, its aligned copy in PyTorch's
	// format (Options.KinetoDir).
	Corrected string `json:"corrected,omitempty"`
	// KinetoBeforeBase counts the events of the aligned Kineto copy that
	// landed before the base the copies share, written with a negative ts
	// (see Metadata.KinetoBaseNS).
	KinetoBeforeBase int64         `json:"kineto_before_base,omitempty"`
	Planes           []PlaneRename `json:"planes"`
}

// PlaneRename records one plane's name before and after.
type PlaneRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ValidateBrief is the happens-before check's totals.
type ValidateBrief struct {
	Violations int    `json:"violations"`
	Overlaps   int    `json:"overlaps"`
	Warnings   int    `json:"warnings"`
	Report     string `json:"report"` // the detailed report's file
}
