package offsets

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testMeta(file string) Meta {
	return Meta{File: file, RunID: "run-1", Reference: 0, Estimator: "minfilter", Mode: ModeRounds}
}

// full is testMeta as the writer completes it.
func full(file string) Meta {
	m := testMeta(file)
	m.Type, m.Schema, m.Units, m.Model, m.Uncertainty = "meta", Schema, "ns", Model, UncertaintyModel
	return m
}

func randomOffsets(rng *rand.Rand, rounds, nodes int) [][]any {
	var out [][]any
	for r := range rounds {
		var round []any
		for n := range nodes {
			start := rng.Int64N(2e18) - 1e18
			o := Offset{
				Type: "offset", RoundID: uint64(r), WindowID: uint64(r) * 3, WindowStartNS: start,
				WindowEndNS: start + 1e9, NodeID: n, OffsetNS: rng.NormFloat64() * 5e7,
				DriftPPM: rng.NormFloat64() * 50, UncertaintyNS: rng.ExpFloat64() * 100,
				DriftUncertaintyPPM: rng.ExpFloat64() * 0.01,
			}
			at := start
			for range rng.IntN(4) / 2 * rng.IntN(3) { // mostly none, up to two
				at += 1 + rng.Int64N(4e8)
				o.Steps = append(o.Steps, Step{AtNS: at, AtUncertaintyNS: rng.ExpFloat64() * 1e4,
					SizeNS: rng.NormFloat64() * 1e6, SizeUncertaintyNS: rng.ExpFloat64() * 50})
			}
			if r > 0 && rng.IntN(4) > 0 {
				n := rng.IntN(20)
				o.SelfCheck = &SelfCheck{Predictions: n, Within3Sigma: rng.IntN(n + 1), MaxSigma: rng.ExpFloat64() * 3}
			}
			round = append(round, o)
		}
		out = append(out, round)
	}
	return out
}

func randomRounds(rng *rand.Rand, rounds, edges int) [][]any {
	var out [][]any
	for r := range rounds {
		var round []any
		for e := range edges {
			ed := Edge{Type: "edge", RoundID: uint64(r), WindowID: uint64(r), Src: e, Dst: (e + 1) % edges,
				Alpha: rng.NormFloat64() * 1e-5, Beta: rng.NormFloat64() * 1e7, Sigma: rng.ExpFloat64(),
				PairsCount: rng.IntN(2000), LostCount: rng.IntN(9),
				Rejected: rng.IntN(5) == 0, Insufficient: rng.IntN(5) == 0, StepDetected: rng.IntN(5) == 0}
			if rng.IntN(3) > 0 {
				res := rng.NormFloat64() * 30
				ed.Residual = &res
			}
			round = append(round, &ed)
		}
		rd := Round{Type: "round", RoundID: uint64(r), WindowID: uint64(r), SequenceNumber: uint64(r) + 7,
			Reported: []int{0, 1, 2}, Missing: []int{}, Solved: 3, RMSResidualNS: rng.ExpFloat64(),
			MaxResidualNS: 9.5, Rejected: 1, WindowNS: 1e9, GatherWaitNS: -3, EndToStartNS: 4e6,
			SequenceSkewNS: 12, Retries: 1, MessageBytes: 4096,
			Chi2: rng.ExpFloat64() * 10, Chi2DOF: rng.IntN(20), PValue: rng.Float64(), BirgeRatio: rng.ExpFloat64()}
		if r%3 == 1 {
			rd.Inconsistent, rd.Warning = true, "inconsistent loops: χ² 93.1 over 12 degrees of freedom; uncertainties inflated"
		}
		if r%4 == 3 {
			rd.Error = "graph is disconnected: nodes [5 6] unreachable from the reference 0"
			rd.Missing = []int{5, 6}
		}
		round = append(round, rd)
		out = append(out, round)
	}
	return out
}

func writeFile(t *testing.T, path string, m Meta, rounds [][]any) {
	t.Helper()
	w, err := Create(path, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rounds {
		if err := w.Append(r...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := randomOffsets(rng, 20, 8)
	path := filepath.Join(t.TempDir(), "offsets.jsonl")
	writeFile(t, path, testMeta(FileOffsets), rounds)
	info, offs, err := ReadOffsets(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Meta: full(FileOffsets), Lines: 1 + 20*8}
	if info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	var all []Offset
	for _, r := range rounds {
		for _, o := range r {
			all = append(all, o.(Offset))
		}
	}
	if !reflect.DeepEqual(offs, all) {
		t.Errorf("offsets differ after a round trip")
	}
}

func TestRoundTripRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rounds := randomRounds(rng, 12, 6)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	var wantEdges []Edge
	var wantRounds []Round
	for _, r := range rounds {
		if err := w.Append(r...); err != nil {
			t.Fatal(err)
		}
		for _, rec := range r {
			switch rec := rec.(type) {
			case *Edge:
				wantEdges = append(wantEdges, *rec)
			case Round:
				wantRounds = append(wantRounds, rec)
			}
		}
	}
	info, edges, rds, err := DecodeRounds(&buf, "rounds.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if info.Meta != full(FileRounds) || info.Torn {
		t.Errorf("info = %+v", info)
	}
	if !reflect.DeepEqual(edges, wantEdges) || !reflect.DeepEqual(rds, wantRounds) {
		t.Errorf("records differ after a round trip")
	}
}

// countingWriter counts Write and Sync calls.
type countingWriter struct {
	bytes.Buffer
	writes, syncs int
	fail          error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	if c.fail != nil {
		return 0, c.fail
	}
	return c.Buffer.Write(p)
}

func (c *countingWriter) Sync() error { c.syncs++; return nil }

func TestOneWritePerRound(t *testing.T) {
	var c countingWriter
	w, err := NewWriter(&c, testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	if c.writes != 1 || c.syncs != 1 {
		t.Fatalf("meta line: %d writes, %d syncs", c.writes, c.syncs)
	}
	for i, r := range randomRounds(rand.New(rand.NewPCG(5, 6)), 5, 10) {
		before := c.Len()
		if err := w.Append(r...); err != nil {
			t.Fatal(err)
		}
		if c.writes != i+2 || c.syncs != i+2 {
			t.Fatalf("round %d: %d writes and %d syncs in all", i, c.writes, c.syncs)
		}
		if lines := strings.Count(c.String()[before:], "\n"); lines != len(r) {
			t.Fatalf("round %d: %d lines for %d records", i, lines, len(r))
		}
	}
	if err := w.Append(); err != nil || c.writes != 6 {
		t.Errorf("an empty Append: %v, %d writes", err, c.writes)
	}
}

func TestWriteFailureSticks(t *testing.T) {
	var c countingWriter
	w, err := NewWriter(&c, testMeta(FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	c.fail = errors.New("disk full")
	first := w.Append(Offset{NodeID: 1, WindowEndNS: 1})
	c.fail = nil
	if first == nil || w.Append(Offset{NodeID: 2, WindowEndNS: 1}) != first {
		t.Errorf("errors %v then not the same", first)
	}
	if c.writes != 2 {
		t.Errorf("%d writes, want 2: none after the failure", c.writes)
	}
}

func TestAppendRefuses(t *testing.T) {
	cases := map[string]any{
		"edge in offsets":   Edge{Src: 1},
		"round in offsets":  &Round{},
		"negative node":     Offset{NodeID: -1},
		"NaN":               Offset{OffsetNS: math.NaN()},
		"infinity":          Offset{DriftPPM: math.Inf(1)},
		"wrong type":        Offset{Type: "edge"},
		"a second meta":     testMeta(FileOffsets),
		"not a record":      "offset",
		"nil pointer value": (*Offset)(nil),
	}
	for name, rec := range cases {
		var c countingWriter
		w, err := NewWriter(&c, testMeta(FileOffsets))
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", name, p)
				}
			}()
			if err := w.Append(Offset{NodeID: 1, WindowEndNS: 1}, rec); err == nil {
				t.Errorf("%s: accepted", name)
			} else if !strings.HasPrefix(err.Error(), "offsets: Append: record 1: ") {
				t.Errorf("%s: error %q does not name the record", name, err)
			}
		}()
		if c.writes != 1 {
			t.Errorf("%s: %d writes, want only the meta line's", name, c.writes)
		}
	}
	for name, m := range map[string]Meta{
		"no file kind": {Mode: ModeRounds},
		"no mode":      {File: FileOffsets},
		"schema 1":     {File: FileOffsets, Mode: ModeRounds, Schema: 1},
		"schema 2":     {File: FileOffsets, Mode: ModeRounds, Schema: 2},
		"schema 4":     {File: FileOffsets, Mode: ModeRounds, Schema: 4},
		"other model":  {File: FileOffsets, Mode: ModeRounds, Model: "global = local"},
		"other σ":      {File: FileOffsets, Mode: ModeRounds, Uncertainty: "sigma_ns = uncertainty_ns"},
	} {
		if _, err := NewWriter(&countingWriter{}, m); err == nil {
			t.Errorf("meta with %s accepted", name)
		}
	}
}

func TestClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.jsonl")
	w, err := Create(path, testMeta(FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Offset{}); err == nil {
		t.Error("Append after Close succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}
