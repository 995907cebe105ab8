package offsets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOffsetsDuplicateRecord (issue 30): a file with two records of one
// key (offsets.jsonl: round and node; rounds.jsonl: a round's line, an
// edge's round, source and destination) is refused at the second, naming
// the first's line, whether the two agree or not. Two records of round 1
// node 2, 1 ms apart, used to read as two, and the second one was used.
func TestOffsetsDuplicateRecord(t *testing.T) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	node := func(n string) string { return with(goodOffset, "node_id", n) }
	msApart := with(goodOffset, "offset_ns", "1000001.5")
	cases := []struct {
		name, in, err string
		rounds        bool
	}{
		{"reported: one round and node, 1 ms apart", lines(om, goodOffset, node("3"), msApart),
			`offsets.jsonl:4: round 1 node 2: a second record (first at line 2)`, false},
		{"the same record twice", lines(om, node("0"), node("1"), node("1")),
			`offsets.jsonl:4: round 1 node 1: a second record (first at line 3)`, false},
		{"another window, the same round", lines(om, goodOffset, with(with(goodOffset, "window_id", "2"), "window_start_ns", "1")),
			`offsets.jsonl:3: round 1 node 2: a second record (first at line 2)`, false},
		{"a round line twice", lines(rm, goodEdge, goodRound, with(goodRound, "solved_nodes", "1")),
			`rounds.jsonl:4: round 1: a second record (first at line 3)`, true},
		{"an edge twice", lines(rm, goodEdge, with(goodEdge, "dst", "2"), with(goodEdge, "beta_ns", "-5")),
			`rounds.jsonl:4: round 1 edge 0→1: a second record (first at line 2)`, true},
	}
	for _, tc := range cases {
		var err error
		if tc.rounds {
			_, _, _, err = DecodeRounds(strings.NewReader(tc.in), "rounds.jsonl")
		} else {
			_, _, err = DecodeOffsets(strings.NewReader(tc.in), "offsets.jsonl")
		}
		check(t, tc.name, err, tc.err)
	}

	// One node in many rounds, many nodes in one round, an edge each way,
	// the same round in both files: all distinct.
	if _, offs, err := DecodeOffsets(strings.NewReader(lines(om, goodOffset, with(goodOffset, "round_id", "2"), node("0"))), "offsets.jsonl"); err != nil || len(offs) != 3 {
		t.Errorf("distinct records: %d, %v", len(offs), err)
	}
	back := with(with(goodEdge, "src", "1"), "dst", "0")
	if _, edges, rounds, err := DecodeRounds(strings.NewReader(lines(rm, goodEdge, back, goodRound, with(goodRound, "round_id", "2"))), "rounds.jsonl"); err != nil || len(edges) != 2 || len(rounds) != 2 {
		t.Errorf("distinct records: %d edges, %d rounds, %v", len(edges), len(rounds), err)
	}
}

// TestReadStrict (issue 30): the reader calibrate, combine and estimate
// share refuses a torn last line, and checks a run's offsets.jsonl against
// the rounds.jsonl beside it: as many records in each round as nodes it
// solved, no round that rounds.jsonl lacks, both files of one run.
func TestReadStrict(t *testing.T) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	node := func(n string) string { return with(goodOffset, "node_id", n) }
	two := with(goodRound, "solved_nodes", "2") // round 1, 2 nodes solved
	round2 := with(with(goodRound, "round_id", "2"), "solved_nodes", "1")
	cases := []struct {
		name, offsets, rounds string // rounds "": none beside it
		err                   string // "" for none; DIR stands for the directory
	}{
		{"whole", lines(om, node("0"), node("1"), with(node("0"), "round_id", "2")), lines(rm, goodEdge, two, round2), ""},
		{"no rounds.jsonl", lines(om, node("0")), "", ""},
		{"torn", lines(om, node("0"), node("1")) + node("3")[:40], lines(rm, two),
			"DIR/offsets.jsonl:4: the last line is torn (an interrupted write: 40 bytes and no newline)"},
		{"torn, no rounds.jsonl", lines(om, node("0")) + "{", "",
			"DIR/offsets.jsonl:3: the last line is torn (an interrupted write: 1 byte and no newline)"},
		{"a line missing", lines(om, node("1"), with(node("0"), "round_id", "2")), lines(rm, goodEdge, two, round2),
			"DIR/offsets.jsonl: round 1: the record of 1 node (1), but DIR/rounds.jsonl:3 says 2 were solved: 1 line is missing"},
		{"a round missing", lines(om, node("0"), node("1")), lines(rm, two, round2),
			"DIR/offsets.jsonl: round 2: no record, but DIR/rounds.jsonl:3 says 1 was solved: 1 line is missing"},
		{"a record too many", lines(om, node("0"), node("1"), node("2")), lines(rm, two),
			"DIR/offsets.jsonl: round 1: records of 3 nodes (0, 1, 2), but DIR/rounds.jsonl:2 says 2 were solved"},
		{"a round rounds.jsonl lacks", lines(om, node("0"), node("1"), with(node("0"), "round_id", "7")), lines(rm, two),
			"DIR/offsets.jsonl:4: round 7: DIR/rounds.jsonl has no round 7 (the rounds of a run are in both files)"},
		{"rounds.jsonl torn", lines(om, node("0"), node("1")), lines(rm, two) + "{",
			"DIR/rounds.jsonl:3: the last line is torn (an interrupted write: 1 byte and no newline)"},
		{"rounds.jsonl with a second round line", lines(om, node("0"), node("1")), lines(rm, two, two),
			"DIR/rounds.jsonl:3: round 1: a second record (first at line 2)"},
		{"another run", lines(om, node("0"), node("1")), lines(with(rm, "run_id", `"run-2"`), two),
			`DIR/offsets.jsonl:1: run_id "run-1", but DIR/rounds.jsonl beside it has run_id "run-2": the two files are not of one run`},
		{"consensus: no round lines to check", lines(with(om, "mode", `"consensus"`), node("0")), lines(with(rm, "mode", `"consensus"`)), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "offsets.jsonl")
			if err := os.WriteFile(path, []byte(tc.offsets), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.rounds != "" {
				if err := os.WriteFile(filepath.Join(dir, RoundsFile), []byte(tc.rounds), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, offs, err := ReadStrict(path)
			want := strings.ReplaceAll(tc.err, "DIR", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case want == "":
				if n := strings.Count(tc.offsets, "\n") - 1; len(offs) != n {
					t.Errorf("%d records, want %d", len(offs), n)
				}
			case err == nil:
				t.Fatalf("accepted (%d records), want %s", len(offs), want)
			case err.Error() != want:
				t.Errorf("error\n got %v\nwant %s", err, want)
			case offs != nil:
				t.Errorf("%d records with the error", len(offs))
			}
			var le *LineError
			if place, _, _ := strings.Cut(want, ": "); strings.Contains(place, ".jsonl:") && !errors.As(err, &le) {
				t.Errorf("%T is not a *LineError", err)
			}
		})
	}
}

// FuzzOffsetsDuplicateRecord (issue 30): whatever the readers accept, the
// same file with one of its records written again at its end is refused at
// that line as a second record, naming the first's line: offsets.jsonl
// and rounds.jsonl alike.
func FuzzOffsetsDuplicateRecord(f *testing.F) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	f.Add([]byte(lines(om, goodOffset, with(goodOffset, "node_id", "3"), with(goodOffset, "round_id", "2"))), uint16(1))
	f.Add([]byte(lines(rm, goodEdge, with(with(goodEdge, "src", "1"), "dst", "0"), goodRound)), uint16(2))
	f.Add([]byte(lines(om, with(goodOffset, "offset_ns", "1e3"))+"\r\n"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, pick uint16) {
		read := func(b []byte) (Info, int, error) {
			info, offs, err := DecodeOffsets(bytes.NewReader(b), "f.jsonl")
			if err == nil || info.Lines > 0 && info.Meta.File == FileOffsets {
				return info, len(offs), err
			}
			info, edges, rounds, err := DecodeRounds(bytes.NewReader(b), "f.jsonl")
			return info, len(edges) + len(rounds), err
		}
		info, n, err := read(data)
		if err != nil || n == 0 || info.Torn {
			return
		}
		ls := bytes.SplitAfter(data, []byte("\n"))
		k := 1 + int(pick)%n // the record's line, from 0
		_, _, err = read(append(bytes.Clone(data), ls[k]...))
		var le *LineError
		want := fmt.Sprintf("a second record (first at line %d)", k+1)
		if !errors.As(err, &le) || le.Line != info.Lines+1 || !strings.HasSuffix(le.Msg, want) {
			t.Fatalf("line %d again at line %d: got %v, want a *LineError there ending %q", k+1, info.Lines+1, err, want)
		}
	})
}
