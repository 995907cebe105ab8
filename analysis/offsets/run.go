package offsets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/infile"
)

// RoundsFile is the name of the rounds file a run writes beside its
// offsets.jsonl; ReadStrict reads it to find the records offsets.jsonl
// lacks.
const RoundsFile = "rounds.jsonl"

// ReadStrict reads the offsets.jsonl file at path as every command that
// uses a run's clock models reads it (calibrate, combine, estimate), so
// that none of them takes a file another refuses (issue 30; calibrate used
// to print "ok" on half the points of a file combine refused). Beyond
// ReadOffsets (whose records are whole, in range, one per round and node),
// it refuses:
//
//   - a torn last line, an interrupted write:
//     offsets.jsonl:21: the last line is torn (an interrupted write: 140 bytes and no newline);
//   - when the directory of path holds a rounds.jsonl (a run directory: its
//     master writes the two files round by round) and the file's mode is
//     rounds or windows (in consensus mode the nodes write their own
//     records and rounds.jsonl has no round lines): a rounds.jsonl that
//     ReadRounds refuses or that is torn, one of another run (its meta
//     line's run_id, reference_node or mode differ), a round whose records
//     are not as many as the nodes its round line says were solved
//     (missing lines), and a round rounds.jsonl does not have.
//
// A rotated segment offsets.N.jsonl (see Rotate) is read against
// rounds.N.jsonl, its own rounds file.
//
// Without a rounds.jsonl beside it (a file given on its own, an estimator's
// offsets) nothing says which records a round should have, and only the
// first rule applies.
func ReadStrict(path string) (Info, []Offset, error) {
	info, offs, err := ReadOffsets(path)
	if err != nil {
		return info, nil, err
	}
	if info.Torn {
		return info, nil, tornError(path, info)
	}
	if info.Meta.Mode != ModeRounds && info.Meta.Mode != ModeWindows {
		return info, offs, nil
	}
	rpath := roundsBeside(path) // rounds.N.jsonl beside a rotated offsets.N.jsonl
	if _, err := os.Lstat(rpath); errors.Is(err, fs.ErrNotExist) {
		return info, offs, nil
	}
	if err := checkRounds(path, info, offs, rpath); err != nil {
		return info, nil, err
	}
	return info, offs, nil
}

// tornError is the error of a file whose last line is torn.
func tornError(path string, info Info) error {
	return &LineError{File: path, Line: info.Lines + 1,
		Msg: fmt.Sprintf("the last line is torn (an interrupted write: %s and no newline)", plural(info.TornBytes, "byte"))}
}

// plural is n and what, with an s unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// roundLine is a round line of rounds.jsonl and where it is.
type roundLine struct {
	solved int
	line   int
}

// checkRounds checks offs, read from path with info, against the round
// lines of the rounds.jsonl at rpath.
func checkRounds(path string, info Info, offs []Offset, rpath string) error {
	f, err := infile.Open(rpath, infile.Offsets)
	if err != nil {
		return err
	}
	defer f.Close()
	var seen records
	var order []uint64
	lines := map[uint64]roundLine{}
	rinfo, err := decode(f, rpath, FileRounds, map[string]*recordSpec{"edge": edgeSpec, "round": roundSpec}, `"edge" or "round"`,
		func(rec any, line int) error {
			if r, ok := rec.(*Round); ok {
				order = append(order, r.RoundID)
				lines[r.RoundID] = roundLine{solved: r.Solved, line: line}
			}
			return seen.add(rec, line)
		})
	if err != nil {
		return err
	}
	if rinfo.Torn {
		return tornError(rpath, rinfo)
	}
	m, rm := info.Meta, rinfo.Meta
	for _, d := range [...]struct{ field, a, b string }{
		{"run_id", strconv.Quote(m.RunID), strconv.Quote(rm.RunID)},
		{"reference_node", strconv.Itoa(m.Reference), strconv.Itoa(rm.Reference)},
		{"mode", strconv.Quote(m.Mode), strconv.Quote(rm.Mode)},
	} {
		if d.a != d.b {
			return &LineError{File: path, Line: 1,
				Msg: fmt.Sprintf("%s %s, but %s beside it has %s %s: the two files are not of one run", d.field, d.a, rpath, d.field, d.b)}
		}
	}

	// The nodes of each round's records; a round rounds.jsonl lacks is
	// refused at its first record.
	nodes := map[uint64][]int{}
	for i, o := range offs {
		if _, ok := lines[o.RoundID]; !ok {
			return &LineError{File: path, Line: i + 2,
				Msg: fmt.Sprintf("round %d: %s has no round %d (the rounds of a run are in both files)", o.RoundID, rpath, o.RoundID)}
		}
		nodes[o.RoundID] = append(nodes[o.RoundID], o.NodeID)
	}
	for _, r := range order {
		l, got := lines[r], nodes[r]
		if len(got) == l.solved {
			continue
		}
		s := make([]string, len(got))
		for i, n := range got {
			s[i] = strconv.Itoa(n)
		}
		have := fmt.Sprintf("records of %d nodes (%s)", len(got), strings.Join(s, ", "))
		switch len(got) {
		case 0:
			have = "no record"
		case 1:
			have = "the record of 1 node (" + s[0] + ")"
		}
		were := "were"
		if l.solved == 1 {
			were = "was"
		}
		if len(got) < l.solved {
			missing := plural(l.solved-len(got), "line") + " are missing"
			if l.solved-len(got) == 1 {
				missing = "1 line is missing"
			}
			return fmt.Errorf("%s: round %d: %s, but %s:%d says %d %s solved: %s",
				path, r, have, rpath, l.line, l.solved, were, missing)
		}
		return fmt.Errorf("%s: round %d: %s, but %s:%d says %d %s solved",
			path, r, have, rpath, l.line, l.solved, were)
	}
	return nil
}
