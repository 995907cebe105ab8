package syncrun

import (
	"fmt"
	"io"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/harness/engine"
)

// Print writes a traced run's happens-before checks and alignment
// errors.
func (t *TraceSummary) Print(w io.Writer) {
	fmt.Fprintf(w, "trace: %s nodes, %s events, %s snapshot pairs\n", engine.Count(t.Nodes), engine.Count(t.Events), engine.Count(t.Snapshots))
	fmt.Fprintf(w, "  validate raw:      %s\n", t.Raw.text())
	fmt.Fprintf(w, "  validate combined: %s\n", t.Combined.text())
	e := t.ErrorNS
	if t.AlignedEvents == 0 {
		fmt.Fprintln(w, "  |aligned − true start|: no event carries an event id and an uncertainty to compare")
	} else {
		u := engine.UnitFor(e.P50, e.P99, e.Max)
		of := engine.Count(t.AlignedEvents) + " events"
		if t.AlignedEvents != t.Events {
			of = fmt.Sprintf("%s of the %s events (those with an event id and an uncertainty in the combined trace)", engine.Count(t.AlignedEvents), engine.Count(t.Events))
		}
		fmt.Fprintf(w, "  |aligned − true start| in %s, over %s: p50 %s  p99 %s  max %s; max %.2f reported σ\n",
			u.Name, of, u.Format(e.P50), u.Format(e.P99), u.Format(e.Max), t.ErrorSigmas.Max)
		if share := t.Within(); share < groundtruth.Target {
			fmt.Fprintf(w, "  reported σ: %s of %s aligned events within 3σ (%.1f %%): NOT CALIBRATED, want ≥ %.0f %%: the uncertainties in the combined trace understate its errors\n",
				engine.Count(int64(t.Within3Sigma)), engine.Count(int64(t.AlignedEvents)), 100*share, 100*groundtruth.Target)
		}
	}
	if t.NegativeDurations > 0 {
		fmt.Fprintf(w, "  %s events ended before they started on their tracer clock (it stepped back): duration 0 in the traces\n", engine.Count(t.NegativeDurations))
	}
	if len(t.Unfinished) > 0 {
		fmt.Fprintf(w, "  workload unfinished on nodes %v\n", t.Unfinished)
	}
	if k := t.Kineto; k != nil {
		k.Print(w)
	}
}

// Print writes the Kineto path's checks and alignment errors, in the
// lines of the XSpace path's.
func (k *KinetoTraceSummary) Print(w io.Writer) {
	fmt.Fprintf(w, "kineto: %s events (a collective launch's record_param_comms and nccl: annotation share its id and times), %s flows\n",
		engine.Count(k.Events), engine.Count(k.Flows))
	fmt.Fprintf(w, "  validate raw:      %s\n", k.Raw.text())
	how := "with snapshot pairs: GPU times corrected"
	if !k.SnapshotCorrected {
		how = "without snapshot pairs: GPU times as the profiler converted them"
	}
	fmt.Fprintf(w, "  validate combined: %s (%s)\n", k.Combined.text(), how)
	if k.AlignedEvents == 0 {
		fmt.Fprintln(w, "  |aligned − true start|: no event carries an event id and an uncertainty to compare")
		return
	}
	e, h, g := k.ErrorNS, k.HostErrorNS, k.GPUErrorNS
	u := engine.UnitFor(e.P50, e.P99, e.Max, h.P99, g.P99)
	fmt.Fprintf(w, "  |aligned − true start| in %s, over %s events: p50 %s  p99 %s  max %s (host p99 %s, GPU p99 %s); max %.2f reported σ\n",
		u.Name, engine.Count(k.AlignedEvents), u.Format(e.P50), u.Format(e.P99), u.Format(e.Max), u.Format(h.P99), u.Format(g.P99), k.ErrorSigmas.Max)
	if share := k.Within(); share < groundtruth.Target {
		fmt.Fprintf(w, "  reported σ: %s of %s aligned events within 3σ (%.1f %%): NOT CALIBRATED, want ≥ %.0f %%: the uncertainties in the combined trace understate its errors\n",
			engine.Count(int64(k.Within3Sigma)), engine.Count(int64(k.AlignedEvents)), 100*share, 100*groundtruth.Target)
	}
}

// TraceSummary is a traced run's outcome: the happens-before check of the
// raw per-node traces and of the combined trace, and how far each aligned
// event lies from its true start.
type TraceSummary struct {
	Nodes      int   `json:"nodes"`
	Events     int   `json:"events"`
	Snapshots  int   `json:"snapshot_pairs"`
	Unfinished []int `json:"unfinished_nodes,omitempty"` // nodes whose workload did not finish
	// Raw is validate on the per-node traces, each on its own tracer
	// clock; Combined on the combined trace.
	Raw      ValidateCounts `json:"raw"`
	Combined ValidateCounts `json:"combined"`
	// AlignedEvents were compared with the truth: ErrorNS is |aligned −
	// true start|, ErrorSigmas that over the event's reported uncertainty.
	AlignedEvents int           `json:"aligned_events"`
	ErrorNS       stats.Summary `json:"error_ns"`
	ErrorSigmas   stats.Summary `json:"error_sigmas"`
	// Within3Sigma counts the aligned events whose error is within 3
	// reported σ; at least groundtruth.Target of them must be for the
	// uncertainties to be honest.
	Within3Sigma int `json:"events_within_3_sigma"`
	// NegativeDurations counts the events that ended before they started
	// on their node's tracer clock (a tracer clock that stepped back):
	// their traces give them duration 0.
	NegativeDurations int `json:"negative_durations,omitempty"`
	// Kineto is the Kineto path's outcome, with the workload's kineto:
	// true.
	Kineto *KinetoTraceSummary `json:"kineto,omitempty"`
}

// KinetoTraceSummary is the Kineto path of a traced run: the nodes' traces
// as the PyTorch profiler writes them (node<i>.pt.trace.json.gz), checked
// raw, combined and measured against the truth as the XSpace traces are.
type KinetoTraceSummary struct {
	// Events counts the complete events of the traces, each with its
	// chronosync_event_id: launches, kernels, and a collective launch's
	// record_param_comms op and nccl: annotation (with the launch's id and
	// times). Flows counts the launch-to-kernel flows.
	Events int `json:"events"`
	Flows  int `json:"flows"`
	// Raw is validate on the Kineto traces, each on its own host clock
	// (its GPU events as the profiler converted them); Combined on the
	// combined one.
	Raw      ValidateCounts `json:"raw"`
	Combined ValidateCounts `json:"combined"`
	// SnapshotCorrected says whether the combiner had the nodes' snapshot
	// pairs to correct the profiler's conversion of GPU times; without
	// them the GPU events keep its drift.
	SnapshotCorrected bool `json:"snapshot_corrected"`
	// AlignedEvents were compared with the truth: ErrorNS is |aligned −
	// true start| (HostErrorNS and GPUErrorNS that of the host and GPU
	// events), ErrorSigmas that over the event's reported uncertainty.
	AlignedEvents int           `json:"aligned_events"`
	ErrorNS       stats.Summary `json:"error_ns"`
	HostErrorNS   stats.Summary `json:"host_error_ns"`
	GPUErrorNS    stats.Summary `json:"gpu_error_ns"`
	ErrorSigmas   stats.Summary `json:"error_sigmas"`
	// Within3Sigma counts the aligned events within 3 reported σ.
	Within3Sigma int `json:"events_within_3_sigma"`
}

// Within is the share of the aligned events within 3 reported σ (1
// without any).
func (k *KinetoTraceSummary) Within() float64 {
	if k.AlignedEvents == 0 {
		return 1
	}
	return float64(k.Within3Sigma) / float64(k.AlignedEvents)
}

// Within is the share of the aligned events within 3 reported σ (1
// without any).
func (t *TraceSummary) Within() float64 {
	if t.AlignedEvents == 0 {
		return 1
	}
	return float64(t.Within3Sigma) / float64(t.AlignedEvents)
}

// ValidateCounts are the totals of a happens-before check.
type ValidateCounts struct {
	Violations int `json:"violations"`
	Overlaps   int `json:"overlaps"`
	Warnings   int `json:"warnings"`
}

// text is the counts as validate prints them, or, when the check compared
// no pair of invocations (Violations + Overlaps is 0), a line that says so
// rather than counts of 0 that read as a result.
func (c ValidateCounts) text() string {
	if c.Violations+c.Overlaps == 0 {
		return fmt.Sprintf("nothing to compare (no collective on two nodes), Warnings: %d", c.Warnings)
	}
	return fmt.Sprintf("Violations: %d, Overlaps: %d, Warnings: %d", c.Violations, c.Overlaps, c.Warnings)
}
