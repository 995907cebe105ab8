package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/combine"
)

// TestCalibrateStrictOffsets (issue 30): calibrate reads offsets.jsonl as
// combine does. It used to take a file with 12 of its 33 lines missing and
// its last line torn, and print "ok" on the half of the points left, while
// combine refused the same file; now both refuse it with one error, as
// they refuse a file with lines missing only, a torn last line only, or a
// second record of one round and node.
func TestCalibrateStrictOffsets(t *testing.T) {
	sc := rtParse(t, "strict", `
name: strict
seed: 7
duration: 3s
nodes: 4
clocks:
  default: {offset: "uniform(-1ms, 1ms)", drift_ppm: "uniform(-50, 50)", read_noise: 20ns}
links:
  default: {delay: 20us, jitter: 10us}
protocol: {kind: sync, cadence: 2ms, window: 250ms, rounds: 8, converged_from: 1}
`)
	_, run := rtRun(t, sc, nil)
	if _, err := Calibrate(run); err != nil {
		t.Fatalf("the whole run: %v", err)
	}
	whole, err := os.ReadFile(filepath.Join(run, FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) != 33 {
		t.Fatalf("offsets.jsonl has %d lines, want 33 (a meta line, 8 rounds of 4 nodes)", len(lines))
	}
	// Lines 3, 5, ..., 25 (12 of them) missing: rounds 1 to 6 keep 2 of
	// their 4 records.
	var gaps []string
	for i, l := range lines {
		if n := i + 1; n < 3 || n > 25 || n%2 == 0 {
			gaps = append(gaps, l)
		}
	}
	torn := func(ls []string) string {
		s := strings.Join(ls, "")
		return s[:len(s)-60]
	}
	// A second record for round 3 node 2 (line 12), 1 ms further off, two
	// lines after it.
	var second map[string]any
	if err := json.Unmarshal([]byte(lines[11]), &second); err != nil || second["round_id"] != 3.0 || second["node_id"] != 2.0 {
		t.Fatalf("line 12 is not round 3 node 2: %s", lines[11])
	}
	second["offset_ns"] = second["offset_ns"].(float64) + 1e6
	dup, _ := json.Marshal(second)
	dupped := strings.Join(lines[:13], "") + string(dup) + "\n" + strings.Join(lines[13:], "")

	off := filepath.Join(run, FileOffsets)
	for _, tc := range []struct{ name, text, want string }{
		{"reported: 12 of 33 lines missing and the last torn", torn(gaps),
			fmt.Sprintf("%s:21: the last line is torn (an interrupted write: %d bytes and no newline)", off, len(lines[32])-60)},
		{"12 of 33 lines missing", strings.Join(gaps, ""),
			off + ": round 1: records of 2 nodes (0, 2), but " + filepath.Join(run, FileRounds) + ":"},
		{"the last line torn", torn(lines), off + ":33: the last line is torn"},
		{"a second record", dupped, off + ":14: round 3 node 2: a second record (first at line 12)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(off, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Calibrate(run)
			if err == nil {
				t.Fatalf("calibrate accepts it: %d points, %.1f%% within 3σ", res.Points, 100*res.Within3)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("calibrate: %v\nwant %s", err, tc.want)
			}
			// combine refuses it with the same words, before it reads a
			// trace.
			trace := filepath.Join(t.TempDir(), "node0.xplane.pb")
			if err := os.WriteFile(trace, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, cerr := combine.Combine([]combine.Input{{Node: 0, Trace: trace}},
				combine.Options{Offsets: off, Output: filepath.Join(t.TempDir(), "out", "combined.xplane.pb")})
			if cerr == nil {
				t.Fatal("combine accepts it")
			}
			tail := func(e error) string { _, s, _ := strings.Cut(e.Error(), off); return s }
			if tail(cerr) != tail(err) {
				t.Errorf("calibrate and combine differ:\ncalibrate: %v\n  combine: %v", err, cerr)
			}
		})
	}
}
