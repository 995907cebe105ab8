package offsets

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// metaLine is the meta line of a file of kind file, without its newline.
func metaLine(file string) string {
	var b strings.Builder
	w, err := NewWriter(&b, testMeta(file))
	if err != nil || w == nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

const goodOffset = `{"type":"offset","round_id":1,"window_id":1,"window_start_ns":-5,"window_end_ns":9,"node_id":2,"offset_ns":1.5,"drift_ppm":-3,"uncertainty_ns":7,"drift_uncertainty_ppm":0.5}`

const goodEdge = `{"type":"edge","round_id":1,"window_id":1,"src":0,"dst":1,"alpha":1e-6,"beta_ns":-4,"sigma_ns":2,"pairs_count":9,"lost_count":0}`

const goodRound = `{"type":"round","round_id":1,"window_id":1,"sequence_number":1,"reported":[0,1],"missing":[],"solved_nodes":2,"rms_residual_ns":1,"max_residual_ns":2,"rejected_edges":0,"window_ns":4000000000,"gather_wait_ns":5,"end_to_start_ns":6,"sequence_skew_ns":7,"retries":0,"message_bytes":100,"chi2":3.5,"chi2_dof":2,"p_value":0.17,"birge_ratio":1.3}`

// schema1Hint is what the readers add to a schema 1 refusal.
const schema1Hint = " (written before clock steps and the drift's uncertainty were recorded; regenerate it: chronosync estimate RUN_DIR re-solves the run from its probes.bin into RUN_DIR/estimates)"

// lines joins lines, each with its newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// with returns good with its field name's value replaced by value, or with
// the field removed when value is "".
func with(good, name, value string) string {
	i := strings.Index(good, `"`+name+`":`)
	j := i + len(name) + 3
	k := j + strings.IndexAny(good[j:], ",}")
	if value == "" && good[k] == '}' {
		return good[:i-1] + "}"
	}
	if value == "" {
		return good[:i] + good[k+1:]
	}
	return good[:j] + value + good[k:]
}

func TestReadErrors(t *testing.T) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	offsetCases := []struct{ name, in, err string }{
		{"empty file", "", `offsets.jsonl:1: expected a meta line, got an empty file`},
		{"torn meta", om, `offsets.jsonl:1: expected a meta line, got a torn line with no trailing newline`},
		{"no meta", lines(goodOffset), `offsets.jsonl:1: type: expected "meta", got "offset"`},
		{"schema 4", lines(with(om, "schema", "4")), `offsets.jsonl:1: schema: expected 3 or 2, got 4`},
		{"schema 1", lines(with(om, "schema", "1")), `offsets.jsonl:1: schema: expected 3 or 2, got 1` + schema1Hint},
		{"schema 1 without uncertainty", lines(with(with(om, "schema", "1"), "uncertainty", "")), `offsets.jsonl:1: schema: expected 3 or 2, got 1` + schema1Hint},
		{"schema 0", lines(with(om, "schema", "0")), `offsets.jsonl:1: schema: expected 3 or 2, got 0`},
		{"self_check not an object", lines(om, strings.Replace(goodOffset, "}", `,"self_check":3}`, 1)), `offsets.jsonl:2: self_check: expected an object, got 3`},
		{"self_check null", lines(om, strings.Replace(goodOffset, "}", `,"self_check":null}`, 1)), `offsets.jsonl:2: self_check: expected an object, got null`},
		{"self_check unknown field", lines(om, strings.Replace(goodOffset, "}", `,"self_check":{"predictions":2,"within_3sigma":1,"max_sigma":4,"worst":1}}`, 1)), `offsets.jsonl:2: self_check: unknown field "worst"`},
		{"self_check missing field", lines(om, strings.Replace(goodOffset, "}", `,"self_check":{"predictions":2,"max_sigma":4}}`, 1)), `offsets.jsonl:2: self_check: missing field "within_3sigma"`},
		{"self_check more within than predicted", lines(om, strings.Replace(goodOffset, "}", `,"self_check":{"predictions":2,"within_3sigma":3,"max_sigma":4}}`, 1)), `offsets.jsonl:2: self_check.within_3sigma: 3 is out of range; expected 0 ≤ within_3sigma ≤ predictions 2`},
		{"self_check negative sigma", lines(om, strings.Replace(goodOffset, "}", `,"self_check":{"predictions":2,"within_3sigma":1,"max_sigma":-1}}`, 1)), `offsets.jsonl:2: self_check.max_sigma: -1 is out of range; expected a finite max_sigma ≥ 0`},
		{"schema string", lines(with(om, "schema", `"1"`)), `offsets.jsonl:1: schema: expected an integer, got "1"`},
		{"schema null", lines(with(om, "schema", `null`)), `offsets.jsonl:1: schema: expected an integer, got null`},
		{"no schema", lines(with(om, "schema", "")), `offsets.jsonl:1: missing field "schema"`},
		{"file kind", lines(rm), `offsets.jsonl:1: file: expected "offsets", got "rounds"`},
		{"units", lines(with(om, "units", `"us"`)), `offsets.jsonl:1: units: expected "ns", got "us"`},
		{"mode", lines(with(om, "mode", `"lazy"`)), `offsets.jsonl:1: mode: expected "rounds", "windows" or "consensus", got "lazy"`},
		{"model", lines(with(om, "model", `"global = local"`)), `offsets.jsonl:1: model: expected "` + Model + `", got "global = local"`},
		{"uncertainty", lines(with(om, "uncertainty", `"sigma_ns = uncertainty_ns"`)), `offsets.jsonl:1: uncertainty: expected "` + UncertaintyModel + `", got "sigma_ns = uncertainty_ns"`},
		{"no uncertainty", lines(with(om, "uncertainty", "")), `offsets.jsonl:1: missing field "uncertainty"`},
		{"reference", lines(with(om, "reference_node", "-1")), `offsets.jsonl:1: reference_node: expected a non-negative integer, got -1`},
		{"meta missing", lines(with(om, "estimator", "")), `offsets.jsonl:1: missing field "estimator"`},
		{"meta unknown", lines(strings.Replace(om, "{", `{"extra":1,`, 1)), `offsets.jsonl:1: unknown field "extra" for type "meta"`},
		{"not a number", lines(om, goodOffset, with(goodOffset, "node_id", "3"), with(goodOffset, "node_id", "4"), with(goodOffset, "node_id", "5"), with(goodOffset, "node_id", "6"), with(goodOffset, "offset_ns", `"abc"`)),
			`offsets.jsonl:7: offset_ns: expected a number, got "abc"`},
		{"negative node", lines(om, with(goodOffset, "node_id", "-1")), `offsets.jsonl:2: node_id: expected a non-negative integer, got -1`},
		{"fraction", lines(om, with(goodOffset, "round_id", "1.5")), `offsets.jsonl:2: round_id: expected a non-negative integer, got 1.5`},
		{"negative uint", lines(om, with(goodOffset, "window_id", "-1")), `offsets.jsonl:2: window_id: expected a non-negative integer, got -1`},
		{"int overflow", lines(om, with(goodOffset, "window_end_ns", "9223372036854775808")), `offsets.jsonl:2: window_end_ns: expected an integer, got 9223372036854775808`},
		{"float overflow", lines(om, with(goodOffset, "drift_ppm", "1e999")), `offsets.jsonl:2: drift_ppm: expected a number, got 1e999`},
		{"null", lines(om, with(goodOffset, "window_start_ns", "null")), `offsets.jsonl:2: window_start_ns: expected an integer, got null`},
		{"other type", lines(om, goodEdge), `offsets.jsonl:2: type: expected "offset", got "edge"`},
		{"meta again", lines(om, goodOffset, om), `offsets.jsonl:3: type: expected "offset", got "meta"`},
		{"type number", lines(om, with(goodOffset, "type", "5")), `offsets.jsonl:2: type: expected "offset", got 5`},
		{"no type", lines(om, with(goodOffset, "type", "")), `offsets.jsonl:2: missing field "type"`},
		{"missing two", lines(om, with(with(goodOffset, "drift_ppm", ""), "uncertainty_ns", "")), `offsets.jsonl:2: missing fields "drift_ppm", "uncertainty_ns"`},
		{"unknown field", lines(om, strings.Replace(goodOffset, `"node_id"`, `"node":3,"node_id"`, 1)), `offsets.jsonl:2: unknown field "node" for type "offset"`},
		{"duplicate", lines(om, strings.Replace(goodOffset, `"node_id"`, `"node_id":3,"node_id"`, 1)), `offsets.jsonl:2: duplicate field "node_id"`},
		{"array", lines(om, "[1,2]"), `offsets.jsonl:2: expected a JSON object, got [1,2]`},
		{"bare word", lines(om, "offset"), `offsets.jsonl:2: expected a JSON object, got offset`},
		{"empty line", lines(om, ""), `offsets.jsonl:2: expected a JSON object, got an empty line`},
		{"long value", lines(om, with(goodOffset, "offset_ns", `"`+strings.Repeat("x", 60)+`"`)), `offsets.jsonl:2: offset_ns: expected a number, got "` + strings.Repeat("x", 39) + `…`},
		{"syntax", lines(om, `{"type":"offset",}`), `offsets.jsonl:2: invalid JSON at column 18: invalid character '}' looking for beginning of object key string`},
		{"not closed", lines(om, `{"type":"offset"`), `offsets.jsonl:2: invalid JSON: the object is not closed`},
		{"trailing data", lines(om, goodOffset+` {}`), fmt.Sprintf("offsets.jsonl:2: unexpected data after the JSON object at column %d", len(goodOffset)+2)},
	}
	for _, tc := range offsetCases {
		_, _, err := DecodeOffsets(strings.NewReader(tc.in), "offsets.jsonl")
		check(t, tc.name, err, tc.err)
	}
	roundCases := []struct{ name, in, err string }{
		{"offsets file", lines(om), `rounds.jsonl:1: file: expected "rounds", got "offsets"`},
		{"offset record", lines(rm, goodEdge, goodOffset), `rounds.jsonl:3: type: expected "edge" or "round", got "offset"`},
		{"residual", lines(rm, strings.Replace(goodEdge, "}", `,"residual_ns":"x"}`, 1)), `rounds.jsonl:2: residual_ns: expected a number, got "x"`},
		{"boolean", lines(rm, strings.Replace(goodEdge, "}", `,"rejected":"yes"}`, 1)), `rounds.jsonl:2: rejected: expected true or false, got "yes"`},
		{"edge missing", lines(rm, with(goodEdge, "sigma_ns", "")), `rounds.jsonl:2: missing field "sigma_ns"`},
		{"round array", lines(rm, `{"type":"round","reported":[1,"a"]}`), `rounds.jsonl:2: reported: expected an array of integers, got [1,"a"]`},
		{"round null", lines(rm, `{"type":"round","missing":null}`), `rounds.jsonl:2: missing: expected an array of integers, got null`},
		{"round missing", lines(rm, `{"type":"round","round_id":1}`), `rounds.jsonl:2: missing fields "window_id", "sequence_number", "reported", "missing", "solved_nodes", "rms_residual_ns", "max_residual_ns", "rejected_edges", "window_ns", "gather_wait_ns", "end_to_start_ns", "sequence_skew_ns", "retries", "message_bytes", "chi2", "chi2_dof", "p_value", "birge_ratio"`},
		{"round chi2_dof", lines(rm, with(goodRound, "chi2_dof", "-1")), `rounds.jsonl:2: chi2_dof: expected a non-negative integer, got -1`},
		{"round warning", lines(rm, strings.Replace(goodRound, "}", `,"warning":7}`, 1)), `rounds.jsonl:2: warning: expected a string, got 7`},
	}
	for _, tc := range roundCases {
		_, _, _, err := DecodeRounds(strings.NewReader(tc.in), "rounds.jsonl")
		check(t, tc.name, err, tc.err)
	}
}

func check(t *testing.T, name string, err error, want string) {
	t.Helper()
	var le *LineError
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %s", name, want)
	case err.Error() != want:
		t.Errorf("%s:\n got %s\nwant %s", name, err, want)
	case !errors.As(err, &le):
		t.Errorf("%s: %T is not a *LineError", name, err)
	}
}

func TestGoodLinesRead(t *testing.T) {
	info, offs, err := DecodeOffsets(strings.NewReader(lines(metaLine(FileOffsets), goodOffset)), "o")
	if err != nil || info.Lines != 2 || len(offs) != 1 || offs[0].OffsetNS != 1.5 || offs[0].DriftUncertaintyPPM != 0.5 || offs[0].Steps != nil {
		t.Errorf("%+v %+v %v", info, offs, err)
	}
	_, edges, rounds, err := DecodeRounds(strings.NewReader(lines(metaLine(FileRounds), goodEdge, goodRound)), "r")
	if err != nil || len(edges) != 1 || edges[0].Residual != nil || len(rounds) != 1 ||
		rounds[0].Chi2 != 3.5 || rounds[0].Chi2DOF != 2 || rounds[0].PValue != 0.17 || rounds[0].BirgeRatio != 1.3 || rounds[0].Inconsistent {
		t.Errorf("%+v %+v %v", edges, rounds, err)
	}
}

func TestLongLines(t *testing.T) {
	var b strings.Builder
	w, err := NewWriter(&b, testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	big := Round{Reported: make([]int, 50000), Missing: []int{}}
	for i := range big.Reported {
		big.Reported[i] = i
	}
	if err := w.Append(big); err != nil {
		t.Fatal(err)
	}
	_, _, rounds, err := DecodeRounds(strings.NewReader(b.String()), "rounds.jsonl")
	if err != nil || len(rounds) != 1 || len(rounds[0].Reported) != 50000 {
		t.Fatalf("a %d-byte line: %v", b.Len(), err)
	}
	_, _, _, err = DecodeRounds(strings.NewReader(lines(metaLine(FileRounds), strings.Repeat(" ", MaxLineBytes+1))), "rounds.jsonl")
	check(t, "too long", err, "rounds.jsonl:2: line longer than 16 MiB (offsets.MaxLineBytes)")
}

// failingReader fails after its data.
type failingReader struct{ data string }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, errors.New("device gone")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderErrorPassesThrough(t *testing.T) {
	_, _, err := DecodeOffsets(&failingReader{lines(metaLine(FileOffsets)) + `{"type"`}, "offsets.jsonl")
	var le *LineError
	if err == nil || errors.As(err, &le) || err.Error() != "offsets.jsonl: device gone" {
		t.Errorf("got %v, want the reader's error", err)
	}
}
