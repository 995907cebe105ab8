package validate

import (
	"fmt"
	"slices"

	"github.com/chronosync/chronosync/trace/xspace"
)

// Trace is one trace file given to the check, with what it holds: a trace
// of 0 bytes, or one cut at a message boundary, still reads (as fewer
// planes and events, or none), and only its counts tell it.
type Trace struct {
	// Source names the file.
	Source string `json:"source"`
	// Node is the node whose trace it is; -1 for a trace that holds
	// several (a combined trace).
	Node int `json:"node"`
	// Counts is what it holds: its size, planes and events.
	xspace.Counts
	// Recorded is what the run that wrote it recorded of it (the
	// traces.json beside it, xspace.FileTraceRecord); nil where nothing
	// did.
	Recorded *xspace.Counts `json:"recorded,omitempty"`
}

// CheckTraces is [Check] on nodes, read from traces, with a warning for
// each trace that holds no planes or no events, and for each whose counts
// differ from those its run recorded (see [Report.TraceWarnings]): they
// come after the coverage warnings, and are counted in Warnings.
func CheckTraces(nodes []Node, traces []Trace) *Report {
	r := Check(nodes)
	r.Traces = slices.Clone(traces)
	w := r.TraceWarnings()
	at := min(len(r.CoverageWarnings()), len(r.WarningsText))
	r.WarningsText = slices.Insert(r.WarningsText, at, w...)
	r.Warnings = len(r.WarningsText)
	return r
}

// TraceWarnings returns the warnings about the traces themselves, in the
// order they were given: "node 2 (node2.xplane.pb): the trace has no
// planes and no events (0 bytes): nothing of it is checked", "node 2
// (node2.xplane.pb): trace has 2 planes and 2,400 events; the run
// recorded 3 planes and 2,421 events: the trace is cut".
func (r *Report) TraceWarnings() []string {
	var out []string
	for _, t := range r.Traces {
		who := t.Source
		if t.Node >= 0 {
			who = fmt.Sprintf("node %d (%s)", t.Node, t.Source)
		}
		if why := t.Empty(); why != "" {
			out = append(out, fmt.Sprintf("%s: the trace has %s: nothing of it is checked", who, why))
			continue
		}
		if t.Recorded != nil {
			if m := xspace.Mismatch(t.Counts, *t.Recorded); m != "" {
				out = append(out, who+": "+m)
			}
		}
	}
	return out
}

// TraceCounts returns a line per trace that says what it holds, and
// whether that is what its run recorded: "trace node2.xplane.pb: node 2, 3
// planes and 2,421 events, as its run recorded", "…, not what its run
// recorded (see the warning)" or "…, no record of its run to compare with
// (traces.json)".
func (r *Report) TraceCounts() []string {
	var out []string
	for _, t := range r.Traces {
		who := t.Source + ":"
		if t.Node >= 0 {
			who = fmt.Sprintf("%s: node %d,", t.Source, t.Node)
		}
		rec := "no record of its run to compare with (" + xspace.FileTraceRecord + ")"
		if t.Recorded != nil {
			rec = "as its run recorded"
			if xspace.Mismatch(t.Counts, *t.Recorded) != "" {
				rec = "not what its run recorded (see the warning)"
			}
		}
		out = append(out, fmt.Sprintf("trace %s %s, %s", who, t.Counts, rec))
	}
	return out
}
