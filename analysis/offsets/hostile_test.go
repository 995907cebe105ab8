package offsets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// legacyGood is a legacy midpoint file of three lines.
const legacyGood = `{"node_id":0,"midpoint_ns":500000000,"offset_ns":0,"drift_ppm":0}
{"node_id":1,"midpoint_ns":500000000,"offset_ns":-4,"drift_ppm":1000,"uncertainty_ns":4}
{"node_id":1,"midpoint_ns":1500000000,"offset_ns":7,"drift_ppm":3,"uncertainty_ns":5,"round_id":1,"window_id":1}
`

// onLine returns the legacy file content with line n (1-based) replaced by
// f of it.
func onLine(content string, n int, f func(string) string) string {
	ls := strings.Split(content, "\n")
	ls[n-1] = f(ls[n-1])
	return strings.Join(ls, "\n")
}

// TestLegacyHostile (issue 18 item 4): the legacy reader refuses trailing
// data or a second object on any line (a), numbers out of range (b),
// negative node ids and uncertainties (c) and midpoints whose windows
// cannot end after they start (d), each with a *LineError naming the file
// and the line.
func TestLegacyHostile(t *testing.T) {
	const drift = "expected |drift_ppm| ≤ 1000"
	const year = "expected |offset_ns| ≤ 31557600000000000 (one year)"
	l3 := func(f func(string) string) string { return onLine(legacyGood, 3, f) }
	set := func(field, value string) func(string) string {
		return func(l string) string { return with(l, field, value) }
	}
	line3 := strings.Split(legacyGood, "\n")[2]
	cases := []struct{ name, in, err string }{
		// (a) data after the object, on a line after the first and on the
		// first.
		{"a: second object on line 3", l3(func(l string) string { return l + `{"node_id":2,"midpoint_ns":1,"offset_ns":0}` }),
			fmt.Sprintf("offsets.json:3: unexpected data after the JSON object at column %d", len(line3)+1)},
		{"a: garbage on line 2", onLine(legacyGood, 2, func(l string) string { return l + " x" }),
			fmt.Sprintf("offsets.json:2: unexpected data after the JSON object at column %d", len(strings.Split(legacyGood, "\n")[1])+2)},
		{"a: second object on line 1", onLine(legacyGood, 1, func(l string) string { return l + " {}" }),
			fmt.Sprintf("offsets.json:1: unexpected data after the JSON object at column %d", len(strings.Split(legacyGood, "\n")[0])+2)},
		{"a: second object on an unterminated last line", legacyGood + `{"node_id":2,"midpoint_ns":1,"offset_ns":0}{}`,
			"offsets.json:4: unexpected data after the JSON object at column 44"},
		{"a: not closed", l3(func(l string) string { return l[:len(l)-1] }), "offsets.json:3: invalid JSON: the object is not closed"},
		{"a: duplicate field", l3(func(l string) string { return strings.Replace(l, `"node_id":1`, `"node_id":1,"node_id":2`, 1) }),
			`offsets.json:3: duplicate field "node_id"`},
		// (b) numbers out of range.
		{"b: drift 1e308", l3(set("drift_ppm", "1e308")), "offsets.json:3: drift_ppm: 1e+308 is out of range; " + drift},
		{"b: drift -1e308", l3(set("drift_ppm", "-1e308")), "offsets.json:3: drift_ppm: -1e+308 is out of range; " + drift},
		{"b: drift 1000.5", l3(set("drift_ppm", "1000.5")), "offsets.json:3: drift_ppm: 1000.5 is out of range; " + drift},
		{"b: drift 1e999", l3(set("drift_ppm", "1e999")), "offsets.json:3: drift_ppm: expected a number, got 1e999"},
		{"b: offset 1e308", l3(set("offset_ns", "1e308")), "offsets.json:3: offset_ns: 1e+308 is out of range; " + year},
		{"b: offset null", l3(set("offset_ns", "null")), "offsets.json:3: offset_ns: expected a number, got null"},
		{"b: uncertainty 1e999", l3(set("uncertainty_ns", "1e999")), "offsets.json:3: uncertainty_ns: expected a number, got 1e999"},
		// (c) negative ids and uncertainties.
		{"c: node -1", l3(set("node_id", "-1")), "offsets.json:3: node_id: expected a non-negative integer, got -1"},
		{"c: uncertainty -5", l3(set("uncertainty_ns", "-5")), "offsets.json:3: uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
		{"c: round -1", l3(set("round_id", "-1")), "offsets.json:3: round_id: expected a non-negative integer, got -1"},
		{"c: window -1", l3(set("window_id", "-1")), "offsets.json:3: window_id: expected a non-negative integer, got -1"},
		// (d) midpoints at the ends of the int64 range.
		{"d: no room at the top", "{\"node_id\":1,\"midpoint_ns\":9223372036854775806,\"offset_ns\":1}\n\n{\"node_id\":1,\"midpoint_ns\":9223372036854775807,\"offset_ns\":2}\n",
			"offsets.json:3: midpoint_ns: 9223372036854775807 leaves its window no room before the end of the int64 range: [9223372036854775807, 9223372036854775807) does not end after it starts"},
		{"d: beyond int64", l3(set("midpoint_ns", "9223372036854775808")), "offsets.json:3: midpoint_ns: expected an integer, got 9223372036854775808"},
		{"d: a fraction", l3(set("midpoint_ns", "1.5")), "offsets.json:3: midpoint_ns: expected an integer, got 1.5"},
		// The shape.
		{"missing", l3(set("midpoint_ns", "")), `offsets.json:3: missing field "midpoint_ns"`},
		{"unknown", l3(func(l string) string { return strings.Replace(l, "{", `{"type":"offset",`, 1) }), `offsets.json:3: unknown field "type"`},
	}
	for _, tc := range cases {
		offs, err := DecodeLegacy(strings.NewReader(tc.in), "offsets.json")
		check(t, tc.name, err, tc.err)
		if err != nil && offs != nil {
			t.Errorf("%s: records with the error", tc.name)
		}
	}

	// The good file, read from a path; a torn last line is read too.
	path := filepath.Join(t.TempDir(), "offsets.json")
	if err := os.WriteFile(path, []byte(strings.TrimSuffix(legacyGood, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	offs, err := ReadLegacy(path)
	if err != nil || len(offs) != 3 {
		t.Fatalf("good file: %d records, %v", len(offs), err)
	}
	if o := offs[2]; o.Type != "offset" || o.NodeID != 1 || o.RoundID != 1 || o.WindowID != 1 || o.UncertaintyNS != 5 ||
		o.WindowStartNS != 1e9 || o.WindowEndNS != 2e9 || o.OffsetNS != 7-3e-6*5e8 {
		t.Errorf("line 3 reads as %+v", o)
	}
}

// TestLegacyWindows: the windows tile each node's clock from midpoint to
// midpoint, the later of two records at one midpoint covers it, the first
// and last reach out as far as they reach in, and no further than an int64
// does; a midpoint that leaves its window no room, and a bad field, are
// errors naming the line.
func TestLegacyWindows(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	type window struct {
		node       int
		start, end int64
		offset     float64
	}
	for _, tc := range []struct {
		name  string
		lines string
		want  []window
		err   string // after "legacy.jsonl:"
	}{
		{"doc example", `{"node_id":1,"midpoint_ns":1000,"offset_ns":50,"drift_ppm":10,"uncertainty_ns":3,"round_id":1,"window_id":1}
{"node_id":1,"midpoint_ns":3001,"offset_ns":60,"drift_ppm":10}
{"node_id":0,"midpoint_ns":1000,"offset_ns":0,"drift_ppm":0}`,
			[]window{{0, 1000 - 1e9, 1000 + 1e9, 0}, {1, 1000 - 1001, 2001, 50 - 10e-6*1001}, {1, 2001, 3001 + 1000, 60 - 10e-6*1000}}, ""},
		{"two at one midpoint", `{"node_id":1,"midpoint_ns":1000,"offset_ns":50,"drift_ppm":0}
{"node_id":1,"midpoint_ns":1000,"offset_ns":70,"drift_ppm":0}`,
			[]window{{1, 1000 - 1e9, 1000 + 1e9, 70}}, ""},
		{"1 ns apart", `{"node_id":1,"midpoint_ns":10,"offset_ns":1,"drift_ppm":0}
{"node_id":1,"midpoint_ns":11,"offset_ns":2,"drift_ppm":0}`,
			[]window{{1, 9, 11, 1}, {1, 11, 12, 2}}, ""},
		{"at the ends of int64", `{"node_id":1,"midpoint_ns":-9223372036854775808,"offset_ns":1,"drift_ppm":0}
{"node_id":1,"midpoint_ns":9223372036854775807,"offset_ns":2,"drift_ppm":0}`,
			[]window{{1, lo, 0, 1}, {1, 0, hi, 2}}, ""},
		{"lone, near the top", `{"node_id":1,"midpoint_ns":9223372036854775000,"offset_ns":2,"drift_ppm":0}`,
			[]window{{1, 9223372036854775000 - 1e9, hi, 2}}, ""},
		{"no room at the top", `{"node_id":1,"midpoint_ns":9223372036854775806,"offset_ns":1,"drift_ppm":0}

{"node_id":1,"midpoint_ns":9223372036854775807,"offset_ns":2,"drift_ppm":0}`, nil,
			"3: midpoint_ns: 9223372036854775807 leaves its window no room before the end of the int64 range: [9223372036854775807, 9223372036854775807) does not end after it starts"},
		{"re-anchored beyond a year", `{"node_id":1,"midpoint_ns":0,"offset_ns":31557600000000000,"drift_ppm":-1000}
{"node_id":1,"midpoint_ns":9000000000000000000,"offset_ns":0,"drift_ppm":0}`,
			[]window{{1, -4.5e18, 4.5e18, 31557600000000000 + 4.5e15}, {1, 4.5e18, hi, 0}}, ""},
		{"negative node", `{"node_id":-1,"midpoint_ns":0,"offset_ns":0,"drift_ppm":0}`, nil,
			"1: node_id: expected a non-negative integer, got -1"},
		{"midpoint not an integer", `{"node_id":1,"midpoint_ns":1.5,"offset_ns":0,"drift_ppm":0}`, nil,
			"1: midpoint_ns: expected an integer, got 1.5"},
		{"lone, near the bottom", `{"node_id":1,"midpoint_ns":-9223372036854775000,"offset_ns":2}`,
			[]window{{1, lo, -9223372036854775000 + 1e9, 2}}, ""},
	} {
		offs, err := DecodeLegacy(strings.NewReader(tc.lines+"\n"), "legacy.jsonl")
		if tc.err != "" {
			if err == nil || err.Error() != "legacy.jsonl:"+tc.err {
				t.Errorf("%s:\n got %v\nwant legacy.jsonl:%s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []window
		for _, o := range offs {
			got = append(got, window{o.NodeID, o.WindowStartNS, o.WindowEndNS, o.OffsetNS})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: windows\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

// TestLegacyWindowsNearLimits (issue 18 item 4d): random midpoints crowded
// at the ends of the int64 range give, for each node, windows that end
// after they start, abut, and cover their midpoints — or an error naming
// the midpoint at the very top that has no room.
func TestLegacyWindowsNearLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 4))
	for range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			mid := int64(rng.Uint64())
			switch rng.IntN(3) {
			case 0:
				mid = math.MaxInt64 - rng.Int64N(4)
			case 1:
				mid = math.MinInt64 + rng.Int64N(4)
			}
			fmt.Fprintf(&b, `{"node_id":%d,"midpoint_ns":%d,"offset_ns":1,"drift_ppm":1000}`+"\n", rng.IntN(2), mid)
		}
		offs, err := DecodeLegacy(strings.NewReader(b.String()), "l")
		if err != nil {
			if !strings.Contains(err.Error(), "midpoint_ns: 9223372036854775807 leaves its window no room") {
				t.Fatalf("%s: %v", b.String(), err)
			}
			continue
		}
		for i, o := range offs {
			if o.WindowEndNS <= o.WindowStartNS || math.IsInf(o.OffsetNS, 0) || math.IsNaN(o.OffsetNS) {
				t.Fatalf("%s: window %+v", b.String(), o)
			}
			if i > 0 && offs[i-1].NodeID == o.NodeID && offs[i-1].WindowEndNS != o.WindowStartNS {
				t.Fatalf("%s: windows %d and %d do not abut", b.String(), i-1, i)
			}
		}
	}
}

// TestReadHostile (issue 18 item 4, the offsets.jsonl and rounds.jsonl
// readers): the same classes as the legacy reader's. Negative node ids in
// a round's reported and missing lists were accepted; the other cases
// hold what was already refused.
func TestReadHostile(t *testing.T) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	step := `{"at_ns":0,"at_uncertainty_ns":1,"size_ns":2,"size_uncertainty_ns":3}`
	offsetCases := []struct{ name, in, err string }{
		{"second object on line 3", lines(om, goodOffset, goodOffset+goodOffset),
			fmt.Sprintf("offsets.jsonl:3: unexpected data after the JSON object at column %d", len(goodOffset)+1)},
		{"garbage after the meta line", lines(om+" x", goodOffset),
			fmt.Sprintf("offsets.jsonl:1: unexpected data after the JSON object at column %d", len(om)+2)},
		{"garbage in steps", lines(om, strings.Replace(goodOffset, "}", `,"steps":[`+step+` x]}`, 1)),
			fmt.Sprintf("offsets.jsonl:2: invalid JSON at column %d: invalid character 'x' after array element", len(goodOffset)-1+len(`,"steps":[`)+len(step)+2)},
		{"bad literal in a value", lines(om, with(goodOffset, "drift_ppm", "tru")),
			fmt.Sprintf("offsets.jsonl:2: invalid JSON at column %d: invalid character ',' in literal true (expecting 'e')", strings.Index(with(goodOffset, "drift_ppm", "tru"), "tru,")+4)},
		{"drift 1e308", lines(om, with(goodOffset, "drift_ppm", "1e308")), "offsets.jsonl:2: drift_ppm: 1e+308 is out of range; expected |drift_ppm| ≤ 1000"},
		{"drift uncertainty -0.5", lines(om, with(goodOffset, "drift_uncertainty_ppm", "-0.5")),
			"offsets.jsonl:2: drift_uncertainty_ppm: -0.5 is out of range; expected a finite drift_uncertainty_ppm ≥ 0"},
		{"node -1", lines(om, with(goodOffset, "node_id", "-1")), "offsets.jsonl:2: node_id: expected a non-negative integer, got -1"},
		{"window across the int64 range backwards", lines(om, with(with(goodOffset, "window_start_ns", "9223372036854775807"), "window_end_ns", "-9223372036854775808")),
			"offsets.jsonl:2: window_end_ns: -9223372036854775808 is not after window_start_ns 9223372036854775807; expected window_end_ns > window_start_ns"},
	}
	for _, tc := range offsetCases {
		_, _, err := DecodeOffsets(strings.NewReader(tc.in), "offsets.jsonl")
		check(t, tc.name, err, tc.err)
	}
	roundCases := []struct{ name, in, err string }{
		{"reported -1", lines(rm, strings.Replace(goodRound, `"reported":[0,1]`, `"reported":[-1,1]`, 1)),
			"rounds.jsonl:2: reported[0]: -1 is out of range; expected a node id ≥ 0"},
		{"missing -7", lines(rm, strings.Replace(goodRound, `"missing":[]`, `"missing":[3,-7]`, 1)),
			"rounds.jsonl:2: missing[1]: -7 is out of range; expected a node id ≥ 0"},
		{"src -1", lines(rm, with(goodEdge, "src", "-1")), "rounds.jsonl:2: src: expected a non-negative integer, got -1"},
		{"asym sigma -1", lines(rm, strings.Replace(goodEdge, "}", `,"asym_sigma_ns":-1}`, 1)),
			"rounds.jsonl:2: asym_sigma_ns: -1 is out of range; expected a finite asym_sigma_ns ≥ 0"},
		{"second object after an edge", lines(rm, goodEdge+"\t{}"),
			fmt.Sprintf("rounds.jsonl:2: unexpected data after the JSON object at column %d", len(goodEdge)+2)},
	}
	for _, tc := range roundCases {
		_, _, _, err := DecodeRounds(strings.NewReader(tc.in), "rounds.jsonl")
		check(t, tc.name, err, tc.err)
	}

	// Append refuses what the reader refuses.
	var b strings.Builder
	w, err := NewWriter(&b, testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	err = w.Append(Round{RoundID: 1, Reported: []int{0, -2}})
	if want := "reported[1]: -2 is out of range; expected a node id ≥ 0"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Append: got %v, want %s", err, want)
	}
}
