package validate

import (
	"slices"
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
)

// twoNodes are two nodes whose one collective overlaps, declaring a job
// of declared nodes.
func twoNodes(declared int) []Node {
	op := Op{Key: "ar", StartNs: 0, EndNs: 10}
	return []Node{
		{ID: 0, Source: "node0.xplane.pb", Ops: []Op{op}, Declared: declared},
		{ID: 1, Source: "node1.xplane.pb", Ops: []Op{op}, Declared: declared},
	}
}

// TestEmptyTrace: a trace of 0 bytes, or one of planes without events,
// reads as a node without collectives (or none at all), and before it
// gave no word; now it is a warning that names the node and the file,
// counted in Warnings, after the coverage warnings.
func TestEmptyTrace(t *testing.T) {
	whole := xspace.Counts{Bytes: 93972, Planes: 3, Events: 2422}
	tests := []struct {
		name   string
		traces []Trace
		want   []string // WarningsText
	}{
		{"whole", []Trace{{Source: "node0.xplane.pb", Node: 0, Counts: whole}, {Source: "node1.xplane.pb", Node: 1, Counts: whole}}, []string{}},
		{"0 bytes", []Trace{
			{Source: "node0.xplane.pb", Node: 0, Counts: whole}, {Source: "node1.xplane.pb", Node: 1, Counts: whole},
			{Source: "node2.xplane.pb", Node: 2}}, []string{
			"1 of 3 declared nodes are missing (2): their collectives are not checked, so the counts say nothing about them",
			"node 2 (node2.xplane.pb): the trace has no planes and no events (0 bytes): nothing of it is checked"}},
		{"planes without events", []Trace{
			{Source: "node0.xplane.pb", Node: 0, Counts: whole}, {Source: "node1.xplane.pb", Node: 1, Counts: whole},
			{Source: "node2.xplane.pb", Node: 2, Counts: xspace.Counts{Bytes: 40, Planes: 2}}}, []string{
			"1 of 3 declared nodes are missing (2): their collectives are not checked, so the counts say nothing about them",
			"node 2 (node2.xplane.pb): the trace has 2 planes and no events: nothing of it is checked"}},
		{"a combined trace without events", []Trace{{Source: "combined.xplane.pb", Node: -1, Counts: xspace.Counts{Bytes: 4, Planes: 2}}}, []string{
			"1 of 3 declared nodes are missing (2): their collectives are not checked, so the counts say nothing about them",
			"combined.xplane.pb: the trace has 2 planes and no events: nothing of it is checked"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			declared := 3
			if tc.name == "whole" {
				declared = 2
			}
			r := CheckTraces(twoNodes(declared), tc.traces)
			if !slices.Equal(r.WarningsText, tc.want) {
				t.Errorf("warnings:\n%q\nwant\n%q", r.WarningsText, tc.want)
			}
			if r.Warnings != len(tc.want) || r.Overlaps != 1 {
				t.Errorf("%s; want %d warnings and the overlap", r.Summary(), len(tc.want))
			}
		})
	}
}

// TestCutTrace: a trace cut at a message boundary reads as fewer planes
// and events; where its run recorded its counts, the difference is a
// warning (before: nothing, "Nodes: 4 of 4 declared"), and the trace's
// line says whether it is what the run recorded. Without a record the
// line gives the counts alone.
func TestCutTrace(t *testing.T) {
	rec := xspace.Counts{Bytes: 93968, Planes: 3, Events: 2421}
	tests := []struct {
		name     string
		got      xspace.Counts
		recorded *xspace.Counts
		warning  string
		line     string
	}{
		{"as recorded", rec, &rec, "", "trace node2.xplane.pb: node 2, 3 planes and 2,421 events, as its run recorded"},
		{"a plane cut", xspace.Counts{Bytes: 93395, Planes: 2, Events: 2400}, &rec,
			"node 2 (node2.xplane.pb): trace has 2 planes and 2,400 events; the run recorded 3 planes and 2,421 events: the trace is cut",
			"trace node2.xplane.pb: node 2, 2 planes and 2,400 events, not what its run recorded (see the warning)"},
		{"the host names cut", xspace.Counts{Bytes: 93961, Planes: 3, Events: 2421}, &rec,
			"node 2 (node2.xplane.pb): trace has 93,961 bytes, 3 planes and 2,421 events; the run recorded 93,968 bytes: the trace is cut",
			"trace node2.xplane.pb: node 2, 3 planes and 2,421 events, not what its run recorded (see the warning)"},
		{"more than recorded", xspace.Counts{Bytes: 99999, Planes: 4, Events: 2421}, &rec,
			"node 2 (node2.xplane.pb): trace has 4 planes and 2,421 events; the run recorded 3 planes and 2,421 events: it is not the trace the run wrote",
			"trace node2.xplane.pb: node 2, 4 planes and 2,421 events, not what its run recorded (see the warning)"},
		{"no record", xspace.Counts{Bytes: 93395, Planes: 2, Events: 2400}, nil, "",
			"trace node2.xplane.pb: node 2, 2 planes and 2,400 events, no record of its run to compare with (traces.json)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckTraces(twoNodes(0), []Trace{{Source: "node2.xplane.pb", Node: 2, Counts: tc.got, Recorded: tc.recorded}})
			var want []string
			if tc.warning != "" {
				want = []string{tc.warning}
			}
			if got := r.TraceWarnings(); !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
			if r.Warnings != len(want) {
				t.Errorf("Warnings %d, want %d", r.Warnings, len(want))
			}
			if got := r.TraceCounts(); len(got) != 1 || got[0] != tc.line {
				t.Errorf("line %q, want %q", got, tc.line)
			}
		})
	}
}
