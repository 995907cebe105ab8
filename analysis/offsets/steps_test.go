package offsets

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// withSteps is goodOffset (window [-5, 9]) with a "steps" field of value v.
func withSteps(v string) string {
	return strings.TrimSuffix(goodOffset, "}") + `,"steps":` + v + "}"
}

// step is a step object of goodOffset's window with at_ns at.
func step(at string) string {
	return `{"at_ns":` + at + `,"at_uncertainty_ns":1,"size_ns":2,"size_uncertainty_ns":3}`
}

// TestReadStepsErrors: steps is an array of objects, each with exactly
// Step's four fields, each of its kind; errors name the path.
func TestReadStepsErrors(t *testing.T) {
	two := func(second string) string { return withSteps("[" + step("0") + "," + second + "]") }
	for _, tc := range []struct{ name, line, err string }{
		{"number", withSteps("5"), `steps: expected an array of steps, got 5`},
		{"null", withSteps("null"), `steps: expected an array of steps, got null`},
		{"string", withSteps(`"x"`), `steps: expected an array of steps, got "x"`},
		{"one object", withSteps(step("0")), `steps: expected an array of steps, got {"at_ns":0,"at_uncertainty_ns":1,"size_n…`},
		{"element number", withSteps("[5]"), `steps[0]: expected a JSON object, got 5`},
		{"element null", two("null"), `steps[1]: expected a JSON object, got null`},
		{"element array", withSteps("[[1,2]]"), `steps[0]: expected a JSON object, got [1,2]`},
		{"unknown", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"sise_ns":2,"size_uncertainty_ns":3}]`),
			`steps[0]: unknown field "sise_ns"`},
		{"other case", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"Size_ns":2,"size_uncertainty_ns":3}]`),
			`steps[0]: unknown field "Size_ns"`},
		{"extra", two(strings.Replace(step("4"), "{", `{"type":"step",`, 1)), `steps[1]: unknown field "type"`},
		{"duplicate", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"size_ns":2,"size_ns":2,"size_uncertainty_ns":3}]`),
			`steps[0]: duplicate field "size_ns"`},
		{"missing one", two(`{"at_ns":4,"at_uncertainty_ns":1,"size_ns":2}`), `steps[1]: missing field "size_uncertainty_ns"`},
		{"missing all", withSteps("[{}]"), `steps[0]: missing fields "at_ns", "at_uncertainty_ns", "size_ns", "size_uncertainty_ns"`},
		{"size string", two(`{"at_ns":4,"at_uncertainty_ns":1,"size_ns":"x","size_uncertainty_ns":3}`), `steps[1].size_ns: expected a number, got "x"`},
		{"size null", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"size_ns":null,"size_uncertainty_ns":3}]`), `steps[0].size_ns: expected a number, got null`},
		{"size 1e999", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"size_ns":1e999,"size_uncertainty_ns":3}]`), `steps[0].size_ns: expected a number, got 1e999`},
		{"sigma bool", withSteps(`[{"at_ns":0,"at_uncertainty_ns":1,"size_ns":2,"size_uncertainty_ns":true}]`), `steps[0].size_uncertainty_ns: expected a number, got true`},
		{"at fraction", withSteps("[" + step("1.5") + "]"), `steps[0].at_ns: expected an integer, got 1.5`},
		{"at string", withSteps("[" + step(`"0"`) + "]"), `steps[0].at_ns: expected an integer, got "0"`},
		{"at overflow", withSteps("[" + step("9223372036854775808") + "]"), `steps[0].at_ns: expected an integer, got 9223372036854775808`},
		{"at_uncertainty array", withSteps(`[{"at_ns":0,"at_uncertainty_ns":[1],"size_ns":2,"size_uncertainty_ns":3}]`), `steps[0].at_uncertainty_ns: expected a number, got [1]`},
	} {
		_, _, err := DecodeOffsets(strings.NewReader(lines(metaLine(FileOffsets), goodOffset, tc.line)), "offsets.jsonl")
		check(t, tc.name, err, "offsets.jsonl:3: "+tc.err)
	}
}

// TestReadSteps: steps read in order, whatever the spacing and the order
// of their fields; an empty array reads as no steps.
func TestReadSteps(t *testing.T) {
	for _, tc := range []struct {
		name, steps string
		want        []Step
	}{
		{"two", "[" + step("-5") + "," + step("9") + "]", []Step{{-5, 1, 2, 3}, {9, 1, 2, 3}}},
		{"spaced, reordered", ` [ {"size_uncertainty_ns": 0.5, "size_ns": -7e3, "at_uncertainty_ns": 0, "at_ns": 3} ] `, []Step{{3, 0, -7000, 0.5}}},
		{"empty", "[]", nil},
	} {
		_, offs, err := DecodeOffsets(strings.NewReader(lines(metaLine(FileOffsets), withSteps(tc.steps))), "offsets.jsonl")
		if err != nil || len(offs) != 1 || !reflect.DeepEqual(offs[0].Steps, tc.want) {
			t.Errorf("%s: %+v, %v; want steps %+v", tc.name, offs, err, tc.want)
		}
	}
}

// TestStepsRoundTrip: records with steps, written by Append, read back
// equal, at the ends of the int64 range too; no steps write no field.
func TestStepsRoundTrip(t *testing.T) {
	recs := []Offset{
		{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 5e9, NodeID: 1, OffsetNS: -812.25, DriftPPM: 3.5,
			UncertaintyNS: 41.5, DriftUncertaintyPPM: 0.0125, Steps: []Step{
				{AtNS: 2_000_000_123, AtUncertaintyNS: 950.5, SizeNS: 1e6, SizeUncertaintyNS: 12.75},
				{AtNS: 4_999_999_999, AtUncertaintyNS: 0, SizeNS: -2.5e5, SizeUncertaintyNS: 0.1}}},
		{RoundID: 1, WindowID: 1, WindowStartNS: math.MaxInt64 - MaxWindowNS, WindowEndNS: math.MaxInt64, NodeID: 2,
			Steps: []Step{{AtNS: math.MaxInt64 - MaxWindowNS}, {AtNS: math.MaxInt64 - 1, SizeNS: -MaxOffsetNS, SizeUncertaintyNS: math.MaxFloat64}}},
		{RoundID: 1, WindowID: 1, WindowStartNS: 0, WindowEndNS: 1, NodeID: 3, DriftUncertaintyPPM: 7},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta(FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs[0], &recs[1], recs[2]); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"steps":`); n != 2 {
		t.Errorf("%d lines with steps, want 2:\n%s", n, buf.String())
	}
	_, got, err := DecodeOffsets(&buf, "offsets.jsonl")
	for i := range recs {
		recs[i].Type = "offset"
	}
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Errorf("read back %+v, %v\nwant %+v", got, err, recs)
	}
}
