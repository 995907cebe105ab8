package offsets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A long-running node (chronosync node, duration 0) writes its offsets.jsonl
// and rounds.jsonl in place, a round at a time, for as long as it runs. This
// file holds what such a pair of files needs beyond the Writer: repairing
// it after a crash (Repair) and rotating it by size (Rotate).
//
// Rotation moves the pair aside as segment N: offsets.jsonl becomes
// offsets.N.jsonl and rounds.jsonl rounds.N.jsonl, N = 1, 2, ... oldest
// first (no file is ever renamed twice), and the node starts a fresh pair,
// meta line first, with the same meta. ReadStrict reads a segment's
// offsets.N.jsonl against its rounds.N.jsonl.

// OffsetsFile and the rotated segments' names.
const (
	// OffsetsFile is the name of a run directory's offsets file.
	OffsetsFile = "offsets.jsonl"
	// DefaultRotateBytes is the size of offsets.jsonl at which a
	// long-running node rotates the pair by default: 64 MiB, about a
	// third of a day of a 4-node cluster at one round a second.
	DefaultRotateBytes = 64 << 20
)

// segmentRE matches the name of a rotated segment: offsets.3.jsonl.
var segmentRE = regexp.MustCompile(`^(offsets|rounds)\.([1-9][0-9]*)\.jsonl$`)

// SegmentName is the name of segment n of file name (OffsetsFile or
// RoundsFile): offsets.jsonl and 3 give offsets.3.jsonl; n 0 is the
// current file, name itself.
func SegmentName(name string, n int) string {
	if n == 0 {
		return name
	}
	base := strings.TrimSuffix(name, ".jsonl")
	return base + "." + strconv.Itoa(n) + ".jsonl"
}

// roundsBeside is the rounds file that pairs with the offsets file at path:
// rounds.jsonl beside offsets.jsonl (or any other name), rounds.N.jsonl
// beside offsets.N.jsonl.
func roundsBeside(path string) string {
	dir, base := filepath.Split(path)
	if m := segmentRE.FindStringSubmatch(base); m != nil && m[1] == "offsets" {
		return filepath.Join(dir, "rounds."+m[2]+".jsonl")
	}
	return filepath.Join(dir, RoundsFile)
}

// Segments returns the numbers of dir's rotated offsets segments
// (offsets.N.jsonl), ascending.
func Segments(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", dir, err)
	}
	var ns []int
	for _, e := range entries {
		if m := segmentRE.FindStringSubmatch(e.Name()); m != nil && m[1] == "offsets" {
			n, err := strconv.Atoi(m[2])
			if err == nil {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// Rotate moves dir's offsets.jsonl and rounds.jsonl aside as the next
// segment, N one more than the highest there (1 for the first), and
// returns N. It renames offsets.jsonl first and rounds.jsonl second: a
// crash in between leaves offsets.N.jsonl without its rounds.N.jsonl, which
// Repair completes. The writers of the two files must be closed first.
func Rotate(dir string) (int, error) {
	ns, err := Segments(dir)
	if err != nil {
		return 0, err
	}
	n := 1
	if len(ns) > 0 {
		n = ns[len(ns)-1] + 1
	}
	for _, name := range []string{OffsetsFile, RoundsFile} {
		from, to := filepath.Join(dir, name), filepath.Join(dir, SegmentName(name, n))
		if _, err := os.Lstat(to); err == nil {
			return 0, fmt.Errorf("rotate %s: %s exists already; refusing to replace it", from, to)
		}
		if err := os.Rename(from, to); err != nil {
			return 0, fmt.Errorf("rotate %s to segment %d: %w", from, n, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("rotate %s to segment %d: %w", dir, n, err)
	}
	return n, nil
}

// syncDir fsyncs directory dir, so that renames and creations in it last.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Repaired is what Repair found and cut.
type Repaired struct {
	// LastRound is the highest round id the files (or, when the current
	// pair holds no round, the newest segment) hold whole: a round
	// line in rounds.jsonl in rounds and windows modes, an offset record in
	// consensus mode. A restarted master numbers its rounds after it.
	LastRound uint64
	// Meta is offsets.jsonl's meta line (zero when there is no
	// offsets.jsonl).
	Meta Meta
	// OffsetsCut and RoundsCut are the bytes cut from the end of each
	// file: a torn line, and whole lines of a round the crash did not
	// let the master finish (see Repair).
	OffsetsCut, RoundsCut int64
	// OffsetsLinesCut and RoundsLinesCut count the whole lines among
	// them.
	OffsetsLinesCut, RoundsLinesCut int
	// Rotation is the segment whose rotation a crash interrupted and
	// Repair completed (0: none).
	Rotation int
}

// Cut reports whether Repair cut anything.
func (r Repaired) Cut() bool { return r.OffsetsCut > 0 || r.RoundsCut > 0 }

// String says what Repair did, for a log: "cut 140 bytes (a torn line)
// of offsets.jsonl, ...; last round 17".
func (r Repaired) String() string {
	var parts []string
	if r.Rotation > 0 {
		parts = append(parts, fmt.Sprintf("completed the rotation to segment %d", r.Rotation))
	}
	for _, f := range []struct {
		name  string
		bytes int64
		lines int
	}{{OffsetsFile, r.OffsetsCut, r.OffsetsLinesCut}, {RoundsFile, r.RoundsCut, r.RoundsLinesCut}} {
		if f.bytes > 0 {
			parts = append(parts, fmt.Sprintf("cut %s of %s (%s of the round in progress, and a torn line if any)", plural(int(f.bytes), "byte"), f.name, plural(f.lines, "whole line")))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to cut")
	}
	return strings.Join(parts, "; ") + fmt.Sprintf("; last round %d", r.LastRound)
}

// Repair makes dir's offsets.jsonl and rounds.jsonl, as a crash (kill -9,
// power loss) left them, strictly readable again (ReadStrict) and ready
// for OpenAppend, and returns the last round they hold. A crash while the
// master appended a round leaves at most:
//
//   - a torn last line in either file (one Write per round, cut short);
//   - in rounds and windows modes, the offset records of a round whose
//     round line rounds.jsonl lacks (the master appends offsets.jsonl
//     first), and the edges of a round without their round line (written
//     last, it marks the round whole);
//   - a rotation halfway: offsets.N.jsonl renamed, rounds.jsonl not yet.
//
// Repair cuts the first two (truncating each file, then fsyncing it) and
// completes the third; it changes nothing else. Files that are absent are
// left absent (LastRound then comes from the newest segment, or is 0). A
// file that is damaged otherwise (a bad line before the end, another
// run's meta) is an error naming it: Repair never cuts more than the
// round in progress.
func Repair(dir string) (Repaired, error) {
	var rep Repaired
	offPath, rndPath := filepath.Join(dir, OffsetsFile), filepath.Join(dir, RoundsFile)
	_, offErr := os.Lstat(offPath)
	_, rndErr := os.Lstat(rndPath)
	if errors.Is(offErr, fs.ErrNotExist) && rndErr == nil {
		// A rotation that moved offsets.jsonl but not rounds.jsonl.
		ns, err := Segments(dir)
		if err != nil {
			return rep, err
		}
		if len(ns) == 0 {
			return rep, fmt.Errorf("repair %s: %s without %s and no rotated segment: not a run's files", dir, rndPath, offPath)
		}
		n := ns[len(ns)-1]
		to := filepath.Join(dir, SegmentName(RoundsFile, n))
		if _, err := os.Lstat(to); err == nil {
			return rep, fmt.Errorf("repair %s: %s has no %s beside it, and segment %d is whole: refusing to guess", dir, rndPath, offPath, n)
		}
		if err := os.Rename(rndPath, to); err != nil {
			return rep, fmt.Errorf("repair %s: complete the rotation to segment %d: %w", dir, n, err)
		}
		if err := syncDir(dir); err != nil {
			return rep, err
		}
		rep.Rotation = n
	}
	if _, err := os.Lstat(offPath); errors.Is(err, fs.ErrNotExist) {
		last, err := segmentLastRound(dir)
		rep.LastRound = last
		return rep, err
	}
	offs, err := scanFile(offPath)
	if err != nil {
		return rep, err
	}
	rep.Meta = offs.meta
	var rnds *scanned
	if _, err := os.Lstat(rndPath); err == nil {
		if rnds, err = scanFile(rndPath); err != nil {
			return rep, err
		}
		if rnds.meta.RunID != offs.meta.RunID || rnds.meta.Mode != offs.meta.Mode {
			return rep, fmt.Errorf("repair %s: %s has run_id %q mode %q, %s run_id %q mode %q: the two files are not of one run; refusing to cut either",
				dir, offPath, offs.meta.RunID, offs.meta.Mode, rndPath, rnds.meta.RunID, rnds.meta.Mode)
		}
	}
	offEnd, rndEnd := offs.whole, int64(0)
	switch {
	case rnds != nil && (offs.meta.Mode == ModeRounds || offs.meta.Mode == ModeWindows):
		// The last round line marks the last whole round.
		if i := rnds.lastRoundLine; i >= 0 {
			rep.LastRound = rnds.lines[i].round
			rndEnd = rnds.lines[i].end
		} else {
			rndEnd = rnds.metaEnd
		}
		rep.RoundsLinesCut = countAfter(rnds.lines, rndEnd)
		// Offsets of rounds after it go: they were appended first.
		offEnd = offs.metaEnd
		for _, l := range offs.lines {
			if l.round > rep.LastRound {
				break
			}
			offEnd = l.end
		}
		rep.OffsetsLinesCut = countAfter(offs.lines, offEnd)
	default:
		for _, l := range offs.lines {
			rep.LastRound = max(rep.LastRound, l.round)
		}
		if rnds != nil {
			rndEnd = rnds.whole
		}
	}
	if rep.LastRound == 0 && len(offs.lines) == 0 && (rnds == nil || rnds.lastRoundLine < 0) {
		// A pair started fresh by a rotation: the rounds are in the
		// newest segment.
		if rep.LastRound, err = segmentLastRound(dir); err != nil {
			return rep, err
		}
	}
	if rep.OffsetsCut, err = truncate(offPath, offs.size, offEnd); err != nil {
		return rep, err
	}
	if rnds != nil {
		if rep.RoundsCut, err = truncate(rndPath, rnds.size, rndEnd); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// countAfter counts the lines that end after end.
func countAfter(lines []scannedLine, end int64) int {
	n := 0
	for _, l := range lines {
		if l.end > end {
			n++
		}
	}
	return n
}

// truncate cuts the file at path, size bytes long, to end bytes and syncs
// it; it returns the bytes cut.
func truncate(path string, size, end int64) (int64, error) {
	if end >= size {
		return 0, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("repair %s: cut to %d bytes: %w", path, end, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	return size - end, nil
}

// segmentLastRound is the last round of dir's newest segment (0 if none).
func segmentLastRound(dir string) (uint64, error) {
	ns, err := Segments(dir)
	if err != nil || len(ns) == 0 {
		return 0, err
	}
	n := ns[len(ns)-1]
	offs, err := scanFile(filepath.Join(dir, SegmentName(OffsetsFile, n)))
	if err != nil {
		return 0, err
	}
	var last uint64
	for _, l := range offs.lines {
		last = max(last, l.round)
	}
	if p := filepath.Join(dir, SegmentName(RoundsFile, n)); offs.meta.Mode != ModeConsensus {
		if _, err := os.Lstat(p); err == nil {
			rnds, err := scanFile(p)
			if err != nil {
				return 0, err
			}
			if i := rnds.lastRoundLine; i >= 0 {
				last = max(last, rnds.lines[i].round)
			}
		}
	}
	return last, nil
}

// scanned is a file as Repair reads it.
type scanned struct {
	meta    Meta
	metaEnd int64 // the byte after the meta line's newline
	lines   []scannedLine
	// lastRoundLine is the index in lines of the last round line (-1:
	// none).
	lastRoundLine int
	whole         int64 // the byte after the last whole line
	size          int64
}

// scannedLine is one record line: its round and the byte after its
// newline.
type scannedLine struct {
	round uint64
	end   int64
	isRnd bool
}

// scanFile reads path's meta line and the round id of every whole record
// line, each strictly decoded (a bad line is an error: only the tail may
// be cut). A torn last line is left out.
func scanFile(path string) (*scanned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	s := &scanned{lastRoundLine: -1, size: st.Size()}
	br := bufio.NewReaderSize(f, 64<<10)
	var pos int64
	specs := map[string]*recordSpec{"offset": offsetSpec, "edge": edgeSpec, "round": roundSpec}
	for n := 1; ; n++ {
		line, err := readLine(br)
		switch {
		case err == io.EOF || err == errTorn:
			if n == 1 {
				return nil, &LineError{File: path, Line: 1, Msg: "expected a meta line, got an empty or torn file: a crash before the run wrote its first line; remove it"}
			}
			s.whole = pos
			return s, nil
		case err == errLong:
			return nil, &LineError{File: path, Line: n, Msg: errLongMsg}
		case err != nil:
			return nil, fmt.Errorf("repair %s: %w", path, err)
		}
		pos += int64(len(line)) + 1
		if n == 1 {
			if s.meta, err = decodeMeta(line, "", false); err != nil {
				return nil, &LineError{File: path, Line: 1, Msg: err.Error()}
			}
			s.metaEnd = pos
			continue
		}
		rec, err := decodeRecord(line, specs, `"offset", "edge" or "round"`)
		if err != nil {
			return nil, &LineError{File: path, Line: n, Msg: err.Error() + " (a line before the end is damaged: Repair cuts only the round in progress)"}
		}
		l := scannedLine{end: pos}
		switch r := rec.(type) {
		case *Offset:
			l.round = r.RoundID
		case *Edge:
			l.round = r.RoundID
		case *Round:
			l.round, l.isRnd = r.RoundID, true
			s.lastRoundLine = len(s.lines)
		}
		s.lines = append(s.lines, l)
	}
}
