package combine

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// strictOffsets is an offsets.jsonl of three nodes, written by the
// offsets package's writer; node 1's record is its third line.
func strictOffsets(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	w, err := offsets.NewWriter(&b, offsets.Meta{File: offsets.FileOffsets, RunID: "r", Estimator: "svm", Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(
		offsets.Offset{RoundID: 1, WindowID: 1, WindowEndNS: 1e9, NodeID: 0},
		offsets.Offset{RoundID: 2, WindowID: 2, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 1, OffsetNS: 7, DriftPPM: 3, UncertaintyNS: 5},
		offsets.Offset{RoundID: 1, WindowID: 1, WindowEndNS: 1e9, NodeID: 2, OffsetNS: -3, DriftPPM: -1000, UncertaintyNS: 9},
	); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// legacyOffsets is a legacy midpoint file; node 1's record at 1.5 s is its
// third line.
const legacyOffsets = `{"node_id":0,"midpoint_ns":500000000,"offset_ns":0,"drift_ppm":0}
{"node_id":1,"midpoint_ns":500000000,"offset_ns":-31557600000000000,"drift_ppm":1000,"uncertainty_ns":4}
{"node_id":1,"midpoint_ns":1500000000,"offset_ns":7,"drift_ppm":3,"uncertainty_ns":5}
{"node_id":2,"midpoint_ns":500000000,"offset_ns":-3,"drift_ppm":-1000,"uncertainty_ns":9,"round_id":1,"window_id":1}
`

// withField returns the JSONL text content with the value of field on
// line (1-based) replaced by value.
func withField(content string, line int, field, value string) string {
	lines := strings.SplitAfter(content, "\n")
	l := lines[line-1]
	i := strings.Index(l, `"`+field+`":`) + len(field) + 3
	j := i + strings.IndexAny(l[i:], ",}")
	lines[line-1] = l[:i] + value + l[j:]
	return strings.Join(lines, "")
}

// TestOffsetsFileRanges: each value out of range, in offsets.jsonl and in
// the legacy form, is an error naming the file, the line and the field;
// the same files with values at the bounds read.
func TestOffsetsFileRanges(t *testing.T) {
	const year = "is out of range; expected |offset_ns| ≤ 31557600000000000 (one year)"
	good := strictOffsets(t)
	strict := func(field, value string) string { return withField(good, 3, field, value) }
	legacy := func(field, value string) string { return withField(legacyOffsets, 3, field, value) }
	cases := []struct {
		name, field, value, err string
	}{
		{"offset 1e300", "offset_ns", "1e300", "offset_ns: 1e+300 " + year},
		{"offset -1e300", "offset_ns", "-1e300", "offset_ns: -1e+300 " + year},
		{"offset 1e18", "offset_ns", "1e18", "offset_ns: 1e+18 " + year},
		{"drift 1e300", "drift_ppm", "1e300", "drift_ppm: 1e+300 is out of range; expected |drift_ppm| ≤ 1000"},
		{"uncertainty -5", "uncertainty_ns", "-5", "uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
		{"offset 1e999", "offset_ns", "1e999", "offset_ns: expected a number, got 1e999"},
	}
	dir := t.TempDir()
	for _, form := range []struct {
		name string
		file func(field, value string) string
	}{{"offsets.jsonl", strict}, {"legacy", legacy}} {
		path := filepath.Join(dir, form.name)
		read := func(name, content, want string) {
			t.Helper()
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := readOffsets(path)
			if want == "" && err != nil {
				t.Errorf("%s %s: %v", form.name, name, err)
			}
			if want != "" && (err == nil || err.Error() != path+":3: "+want) {
				t.Errorf("%s %s:\n got %v\nwant %s", form.name, name, err, path+":3: "+want)
			}
		}
		for _, tc := range cases {
			read(tc.name, form.file(tc.field, tc.value), tc.err)
		}
		for _, v := range [][2]string{{"offset_ns", "31557600000000000"}, {"offset_ns", "-31557600000000000"},
			{"drift_ppm", "-1000"}, {"drift_ppm", "1000"}, {"uncertainty_ns", "0"}} {
			read(v[0]+" at the bound", form.file(v[0], v[1]), "")
		}
	}
	// The strict form's window; the legacy form has none (see
	// offsets.TestLegacyWindows).
	path := filepath.Join(dir, "offsets.jsonl")
	for _, end := range []string{"1000000000", "999999999"} {
		if err := os.WriteFile(path, []byte(strict("window_end_ns", end)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s:3: window_end_ns: %s is not after window_start_ns 1000000000; expected window_end_ns > window_start_ns", path, end)
		if _, _, err := readOffsets(path); err == nil || err.Error() != want {
			t.Errorf("window end %s:\n got %v\nwant %s", end, err, want)
		}
	}
}

// TestLegacyDispatch: combine reads a legacy midpoint file through
// offsets.ReadLegacy (whose windows TestLegacyWindows in package offsets
// pins): its windows, and its errors with the path and line.
func TestLegacyDispatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "legacy.jsonl")
	write := func(text string) {
		if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"node_id":1,"midpoint_ns":10,"offset_ns":1,"drift_ppm":0}
{"node_id":1,"midpoint_ns":11,"offset_ns":2,"drift_ppm":0}`)
	_, offs, err := readOffsets(path)
	if err != nil || len(offs) != 2 || offs[0].WindowStartNS != 9 || offs[0].WindowEndNS != 11 || offs[1].WindowEndNS != 12 {
		t.Fatalf("windows %+v, %v; want [9, 11) and [11, 12)", offs, err)
	}
	write(`{"node_id":-1,"midpoint_ns":0,"offset_ns":0,"drift_ppm":0}`)
	if _, _, err := readOffsets(path); err == nil || err.Error() != path+":1: node_id: expected a non-negative integer, got -1" {
		t.Errorf("a negative node: %v", err)
	}
}

// writeLegacySynth writes the clock models of writeSynth's nodes in the
// legacy midpoint form, one record per node at global time 50 s, and
// returns its path.
func writeLegacySynth(t *testing.T, dir string, nodes []synthNode) string {
	t.Helper()
	var b strings.Builder
	for i, n := range nodes {
		mid := n.host(50e9)
		fmt.Fprintf(&b, `{"node_id":%d,"midpoint_ns":%d,"offset_ns":%g,"drift_ppm":%g,"uncertainty_ns":20}`+"\n",
			i, int64(math.Round(mid)), mid-50e9, n.drift/(1+n.drift*1e-6))
	}
	path := filepath.Join(dir, "legacy.offsets.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// setField replaces the value of field on line (1-based) of the JSONL file
// at path.
func setField(t *testing.T, path string, line int, field, value string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(withField(string(b), line, field, value)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCombineOffsetsOutOfRange: an offsets file, of either form, with a
// value out of range is an error naming the file, the line and the field,
// and the outputs of an earlier combine are left as they were, not
// rewritten.
func TestCombineOffsetsOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		form, field, value string
		line               int // node 1's record
		want               string
	}{
		{"offsets.jsonl", "offset_ns", "1e300", 3, "offset_ns: 1e+300 is out of range; expected |offset_ns| ≤ 31557600000000000 (one year)"},
		{"offsets.jsonl", "offset_ns", "1e18", 3, "offset_ns: 1e+18 is out of range; expected |offset_ns| ≤ 31557600000000000 (one year)"},
		{"offsets.jsonl", "drift_ppm", "1e300", 3, "drift_ppm: 1e+300 is out of range; expected |drift_ppm| ≤ 1000"},
		{"offsets.jsonl", "uncertainty_ns", "-5", 3, "uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
		{"offsets.jsonl", "window_end_ns", "0", 3, "window_end_ns: 0 is not after window_start_ns 4000000; expected window_end_ns > window_start_ns"},
		{"legacy", "offset_ns", "-1e300", 2, "offset_ns: -1e+300 is out of range; expected |offset_ns| ≤ 31557600000000000 (one year)"},
		{"legacy", "drift_ppm", "1e300", 2, "drift_ppm: 1e+300 is out of range; expected |drift_ppm| ≤ 1000"},
		{"legacy", "uncertainty_ns", "-5", 2, "uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
	} {
		t.Run(tc.form+" "+tc.field+" "+tc.value, func(t *testing.T) {
			dir := t.TempDir()
			inputs, offs := writeSynth(t, dir, synthClocks, 4)
			if tc.form == "legacy" {
				offs = writeLegacySynth(t, dir, synthClocks)
			}
			out := filepath.Join(dir, "out", "combined.xplane.pb")
			res, err := Combine(inputs, Options{Offsets: offs, Output: out, Validate: true})
			if err != nil {
				t.Fatal(err)
			}
			before := map[string][]byte{}
			for _, f := range res.Files {
				if before[f], err = os.ReadFile(f); err != nil {
					t.Fatal(err)
				}
			}
			setField(t, offs, tc.line, tc.field, tc.value)
			_, err = Combine(inputs, Options{Offsets: offs, Output: out, Validate: true})
			if want := fmt.Sprintf("combine: %s:%d: %s", offs, tc.line, tc.want); err == nil || err.Error() != want {
				t.Fatalf("\n got %v\nwant %s", err, want)
			}
			t.Log(err)
			left, _ := os.ReadDir(filepath.Dir(out))
			if len(left) != len(before) {
				t.Errorf("the output directory holds %d files, want the %d of the first combine", len(left), len(before))
			}
			for f, b := range before {
				if now, err := os.ReadFile(f); err != nil || string(now) != string(b) {
					t.Errorf("%s was rewritten (%v)", f, err)
				}
			}
		})
	}
}

// TestCombinePicosecondOverflow: a clock model within the bounds whose
// correction takes an event's time beyond the ±106 days of int64
// picoseconds (node 1 200 days ahead, so its events land 200 days before
// the time base), and an event time in the trace past the int64 range,
// are errors naming the node, the line, the event and the value, not
// times wrapped around to the other side.
func TestCombinePicosecondOverflow(t *testing.T) {
	const days200 = 200 * 24 * 3600 * 1e9
	for _, tc := range []struct {
		name string
		mod  func(t *testing.T, dir string, in []Input, offs string)
		want string // a regular expression
	}{
		{"offset of 200 days", func(t *testing.T, dir string, in []Input, offs string) {
			setField(t, offs, 3, "offset_ns", fmt.Sprint(int64(days200)))
		}, `^combine: node 1 \(.*/node1\.xplane\.pb\): plane /host:CPU line 1: event "hipLaunchKernel" at offset_ps \d+: ` +
			`aligned start -1727999\d{10} ns lies beyond the ±9223372036854775 ns around the combined trace's time base \(0 ns\) that int64 picoseconds reach \(is the node's clock model out of range\?\)$`},
		{"offset of -200 days", func(t *testing.T, dir string, in []Input, offs string) {
			setField(t, offs, 4, "offset_ns", fmt.Sprint(int64(-days200)))
		}, `^combine: node 2 \(.*/node2\.xplane\.pb\): plane /host:CPU line 1: event "hipLaunchKernel" at offset_ps \d+: ` +
			`aligned start 1728000\d{10} ns lies beyond the ±9223372036854775 ns around the combined trace's time base \(0 ns\) that int64 picoseconds reach \(is the node's clock model out of range\?\)$`},
		{"offset_ps past int64", func(t *testing.T, dir string, in []Input, offs string) {
			space, err := xspace.Read(in[1].Trace)
			if err != nil {
				t.Fatal(err)
			}
			ev := space.Planes[1].Lines[0].Events[2]
			ev.Data = &xplanepb.XEvent_OffsetPs{OffsetPs: math.MaxInt64 - 1000}
			if err := xspace.Write(in[1].Trace, space); err != nil {
				t.Fatal(err)
			}
		}, `^combine: node 1 \(.*/node1\.xplane\.pb\): plane /device:GPU:0 line 1: event "rcclAllReduceKernel_sum_f32" at offset_ps 9223372036854774807: ` +
			`its start or end \(duration_ps 2000160000\) from the line's timestamp_ns 7000000 lies beyond the reach of int64 picoseconds$`},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d workers", tc.name, workers), func(t *testing.T) {
				dir := t.TempDir()
				inputs, offs := writeSynth(t, dir, synthClocks, 4)
				tc.mod(t, dir, inputs, offs)
				out := filepath.Join(dir, "out", "combined.xplane.pb")
				_, err := Combine(inputs, Options{Offsets: offs, Output: out, Validate: true, Workers: workers})
				if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
					t.Fatalf("\n got %v\nwant %s", err, tc.want)
				}
				t.Log(err)
				if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
					t.Errorf("left behind: %v", left)
				}
			})
		}
	}
}
